// Renderings of a check: one line (+ limits and batch table when asked), vramplan.check/1 JSON,
// and a Markdown section for a quote document.
#include <cstdio>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/model/load.hpp"
#include "vramplan/plan/check.hpp"
#include "vramplan/sim/simulate.hpp"
#include "vramplan/plan/compatibility.hpp"
#include "vramplan/core/table.hpp"

namespace vramplan::plan {
namespace {

// Hosts one replica spans: its GPUs over the card's node_gpus (a deployment beyond one host is
// launched node by node and its collectives cross the network: docs/compatibility.md "Multi-node",
// docs/performance.md "Across hosts"); null where the catalogue gives no node size.
nlohmann::json hosts_per_replica(const CheckOutcome& o) {
  if (!o.gpu.node_gpus || *o.gpu.node_gpus == 0) return nullptr;
  return ceil_div(o.eval.gpus_per_replica(), *o.gpu.node_gpus);
}

std::string signed_gib(std::int64_t bytes) {
  // Appended piece by piece: g++ 12 gives a false -Wrestrict on literal + std::string chains.
  std::string s = bytes < 0 ? "-" : "";
  s += format_gib(Bytes(static_cast<std::uint64_t>(bytes < 0 ? -bytes : bytes)));
  return s;
}

nlohmann::json figures_json(const FitFigures& f) {
  return {{"capacity_bytes", f.capacity.count()},     {"weights_bytes", f.weights.count()},
          {"activation_bytes", f.activation.count()}, {"overhead_bytes", f.overhead.count()},
          {"kv_pool_bytes", f.kv_pool.count()},       {"kv_needed_bytes", f.kv_needed.count()},
          {"needed_bytes", f.needed.count()},         {"held_bytes", f.held.count()},
          {"spare_bytes", f.spare_bytes},             {"spare_fraction", f.spare_fraction}};
}

nlohmann::json limit_json(const LimitResult& l) {
  return {{"value", l.value}, {"capped", l.capped}, {"cap_reason", l.cap_reason}, {"breaks", l.breaks},
          {"probes", l.probes}};
}

// "tp8", "tp4 pp2"; with vLLM's data-parallel engines (the plan's own) "tp1 dp8".
std::string layout(const Parallel& p, std::uint64_t data_parallel = 1) {
  std::string s = "tp" + std::to_string(p.tp);
  if (p.pp > 1) s += " pp" + std::to_string(p.pp);
  if (data_parallel > 1) s += " dp" + std::to_string(data_parallel);
  return s;
}

double check_round6(double v) { return rounded(v, 6); }

nlohmann::json rate_probe_json(const RateBatchProbe* p) {
  if (!p) return nullptr;
  return {{"cap", p->cap}, {"met", p->met}, {"overloaded", p->overloaded},
          {"p99_ttft_ms", check_round6(p->ttft_p99_s * 1e3)}, {"p99_tpot_ms", check_round6(p->tpot_p99_s * 1e3)},
          {"kv_usage_p99", check_round6(p->kv_usage_p99)}, {"running_mean", check_round6(p->running_mean)},
          {"served_per_s", check_round6(p->served_per_s)},
          {"binding", p->binding}, {"error", p->error.empty() ? nlohmann::json(nullptr) : nlohmann::json(p->error)},
          {"unserved", p->unserved.empty() ? nlohmann::json(nullptr) : nlohmann::json(p->unserved)},
          {"queue_held_by", sim::held_limit_json(p->held_most)}};
}

nlohmann::json at_rate_json(const BatchAtRate& a) {
  nlohmann::json targets = nlohmann::json::array(), probes = nlohmann::json::array();
  for (const auto& t : a.slo) targets.push_back(t.text);
  for (const auto& p : a.probes) probes.push_back(rate_probe_json(&p));
  return {{"rate_per_s", a.rate_per_s},
          {"replicas", a.replicas},
          {"rate_per_replica", check_round6(a.rate_per_s / static_cast<double>(a.replicas))},
          {"slo", targets},
          {"slo_basis", a.slo_basis},
          {"cap_flag", a.flag.empty() ? nlohmann::json(nullptr) : nlohmann::json("--" + a.flag)},
          {"requests_per_probe", a.requests_per_probe},
          {"workload", a.workload},
          {"max_cap", a.best > 0 ? nlohmann::json(a.best) : nlohmann::json(nullptr)},
          {"above", a.above.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.above)},
          {"probes", probes}};
}

nlohmann::json range_json(const CheckOutcome& o) {
  const BatchRange& r = *o.range;
  const auto range = [](const std::optional<perf::Range>& v) {
    return v ? nlohmann::json{{"low", v->low}, {"expected", v->expected}, {"high", v->high}} : nlohmann::json(nullptr);
  };
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.rows) {
    nlohmann::json j = {{"batch", row.batch}, {"needed_bytes_per_gpu", row.needed_per_gpu.count()},
                        {"spare_fraction", row.spare_fraction}, {"verdict", std::string(verdict_name(row.verdict))}, {"tokens_per_s", range(row.tokens_per_s)},
                        {"tpot_s", range(row.tpot_s)}, {"ttft_s", range(row.ttft_s)}, {"fits", row.fits},
                        {"breaks", row.breaks.empty() ? nlohmann::json(nullptr) : nlohmann::json(row.breaks)}};
    if (o.at_rate)
      j["at_rate"] = row.verdict == Verdict::DoesNotFit
                         ? nlohmann::json(nullptr)
                         : rate_probe_json(o.at_rate->at(ceil_div(row.batch, o.request.replicas)));
    rows.push_back(std::move(j));
  }
  nlohmann::json j = {{"low", r.low}, {"high", r.high}, {"high_reason", r.high_reason}, {"memory_max", r.memory_max},
          {"memory_breaks", r.memory_breaks}, {"plateau_tokens_per_s", r.plateau_tokens_per_s},
          {"basis", r.basis}, {"workload", r.workload}, {"unavailable", r.unavailable.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.unavailable)},
          {"ttft_case", "burst: the prefill of every prompt of the row at once (all requests arriving together)"},
          {"rows", rows},
          {"launch_cap", o.range_cap > 0 ? nlohmann::json(o.range_cap) : nlohmann::json(nullptr)},
          {"launch", o.range_cap > 0 ? launch_json(o.range_launch) : nlohmann::json(nullptr)}};
  if (o.request.rate) j["at_rate"] = o.at_rate ? at_rate_json(*o.at_rate) : nlohmann::json(nullptr);
  return j;
}

// The "at rate" cell of a row: p99 TTFT / p99 TPOT in ms, with what fails. An overloaded cap's
// p99 TTFT grows with the length of the simulated run, so it shows what the cap serves instead.
std::string rate_cell(const RateBatchProbe* p) {
  if (!p) return "-";
  if (!p->error.empty()) return "does not start";
  if (p->overloaded) return "- / " + fixed(p->tpot_p99_s * 1e3, 1) + " overloaded: serves " + fixed(p->served_per_s, 2) + "/s";
  std::string s = fixed(p->ttft_p99_s * 1e3, 0) + " / " + fixed(p->tpot_p99_s * 1e3, 1);
  if (!p->unserved.empty()) s += " x " + p->unserved;
  else if (!p->met) s += " x " + p->binding;
  return s;
}

Table range_table(const CheckOutcome& o) {
  const BatchRange& r = *o.range;
  const BatchAtRate* a = o.at_rate ? &*o.at_rate : nullptr;
  std::vector<Table::Column> cols = {{"batch", Align::Right}, {"needs GiB/GPU", Align::Right}, {"spare", Align::Right},
                                     {"verdict", Align::Left}, {"est. tok/s", Align::Right}, {"TPOT ms", Align::Right},
                                     {"burst TTFT ms", Align::Right}};
  if (a) cols.push_back({"at " + format_number("%.4g", a->rate_per_s) + " req/s: p99 TTFT / TPOT ms", Align::Right});
  cols.push_back({"", Align::Wrap});
  Table t(cols);
  for (const auto& row : r.rows) {
    std::string mark = row.fits ? "" : "x " + row.breaks;
    if (row.fits && row.batch == r.low) mark = "<- low end";
    if (row.fits && row.batch == r.high) mark = row.batch == r.low ? "<- low = high end" : "<- high end";
    const std::uint64_t cap = ceil_div(row.batch, o.request.replicas);
    if (a && a->best > 0 && cap == a->best && row.verdict != Verdict::DoesNotFit)
      mark += std::string(mark.empty() ? "" : "; ") + "<- largest meeting the targets at the rate";
    std::vector<std::string> cells = {std::to_string(row.batch), fixed(row.needed_per_gpu.gib(), 2), percent(row.spare_fraction, 1),
                                      std::string(verdict_name(row.verdict)),
                                      row.tokens_per_s ? fixed(row.tokens_per_s->expected, 0) : "-",
                                      row.tpot_s ? fixed(row.tpot_s->expected * 1e3, 1) : "-",
                                      row.ttft_s ? fixed(row.ttft_s->expected * 1e3, 0) : "-"};
    if (a) cells.push_back(row.verdict == Verdict::DoesNotFit ? "-" : rate_cell(a->at(cap)));
    cells.push_back(mark);
    t.add_row(cells);
  }
  return t;
}

// The rate view in words: the load, the targets, the answer and what fails above it.
std::string rate_summary(const CheckOutcome& o) {
  const double rate = *o.request.rate;
  if (!o.at_rate) return "at " + format_number("%.4g", rate) + " req/s: no batch fits, nothing to simulate\n";
  const BatchAtRate& a = *o.at_rate;
  std::string targets;
  for (const auto& t : a.slo) targets += (targets.empty() ? "" : ", ") + t.text;
  const std::string cap = a.flag.empty() ? "static batch" : "--" + a.flag;
  std::string s = "at " + format_number("%.4g", rate) + " req/s (simulated: " + a.workload + "); targets: " +
                  (targets.empty() ? "none" : targets) + " (" + a.slo_basis + ")\n";
  if (a.best == 0) {
    s += "largest " + cap + " meeting the targets at this rate: none";
    if (!a.above.empty()) s += " (" + a.above + ")";
    return s + "\n";
  }
  s += "largest " + cap + " meeting the targets at this rate: " + std::to_string(a.best) + " per replica";
  s += a.above.empty() ? " (the largest the memory allows)" : " (" + a.above + ")";
  return s + "\n";
}

std::string range_summary(const BatchRange& r) {
  const std::string workload = "workload: " + r.workload + "\n";
  if (r.high == 0) return "recommended batch: none (" + r.high_reason + ")\n" + workload;
  const std::string low = r.unavailable.empty() ? "low: >= 80% of the " + fixed(r.plateau_tokens_per_s, 0) + " tok/s plateau"
                                                 : "low = high: no throughput estimate";
  std::string s = "recommended batch " + std::to_string(r.low) + "-" + std::to_string(r.high) + " (" + low +
                  "; high: " + r.high_reason + ")\n";
  if (!r.unavailable.empty()) s += "throughput: not estimated (" + r.unavailable + ")\n";
  else s += "throughput basis: " + r.basis + "\n";
  return s + workload + "burst TTFT: the prefill of every prompt of the row at once (all requests arriving together)\n";
}

// The batch range section (text or Markdown): the table, the summary, the rate view and the
// command at the recommended cap.
std::string range_section(const CheckOutcome& o, bool markdown) {
  std::string s = (markdown ? range_table(o).render_markdown() : range_table(o).render_text()) + "\n" + range_summary(*o.range);
  if (o.request.rate) s += rate_summary(o);
  if (o.range_cap > 0 && !o.range_launch.argv.empty()) {
    const std::string what = o.at_rate ? "the largest cap meeting the targets at the rate" : "the high end";
    if (markdown) {
      s += "\nStart it at " + what + " (" + std::to_string(o.range_cap) + " per replica):\n\n```sh\n" + o.range_launch.line() + "\n```\n";
      if (!o.range_launch.note.empty()) s += "\n" + o.range_launch.note + ".\n";
    } else {
      s += "launch at " + what + " (" + std::to_string(o.range_cap) + " per replica): " + o.range_launch.line() + "\n";
      if (!o.range_launch.note.empty()) s += "  (" + o.range_launch.note + ")\n";
    }
  }
  return s;
}

std::string limits_text(const CheckLimits& l) {
  std::string s;
  const auto line = [&](const std::string& what, const LimitResult& r, const std::string& unit, const std::string& at) {
    s += what + ": " + std::to_string(r.value) + (r.value == 1 && unit == " sequences" ? " sequence" : unit) + " " + at;
    s += r.capped ? " (capped: " + r.cap_reason + ")\n" : (r.breaks.empty() ? "\n" : "; above it: " + r.breaks + "\n");
  };
  line("max batch", l.max_batch, " sequences", "of " + std::to_string(l.batch_context) + " tokens");
  line("max context", l.max_context, " tokens", "at batch " + std::to_string(l.context_batch));
  line("max concurrency", l.max_concurrency, " sequences",
       "of the engine's max length " + std::to_string(l.engine_length));
  if (l.min_gpus.best) s += "min GPUs: " + std::to_string(l.min_gpus.best->gpus()) + " (" + layout(*l.min_gpus.best) + ")\n";
  else s += "min GPUs: none within the layouts tried\n";
  for (const auto& o : l.min_gpus.tried)
    if (!o.valid) s += "  " + layout(o.parallel) + " invalid: " + o.why_invalid + "\n";
  s += "smallest card: " +
       (l.smallest_card.best ? *l.smallest_card.best
                             : std::string(l.smallest_card.tried.empty() ? "not searched (host memory)" : "none in the catalogue")) +
       "\n";
  return s;
}

}  // namespace

namespace {

nlohmann::json model_source_json(const ModelSource& s) {
  return {{"kind", s.kind}, {"path", s.path}, {"read_from", model_source_text(s)}};
}

// What the verdict was decided on, said next to it: both sides and the user's extra margin.
std::string decision_basis(const CheckOutcome& o) {
  const auto& fit = o.eval.fit;
  std::string s = "decided on the expected values and on the upper bounds of data/" + o.bounds_source + " (" +
                  std::string(verdict_name(fit.verdict)) + (fit.verdict == Verdict::Marginal ? ": fits on the expected values only" : "") +
                  "); --headroom " + percent(fit.required_headroom, 1) + " of the card kept spare in the KV pool";
  if (fit.required_headroom == 0) s += " (default)";
  if (fit.conservative) s += "; --conservative: MARGINAL counts as DOES NOT FIT";
  return s;
}

}  // namespace

Table batch_range_table(const CheckOutcome& o) { return range_table(o); }

std::string batch_range_summary(const CheckOutcome& o) {
  return range_summary(*o.range) + (o.request.rate ? rate_summary(o) : std::string());
}

nlohmann::json check_json(const CheckOutcome& o) {
  if (o.compat.support == compat::Support::Unsupported)
    return {{"schema", "vramplan.check/1"},
            {"verdict", "UNSUPPORTED"},
            {"fits", false},
            {"line", o.line},
            {"limit", "compatibility"},
            {"reason", o.line},
            {"marginal", nullptr},
            {"conservative", o.request.policy.conservative},
            {"required_headroom", o.request.policy.headroom},
            {"warnings", o.warnings},
            {"model", o.model_id},
            {"model_source", model_source_json(o.model_source)},
            {"engine", o.request.engine},
            {"gpu", {{"id", o.gpu.id}, {"name", o.gpu.name}, {"reported_total_bytes", o.gpu.reported_total.count()},
                     {"reported_basis", std::string(memory_basis_name(o.gpu.reported_basis))}}},
            {"layout", nullptr},
            {"workload", nullptr},
            {"per_gpu", nullptr},
            {"bounds_source", "data/" + o.bounds_source},
            {"compatibility", compat::verdict_json(o.compat)}};
  const auto& fit = o.eval.fit;
  nlohmann::json j = {
      {"schema", "vramplan.check/1"},
      {"verdict", std::string(verdict_name(fit.verdict))},
      {"fits", fit.fits},
      {"line", o.line},
      {"limit", std::string(limit_name(fit.limit))},
      {"reason", fit.verdict == Verdict::Fits ? nlohmann::json(nullptr) : nlohmann::json(fit.reason)},
      {"marginal", fit.verdict == Verdict::Marginal
                       ? nlohmann::json{{"short_bytes", fit.margin_short_bytes},
                                        {"sequences_expected", fit.expected_sequences},
                                        {"sequences_upper_bound", fit.upper_sequences}}
                       : nlohmann::json(nullptr)},
      {"conservative", fit.conservative},
      {"required_headroom", fit.required_headroom},
      {"warnings", o.warnings},
      {"model", o.model_id},
      {"model_source", model_source_json(o.model_source)},
      {"engine", o.eval.plan.engine},
      {"engine_version", o.eval.plan.engine_version},
      {"gpu", {{"id", o.gpu.id}, {"name", o.gpu.name}, {"reported_total_bytes", o.gpu.reported_total.count()},
               {"reported_basis", std::string(memory_basis_name(o.gpu.reported_basis))}}},
      {"layout", {{"tp", o.eval.parallel.tp}, {"pp", o.eval.parallel.pp}, {"replicas", o.eval.replicas},
                  {"data_parallel", o.eval.plan.engine_view.value("data_parallel_size", std::uint64_t{1})},
                  {"gpus", o.eval.gpus_total()}, {"hosts_per_replica", hosts_per_replica(o)}}},
      {"workload", {{"batch_per_replica", fit.batch}, {"context", fit.context},
                    {"per_sequence_kv_bytes", fit.per_sequence_kv},
                    {"sequences_in_pool", fit.expected_sequences},
                    {"engine_max_concurrency", fit.engine_max_concurrency ? nlohmann::json(*fit.engine_max_concurrency)
                                                                          : nlohmann::json(nullptr)}}},
      {"per_gpu", {{"expected", figures_json(fit.expected)}, {"upper_bound", figures_json(fit.upper)}}},
      {"bounds_source", "data/" + o.bounds_source},
  };
  if (o.limits) {
    const auto& l = *o.limits;
    nlohmann::json tried = nlohmann::json::array();
    for (const auto& t : l.min_gpus.tried)
      tried.push_back({{"tp", t.parallel.tp}, {"pp", t.parallel.pp}, {"valid", t.valid},
                       {"why_invalid", t.valid ? nlohmann::json(nullptr) : nlohmann::json(t.why_invalid)},
                       {"fits", t.fits}, {"result", t.result}});
    nlohmann::json cards = nlohmann::json::array();
    for (const auto& c : l.smallest_card.tried)
      cards.push_back({{"gpu", c.gpu_id}, {"reported_total_bytes", c.reported_total.count()}, {"fits", c.fits},
                       {"result", c.result}});
    j["limits"] = {
        {"max_batch", limit_json(l.max_batch)},
        {"max_context", limit_json(l.max_context)},
        {"max_concurrency", limit_json(l.max_concurrency)},
        {"max_concurrency_context", l.engine_length},
        {"min_gpus", {{"gpus", l.min_gpus.best ? nlohmann::json(l.min_gpus.best->gpus()) : nlohmann::json(nullptr)},
                      {"tp", l.min_gpus.best ? nlohmann::json(l.min_gpus.best->tp) : nlohmann::json(nullptr)},
                      {"pp", l.min_gpus.best ? nlohmann::json(l.min_gpus.best->pp) : nlohmann::json(nullptr)},
                      {"tried", tried}}},
        {"smallest_card", {{"gpu", l.smallest_card.best ? nlohmann::json(*l.smallest_card.best) : nlohmann::json(nullptr)},
                           {"tried", cards}}},
    };
  }
  j["launch"] = o.launch.argv.empty() && o.launch.note.empty() ? nlohmann::json(nullptr) : launch_json(o.launch);
  if (o.range) j["batch_range"] = range_json(o);
  j["compatibility"] = compat::verdict_json(o.compat);
  return j;
}

std::string check_text(const CheckOutcome& o) {
  std::string s = o.line + "\n";
  for (const auto& w : o.warnings) s += "warning: " + w + "\n";
  if (o.compat.support == compat::Support::Unsupported) return s;
  s += decision_basis(o) + "\n";
  s += "model " + o.model_id + " from the " + model_source_text(o.model_source) + "\n";
  if (!o.launch.argv.empty()) s += "launch: " + o.launch.line() + "\n";
  if (!o.launch.note.empty()) s += "  (" + o.launch.note + ")\n";
  if (o.limits) s += limits_text(*o.limits);
  if (o.range) s += "\n" + range_section(o, false);
  return s;
}

std::string check_markdown(const CheckOutcome& o) {
  if (o.compat.support == compat::Support::Unsupported) {
    std::string s = "## " + o.model_id + " on " + o.gpu.name + "\n\n**" + o.line + "**\n\n";
    for (const auto& w : o.warnings) s += "Warning: " + w + "\n\n";
    return s;
  }
  const auto& fit = o.eval.fit;
  const auto& plan = o.eval.plan;
  std::string s = "## " + o.model_id + " on " + std::to_string(o.eval.gpus_total()) + " x " + o.gpu.name + "\n\n";
  Table cfg({{"item", Align::Left}, {"value", Align::Left}});
  cfg.add_row({"model", o.model_id});
  cfg.add_row({"GPU", o.gpu.id + " (" + format_gib(o.gpu.reported_total) + " reported, " +
                          std::string(memory_basis_name(o.gpu.reported_basis)) + ")"});
  const std::uint64_t engines = plan.engine_view.value("data_parallel_size", std::uint64_t{1});
  const std::uint64_t replica_gpus = o.eval.gpus_per_replica();
  cfg.add_row({"layout", layout(o.eval.parallel, engines) +
                             (o.eval.replicas > 1 ? " x " + std::to_string(o.eval.replicas) + " replicas" : "")});
  cfg.add_row({"engine", plan.engine_profile_note});
  cfg.add_row({"weights / compute", plan.weights_precision + " / " + plan.compute_precision});
  cfg.add_row({"workload", std::to_string(fit.batch) + " sequences x " + std::to_string(fit.context) + " tokens per replica"});
  cfg.add_row({"extra headroom (--headroom)", percent(fit.required_headroom, 1)});
  if (o.eval.replicas > 1 || o.request.rate)
    cfg.add_row({"replicas", std::to_string(o.eval.replicas) +
                                 (o.eval.replicas > 1 ? " (each on its own " + std::to_string(replica_gpus) +
                                                            (replica_gpus == 1 ? " GPU)" : " GPUs)")
                                                      : std::string())});
  if (o.request.rate) {
    cfg.add_row({"load (--rate)", format_number("%.4g", *o.request.rate) + " requests/s, Poisson arrivals" +
                                      (o.eval.replicas > 1 ? ", split evenly over the replicas" : "")});
    if (o.at_rate) {
      std::string targets;
      for (const auto& t : o.at_rate->slo) targets += (targets.empty() ? "" : ", ") + t.text;
      cfg.add_row({"latency targets", (targets.empty() ? std::string("none") : targets) + " (" + o.at_rate->slo_basis + ")"});
    }
  }
  s += cfg.render_markdown() + "\n";
  s += "**" + o.line + "**\n\n" + decision_basis(o) + "\n\n";
  for (const auto& w : o.warnings) s += "Warning: " + w + "\n\n";
  Table mem({{"per GPU", Align::Left}, {"expected", Align::Right}, {"upper bound", Align::Right}});
  const auto row = [&](const std::string& name, Bytes e, Bytes u) { mem.add_row({name, format_gib(e), format_gib(u)}); };
  row("weights", fit.expected.weights, fit.upper.weights);
  row("activation peak", fit.expected.activation, fit.upper.activation);
  row("runtime overhead", fit.expected.overhead, fit.upper.overhead);
  row("KV cache for the workload", fit.expected.kv_needed, fit.upper.kv_needed);
  row("needed", fit.expected.needed, fit.upper.needed);
  row("KV pool", fit.expected.kv_pool, fit.upper.kv_pool);
  row("held by " + fit.engine, fit.expected.held, fit.upper.held);
  row("capacity", fit.expected.capacity, fit.upper.capacity);
  mem.add_row({"spare in the KV pool", signed_gib(fit.expected.spare_bytes) + " (" + percent(fit.expected.spare_fraction, 1) + ")",
               signed_gib(fit.upper.spare_bytes) + " (" + percent(fit.upper.spare_fraction, 1) + ")"});
  s += mem.render_markdown() + "\n";
  if (o.limits) s += "### Limits\n\n" + limits_text(*o.limits) + "\n";
  if (!o.launch.argv.empty()) {
    s += "### Launch\n\n```sh\n" + o.launch.line() + "\n```\n\n";
    if (!o.launch.note.empty()) s += o.launch.note + ".\n\n";
  }
  if (o.range) s += "### Batch range\n\n" + range_section(o, true) + "\n";
  s += "Upper bounds: data/" + o.bounds_source + ". Sizes in GiB (2^30 B).\n";
  return s;
}

}  // namespace vramplan::plan
