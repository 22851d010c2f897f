// bandwidth_probe.hpp — achieved memory bandwidth: device-to-device copy and a read-only streaming
// kernel over buffers from 16 MiB to 2 GiB (fit t = t0 + bytes / rate over buffers several times
// the L2), kernel launch overhead, and a decode-like GEMV chain (M = 1 through one Llama-3-8B
// layer stack, every weight read once per step).
#pragma once

#include <cublasLt.h>

#include "probe_env.hpp"

namespace vramplan::probe {

struct BandwidthResult {
  std::vector<calib::BandwidthCurve> curves;  //!< "copy" and "read"
  double launch_overhead_us = 0;              //!< back-to-back empty kernels, per launch
};

BandwidthResult probe_bandwidth(ProbeEnv& env);
//! Decode-like chain; records its effective GB/s. `read_gbps` (0 if unknown) splits its time into
//! streaming and per-GEMM overhead.
void probe_gemv_chain(ProbeEnv& env, cublasLtHandle_t handle, double read_gbps);

}  // namespace vramplan::probe
