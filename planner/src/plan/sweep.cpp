#include "vramplan/plan/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "vramplan/core/error.hpp"
#include "vramplan/memory/encoder_memory.hpp"
#include "vramplan/model/encoder.hpp"
#include "vramplan/perf/hardware_rates.hpp"
#include "vramplan/perf/llamacpp_mmvq.hpp"
#include "vramplan/perf/perf_defaults.hpp"
#include "vramplan/plan/compatibility.hpp"
#include "vramplan/plan/throughput.hpp"
#include "vramplan/model/tp_validity.hpp"
#include "plan/sweep_gpus.hpp"

namespace vramplan::plan {
namespace {

std::uint64_t non_kv(const memory::MemoryPlan& p) {
  return (p.weights_bytes() + p.activation_bytes() + p.overhead_bytes()).count();
}

// `batch`: the batch the figures are planned at (1, and a slope from 2); a pooling model plans each
// of its batches exactly (its activation and allocator replay are not linear in the batch).
GpuFixed fixed_for(const PlanSession& session, const GpuSpec& gpu, const memory::EngineArgs& args,
                   const std::optional<std::string>& weights, std::uint64_t context, const ErrorBounds& bounds,
                   std::uint64_t batch = 1) {
  GpuFixed f;
  f.gpu = gpu.id;
  f.capacity = gpu.reported_total;
  const memory::MemoryPlan config = session.plan(gpu, args, weights, {std::nullopt, context});
  const memory::MemoryPlan one = session.plan(gpu, args, weights, {batch, context});
  const memory::MemoryPlan two = session.plan(gpu, args, weights, {batch + 1, context});
  f.non_kv_1 = non_kv(one);
  f.non_kv_slope = static_cast<std::int64_t>(non_kv(two)) - static_cast<std::int64_t>(f.non_kv_1);
  // The same figures assess_fit takes from a plan: pool, held, and both on the upper bounds.
  const FitResult fit = assess_fit(one, "", 1, context, FitPolicy{}, bounds);
  f.kv_pool = fit.expected.kv_pool;
  f.kv_pool_upper = fit.upper.kv_pool.count();
  f.held_1 = fit.expected.held.count();
  f.held_excess = fit.upper.held.count() - fit.expected.held.count();
  f.start_kv = one.kv_fixed ? 0 : fit.start_kv;
  // A plan without a KV cache (a pooling model) has no budget-sized pool: over the card it does not fit.
  f.budget_pool = !one.kv_fixed && (one.kv.bytes_per_token > 0 || f.kv_pool.count() > 0);
  f.per_seq_longest = fit.per_sequence_kv;
  // A refusal at the longest length may only concern that length (one request must fit the
  // pool); the per-point KV check covers it. An empty pool refuses every length, and so does a
  // refusal of the flags themselves (vLLM's max_model_len beyond the model's positions).
  if (!config.fits && (f.kv_pool.count() == 0 || config.refuses_configuration)) f.refusal = config.reason;
  // Without a KV cache (a pooling model) the configuration's own plan is at the engine's default
  // batch: whether this batch runs is its own plan's answer.
  if (one.kv.bytes_per_token == 0 && f.kv_pool.count() == 0 && !config.refuses_configuration)
    f.refusal = one.fits ? std::string() : one.reason;
  return f;
}

// Why the smallest point of a GPU does not fit, with its numbers (the sweep's misses).
std::string point_reason(const GpuFixed& g, std::uint64_t per_seq, std::uint64_t context, std::uint64_t batch,
                         const FitPolicy& policy, const std::string& engine) {
  const PointResult p = evaluate_point(g, perf::PerfModelShape{}, per_seq, context, batch, policy);
  const std::string seqs = std::to_string(batch) + (batch == 1 ? " sequence" : " sequences") + " of " + std::to_string(context);
  if (p.held > g.capacity.count() && !g.budget_pool)
    return engine + " holds " + format_binary(Bytes(p.held)) + ", more than the GPU's " + format_binary(g.capacity);
  if (batch * per_seq > g.kv_pool.count())
    return "KV cache for " + seqs + " tokens needs " + format_binary(Bytes(batch * per_seq)) + "; the " + engine +
           " KV pool is " + format_binary(g.kv_pool) + " (" + std::to_string(per_seq ? g.kv_pool.count() / per_seq : 0) +
           " sequences)";
  if (p.verdict == Verdict::Marginal && p.held > g.capacity.count())
    return "MARGINAL only (--conservative): with its activation and CUDA-graph reserves " + engine + " holds " +
           format_binary(Bytes(p.held)) + ", more than the GPU's " + format_binary(g.capacity);
  if (p.verdict == Verdict::Marginal) return "MARGINAL only (--conservative): " + seqs + " fit on the expected values, not on the upper bounds";
  return "--headroom " + std::to_string(policy.headroom * 100).substr(0, 4) + "% is more than the KV pool leaves for " + seqs;
}

// The engine's TP / PP flag (--tensor-parallel-size, -tp, ...) names one size; the sweep's
// --tp / --pp lists are the sizes it tries. Either sets the list; both must agree.
std::vector<std::uint64_t> sizes_from_flag(memory::EngineArgs& args, const std::string& flag,
                                           std::vector<std::uint64_t> sizes, bool given, const char* option) {
  const auto it = args.find(flag);
  if (flag.empty() || it == args.end()) return sizes;
  const auto n = memory::arg_u64(args, flag);
  args.erase(it);
  if (given && sizes != std::vector<std::uint64_t>{*n})
    throw_usage("--" + flag + " " + std::to_string(*n) + " and " + option + " disagree: give one of them");
  return {*n};
}

}  // namespace

PointResult evaluate_point(const GpuFixed& g, const perf::PerfModelShape& shape, std::uint64_t per_sequence_kv,
                           std::uint64_t context, std::uint64_t batch, const FitPolicy& policy) {
  PointResult p;
  const std::uint64_t kv = batch * per_sequence_kv;
  const std::int64_t non_kv_b = static_cast<std::int64_t>(g.non_kv_1) + g.non_kv_slope * static_cast<std::int64_t>(batch - 1);
  p.needed = static_cast<std::uint64_t>(non_kv_b) + kv;
  p.held = std::max(g.held_1 + static_cast<std::uint64_t>(std::max<std::int64_t>(0, non_kv_b - static_cast<std::int64_t>(g.non_kv_1))),
                    p.needed);
  const double cap = static_cast<double>(g.capacity.count());
  const std::uint64_t pool = g.kv_pool.count();
  p.spare_fraction = (static_cast<double>(pool) - static_cast<double>(kv)) / cap;
  const auto margin = static_cast<std::uint64_t>(std::ceil(policy.headroom * cap));
  const bool over_card = p.held > g.capacity.count();
  if (!g.refusal.empty() || kv + margin > pool || (over_card && !g.budget_pool)) {
    p.verdict = Verdict::DoesNotFit;
  } else if (over_card || kv + margin > g.kv_pool_upper || g.start_kv > g.kv_pool_upper ||
             p.held + g.held_excess > g.capacity.count()) {
    p.verdict = Verdict::Marginal;
  } else {
    p.verdict = Verdict::Fits;
  }
  p.fits = p.verdict == Verdict::Fits || (p.verdict == Verdict::Marginal && !policy.conservative);
  if (p.fits && g.rates) {
    const perf::DecodeRound round = perf::uniform_decode_round(shape, *g.rates, batch, context);
    p.tpot_s = round.seconds;
    p.tokens_per_s = static_cast<double>(batch) / p.tpot_s;
    p.pipeline_bubble = round.bubble;
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
    const std::vector<GpuSpec> gpus = sweep_candidates(session.gpus(), r.gpus, r.include_mig, r.min_memory);
    GpuCatalog priced = session.gpus();  // the session's catalogue carries no prices (check skips them)
    priced.attach_prices(root.data_file("prices.json"));
    PriceBook prices = PriceBook::from_catalogue(priced);
    if (r.prices_file) prices.apply_file(*r.prices_file, session.gpus());
    const GpuSpec* reference = nullptr;  // the largest GPU: its KV pool holds a sequence
    for (const auto& g : gpus)
      if (!reference || g.reported_total > reference->reported_total) reference = &g;
    if (!reference) throw_usage("no GPU matches the sweep's GPU selection");
    memory::EngineArgs base_args = r.args;
    const std::vector<std::uint64_t> tps = sizes_from_flag(base_args, session.tp_flag(), r.tps, r.tps_given, "--tp");
    const std::vector<std::uint64_t> pps = sizes_from_flag(base_args, session.pp_flag(), r.pps, r.pps_given, "--pp");
    const ErrorBounds bounds =
        ErrorBounds::load(root.data_file("accuracy_bounds.json")).for_engine(std::string(session.engine().name()));
    // A pooling model takes the batch plan and check take (sentence-transformers' encode batch of
    // 32 under hf), and refuses the workload flags it has no use for (TEI's --batch and --context).
    std::vector<std::uint64_t> batches = r.batches;
    const bool pooling = is_pooling_model(session.model());  // once a model: the loops below are hot
    if (pooling) {
      memory::refuse_pooling_workload_flags(session.model(), session.engine().name(),
                                            {r.batches_given, !r.contexts.empty(), false});
      if (!r.batches_given) batches = {session.default_batch(base_args)};
    }
    for (const auto& weights : r.weights) {
      for (const std::uint64_t tp : tps) {
        for (const std::uint64_t pp : pps) {
          if (progress) progress(done++, total);
          const std::string wname = weights.value_or("checkpoint");
          const auto miss = [&](const std::string& gpu, const std::string& why, bool unsupported = false) {
            out.misses.push_back({session.model().id, wname, gpu, tp, pp, why, unsupported});
          };
          if (const TpCheck tc = check_tp(session.model().arch, tp); !tc.valid) {
            miss("*", "invalid TP: " + tc.why);
            continue;
          }
          if (const std::string why = check_pp(session.model().arch, pp); !why.empty()) {
            miss("*", "invalid PP: " + why);
            continue;
          }
          // A pooling model is planned on one GPU (memory/encoder_memory.cpp takes no parallel flags).
          if ((tp > 1 || pp > 1) && is_pooling_model(session.model())) {
            miss("*", "a pooling model is planned on one GPU: tensor / pipeline parallelism is not modelled for it");
            continue;
          }
          if ((tp > 1 && session.tp_flag().empty()) || (pp > 1 && session.pp_flag().empty())) {
            miss("*", std::string(session.engine().name()) + " has no " + (tp > 1 && session.tp_flag().empty() ? "tensor" : "pipeline") +
                          "-parallel option");
            continue;
          }
          const memory::EngineArgs args = session.with_parallel(session.without_context(base_args), {tp, pp});
          std::vector<std::uint64_t> contexts = r.contexts;
          if (contexts.empty()) contexts.push_back(session.planned_context(base_args, {}));
          const std::uint64_t longest = *std::max_element(contexts.begin(), contexts.end());
          // Per context: KV of one sequence (engine's allocation unit), on the reference GPU.
          // The first plan also says how the engine runs a step (its step overhead entry).
          std::vector<std::uint64_t> per_seq;
          std::optional<memory::MemoryPlan> reference_plan;
          for (const std::uint64_t c : contexts) {
            memory::MemoryPlan rp = session.plan(*reference, args, weights, {1, c});
            per_seq.push_back(per_sequence_kv(rp, c));
            if (!reference_plan) reference_plan = std::move(rp);
          }
          const ThroughputModel tm = throughput_model(session, *reference, args, weights, defaults, 0, *reference_plan);
          for (const auto& gpu : gpus) {
            // Compatibility first: a GPU the engine cannot run this on is a miss, whatever its memory.
            const compat::Verdict cv = scenario_compatibility(session, gpu, args, weights);
            if (cv.support == compat::Support::Unsupported) {
              miss(gpu.id, unsupported_line(cv), true);
              continue;
            }
            std::vector<std::string> fallbacks;
            for (const auto& finding : cv.findings) fallbacks.push_back(finding.rule);
            GpuFixed f = fixed_for(session, gpu, args, weights, longest, bounds);
            try {
              // A pooling model decodes nothing: no decode roofline (its inputs/s are in plan's notes).
              if (!is_pooling_model(session.model()))
                f.rates = perf::decode_hardware(
                              perf::perf_hardware_from(gpu, nullptr, tm.compute_dtype, defaults, tm.step_overhead_entry),
                              tm.engine, gpu, tm.block_quantized_share, defaults)
                              .expected;
              perf::amortize_step_overhead(*f.rates, tm.decode_round_steps);
            } catch (const Error& e) {
              if (e.kind() != ErrorKind::Usage) throw;
            }
            // The reference card's per-sequence KV holds where this card's agrees at the longest
            // context; where it does not (a step budget that follows the card), plan each context here.
            std::vector<std::uint64_t> card_per_seq = per_seq;
            const std::size_t longest_i =
                static_cast<std::size_t>(std::max_element(contexts.begin(), contexts.end()) - contexts.begin());
            if (f.per_seq_longest != per_seq[longest_i])
              for (std::size_t ci = 0; ci < contexts.size(); ++ci)
                card_per_seq[ci] = ci == longest_i ? f.per_seq_longest
                                                   : per_sequence_kv(session.plan(gpu, args, weights, {1, contexts[ci]}), contexts[ci]);
            const auto price = prices.price(gpu.id);
            bool any = false;
            for (const std::uint64_t replicas : r.replicas) {
              const std::uint64_t gpus_used = tp * pp * replicas;
              for (std::size_t ci = 0; ci < contexts.size(); ++ci) {
                for (const std::uint64_t b : batches) {
                  ++out.evaluations;
                  // Every replica carries at most ceil(b / R) sequences; the busiest one sets the pace.
                  const std::uint64_t per_replica = ceil_div(b, replicas);
                  // A pooling model (no KV, no decode): its batch at its length, planned as check plans it.
                  const PointResult p =
                      pooling ? evaluate_point(fixed_for(session, gpu, args, weights, contexts[ci], bounds, per_replica), tm.shape,
                                             card_per_seq[ci], contexts[ci], 1, r.policy)
                            : evaluate_point(f, tm.shape, card_per_seq[ci], contexts[ci], per_replica, r.policy);
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
                  row.needed_per_gpu = Bytes(p.needed);
                  row.held_per_gpu = Bytes(p.held);
                  row.capacity = gpu.reported_total;
                  row.spare_fraction = p.spare_fraction;
                  row.verdict = p.verdict;
                  row.tpot_s = p.tpot_s;
                  row.tokens_per_s = p.tpot_s > 0 ? static_cast<double>(b) / p.tpot_s : 0;
                  row.pipeline_bubble = p.pipeline_bubble;
                  if (f.rates) row.throughput_scaled_from = perf::mig_scaling_note(gpu);
                  row.fallbacks = fallbacks;
                  if (price) {
                    for (const auto& period : r.periods) {
                      row.cost_usd.push_back(static_cast<double>(row.billed_gpus) * price->usd_per_gpu_hour * period.hours);
                      if (!std::isfinite(row.cost_usd.back()))
                        throw_usage("the cost of " + std::to_string(row.billed_gpus) + " x " + gpu.id + " over " +
                                    period.label + " overflows at " + std::to_string(price->usd_per_gpu_hour) +
                                    " USD per GPU-hour (" + price->basis + ")");
                    }
                    row.price_basis = price->basis;
                  }
                  out.rows.push_back(std::move(row));
                }
              }
            }
            if (!any) {
              const std::size_t ci = static_cast<std::size_t>(std::min_element(contexts.begin(), contexts.end()) - contexts.begin());
              const std::uint64_t b = ceil_div(*std::min_element(batches.begin(), batches.end()),
                                                *std::max_element(r.replicas.begin(), r.replicas.end()));
              const GpuFixed at = pooling ? fixed_for(session, gpu, args, weights, contexts[ci], bounds, b) : f;
              miss(gpu.id, at.refusal.empty() ? point_reason(at, card_per_seq[ci], contexts[ci], pooling ? 1 : b, r.policy,
                                                             engine_display_name(std::string(session.engine().name())))
                                              : at.refusal);
            }
          }
        }
      }
    }
  }
  if (progress) progress(total, total);
  // Cheapest first (unpriced last), then fewer GPUs, then FITS before MARGINAL, then more spare.
  std::stable_sort(out.rows.begin(), out.rows.end(), [](const SweepRow& a, const SweepRow& b) {
    const bool pa = !a.cost_usd.empty(), pb = !b.cost_usd.empty();
    if (pa != pb) return pa;
    if (pa && a.cost_usd.front() != b.cost_usd.front()) return a.cost_usd.front() < b.cost_usd.front();
    if (a.gpus != b.gpus) return a.gpus < b.gpus;
    if (a.verdict != b.verdict) return a.verdict == Verdict::Fits;
    return a.spare_fraction > b.spare_fraction;
  });
  return out;
}

}  // namespace vramplan::plan
