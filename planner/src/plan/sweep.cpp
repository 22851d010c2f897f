#include "vramplan/plan/sweep.hpp"

#include <algorithm>
#include <memory>

#include "vramplan/core/error.hpp"
#include "vramplan/perf/hardware_rates.hpp"
#include "vramplan/perf/perf_defaults.hpp"
#include "vramplan/plan/throughput.hpp"
#include "vramplan/plan/tp_validity.hpp"

namespace vramplan::plan {
namespace {

std::uint64_t non_kv(const memory::MemoryPlan& p) {
  return (p.weights_bytes() + p.activation_bytes() + p.overhead_bytes()).count();
}

std::vector<GpuSpec> sweep_gpus(const SweepRequest& r, const GpuCatalog& catalog) {
  if (!r.gpus.empty()) return catalog.resolve(r.gpus);
  std::vector<GpuSpec> out;
  for (const auto& g : catalog.all())
    if ((g.kind == GpuKind::Card || r.include_mig) && (!r.min_memory || g.reported_total >= *r.min_memory))
      out.push_back(g);
  return out;
}

GpuFixed fixed_for(const PlanSession& session, const GpuSpec& gpu, const memory::EngineArgs& args,
                   const std::optional<std::string>& weights, std::uint64_t context) {
  GpuFixed f;
  f.gpu = gpu.id;
  f.capacity = gpu.reported_total;
  const memory::MemoryPlan config = session.plan(gpu, args, weights, {std::nullopt, context});
  const memory::MemoryPlan one = session.plan(gpu, args, weights, {1, context});
  const memory::MemoryPlan two = session.plan(gpu, args, weights, {2, context});
  f.non_kv_1 = non_kv(one);
  f.non_kv_slope = static_cast<std::int64_t>(non_kv(two)) - static_cast<std::int64_t>(f.non_kv_1);
  f.kv_pool = one.kv.capacity_tokens ? Bytes(checked_mul(*one.kv.capacity_tokens, one.kv.bytes_per_token))
                                     : one.kv_cache_bytes();
  // A refusal at the longest length may only concern that length (one request must fit the
  // pool); the per-point KV check covers it. An empty pool refuses every length.
  if (!config.fits && f.kv_pool.count() == 0) f.refusal = config.reason;
  return f;
}

}  // namespace

PointResult evaluate_point(const GpuFixed& g, const perf::PerfModelShape& shape, std::uint64_t per_sequence_kv,
                           std::uint64_t context, std::uint64_t batch, double headroom) {
  PointResult p;
  const std::uint64_t kv = batch * per_sequence_kv;
  const std::int64_t non_kv_b = static_cast<std::int64_t>(g.non_kv_1) + g.non_kv_slope * static_cast<std::int64_t>(batch - 1);
  p.used = static_cast<std::uint64_t>(non_kv_b) + kv;
  const double cap = static_cast<double>(g.capacity.count());
  p.headroom_fraction = (cap - static_cast<double>(p.used)) / cap;
  p.fits = g.refusal.empty() && kv <= g.kv_pool.count() && p.headroom_fraction >= headroom;
  if (p.fits && g.rates) {
    const std::uint64_t stages = std::max<std::uint32_t>(shape.pp, 1);
    const std::uint64_t micro = std::min(stages, batch);
    const perf::StepBreakdown s = perf::decode_step(shape, *g.rates, ceil_div(batch, micro), context);
    const double step = std::max(s.memory_s, s.compute_s) + s.comm_s + s.overhead_s;
    const double slots = static_cast<double>(std::max(micro, stages));
    p.tpot_s = slots * step + static_cast<double>(stages) * shape.pp_link_latency_s;
    p.tokens_per_s = static_cast<double>(batch) / p.tpot_s;
    p.pipeline_bubble = 1.0 - static_cast<double>(micro) / slots;
  }
  return p;
}

SweepResult run_sweep(const SweepRequest& r, const DataRoot& root,
                      const std::function<void(std::size_t, std::size_t)>& progress) {
  if (r.models.empty()) throw_usage("--model is required (a comma-separated list)");
  if (r.batches.empty() || r.tps.empty() || r.pps.empty() || r.replicas.empty())
    throw_usage("--batch, --tp, --pp and --replicas need at least one value");
  SweepResult out;
  out.periods = r.periods;
  const auto defaults = perf::load_perf_defaults(root.data_file("perf_defaults.json"));
  std::size_t done = 0;
  const std::size_t total = r.models.size() * r.weights.size() * r.tps.size() * r.pps.size();
  for (const auto& model : r.models) {
    const PlanSession session(root, model, r.engine);
    const std::vector<GpuSpec> gpus = sweep_gpus(r, session.gpus());
    GpuCatalog priced = session.gpus();  // the session's catalogue carries no prices (check skips them)
    priced.attach_prices(root.data_file("prices.json"));
    PriceBook prices = PriceBook::from_catalogue(priced);
    if (r.prices_file) prices.apply_file(*r.prices_file, session.gpus());
    const GpuSpec* reference = nullptr;  // the largest GPU: its KV pool holds a sequence
    for (const auto& g : gpus)
      if (!reference || g.reported_total > reference->reported_total) reference = &g;
    if (!reference) throw_usage("no GPU matches the sweep's GPU selection");
    for (const auto& weights : r.weights) {
      for (const std::uint64_t tp : r.tps) {
        for (const std::uint64_t pp : r.pps) {
          if (progress) progress(done++, total);
          const std::string wname = weights.value_or("checkpoint");
          const auto miss = [&](const std::string& gpu, const std::string& why) {
            out.misses.push_back({session.model().id, wname, gpu, tp, pp, why});
          };
          if (const TpCheck tc = check_tp(session.model().arch, tp); !tc.valid) {
            miss("*", "invalid TP: " + tc.why);
            continue;
          }
          if (const std::string why = check_pp(session.model().arch, pp); !why.empty()) {
            miss("*", "invalid PP: " + why);
            continue;
          }
          if ((tp > 1 && session.tp_flag().empty()) || (pp > 1 && session.pp_flag().empty())) {
            miss("*", std::string(session.engine().name()) + " has no " + (tp > 1 && session.tp_flag().empty() ? "tensor" : "pipeline") +
                          "-parallel option");
            continue;
          }
          const memory::EngineArgs args = session.with_parallel(session.without_context(r.args), {tp, pp});
          std::vector<std::uint64_t> contexts = r.contexts;
          if (contexts.empty()) contexts.push_back(session.planned_context(r.args, {}));
          const std::uint64_t longest = *std::max_element(contexts.begin(), contexts.end());
          // Per context: KV of one sequence (engine's allocation unit), on the reference GPU.
          std::vector<std::uint64_t> per_seq;
          for (const std::uint64_t c : contexts)
            per_seq.push_back(per_sequence_kv(session.plan(*reference, args, weights, {1, c}), c));
          const ThroughputModel tm = throughput_model(session, *reference, args, weights, defaults, 0);
          for (const auto& gpu : gpus) {
            GpuFixed f = fixed_for(session, gpu, args, weights, longest);
            try {
              f.rates = perf::perf_hardware_from(gpu, nullptr, tm.compute_dtype, defaults,
                                                 session.engine().name()).expected;
            } catch (const Error& e) {
              if (e.kind() != ErrorKind::Usage) throw;
            }
            const auto price = prices.price(gpu.id);
            bool any = false;
            for (const std::uint64_t replicas : r.replicas) {
              const std::uint64_t gpus_used = tp * pp * replicas;
              for (std::size_t ci = 0; ci < contexts.size(); ++ci) {
                for (const std::uint64_t b : r.batches) {
                  ++out.evaluations;
                  // Every replica carries at most ceil(b / R) sequences; the busiest one sets the pace.
                  const std::uint64_t per_replica = ceil_div(b, replicas);
                  const PointResult p = evaluate_point(f, tm.shape, per_seq[ci], contexts[ci], per_replica, r.policy.headroom);
                  if (!p.fits) continue;
                  any = true;
                  SweepRow row;
                  row.model = session.model().id;
                  row.weights = wname;
                  row.gpu = gpu.id;
                  row.tp = tp;
                  row.pp = pp;
                  row.replicas = replicas;
                  row.context = contexts[ci];
                  row.batch = b;
                  row.gpus = gpus_used;
                  row.billed_gpus = price ? billed_gpus(gpus_used, price->lot_sizes) : gpus_used;
                  row.used_per_gpu = Bytes(p.used);
                  row.capacity = gpu.reported_total;
                  row.headroom_fraction = p.headroom_fraction;
                  row.tpot_s = p.tpot_s;
                  row.tokens_per_s = p.tpot_s > 0 ? static_cast<double>(b) / p.tpot_s : 0;
                  row.pipeline_bubble = p.pipeline_bubble;
                  if (price) {
                    for (const auto& period : r.periods)
                      row.cost_usd.push_back(static_cast<double>(row.billed_gpus) * price->usd_per_gpu_hour * period.hours);
                    row.price_basis = price->basis;
                  }
                  out.rows.push_back(std::move(row));
                }
              }
            }
            if (!any) miss(gpu.id, f.refusal.empty() ? "no (context, batch) point fits with the headroom" : f.refusal);
          }
        }
      }
    }
  }
  if (progress) progress(total, total);
  // Cheapest first (unpriced last), then fewer GPUs, then more headroom.
  std::stable_sort(out.rows.begin(), out.rows.end(), [](const SweepRow& a, const SweepRow& b) {
    const bool pa = !a.cost_usd.empty(), pb = !b.cost_usd.empty();
    if (pa != pb) return pa;
    if (pa && a.cost_usd.front() != b.cost_usd.front()) return a.cost_usd.front() < b.cost_usd.front();
    if (a.gpus != b.gpus) return a.gpus < b.gpus;
    return a.headroom_fraction > b.headroom_fraction;
  });
  return out;
}

}  // namespace vramplan::plan
