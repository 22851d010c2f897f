// vramplan/plan/rehearsal_input.hpp — `vramplan plan --emit-rehearsal FILE`: a plan as the input
// of the fit rehearsal (docs/calibration.md#fit-rehearsal).
#pragma once

#include "vramplan/calib/rehearsal.hpp"
#include "vramplan/sim/serving_plan.hpp"

namespace vramplan::plan {

//! The fit-rehearsal input of a plan: the per-GPU weight bytes, the KV cache as the engine's
//! blocks, the activation workspace, and the GEMMs of one decoder layer at the engine's prefill
//! token budget. Throws Error(Usage) when the plan has nothing to rehearse (no KV cache, a CPU plan).
calib::RehearsalInput rehearsal_input(const sim::ServingPlan& outcome);

}  // namespace vramplan::plan
