// self_test.hpp — numerical correctness of what the probes time: a small cuBLASLt GEMM per dtype
// against a CPU reference (same quantised inputs, double accumulation), the streaming read
// kernel's XOR fold and a device-to-device copy against the host.
#pragma once

#include "probe_env.hpp"

namespace vramplan::probe {

//! Prints one line per check; returns true when all pass.
bool run_self_test(ProbeEnv& env);

}  // namespace vramplan::probe
