// vramplan/perf/perf_defaults.hpp — the documented default efficiencies (data/perf_defaults.json)
// the performance model uses for every figure a calibration does not measure.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace vramplan::perf {

//! min <= expected <= max, in the unit of the field that holds it.
struct DefaultRange {
  double min = 0, expected = 0, max = 0;
};

struct PerfDefaults {
  std::string source;              //!< the file read
  DefaultRange bandwidth_efficiency;  //!< fraction of datasheet memory bandwidth
  DefaultRange tensor_efficiency;     //!< fraction of dense datasheet TFLOPS
  DefaultRange step_overhead_s;       //!< seconds per forward step (file: milliseconds)
  DefaultRange link_efficiency;       //!< fraction of one-direction link bandwidth
  DefaultRange link_latency_s;        //!< seconds per all-reduce (file: microseconds)
  //! Share of the shorter of a kernel's memory and math times hidden behind the longer (0..1;
  //! the fitted expected value may be 0, so this range may include zero).
  DefaultRange memory_compute_overlap;
  std::map<int, double> pcie_gbps_per_direction;  //!< PCIe generation -> GB/s of a x16 link
};

//! Reads and validates the file: every range positive and ordered, fractions <= 1. Errors are
//! Error(InputFile) naming the file and JSON pointer, or Error(Io).
PerfDefaults load_perf_defaults(const std::filesystem::path& file);

}  // namespace vramplan::perf
