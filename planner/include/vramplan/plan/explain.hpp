// vramplan/plan/explain.hpp — every number of a check as "name = formula with its inputs = value":
// the engine's components (their explain strings), KV per token and per sequence, and the fit
// arithmetic, expected and upper bound, with the source of each bound.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/plan/check.hpp"

namespace vramplan::plan {

struct ExplainLine {
  std::string section;  //!< "weights", "kv_cache", "activation", "overhead", "kv", "fit"
  std::string name;
  std::uint64_t bytes = 0;      //!< 0 for non-byte figures
  std::uint64_t upper = 0;      //!< upper bound (bytes; == bytes when no margin)
  std::string formula;          //!< the derivation with its numbers
};

std::vector<ExplainLine> explain_lines(const CheckOutcome& outcome);
//! vramplan.explain/1 (docs/schemas/explain.schema.json).
nlohmann::json explain_json(const CheckOutcome& outcome, const std::vector<ExplainLine>& lines);
std::string explain_text(const std::vector<ExplainLine>& lines, bool markdown);

}  // namespace vramplan::plan
