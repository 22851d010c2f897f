// vramplan/perf/hardware_rates.hpp — achieved rates for the performance model: from a calibration
// file where one measured them, else datasheet figures x the documented default efficiencies
// (data/perf_defaults.json), as a range. Every result names which it used (`basis`).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "vramplan/calib/calibration.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/perf/perf_defaults.hpp"
#include "vramplan/perf/perf_model.hpp"

namespace vramplan::perf {

//! Datasheet figures of one GPU, plain numbers (dense TFLOPS, never the sparse ones).
struct DatasheetFigures {
  std::string gpu;                          //!< catalogue id or name, for the basis text
  std::optional<double> bandwidth_gbps;     //!< memory bandwidth, 10^9 B/s
  std::optional<double> tensor_tflops;      //!< dense, in the compute dtype
  std::string tflops_label;                 //!< "bf16", or "bf16 (fp16 figure)" when substituted
  std::optional<double> link_gbps;          //!< GPU-to-GPU, one direction, 10^9 B/s
  std::string link_label;                   //!< "NVLink 900 GB/s total / 2", "PCIe gen 5 x16"
  std::string scaled_from{};                //!< MIG slice: how its figures derive from the card's
  std::string vendor{};                     //!< "nvidia", "amd", ... (selects vendor-keyed overheads)
  //! 0: link_gbps serves any group of GPUs (an NVLink switch, PCIe); n: a mesh of n links per
  //! GPU, link_gbps each (HardwareRates::link_mesh_links).
  int link_mesh_links = 0;
  //! GPUs the link joins (GpuSpec::node_gpus, or a wider NVLink domain); 0 = unknown: every
  //! group is priced on the link.
  std::uint64_t scale_up_gpus = 0;
  bool scale_up_is_nvlink_domain = false;  //!< the fabric is an NVLink domain beyond a host (NVL72)
  //! Scale-out NIC per GPU, Gb/s one direction: the catalogue's reference platform, or nullopt
  //! (perf_hardware_from assumes PerfDefaults::network_gbit_default and says so).
  std::optional<double> network_gbit{};
  //! Where network_gbit comes from: the catalogue's reference platform, or --network-gbit.
  bool network_from_flag = false;
  bool node_from_flag = false;  //!< scale_up_gpus is the host size --node-gpus gave
  std::optional<int> capability_major{};  //!< NVIDIA compute capability major (selects fitted per-kernel costs)
  //! Measured matmul ceiling in the compute dtype (GpuSpec::mamf_tflops; a MIG slice's share): when
  //! set, the tensor rate is this x PerfDefaults::tensor_share_of_mamf instead of the datasheet's.
  std::optional<double> mamf_tflops{};
  std::string mamf_label{};  //!< "bf16", or how the ceiling was derived (fp16 from bf16, a MIG share)
};

//! Figures measured on the card (a calibration file).
struct MeasuredFigures {
  std::string source;                     //!< the calibration file
  std::optional<double> bandwidth_gbps;   //!< streaming read bandwidth
  std::optional<double> tensor_tflops;    //!< achieved dense GEMM rate in the compute dtype
};

//! Measured figures win; the rest are the datasheet (or the card's published matmul ceiling, for the
//! tensor rate) x default efficiency (expected, and slow/fast
//! from the min/max efficiencies). The step overhead is the `engine`'s entry of the defaults
//! ("vllm", "trtllm", ...; empty or unknown: "default"). Throws Error(Usage) when neither gives a
//! bandwidth or a tensor throughput (e.g. a custom GPU of which only the memory is known).
PerfHardware perf_hardware_from(const DatasheetFigures& sheet,
                                const std::optional<MeasuredFigures>& measured,
                                const PerfDefaults& defaults, std::string_view engine = {});

//! The datasheet figures of a catalogue GPU for `compute_dtype` ("bf16", "fp16", "fp8", "int8",
//! "fp4", "tf32", "fp32"). bf16 falls back to the fp16 figure (same tensor-core rate on NVIDIA
//! since Ampere) and says so in tflops_label. Link: NVLink total / 2 when the card has NVLink,
//! else the PCIe x16 rate of its generation. A MIG slice has no datasheet of its own: its tensor
//! rate is the card's x its SM fraction, its bandwidth the card's x its memory fraction (the
//! catalogue's slice bandwidth), and `scaled_from` says so (mig_scaling_note).
DatasheetFigures datasheet_figures(const GpuSpec& gpu, std::string_view compute_dtype,
                                   const PerfDefaults& defaults);

//! "" for a card; for a MIG slice: "MIG 3g.40gb scaled from the full h100-sxm-80: 3/7 of its SMs
//! (tensor rate), 4/8 of its memory slices (bandwidth)". Shown with every throughput of a slice.
std::string mig_scaling_note(const GpuSpec& gpu);

//! The measured figures a calibration holds for `compute_dtype` (read bandwidth, else copy
//! bandwidth; achieved TFLOPS under the dtype's calibration key, "fp8" -> "fp8_e4m3"). nullopt
//! for a Defaults-origin calibration, which measures nothing.
std::optional<MeasuredFigures> measured_figures(const calib::Calibration& cal,
                                                std::string_view compute_dtype);

//! Convenience: catalogue GPU + optional calibration.
PerfHardware perf_hardware_from(const GpuSpec& gpu, const calib::Calibration* calibration,
                                std::string_view compute_dtype, const PerfDefaults& defaults,
                                std::string_view engine = {});

}  // namespace vramplan::perf
