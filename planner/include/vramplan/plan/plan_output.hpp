// vramplan/plan/plan_output.hpp — what `vramplan plan` prints: the vramplan.plan/1 document
// (docs/schemas/plan.schema.json) and the human-readable table of a serving plan.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "vramplan/sim/serving_plan.hpp"

namespace vramplan::plan {

//! The vramplan.plan/1 document (docs/schemas/plan.schema.json).
nlohmann::json plan_json(const sim::ServingPlan& outcome);

//! The human-readable table, wrapped to the output width (core/table.hpp text_width).
std::string plan_text(const sim::ServingPlan& outcome);

}  // namespace vramplan::plan
