// rehearsal_probe.hpp — `vramplan-probe --rehearse FILE`: allocate a plan's weights, KV blocks and
// activation workspace on the real card, run its GEMMs with cuBLASLt, and report whether it all
// fit and the peak device memory in use (cudaMemGetInfo), in seconds.
#pragma once

#include <nlohmann/json.hpp>

#include "probe_env.hpp"
#include "vramplan/calib/rehearsal.hpp"

namespace vramplan::probe {

//! The "vramplan.rehearsal-result/1" document (docs/calibration.md#fit-rehearsal); its "fits"
//! member says whether every allocation succeeded.
nlohmann::json run_rehearsal(ProbeEnv& env, const calib::RehearsalInput& input);

}  // namespace vramplan::probe
