#include "vramplan/plan/batch_range.hpp"

#include <algorithm>
#include <cstdio>

#include "vramplan/core/error.hpp"

namespace vramplan::plan {
namespace {

std::string ms(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", seconds * 1e3);
  return buf;
}

struct Perf {
  perf::Range tokens_per_s, tpot_s, ttft_s;
};

// The sequences of a row: their prompt (prefilled at once: the burst TTFT) and the tokens each
// holds while decoding (at the end of its answer, the slowest step).
struct Sequences {
  std::uint64_t prompt = 0, decode_context = 0;
};

Perf estimate(const ThroughputModel& m, std::uint64_t batch, std::uint64_t replicas, const Sequences& q) {
  const std::uint64_t per_replica = std::max<std::uint64_t>(1, ceil_div(batch, replicas));
  const perf::DecodeResult d =
      perf::estimate_decode(m.shape, *m.decode_hardware, perf::DecodeBatch{per_replica, q.decode_context});
  const perf::PrefillResult p =
      perf::estimate_prefill(m.shape, *m.hardware, perf::PrefillBatch{per_replica, q.prompt, m.token_budget});
  const double r = static_cast<double>(replicas);
  return {{d.tokens_per_s.low * r, d.tokens_per_s.expected * r, d.tokens_per_s.high * r}, d.step_s, p.time_s};
}

// The first latency target `p` misses, or "".
std::string latency_miss(const Perf& p, const LatencyTargets& t) {
  if (t.max_tpot_s && p.tpot_s.expected > *t.max_tpot_s)
    return "TPOT " + ms(p.tpot_s.expected) + " exceeds --max-tpot " + ms(*t.max_tpot_s);
  if (t.max_ttft_s && p.ttft_s.expected > *t.max_ttft_s)
    return "TTFT " + ms(p.ttft_s.expected) + " exceeds --max-ttft " + ms(*t.max_ttft_s);
  return "";
}

}  // namespace

BatchRange batch_range(const PlanSession& session, const Scenario& given, const FitPolicy& policy,
                       const ErrorBounds& bounds, const ThroughputModel& model, const LatencyTargets& targets,
                       const RangeWorkload& workload, const std::vector<std::uint64_t>& extra_rows) {
  // Memory for the engine's max length, speed and KV for the workload's sequences.
  Scenario scenario = given;
  Sequences seq;
  const std::uint64_t engine_length = session.planned_context(given.args, {std::nullopt, given.context});
  std::string workload_text;
  if (given.context) {
    seq = {*given.context, *given.context};
    workload_text = "sequences of " + std::to_string(*given.context) + " tokens (--context): prefill and decode at that length";
  } else {
    if (workload.input_len == 0 || workload.output_len == 0) throw_usage("--input-len / --output-len must be >= 1");
    // Requests longer than the engine's length are refused by it (vLLM: max_model_len, SGLang:
    // context_length): given lengths beyond it describe no request it serves. The defaults are cut.
    if (!workload.defaulted && workload.input_len + workload.output_len > engine_length)
      throw_usage("--input-len " + std::to_string(workload.input_len) + " + --output-len " + std::to_string(workload.output_len) +
                  " exceeds the engine's length " + std::to_string(engine_length) +
                  (session.context_flag().empty() ? std::string() : " (--" + session.context_flag() + ")") +
                  ": it refuses such requests");
    seq.decode_context = std::min(workload.input_len + workload.output_len, engine_length);
    seq.prompt = std::min(workload.input_len, seq.decode_context);
    scenario.context = seq.decode_context;
    workload_text = std::to_string(workload.input_len) + " prompt + " + std::to_string(workload.output_len) +
                    " output tokens per sequence (--input-len / --output-len" +
                    (workload.defaulted ? ", defaults" : "") + "); the engine keeps its max length " +
                    std::to_string(engine_length) + " for memory";
  }
  BatchRange r;
  r.workload = workload_text;
  const bool has_perf = model.hardware.has_value();
  if (has_perf) r.basis = model.decode_hardware->basis;
  else r.unavailable = model.unavailable;
  if (!has_perf && (targets.max_tpot_s || targets.max_ttft_s))
    r.unavailable += "; --max-tpot / --max-ttft cannot be checked without throughput figures";

  const LimitResult mem = max_batch(session, scenario, policy, bounds);
  r.memory_max = mem.value;
  r.memory_breaks = mem.capped ? "capped: " + mem.cap_reason : mem.breaks;
  Scenario base = scenario;

  // High end: the memory limit, lowered to meet the latency targets (both grow with batch).
  r.high = r.memory_max;
  r.high_reason = r.memory_max ? std::string("largest batch that fits") +
                                     (policy.conservative ? " on the upper bounds" : "") +
                                     (policy.headroom > 0 ? " with " + std::to_string(static_cast<int>(policy.headroom * 100 + 0.5)) + "% headroom" : "") +
                                     (mem.capped ? " (" + mem.cap_reason + ")" : "")
                               : "nothing fits: " + mem.breaks;
  if (has_perf && r.high > 0 && (targets.max_tpot_s || targets.max_ttft_s)) {
    std::uint64_t probes = 0;
    const std::uint64_t latency_max = largest_fitting(
        r.high,
        [&](std::uint64_t b) { return latency_miss(estimate(model, b, scenario.replicas, seq), targets).empty(); },
        probes);
    if (latency_max < r.high) {
      r.high = latency_max;
      r.high_reason = latency_max ? "largest batch meeting the latency targets"
                                  : "no batch meets the latency targets: " +
                                        latency_miss(estimate(model, 1, scenario.replicas, seq), targets);
    }
  }
  // Low end: the knee of the throughput curve below the high end.
  if (r.high > 0) {
    r.low = r.high;
    if (has_perf) {
      r.plateau_tokens_per_s = estimate(model, r.high, scenario.replicas, seq).tokens_per_s.expected;
      std::uint64_t lo = 1, hi = r.high;  // smallest b with tps(b) >= knee x plateau
      while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (estimate(model, mid, scenario.replicas, seq).tokens_per_s.expected >=
            perf::kKneeFraction * r.plateau_tokens_per_s)
          hi = mid;
        else
          lo = mid + 1;
      }
      r.low = lo;
    }
  }

  // The table: powers of two, plus the ends of the range and the memory limit, up to and
  // including the first row over a limit.
  std::vector<std::uint64_t> batches = range_ladder(r);
  batches.push_back(r.memory_max + 1);
  for (const std::uint64_t b : extra_rows)
    if (b > 0 && b <= r.memory_max) batches.push_back(b);
  if (!mem.capped && r.memory_max == 0) batches.push_back(1);
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  for (const std::uint64_t b : batches) {
    if (mem.capped && b > r.memory_max) break;
    BatchRow row;
    row.batch = b;
    base.batch = b;
    const Evaluation e = evaluate(session, base, policy, bounds);
    row.needed_per_gpu = e.fit.expected.needed;
    row.spare_fraction = e.fit.expected.spare_fraction;
    row.verdict = e.fit.verdict;
    row.fits = e.fit.fits;
    row.breaks = e.fit.reason;
    if (has_perf) {
      const Perf p = estimate(model, b, scenario.replicas, seq);
      row.tokens_per_s = p.tokens_per_s;
      row.tpot_s = p.tpot_s;
      row.ttft_s = p.ttft_s;
      if (row.fits) {
        const std::string miss = latency_miss(p, targets);
        if (!miss.empty()) {
          row.fits = false;
          row.breaks = miss;
        }
      }
    }
    r.rows.push_back(row);
    if (!row.fits) break;
  }
  return r;
}

std::vector<std::uint64_t> range_ladder(const BatchRange& r) {
  std::vector<std::uint64_t> batches;
  for (std::uint64_t b = 1; b <= r.memory_max; b *= 2) batches.push_back(b);
  for (const std::uint64_t b : {r.low, r.high, r.memory_max})
    if (b > 0) batches.push_back(b);
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  return batches;
}

}  // namespace vramplan::plan
