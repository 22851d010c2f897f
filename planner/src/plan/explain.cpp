#include "vramplan/plan/explain.hpp"

#include <algorithm>
#include <cstdio>

#include "vramplan/memory/component.hpp"
#include "vramplan/report/table.hpp"

namespace vramplan::plan {
namespace {

std::string pct(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", f * 100.0);
  return buf;
}

std::string b(std::uint64_t n) { return memory::grouped(n) + " B"; }

}  // namespace

std::vector<ExplainLine> explain_lines(const CheckOutcome& o) {
  std::vector<ExplainLine> out;
  const auto& plan = o.eval.plan;
  const auto& fit = o.eval.fit;
  const auto add_parts = [&](const std::string& section, const std::vector<memory::Component>& parts) {
    for (const auto& c : parts) {
      ExplainLine l{section, c.name, c.bytes.count(), o.bounds.upper(c).count(), c.explain};
      if (const ComponentMargin* m = o.bounds.margin_for(c.name); m && l.upper != l.bytes)
        l.formula += "; upper bound +" + b(l.upper - l.bytes) + " (" + m->source + ")";
      out.push_back(std::move(l));
    }
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
  out.push_back({"fit", "used", e.used.count(), u.used.count(),
                 "weights " + b(e.weights.count()) + " + activation " + b(e.activation.count()) + " + overhead " +
                     b(e.overhead.count()) + " + KV needed " + b(e.kv_needed.count()) + " = " + b(e.used.count())});
  out.push_back({"fit", "capacity", e.capacity.count(), u.capacity.count(),
                 o.gpu.id + " runtime-reported total (" + std::string(memory_basis_name(o.gpu.reported_basis)) + ")"});
  out.push_back({"fit", "headroom", static_cast<std::uint64_t>(std::max<std::int64_t>(0, e.headroom_bytes)),
                 static_cast<std::uint64_t>(std::max<std::int64_t>(0, u.headroom_bytes)),
                 "capacity - used = " + std::to_string(e.headroom_bytes) + " B = " + pct(e.headroom_fraction) +
                     " of capacity (upper bound: " + pct(u.headroom_fraction) + "); required " +
                     pct(fit.required_headroom)});
  out.push_back({"fit", "decision", 0, 0,
                 std::string(fit.fits ? "fits" : "does not fit: " + fit.reason) + " (decided on the " +
                     (fit.conservative ? "upper bound" : "expected value") + ")"});
  return out;
}

nlohmann::json explain_json(const CheckOutcome& o, const std::vector<ExplainLine>& lines) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& l : lines)
    items.push_back({{"section", l.section}, {"name", l.name}, {"bytes", l.bytes}, {"upper_bytes", l.upper},
                     {"formula", l.formula}});
  return {{"schema", "vramplan.explain/1"}, {"line", o.line}, {"fits", o.eval.fit.fits}, {"items", items}};
}

std::string explain_text(const std::vector<ExplainLine>& lines, bool markdown) {
  Table t({{"section", Align::Left}, {"name", Align::Left}, {"GiB", Align::Right}, {"upper GiB", Align::Right},
           {"formula and inputs", Align::Left}});
  for (const auto& l : lines)
    t.add_row({l.section, l.name, l.bytes ? format_gib(Bytes(l.bytes), 3) : "", l.upper ? format_gib(Bytes(l.upper), 3) : "",
               l.formula});
  return markdown ? t.render_markdown() : t.render_text();
}

}  // namespace vramplan::plan
