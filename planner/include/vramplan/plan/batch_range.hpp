// vramplan/plan/batch_range.hpp — the recommended batch range and the table behind it.
//
// Batch is the controlled variable: rows at batch 1, 2, 4, 8, ... (and the largest fitting batch
// itself), each with memory per GPU, headroom, estimated output tokens/s of the deployment and
// per-token latency (TPOT), stopping at the first row that breaks a limit (shown, with why)
// instead of averaging it away.
//   high end = largest batch that fits with the requested headroom and meets --max-tpot /
//              --max-ttft when given
//   low end  = smallest batch reaching >= 80 % of the throughput plateau (the expected
//              throughput at the high end; perf::kKneeFraction), searched over every batch
// TTFT of a row = prefill of all the row's prompts at once (a burst of `batch` arrivals), the
// worst case a scheduler meets at that concurrency. Decode runs at the full context.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/perf/serving.hpp"
#include "vramplan/plan/limits.hpp"
#include "vramplan/plan/throughput.hpp"

namespace vramplan::plan {

struct LatencyTargets {
  std::optional<double> max_tpot_s;
  std::optional<double> max_ttft_s;
};

//! An answer length for the batch range when none is given: a chat-length reply. Only the default
//! of --output-len, stated in the output next to the range.
inline constexpr std::uint64_t kDefaultOutputTokens = 256;

//! The sequences the batch range is about when --context is not given: --input-len prompt tokens
//! plus --output-len generated ones. The engine keeps its max length (its pool is sized for it);
//! these shorter sequences take fewer KV blocks, and the speed is theirs.
struct RangeWorkload {
  std::uint64_t input_len = perf::kDefaultPromptTokens;  //!< as `vramplan plan`'s TTFT prompt
  std::uint64_t output_len = kDefaultOutputTokens;
  bool defaulted = true;  //!< neither length was given
};

struct BatchRow {
  std::uint64_t batch = 0;  //!< over all replicas
  Bytes needed_per_gpu;          //!< non-KV + the KV of the row's sequences (fit.hpp)
  double spare_fraction = 0;     //!< unused KV pool / capacity
  Verdict verdict = Verdict::DoesNotFit;
  std::optional<perf::Range> tokens_per_s;  //!< deployment output tokens/s
  std::optional<perf::Range> tpot_s;
  std::optional<perf::Range> ttft_s;
  bool fits = false;
  std::string breaks;  //!< why this row is over a limit ("" when within)
};

struct BatchRange {
  std::vector<BatchRow> rows;
  std::uint64_t memory_max = 0;  //!< largest batch that fits in memory with the headroom
  std::string memory_breaks;     //!< what breaks above it
  std::uint64_t high = 0;        //!< recommended high end (0 = nothing fits)
  std::uint64_t low = 0;         //!< recommended low end
  double plateau_tokens_per_s = 0;
  std::string high_reason;       //!< what sets the high end
  std::string basis;             //!< where the throughput rates come from
  std::string unavailable;       //!< why there is no throughput estimate ("" when there is)
  std::string workload;          //!< the sequences the range is about, and where their lengths come from
};

//! Without scenario.context, the rows hold sequences of `workload` (input + output tokens, at
//! most the engine's length); with it, sequences of that many tokens (prefill and decode at it).
//! `extra_rows`: batches the table shows besides its own (the rate answer of batch_at_rate.hpp).
BatchRange batch_range(const PlanSession& session, const Scenario& scenario, const FitPolicy& policy,
                       const ErrorBounds& bounds, const ThroughputModel& model, const LatencyTargets& targets,
                       const RangeWorkload& workload = {}, const std::vector<std::uint64_t>& extra_rows = {});

//! The batches (over all replicas) the table and the rate view try: powers of two up to the
//! memory limit, the low and high ends and the memory limit itself; ascending, distinct.
std::vector<std::uint64_t> range_ladder(const BatchRange& range);

}  // namespace vramplan::plan
