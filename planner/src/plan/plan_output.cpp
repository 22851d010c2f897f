#include "vramplan/plan/plan_output.hpp"

#include <cstdio>
#include <cstdlib>

#include "vramplan/model/load.hpp"
#include "vramplan/core/sizes.hpp"
#include "vramplan/core/table.hpp"

namespace vramplan::plan {

namespace {

nlohmann::json opt_json(const std::optional<std::uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
nlohmann::json opt_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json parts_json(const std::vector<memory::Component>& parts) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& c : parts) a.push_back({{"name", c.name}, {"bytes", c.bytes.count()}, {"explain", c.explain}});
  return a;
}

nlohmann::json perf_range_json(const perf::Range& r) {
  return {{"low", r.low}, {"expected", r.expected}, {"high", r.high}};
}

nlohmann::json curve_json(const perf::ThroughputCurve& c) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& pt : c.points)
    points.push_back({{"batch", pt.batch}, {"tokens_per_s", perf_range_json(pt.tokens_per_s)}, {"tpot_s", perf_range_json(pt.step_s)},
                      {"memory_bound", pt.memory_bound}});
  return {{"context", c.context},          {"max_batch", c.points.back().batch}, {"knee_batch", c.knee_batch},
          {"half_batch", c.half_batch},    {"plateau_tokens_per_s", c.plateau_tokens_per_s},
          {"knee_fraction", perf::kKneeFraction}, {"points", points}};
}

nlohmann::json performance_json(const sim::PlanPerformance& perf) {
  const auto& q = perf.query;
  nlohmann::json j = {{"available", perf.estimate.has_value()},
                      {"reason", perf.estimate ? nlohmann::json(nullptr) : nlohmann::json(perf.unavailable)},
                      {"batch", q.batch},
                      {"prompt_tokens", q.prompt_tokens},
                      {"decode_context", q.decode_context},
                      {"prefill_chunk_tokens", q.token_budget},
                      {"tensor_dtype", perf.tensor_dtype.empty() ? nlohmann::json(nullptr) : nlohmann::json(perf.tensor_dtype)},
                      {"calibrated", perf.calibrated},
                      {"basis", nullptr}, {"decode", nullptr}, {"ttft_s", nullptr}, {"throughput_vs_batch", nullptr},
                      {"speculative_decode", nullptr}, {"notes", nlohmann::json::array()}};
  if (!perf.estimate) return j;
  const auto& e = *perf.estimate;
  j["basis"] = e.basis;
  j["decode"] = {{"tokens_per_s", perf_range_json(e.decode.tokens_per_s)}, {"tpot_s", perf_range_json(e.decode.step_s)},
                 {"memory_bound", e.decode.step.memory_bound}};
  j["ttft_s"] = perf_range_json(e.ttft_s);
  if (const auto& sp = perf.speculative)
    j["speculative_decode"] = {{"accept_length", sp->accept_length}, {"verify_tokens", sp->verify_tokens},
                               {"step_s", perf_range_json(sp->step_s)}, {"tpot_s", perf_range_json(sp->tpot_s)},
                               {"tokens_per_s", perf_range_json(sp->tokens_per_s)}};
  if (e.curve) j["throughput_vs_batch"] = curve_json(*e.curve);
  j["notes"] = e.notes;
  return j;
}

std::string plan_number(double v, const char* spec) {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

std::string perf_range_text(const perf::Range& r, double scale, const char* spec) {
  return plan_number(r.expected * scale, spec) + " [" + plan_number(r.low * scale, spec) + "-" + plan_number(r.high * scale, spec) + "]";
}

// Each line of `text` wrapped to the output width, continuation lines indented under the value
// ("  basis    " is 11 characters).
std::string wrap_performance_lines(const std::string& text) {
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    out += wrap_paragraph(line, text_width(), line.starts_with("  ") ? 11 : 2) + "\n";
    at = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

std::string performance_text(const sim::PlanPerformance& perf) {
  const auto& q = perf.query;
  if (!perf.estimate) return "performance: unknown - " + perf.unavailable + "\n";
  const auto& e = *perf.estimate;
  std::string s = "performance (" + std::string(perf.calibrated ? "calibrated" : "uncalibrated: published card figures x default efficiency") +
                  ", " + perf.tensor_dtype + " tensor rate):\n";
  s += "  decode   batch " + std::to_string(q.batch) + " at " + std::to_string(q.decode_context) + " tokens: " +
       perf_range_text(e.decode.tokens_per_s, 1, "%.0f") + " tok/s, TPOT " + perf_range_text(e.decode.step_s, 1e3, "%.2f") + " ms\n";
  if (const auto& sp = perf.speculative)
    s += "  spec     the same batch with speculative decoding, " + plan_number(sp->accept_length, "%g") + " of " +
         std::to_string(sp->verify_tokens) + " verified tokens kept a step (--spec-accept-length): " +
         perf_range_text(sp->tokens_per_s, 1, "%.0f") + " tok/s, TPOT " + perf_range_text(sp->tpot_s, 1e3, "%.2f") +
         " ms (steps of " + perf_range_text(sp->step_s, 1e3, "%.2f") + " ms)\n";
  s += "  TTFT     prompt " + std::to_string(q.prompt_tokens) + " tokens: " + perf_range_text(e.ttft_s, 1e3, "%.1f") + " ms\n";
  if (e.curve)
    s += "  knee     batch " + std::to_string(e.curve->knee_batch) + " reaches 80 % of " +
         plan_number(e.curve->plateau_tokens_per_s, "%.0f") + " tok/s at the memory limit of " +
         std::to_string(e.curve->points.back().batch) + " sequences (50 % at batch " + std::to_string(e.curve->half_batch) + ")\n";
  s += "  basis    " + e.basis + "\n";
  for (const auto& n : e.notes) s += "  note     " + n + "\n";
  return s;
}

}  // namespace

nlohmann::json plan_json(const sim::ServingPlan& o) {
  const auto& p = o.plan;
  return {
      {"schema", "vramplan.plan/1"},
      {"compatibility", compat::verdict_json(o.compat)},
      {"engine", p.engine},
      {"engine_version", p.engine_version},
      {"engine_profile", p.engine_profile_note},
      {"model", {{"id", o.model.id}, {"source", o.model.source.kind}, {"path", o.model.source.path},
                 {"read_from", model_source_text(o.model.source)}, {"exclusions", o.model.exclusions}}},
      {"gpu", {{"id", o.gpu.id}, {"name", o.gpu.name}, {"count", p.gpu_count}, {"total_bytes", o.gpu.total.count()},
               {"total_source", o.gpu_memory_note}}},
      {"per_gpu",
       {{"weights_bytes", p.weights_bytes().count()},
        {"kv_cache_bytes", p.kv_cache_bytes().count()},
        {"activation_bytes", p.activation_bytes().count()},
        {"overhead_bytes", p.overhead_bytes().count()},
        {"breakdown", {{"weights", parts_json(p.weights)}, {"kv_cache", parts_json(p.kv_cache)},
                       {"activation", parts_json(p.activation)}, {"overhead", parts_json(p.overhead)}}},
        {"total_bytes", p.total_bytes().count()},
        {"capacity_bytes", p.gpu_total.count()},
        {"headroom_bytes", p.headroom_bytes()}}},
      {"kv", {{"bytes_per_token", p.kv.bytes_per_token}, {"capacity_tokens", opt_json(p.kv.capacity_tokens)},
              {"max_concurrency", opt_json(p.kv.max_concurrency)}, {"explain", p.kv.explain}}},
      {"fits", p.fits},
      {"reason", p.fits ? nlohmann::json(nullptr) : nlohmann::json(p.reason)},
      {"weights_precision", p.weights_precision},
      {"compute_precision", p.compute_precision},
      {"engine_view", p.engine_view},
      {"notes", p.notes},
      {"calibration", {{"file", o.calibration.file ? nlohmann::json(*o.calibration.file) : nlohmann::json(nullptr)},
                       {"selected", o.calibration.selected},
                       {"memory", o.calibration.memory},
                       {"performance", o.performance.estimate ? nlohmann::json(o.performance.estimate->basis)
                                                              : nlohmann::json(nullptr)}}},
      {"performance", performance_json(o.performance)},
  };
}

std::string plan_text(const sim::ServingPlan& o) {
  const auto& p = o.plan;
  // Free text is wrapped to the output width (core/table.hpp text_width); tables wrap their
  // "how" column the same way.
  const std::size_t width = text_width();
  std::string s = wrap_paragraph("model " + o.model.id + " from the " + model_source_text(o.model.source), width, 2) +
                  "\n" +
                  wrap_paragraph("on " + std::to_string(p.gpu_count) + " x " + o.gpu.name + " (" + format_gib(o.gpu.total) +
                                     " each), engine " + p.engine_profile_note,
                                 width, 2) +
                  "\n";
  // Will it run? Said before the memory table (data/compat, docs/compatibility.md).
  for (const auto& f : o.compat.findings) s += compat::finding_line(f) + "\n";
  for (const auto& u : o.compat.unchecked) s += "compatibility: " + u + "\n";
  s += "weights " + p.weights_precision + ", compute " + p.compute_precision + "\n\n";
  Table t({{"component (per GPU)", Align::Left}, {"size", Align::Right}, {"how", Align::Wrap}});
  for (const auto* v : {&p.weights, &p.kv_cache, &p.activation, &p.overhead})
    for (const auto& c : *v) t.add_row({c.name, size_cell(c.bytes), c.explain});
  t.add_row({"total", format_gib(p.total_bytes()), ""});
  t.add_row({"capacity", format_gib(p.gpu_total), o.gpu_memory_note});
  const std::int64_t head = p.headroom_bytes();
  t.add_row({"headroom", (head < 0 ? "-" : "") + format_gib(Bytes(static_cast<std::uint64_t>(std::llabs(head)))), ""});
  s += t.render_text() + "\n";
  s += wrap_paragraph(p.kv.explain, width, 2) + "\n";
  if (p.kv.bytes_per_token > 0 || !p.kv_cache.empty()) {  // a pooling model has no KV figures to give
    char buf[128];
    std::snprintf(buf, sizeof buf, "KV capacity %s tokens, max concurrency %.2f\n",
                  p.kv.capacity_tokens ? std::to_string(*p.kv.capacity_tokens).c_str() : "unknown",
                  p.kv.max_concurrency.value_or(0.0));
    s += buf;
  }
  // The expected total over the card while the engine starts (SGLang's pool is a share of the card
  // beside reserves it only estimates): check's MARGINAL on the expected values (plan/fit.cpp
  // reserves_over), so not "yes".
  if (p.fits && head < 0 && !p.kv_fixed)
    s += wrap_paragraph("fits: marginal - the expected total is " +
                            format_gib(Bytes(static_cast<std::uint64_t>(-head))) +
                            " over the card: the engine starts, but a long prefill or a graph capture may run out of "
                            "memory (check: MARGINAL)",
                        width, 6) +
         "\n";
  else
    s += p.fits ? "fits: yes\n" : wrap_paragraph("fits: NO - " + p.reason, width, 6) + "\n";
  for (const auto& n : p.notes) s += wrap_paragraph("note: " + n, width, 6) + "\n";
  s += "\n" + wrap_performance_lines(performance_text(o.performance));
  s += wrap_paragraph("calibration: " + (o.calibration.file ? *o.calibration.file + " (" + o.calibration.selected + ")" : std::string("none")) +
                          "; memory: " + o.calibration.memory,
                      width, 2) +
       "\n";
  return s;
}

}  // namespace vramplan::plan
