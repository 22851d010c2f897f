#include "vramplan/plan/limits.hpp"

#include <algorithm>
#include <functional>

#include "vramplan/core/error.hpp"
#include "vramplan/plan/compatibility.hpp"

namespace vramplan::plan {
namespace {

}  // namespace

std::optional<EngineSequenceCap> engine_sequence_cap(const memory::MemoryPlan& plan) {
  // vLLM max_num_seqs, SGLang max_running_requests (per DP-attention rank: the server runs D of
  // them, model_runner.py max_running_requests // dp_size), TensorRT-LLM max_batch_size.
  for (const char* key : {"max_num_seqs", "max_running_requests", "max_batch_size"}) {
    const auto it = plan.engine_view.find(key);
    if (it == plan.engine_view.end() || !it->is_number_unsigned()) continue;
    std::uint64_t cap = it->get<std::uint64_t>();
    const auto dp = plan.engine_view.find("enable_dp_attention");
    if (std::string(key) == "max_running_requests" && dp != plan.engine_view.end() && dp->is_boolean() && dp->get<bool>())
      cap *= plan.engine_view.value("dp_size", std::uint64_t{1});
    return EngineSequenceCap{cap, key};
  }
  return std::nullopt;
}

namespace {

// Evaluates and reports the reason for a failing value (usage errors of a probe are failures
// too: e.g. a context the engine refuses outright).
bool probe(const PlanSession& session, const Scenario& s, const FitPolicy& policy, const ErrorBounds& bounds,
           std::string* reason) {
  try {
    const Evaluation e = evaluate(session, s, policy, bounds);
    if (!e.fit.fits && reason) *reason = e.fit.reason;
    return e.fit.fits;
  } catch (const Error& err) {
    if (err.kind() != ErrorKind::Usage) throw;
    if (reason) *reason = err.what();
    return false;
  }
}

LimitResult search(std::uint64_t cap, const std::function<Scenario(std::uint64_t)>& make, const PlanSession& session,
                   const FitPolicy& policy, const ErrorBounds& bounds) {
  LimitResult r;
  r.value = largest_fitting(cap, [&](std::uint64_t v) { return probe(session, make(v), policy, bounds, nullptr); },
                            r.probes);
  r.capped = r.value == cap && cap > 0;
  if (!r.capped) {
    ++r.probes;
    probe(session, make(r.value + 1), policy, bounds, &r.breaks);
  }
  return r;
}

}  // namespace

LimitResult max_batch(const PlanSession& session, const Scenario& scenario, const FitPolicy& policy,
                      const ErrorBounds& bounds, std::uint64_t cap) {
  Scenario one = scenario;
  one.batch = one.replicas;
  const Evaluation first = evaluate(session, one, policy, bounds);
  std::string cap_reason = "search limit " + std::to_string(cap);
  if (const auto seqs = engine_sequence_cap(first.plan)) {
    const std::uint64_t engine_cap = seqs->sequences * scenario.replicas;
    if (engine_cap < cap) {
      cap = engine_cap;
      cap_reason = "the engine runs at most " + std::to_string(seqs->sequences) + " sequences per instance (" + seqs->setting + ")";
    }
  }
  // Every probe keeps the length of the first: an engine that splits its context over the
  // sequences (llama.cpp's -c over -np) would otherwise probe ever shorter ones and report them
  // as sequences of the full length.
  const std::uint64_t length = scenario.context.value_or(first.fit.context);
  LimitResult r = search(
      cap,
      [&](std::uint64_t b) {
        Scenario s = scenario;
        s.batch = b;
        s.context = length;
        return s;
      },
      session, policy, bounds);
  if (r.capped) r.cap_reason = cap_reason;
  return r;
}

LimitResult max_context(const PlanSession& session, const Scenario& scenario, const FitPolicy& policy,
                        const ErrorBounds& bounds) {
  const std::uint64_t model_max = session.model().arch.max_position_embeddings;
  const std::uint64_t cap = model_max ? model_max : (1u << 24);
  const auto at = [&](std::uint64_t c) {
    Scenario s = scenario;
    s.args = session.without_context(s.args);
    s.context = c;
    return s;
  };
  // An engine may refuse a length of 1 outright (SGLang: context_length >= 2, prompt + output
  // below it): the search then starts at 2, so the answer is not "0 tokens".
  std::uint64_t floor = 1;
  try {
    evaluate(session, at(1), policy, bounds);
  } catch (const Error& err) {
    if (err.kind() != ErrorKind::Usage) throw;
    floor = 2;
  }
  LimitResult r = search(
      cap, [&](std::uint64_t c) { return at(std::max(c, floor)); }, session, policy, bounds);
  if (r.capped)
    r.cap_reason = model_max ? "the model's max_position_embeddings (" + std::to_string(model_max) + ")"
                             : "search limit " + std::to_string(cap);
  return r;
}

MinGpusResult min_gpus(const PlanSession& session, const Scenario& scenario, const FitPolicy& policy,
                       const ErrorBounds& bounds, std::uint64_t max_gpus) {
  if (max_gpus == 0) throw_usage("--max-gpus must be >= 1");
  const ModelArch& arch = session.model().arch;
  // Layouts by GPU count, then the most TP first (TP keeps every GPU busy every step; PP adds
  // bubbles), i.e. for 8 GPUs: tp8, tp4 pp2, tp2 pp4, tp1 pp8. Beyond the card's fabric (node_gpus,
  // or an NVL72 rack's NVLink domain) TP within it comes first: a TP group across hosts all-reduces
  // twice a layer over the network (docs/performance.md "Across hosts"), so on 8-GPU hosts 16 GPUs
  // try tp8 pp2 before tp16, as vLLM advises for multi-node (docs/serving/parallelism_scaling.md:
  // TP per node, PP across nodes). An engine without PP still gets tp16.
  const std::uint64_t fabric = fabric_gpus(scenario.gpu).value_or(0);
  std::vector<Parallel> layouts;
  for (std::uint64_t n = 1; n <= max_gpus; ++n) {
    const std::size_t first = layouts.size();
    for (std::uint64_t tp = n; tp >= 1; --tp)
      if (n % tp == 0) layouts.push_back({tp, n / tp});
    if (fabric > 0)
      std::stable_partition(layouts.begin() + static_cast<std::ptrdiff_t>(first), layouts.end(),
                            [&](const Parallel& p) { return p.tp <= fabric; });
  }
  MinGpusResult r;
  for (const Parallel& p : layouts) {
    if ((p.tp > 1 && session.tp_flag().empty()) || (p.pp > 1 && session.pp_flag().empty())) continue;
    LayoutOption o;
    o.parallel = p;
    const TpCheck tc = check_tp(arch, p.tp);
    const std::string pp_why = check_pp(arch, p.pp);
    if (!tc.valid || !pp_why.empty()) {
      o.valid = false;
      o.why_invalid = !tc.valid ? tc.why : pp_why;
      // List each invalid TP once (with PP 1), not once per PP.
      if (p.pp == 1 || tc.valid) r.tried.push_back(std::move(o));
      continue;
    }
    Scenario s = scenario;
    s.args = session.with_parallel(s.args, p);
    // A layout the engine refuses on this card (TP across MIG slices, multi-node without a
    // launcher, ...) is no answer, whatever its memory: the rules check and sweep ask first.
    if (const compat::Verdict cv = scenario_compatibility(session, s.gpu, s.args, s.weights);
        cv.support == compat::Support::Unsupported) {
      o.valid = false;
      o.why_invalid = cv.findings.front().message + " [" + cv.findings.front().rule + "]";
      r.tried.push_back(std::move(o));
      continue;
    }
    std::string reason;
    o.fits = probe(session, s, policy, bounds, &reason);
    o.result = o.fits ? "fits" : reason;
    r.tried.push_back(o);
    if (o.fits) {
      r.best = p;
      break;
    }
  }
  return r;
}

SmallestCardResult smallest_card(const PlanSession& session, const Scenario& scenario, const FitPolicy& policy,
                                 const ErrorBounds& bounds, bool include_mig) {
  std::vector<const GpuSpec*> cards;
  for (const auto& g : session.gpus().all())
    if (g.kind == GpuKind::Card || include_mig) cards.push_back(&g);
  std::stable_sort(cards.begin(), cards.end(),
                   [](const GpuSpec* a, const GpuSpec* b) { return a->reported_total < b->reported_total; });
  SmallestCardResult r;
  for (const GpuSpec* g : cards) {
    Scenario s = scenario;
    s.gpu = *g;
    CardOption o{g->id, g->reported_total, false, ""};
    std::string reason;
    o.fits = probe(session, s, policy, bounds, &reason);
    o.result = o.fits ? "fits" : reason;
    r.tried.push_back(o);
    if (o.fits) {
      r.best = g->id;
      break;
    }
  }
  return r;
}

}  // namespace vramplan::plan
