// probe_env.hpp — what every probe gets: the device facts, the recorder (axes, records, time
// budget), the stream it times on and how many repeats each point takes.
#pragma once

#include <cuda_runtime_api.h>

#include "sweep.hpp"
#include "vramplan/calib/calibration.hpp"

namespace vramplan::probe {

struct ProbeEnv {
  calib::DeviceFacts device;
  Recorder& recorder;
  cudaStream_t stream = nullptr;
  int repeats = 5;             //!< timed repeats per point; the median is kept
  std::size_t l2_bytes = 0;
};

}  // namespace vramplan::probe
