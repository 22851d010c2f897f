#include "vramplan/core/text.hpp"
#include "vramplan/plan/explain.hpp"

#include <algorithm>
#include <cstdio>

#include "vramplan/memory/component.hpp"
#include "vramplan/model/load.hpp"
#include "vramplan/core/sizes.hpp"
#include "vramplan/core/table.hpp"

namespace vramplan::plan {
namespace {

std::string b(std::uint64_t n) { return memory::grouped(n) + " B"; }

}  // namespace

std::vector<ExplainLine> explain_lines(const CheckOutcome& o) {
  std::vector<ExplainLine> out;
  const auto& plan = o.eval.plan;
  const auto& fit = o.eval.fit;
  // Which model every figure below is of: a bare name is a catalogue id, a path a file (model/load.hpp).
  out.push_back({"model", "model", 0, 0, o.model_id + " from the " + model_source_text(o.model_source)});
  const auto add_parts = [&](const std::string& section, const std::vector<memory::Component>& parts) {
    for (const auto& c : parts) out.push_back({section, c.name, c.bytes.count(), c.bytes.count(), c.explain});
    // The margins apply once to the sum of the components they match (bounds.hpp).
    for (const auto& u : o.bounds.uses(parts))
      out.push_back({section, "margin " + u.margin->prefix + "*", u.extra.count(), u.extra.count(),
                     "upper bound: " + b(u.expected.count()) + " + " + b(u.extra.count()) +
                         (u.outside_kv_budget ? " (on top of the KV budget)" : " (out of the KV pool)") + "; " +
                         u.margin->source});
  };
  add_parts("weights", plan.weights);
  add_parts("activation", plan.activation);
  add_parts("overhead", plan.overhead);
  add_parts("kv_cache", plan.kv_cache);
  out.push_back({"kv", "kv_per_token", plan.kv.bytes_per_token, plan.kv.bytes_per_token, plan.kv.explain});
  std::string seq = "capacity " + (plan.kv.capacity_tokens ? memory::grouped(*plan.kv.capacity_tokens) : std::string("?")) +
                    " tokens x " + b(plan.kv.bytes_per_token) + " / max concurrency ";
  char conc[32];
  std::snprintf(conc, sizeof conc, "%.4f", fit.engine_max_concurrency.value_or(0.0));
  seq += std::string(conc) + " at " + std::to_string(fit.context) + " tokens (the engine's allocation unit) = " +
         b(fit.per_sequence_kv);
  out.push_back({"kv", "kv_per_sequence", fit.per_sequence_kv, fit.per_sequence_kv, seq});
  const FitFigures& e = fit.expected;
  const FitFigures& u = fit.upper;
  out.push_back({"fit", "kv_needed", e.kv_needed.count(), u.kv_needed.count(),
                 std::to_string(fit.batch) + " sequences x " + b(fit.per_sequence_kv) + " = " + b(e.kv_needed.count())});
  out.push_back({"fit", "kv_pool", e.kv_pool.count(), u.kv_pool.count(),
                 "the engine's KV capacity: capacity_tokens x KV/token = " + b(e.kv_pool.count()) +
                     " (upper bound: less the non-KV margins = " + b(u.kv_pool.count()) + ")"});
  out.push_back({"fit", "needed", e.needed.count(), u.needed.count(),
                 "weights " + b(e.weights.count()) + " + activation " + b(e.activation.count()) + " + overhead " +
                     b(e.overhead.count()) + " + KV needed " + b(e.kv_needed.count()) + " = " + b(e.needed.count())});
  out.push_back({"fit", "held", e.held.count(), u.held.count(),
                 "what " + fit.engine + " allocates: weights + activation + overhead + its KV allocation " +
                     b(plan.kv_cache_bytes().count()) + " = " + b(e.held.count()) +
                     " (upper bound: + what is allocated on top of the KV budget = " + b(u.held.count()) + ")"});
  out.push_back({"fit", "capacity", e.capacity.count(), u.capacity.count(),
                 o.gpu.id + " runtime-reported total (" + std::string(memory_basis_name(o.gpu.reported_basis)) + ")"});
  out.push_back({"fit", "spare", static_cast<std::uint64_t>(std::max<std::int64_t>(0, e.spare_bytes)),
                 static_cast<std::uint64_t>(std::max<std::int64_t>(0, u.spare_bytes)),
                 "KV pool - KV needed = " + std::to_string(e.spare_bytes) + " B = " + percent(e.spare_fraction, 2) +
                     " of capacity (upper bound: " + percent(u.spare_fraction, 2) + "); --headroom asks " +
                     percent(fit.required_headroom, 2)});
  out.push_back({"fit", "decision", 0, 0,
                 std::string(verdict_name(fit.verdict)) + (fit.reason.empty() ? "" : ": " + fit.reason) +
                     " (FITS: on the upper bounds; MARGINAL: on the expected values only)"});
  return out;
}

nlohmann::json explain_json(const CheckOutcome& o, const std::vector<ExplainLine>& lines) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& l : lines)
    items.push_back({{"section", l.section}, {"name", l.name}, {"bytes", l.bytes}, {"upper_bytes", l.upper},
                     {"formula", l.formula}});
  return {{"schema", "vramplan.explain/1"}, {"line", o.line}, {"verdict", std::string(verdict_name(o.eval.fit.verdict))},
          {"fits", o.eval.fit.fits}, {"warnings", o.warnings}, {"items", items}};
}

std::string explain_text(const std::vector<ExplainLine>& lines, bool markdown) {
  // Text wraps the formulas to the output width and leaves out the section, which the names
  // already say (weights.*, kv_*, margin weights*), so 80 columns leave room for the formula;
  // Markdown keeps every column and each formula on one line (a cell).
  std::vector<Table::Column> columns = {{"name", Align::Left}, {"size", Align::Right}, {"upper bound", Align::Right},
                                        {"formula and inputs", Align::Wrap}};
  if (markdown) columns.insert(columns.begin(), {"section", Align::Left});
  Table t(columns);
  for (const auto& l : lines) {
    std::vector<std::string> row = {l.name, l.bytes ? size_cell(Bytes(l.bytes), 3) : "",
                                    l.upper ? size_cell(Bytes(l.upper), 3) : "", l.formula};
    if (markdown) row.insert(row.begin(), l.section);
    t.add_row(std::move(row));
  }
  return markdown ? t.render_markdown() : t.render_text();
}

}  // namespace vramplan::plan
