// gemm_probe.hpp — cuBLASLt GEMM throughput vs tokens (M = 1..8192) for each dtype x model
// shape, the workspace the heuristics ask for, and per shape class the fit t = t0 + flops / rate.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <cublasLt.h>

#include "probe_env.hpp"

namespace vramplan::probe {

struct GemmResult {
  std::vector<calib::GemmCurve> curves;  //!< one per (dtype, shape) with >= 2 measured points
  std::map<std::string, double> achieved_tflops;  //!< per dtype (see docs/calibration.md)
  Bytes max_workspace;                    //!< largest workspace any heuristic choice asked for
};

//! Heuristics may choose algorithms needing up to this much workspace. Generous on purpose: the
//! figure recorded is what they ask for, not what a cap allowed (engines cap at 32 MiB on Hopper).
inline constexpr std::size_t kWorkspaceCap = std::size_t{256} << 20;

GemmResult probe_gemm(ProbeEnv& env, cublasLtHandle_t handle);

}  // namespace vramplan::probe
