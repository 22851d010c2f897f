#include "vramplan/plan/fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "plan/numbers.hpp"

namespace vramplan::plan {
namespace {

FitFigures figures(const memory::MemoryPlan& plan, Bytes weights, Bytes activation, Bytes overhead, Bytes pool,
                   Bytes kv_needed, Bytes held) {
  FitFigures f;
  f.capacity = plan.gpu_total;
  f.weights = weights;
  f.activation = activation;
  f.overhead = overhead;
  f.kv_pool = pool;
  f.kv_needed = kv_needed;
  f.needed = weights + activation + overhead + kv_needed;
  f.held = held;
  f.spare_bytes = static_cast<std::int64_t>(pool.count()) - static_cast<std::int64_t>(kv_needed.count());
  f.spare_fraction =
      f.capacity.count() ? static_cast<double>(f.spare_bytes) / static_cast<double>(f.capacity.count()) : 0.0;
  return f;
}

// The engine's KV pool: its token capacity x bytes per token (the pool a paged engine carves
// into blocks; for engines that allocate per request, what is left for KV).
Bytes kv_pool(const memory::MemoryPlan& plan) {
  if (plan.kv.capacity_tokens && plan.kv.bytes_per_token)
    return Bytes(checked_mul(*plan.kv.capacity_tokens, plan.kv.bytes_per_token));
  return plan.kv_cache_bytes();
}

// A pooling model's plan: no KV cache at all (memory/encoder_memory.cpp no_kv), so no pool whose
// size absorbs the other components.
bool has_kv_cache(const memory::MemoryPlan& plan) {
  return plan.kv.bytes_per_token > 0 || kv_pool(plan).count() > 0;
}

// What the non-KV components may take beyond their expected values, split by whether the
// engine's pool absorbs it (sized from what is left) or the engine holds it on top.
struct Excess {
  std::uint64_t in_budget = 0, on_top = 0;
};

Excess excess(const memory::MemoryPlan& plan, const ErrorBounds& bounds) {
  Excess e;
  for (const auto* parts : {&plan.weights, &plan.activation, &plan.overhead})
    for (const auto& u : bounds.uses(*parts))
      (plan.kv_fixed || u.outside_kv_budget ? e.on_top : e.in_budget) += u.extra.count();
  return e;
}

std::uint64_t sequences_in(std::int64_t bytes, std::uint64_t per_sequence) {
  return bytes > 0 && per_sequence ? static_cast<std::uint64_t>(bytes) / per_sequence : 0;
}

std::string sequences_text(std::uint64_t n, std::uint64_t context) {
  return std::to_string(n) + (n == 1 ? " sequence" : " sequences") + " of " + std::to_string(context);
}

// The sequence counts are what the pool holds beside --headroom's spare (share x the card's
// total): said where they are printed, so "24.2 GiB = 10 sequences" does not read as 48.
std::string headroom_kept(const FitResult& fit) {
  if (fit.required_headroom <= 0) return "";
  const double kept = std::ceil(fit.required_headroom * static_cast<double>(fit.expected.capacity.count()));
  return " beside the " + format_binary(Bytes(static_cast<std::uint64_t>(kept))) + " --headroom " +
         percent(fit.required_headroom, 1) + " keeps spare";
}

}  // namespace

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Fits: return "FITS";
    case Verdict::Marginal: return "MARGINAL";
    case Verdict::DoesNotFit: return "DOES NOT FIT";
  }
  return "DOES NOT FIT";
}

std::string_view limit_name(Limit limit) {
  switch (limit) {
    case Limit::None: return "none";
    case Limit::Engine: return "engine";
    case Limit::KvCache: return "kv_cache";
    case Limit::Card: return "card";
    case Limit::Headroom: return "headroom";
  }
  return "none";
}

std::string engine_display_name(const std::string& engine) {
  if (engine == "vllm") return "vLLM";
  if (engine == "sglang") return "SGLang";
  if (engine == "trtllm") return "TensorRT-LLM";
  if (engine == "llamacpp") return "llama.cpp";
  if (engine == "hf") return "HF transformers";
  return engine;
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
  r.engine = engine_display_name(plan.engine);
  const memory::MemoryPlan& kvp = kv_plan ? *kv_plan : plan;
  r.per_sequence_kv = per_sequence_kv(kvp, context);
  // One sequence of the engine's max length must fit its pool for it to start (vLLM's
  // check_enough_kv_cache_memory), unless it caps requests at the pool (SGLang's max_req_len).
  r.start_kv = plan.kv_fixed || plan.engine_view.contains("max_req_len") ? 0 : per_sequence_kv(plan, context);
  r.engine_max_concurrency = kvp.kv.max_concurrency;
  const Bytes kv_needed(checked_mul(batch, r.per_sequence_kv));
  const Bytes pool = kv_pool(plan);
  const Bytes held = plan.total_bytes();
  r.expected = figures(plan, plan.weights_bytes(), plan.activation_bytes(), plan.overhead_bytes(), pool, kv_needed,
                       held);
  const Excess x = excess(plan, bounds);
  const Bytes pool_upper(pool.count() > x.in_budget ? pool.count() - x.in_budget : 0);
  r.upper = figures(plan, bounds.upper_sum(plan.weights), bounds.upper_sum(plan.activation),
                    bounds.upper_sum(plan.overhead), pool_upper, kv_needed, held + Bytes(x.on_top));

  // --headroom: spare KV room the user wants on top of the requested sequences.
  const auto margin = static_cast<std::int64_t>(std::ceil(policy.headroom * static_cast<double>(plan.gpu_total.count())));
  r.expected_sequences = sequences_in(r.expected.spare_bytes + static_cast<std::int64_t>(kv_needed.count()) - margin,
                                      r.per_sequence_kv);
  r.upper_sequences = sequences_in(r.upper.spare_bytes + static_cast<std::int64_t>(kv_needed.count()) - margin,
                                   r.per_sequence_kv);
  const FitFigures& e = r.expected;
  const std::string of_seqs = std::to_string(batch) + (batch == 1 ? " sequence" : " sequences") + " of " +
                              std::to_string(context) + " tokens";
  if (!engine_refusal.empty()) {
    r.limit = Limit::Engine;
    r.reason = engine_refusal;
  } else if (e.kv_needed > e.kv_pool) {
    r.limit = Limit::KvCache;
    r.reason = "KV cache for " + of_seqs + " needs " + format_binary(e.kv_needed) + "; the " + r.engine + " KV pool is " +
               format_binary(e.kv_pool) + " (" + sequences_text(r.expected_sequences, context) + ")";
  } else if ((plan.kv_fixed || !has_kv_cache(plan)) && e.held > e.capacity) {  // a pool sized from a budget fits it by construction
    // A plan without a KV cache (a pooling model) has no pool to shrink: over the card, its
    // batch runs out of memory (the engine's own reason when the plan gives one).
    r.limit = Limit::Card;
    r.reason = !plan.fits && !plan.reason.empty()
                   ? plan.reason
                   : r.engine + " holds " + format_binary(e.held) + ", more than the " + format_binary(e.capacity) + " of the GPU";
  } else if (e.spare_bytes < margin) {
    r.limit = Limit::Headroom;
    r.reason = "--headroom " + percent(policy.headroom, 1) + " asks " + format_binary(Bytes(static_cast<std::uint64_t>(margin))) +
               " spare in the KV pool; " + of_seqs + " leave " +
               format_binary(Bytes(static_cast<std::uint64_t>(std::max<std::int64_t>(0, e.spare_bytes))));
  }
  if (r.limit != Limit::None) {
    r.verdict = Verdict::DoesNotFit;
    r.fits = false;
    return r;
  }
  // Expected values fit: the same checks on the upper bounds decide between FITS and MARGINAL.
  const FitFigures& u = r.upper;
  const std::int64_t kv_short = static_cast<std::int64_t>(kv_needed.count()) + margin - static_cast<std::int64_t>(u.kv_pool.count());
  const std::int64_t start_short = static_cast<std::int64_t>(r.start_kv) - static_cast<std::int64_t>(u.kv_pool.count());
  // What is held on top of a budget-sized pool can exceed the card (vLLM's graphs). So can a pool
  // sized as a share of the card beside reserves the engine only estimates: SGLang starts with
  // weights + pool = mem_fraction_static of the memory, and its own activation and CUDA-graph
  // reserve estimates (server_args.py) may want more than the rest. It starts; a long prefill or a
  // graph capture may then run out of memory: MARGINAL on the expected values already. Only a
  // plan with a budget-sized KV pool has such reserves; one without a KV cache over the card
  // was refused above.
  const std::int64_t card_short = plan.kv_fixed || x.on_top > 0 || !has_kv_cache(plan)
                                      ? static_cast<std::int64_t>(u.held.count()) - static_cast<std::int64_t>(u.capacity.count())
                                      : 0;
  const std::int64_t reserves_over =
      plan.kv_fixed || !has_kv_cache(plan) ? 0 : static_cast<std::int64_t>(e.held.count()) - static_cast<std::int64_t>(e.capacity.count());
  r.margin_short_bytes = std::max({kv_short, start_short, card_short, reserves_over, std::int64_t{0}});
  if (r.margin_short_bytes == 0) {
    r.verdict = Verdict::Fits;
  } else {
    r.verdict = Verdict::Marginal;
    const std::string short_text = format_binary(Bytes(static_cast<std::uint64_t>(r.margin_short_bytes))) + " short";
    if (reserves_over == r.margin_short_bytes && reserves_over > card_short) {
      r.limit = Limit::Card;
      r.reason = format_binary(Bytes(static_cast<std::uint64_t>(reserves_over))) +
                 " over the card with its activation and CUDA-graph reserves: it starts, but a long prefill or a "
                 "graph capture may run out of memory";
    } else if (card_short == r.margin_short_bytes) {
      r.limit = Limit::Card;
      r.reason = "on the upper bounds " + r.engine + " holds " + format_binary(u.held) + " of " + format_binary(u.capacity) +
                 " (" + short_text + ")";
    } else {
      r.limit = kv_short == r.margin_short_bytes && policy.headroom > 0 && kv_short <= margin ? Limit::Headroom : Limit::KvCache;
      r.reason = "on the upper bounds the KV pool is " + format_binary(u.kv_pool) + " = " +
                 sequences_text(r.upper_sequences, context) + headroom_kept(r) + " (" + short_text;
      if (start_short == r.margin_short_bytes && start_short > kv_short)
        r.reason += "; one sequence of the engine's max length needs " + format_binary(Bytes(r.start_kv));
      r.reason += ")";
    }
  }
  r.fits = r.verdict == Verdict::Fits || !policy.conservative;
  return r;
}

std::string fit_line(const FitResult& fit, const std::string& gpu_id, std::uint64_t gpus, std::uint64_t tp,
                     std::uint64_t pp, std::uint64_t replicas) {
  std::string layout = gpu_id + " x" + std::to_string(gpus);
  if (tp > 1) layout += " tp" + std::to_string(tp);
  if (pp > 1) layout += " pp" + std::to_string(pp);
  // Data-parallel copies: replicas, or vLLM's --data-parallel-size engines (more GPUs than tp x pp).
  const std::uint64_t copies = replicas * std::max<std::uint64_t>(1, gpus / std::max<std::uint64_t>(1, replicas * tp * pp));
  if (copies > 1) layout += " dp" + std::to_string(copies);
  std::string line = std::string(verdict_name(fit.verdict)) + " " + layout + ": ";
  if (fit.verdict == Verdict::DoesNotFit) return line + fit.reason;
  const FitFigures& e = fit.expected;
  line += "needs " + gib1(e.needed) + " GiB" + (gpus > 1 ? " per GPU" : "") + ", " + fit.engine + " holds " +
          gib1(e.held) + " of " + gib1(e.capacity) + " GiB; " +
          (e.kv_pool.count() == 0 && fit.expected_sequences == 0
               ? std::string("no KV cache (a pooling model)")
               : "KV pool " + format_binary(e.kv_pool, 1) + " = " + sequences_text(fit.expected_sequences, fit.context) +
                     headroom_kept(fit));
  if (fit.verdict == Verdict::Marginal) line += "; " + fit.reason;
  return line;
}

}  // namespace vramplan::plan
