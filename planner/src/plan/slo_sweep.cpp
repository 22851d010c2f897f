#include "vramplan/plan/slo_sweep.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "vramplan/core/error.hpp"
#include "vramplan/model/encoder.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"

namespace vramplan::plan {
namespace {

// One (model, weights, GPU, TP, PP) layout that the static sweep found able to start.
struct Layout {
  std::string model, weights_label, gpu;
  std::optional<std::string> weights;
  std::uint64_t tp = 1, pp = 1;
  auto key() const { return std::tie(model, weights_label, gpu, tp, pp); }
};

memory::PlanRequest plan_request(const SloSweepRequest& r, const PlanSession& session, const Layout& l) {
  memory::PlanRequest p;
  p.model = l.model;
  p.gpu = l.gpu;
  p.engine = r.sweep.engine;
  p.weights = l.weights;
  p.args = session.with_parallel(r.sweep.args, Parallel{l.tp, l.pp});
  p.spec_accept_length = r.spec_accept_length;
  if (!r.sweep.contexts.empty() && !session.context_flag().empty())
    p.args[session.context_flag()] = std::to_string(r.sweep.contexts.front());
  return p;
}

}  // namespace

SloSweepResult run_slo_sweep(const SloSweepRequest& r, const DataRoot& root,
                             const std::function<void(std::size_t, std::size_t)>& progress) {
  // Without the engine's speculative flags no layout drafts: refused once, not as a miss of each.
  if (r.spec_accept_length && !r.sweep.args.count("speculative-config") && !r.sweep.args.count("speculative-algorithm"))
    throw_usage(sim::kAcceptLengthWithoutSpeculation);
  if (!(r.rate_per_s > 0)) throw_usage("sweep --rate: must be a positive number of requests/s");
  if (r.slo.empty()) throw_usage("sweep --rate: give the latency targets with --slo");
  // Static pruning at batch 1, one replica: does the engine start at all?
  SweepRequest statics = r.sweep;
  statics.batches = {1};
  statics.replicas = {1};
  if (statics.contexts.size() > 1) statics.contexts.resize(1);
  const SweepResult pruned = run_sweep(statics, root);
  SloSweepResult out;
  out.periods = r.sweep.periods;
  std::map<std::tuple<std::string, std::string, std::string, std::uint64_t, std::uint64_t>, Layout> layouts;
  for (const SweepRow& row : pruned.rows) {
    Layout l{row.model, row.weights, row.gpu, std::nullopt, row.tp, row.pp};
    if (row.weights != "checkpoint") l.weights = row.weights;
    layouts.emplace(l.key(), l);
  }
  for (const SweepMiss& m : pruned.misses)
    out.misses.push_back({m.model, m.weights, m.gpu, m.tp, m.pp, (m.unsupported ? "" : "memory: ") + m.why});

  const PriceBook prices = load_price_book(
      root, r.sweep.prices_file ? std::optional<std::filesystem::path>(*r.sweep.prices_file) : std::nullopt);

  std::map<std::string, std::unique_ptr<PlanSession>> sessions;
  std::size_t done = 0;
  for (const auto& [key, l] : layouts) {
    if (progress) progress(done++, layouts.size());
    auto& session = sessions[l.model];
    if (!session) session = std::make_unique<PlanSession>(root, l.model, r.sweep.engine);
    // A pooling model generates nothing: no TTFT or TPOT target applies (its job: plan --documents).
    if (is_pooling_model(session->model()))
      throw_usage("--rate / --slo simulate generation: " + session->model().id +
                  " is a pooling model with no TTFT or TPOT (size its embedding job with vramplan plan --documents N)");
    sim::PreparedEngine engine;
    const memory::PlanRequest request = plan_request(r, *session, l);
    try {
      engine = sim::prepare_engine(request, root);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::DoesNotFit && e.kind() != ErrorKind::Usage) throw;
      out.misses.push_back({l.model, l.weights_label, l.gpu, l.tp, l.pp, std::string("simulator: ") + e.what()});
      continue;
    }
    ++out.simulated_layouts;
    MaxRateAnswer max_rate;
    try {
      max_rate = find_max_rate(engine, r.workload, r.slo, r.options);
    } catch (const Error& e) {  // e.g. prompts longer than this layout's context: a miss of this layout
      if (e.kind() != ErrorKind::Usage) throw;
      out.misses.push_back({l.model, l.weights_label, l.gpu, l.tp, l.pp, std::string("SLO: ") + e.what()});
      continue;
    }
    if (!max_rate.found) {
      out.misses.push_back({l.model, l.weights_label, l.gpu, l.tp, l.pp,
                            "SLO: even a light load misses " + max_rate.binding});
      continue;
    }
    if (replicas_at_least(r.rate_per_s, max_rate) > kMaxReplicas) {
      out.misses.push_back({l.model, l.weights_label, l.gpu, l.tp, l.pp,
                            "SLO: needs more than " + std::to_string(kMaxReplicas) + " replicas of " +
                                format_number("%.4g", max_rate.rate_per_s) + " requests/s (not simulated)"});
      continue;
    }
    const ReplicaAnswer rep = replicas_for(engine, r.workload, r.slo, r.rate_per_s, max_rate, prices, r.sweep.periods, r.options);
    if (!rep.met) {
      out.misses.push_back({l.model, l.weights_label, l.gpu, l.tp, l.pp,
                            "SLO: not met with up to " + std::to_string(rep.replicas) + " replicas"});
      continue;
    }
    SloSweepRow row{l.model, l.weights_label, l.gpu, l.tp, l.pp, rep.replicas, rep.gpus, max_rate.rate_per_s,
                    max_rate.binding, sim::held_shares(max_rate.at_rate, engine.rules.dp_ranks).most, rep.per_replica.ttft.p99, rep.per_replica.tpot.p99, rep.per_replica.kv_usage.p99,
                    {}, rep.usd_per_million_output_tokens, rep.price_basis,
                    launch_command(engine.plan, request.args, l.model)};
    for (const auto& p : rep.periods) row.cost_usd.push_back(p.usd);
    out.rows.push_back(std::move(row));
  }
  std::stable_sort(out.rows.begin(), out.rows.end(), [](const SloSweepRow& a, const SloSweepRow& b) {
    const bool pa = !a.cost_usd.empty(), pb = !b.cost_usd.empty();
    if (pa != pb) return pa;  // priced rows first
    if (pa && a.cost_usd.front() != b.cost_usd.front()) return a.cost_usd.front() < b.cost_usd.front();
    return a.gpus < b.gpus;
  });
  return out;
}

}  // namespace vramplan::plan
