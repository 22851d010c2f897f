#include "vramplan/plan/fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "plan/numbers.hpp"

namespace vramplan::plan {
namespace {

FitFigures figures(Bytes capacity, Bytes weights, Bytes activation, Bytes overhead, Bytes pool, Bytes kv_needed) {
  FitFigures f;
  f.capacity = capacity;
  f.weights = weights;
  f.activation = activation;
  f.overhead = overhead;
  f.kv_pool = pool;
  f.kv_needed = kv_needed;
  f.used = weights + activation + overhead + kv_needed;
  f.headroom_bytes = static_cast<std::int64_t>(capacity.count()) - static_cast<std::int64_t>(f.used.count());
  f.headroom_fraction = capacity.count() ? static_cast<double>(f.headroom_bytes) / static_cast<double>(capacity.count()) : 0.0;
  return f;
}

// The engine's KV pool: its token capacity x bytes per token (the pool a paged engine carves
// into blocks; for engines that allocate per request, what is left for KV).
Bytes kv_pool(const memory::MemoryPlan& plan) {
  if (plan.kv.capacity_tokens && plan.kv.bytes_per_token)
    return Bytes(checked_mul(*plan.kv.capacity_tokens, plan.kv.bytes_per_token));
  return plan.kv_cache_bytes();
}

}  // namespace

std::string_view limit_name(Limit limit) {
  switch (limit) {
    case Limit::None: return "none";
    case Limit::Engine: return "engine";
    case Limit::KvCache: return "kv_cache";
    case Limit::Headroom: return "headroom";
  }
  return "none";
}

std::uint64_t per_sequence_kv(const memory::MemoryPlan& plan, std::uint64_t context) {
  const auto& kv = plan.kv;
  if (kv.capacity_tokens && *kv.capacity_tokens > 0 && kv.max_concurrency && *kv.max_concurrency > 0) {
    const double bytes = static_cast<double>(*kv.capacity_tokens) * static_cast<double>(kv.bytes_per_token) /
                         *kv.max_concurrency;
    return static_cast<std::uint64_t>(std::llround(bytes));
  }
  return checked_mul(kv.bytes_per_token, context);
}

FitResult assess_fit(const memory::MemoryPlan& plan, const std::string& engine_refusal, std::uint64_t batch,
                     std::uint64_t context, const FitPolicy& policy, const ErrorBounds& bounds,
                     const memory::MemoryPlan* kv_plan) {
  FitResult r;
  r.batch = batch;
  r.context = context;
  r.conservative = policy.conservative;
  r.required_headroom = policy.headroom;
  const memory::MemoryPlan& kvp = kv_plan ? *kv_plan : plan;
  r.per_sequence_kv = per_sequence_kv(kvp, context);
  r.engine_max_concurrency = kvp.kv.max_concurrency;
  const Bytes kv_needed(checked_mul(batch, r.per_sequence_kv));
  const Bytes pool = kv_pool(plan);
  r.expected = figures(plan.gpu_total, plan.weights_bytes(), plan.activation_bytes(), plan.overhead_bytes(), pool,
                       kv_needed);
  // Upper bound: every non-KV component at its bound; whatever they take beyond the expected
  // value comes out of the KV pool (every engine sizes the pool from what is left).
  const Bytes w = bounds.upper_sum(plan.weights), a = bounds.upper_sum(plan.activation),
              o = bounds.upper_sum(plan.overhead);
  const std::uint64_t extra = (w + a + o).count() - r.expected.non_kv().count();
  const Bytes pool_upper(pool.count() > extra ? pool.count() - extra : 0);
  r.upper = figures(plan.gpu_total, w, a, o, pool_upper, kv_needed);

  const FitFigures& d = r.decided();
  const std::string side = policy.conservative ? " (upper bound)" : "";
  if (!engine_refusal.empty()) {
    r.limit = Limit::Engine;
    r.reason = engine_refusal;
  } else if (d.kv_needed > d.kv_pool) {
    r.limit = Limit::KvCache;
    r.reason = "KV cache for " + std::to_string(batch) + (batch == 1 ? " sequence" : " sequences") + " of " +
               std::to_string(context) + " tokens needs " + format_gib(d.kv_needed) + "; " + format_gib(d.kv_pool) +
               " is left after weights, activations and overheads" + side;
  } else if (d.headroom_fraction < policy.headroom) {
    r.limit = Limit::Headroom;
    r.reason = "headroom " + percent(d.headroom_fraction) + " is below the required " + percent(policy.headroom) +
               " (" + format_gib(d.used) + " used of " + format_gib(d.capacity) + " per GPU" + side + ")";
  }
  r.fits = r.limit == Limit::None;
  return r;
}

std::string fit_line(const FitResult& fit, const std::string& gpu_id, std::uint64_t gpus, std::uint64_t tp,
                     std::uint64_t pp, std::uint64_t replicas) {
  std::string layout = gpu_id + " x" + std::to_string(gpus);
  if (tp > 1) layout += " tp" + std::to_string(tp);
  if (pp > 1) layout += " pp" + std::to_string(pp);
  if (replicas > 1) layout += " dp" + std::to_string(replicas);
  const FitFigures& d = fit.decided();
  if (!fit.fits && fit.limit != Limit::Headroom) return "DOES NOT FIT " + layout + ": " + fit.reason;
  std::string line = (fit.fits ? "FITS " : "DOES NOT FIT ") + layout + ": " + gib1(d.used) + "/" + gib1(d.capacity) +
                     " GiB per GPU, headroom " + percent(d.headroom_fraction);
  if (fit.conservative) line += " (upper bound)";
  if (!fit.fits) line += " < required " + percent(fit.required_headroom);
  return line;
}

}  // namespace vramplan::plan
