// A calibration file written by vramplan-probe (calib/calibration_json.cpp load_calibration).
#include "fuzz_support.hpp"
#include "vramplan/calib/calibration.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  const auto path = fuzz::write_input(data, size, "calibration.json");
  return fuzz::refuse_cleanly([&] { calib::load_calibration(path); });
}
