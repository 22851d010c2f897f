// vramplan/plan/limits.hpp — limits found by search on the exact model: every probe is a real
// engine plan plus the fit decision (fit.hpp), so block rounding, TP sharding, sliding windows
// and the engine's own refusals are all included. Monotone searches: doubling, then bisection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/plan/evaluate.hpp"
#include "vramplan/model/tp_validity.hpp"

namespace vramplan::plan {

//! A largest value that fits, and what breaks just above it.
struct LimitResult {
  std::uint64_t value = 0;     //!< 0 = not even the smallest value fits
  bool capped = false;         //!< stopped at `cap`, not at a memory limit
  std::string cap_reason;      //!< why there is a cap (engine max-num-seqs, max_position_embeddings)
  std::string breaks;          //!< the reason at value + 1 (or at 1 when value = 0)
  std::uint64_t probes = 0;    //!< plans evaluated
};

//! Largest v in [1, cap] with fits(v), assuming fits is monotone (true ... true false ... false);
//! 0 when fits(1) is false. Exposed for tests.
template <class Fits>
std::uint64_t largest_fitting(std::uint64_t cap, Fits&& fits, std::uint64_t& probes);

//! The engine's own cap on sequences it runs at once per instance, when its plan names one
//! (vLLM max_num_seqs, SGLang max_running_requests over its DP ranks, TensorRT-LLM
//! max_batch_size): more requests wait in its queue rather than run.
struct EngineSequenceCap {
  std::uint64_t sequences = 0;
  std::string setting;  //!< the engine_view key ("max_num_seqs")
};
std::optional<EngineSequenceCap> engine_sequence_cap(const memory::MemoryPlan& plan);

//! Max concurrent sequences (over all replicas) at the scenario's context.
LimitResult max_batch(const PlanSession& session, const Scenario& scenario, const FitPolicy& policy,
                      const ErrorBounds& bounds, std::uint64_t cap = 1u << 20);

//! Max tokens per sequence at the scenario's batch (the engine's length flag follows it).
LimitResult max_context(const PlanSession& session, const Scenario& scenario, const FitPolicy& policy,
                        const ErrorBounds& bounds);

struct LayoutOption {
  Parallel parallel;
  bool valid = true;
  std::string why_invalid;
  bool fits = false;
  std::string result;  //!< fit line or the reason it does not fit
};

struct MinGpusResult {
  std::optional<Parallel> best;        //!< fewest GPUs (then most TP) that fits
  std::vector<LayoutOption> tried;     //!< every layout considered, in order
};

//! Fewest GPUs of the scenario's type: TP x PP with TP in 1, 2, 3, ... max_gpus (valid sizes
//! only, invalid ones listed with why) and PP filling up to max_gpus.
MinGpusResult min_gpus(const PlanSession& session, const Scenario& scenario, const FitPolicy& policy,
                       const ErrorBounds& bounds, std::uint64_t max_gpus = 8);

struct CardOption {
  std::string gpu_id;
  Bytes reported_total;
  bool fits = false;
  std::string result;
};

struct SmallestCardResult {
  std::optional<std::string> best;   //!< smallest reported total that fits
  std::vector<CardOption> tried;     //!< by reported total, ascending, up to and including best
};

//! The card with the least memory that fits the scenario (its parallel layout kept), over the
//! catalogue's cards, plus its MIG slices when `include_mig`.
SmallestCardResult smallest_card(const PlanSession& session, const Scenario& scenario, const FitPolicy& policy,
                                 const ErrorBounds& bounds, bool include_mig);

// ---- implementation of the template ------------------------------------------------------------
template <class Fits>
std::uint64_t largest_fitting(std::uint64_t cap, Fits&& fits, std::uint64_t& probes) {
  ++probes;
  if (cap == 0 || !fits(1)) return 0;
  std::uint64_t good = 1, bad = 0;  // bad = 0: no failing value seen yet
  while (bad == 0) {
    const std::uint64_t next = good > cap / 2 ? cap : good * 2;
    if (next == good) return good;  // reached the cap
    ++probes;
    if (fits(next)) good = next;
    else bad = next;
  }
  while (bad - good > 1) {
    const std::uint64_t mid = good + (bad - good) / 2;
    ++probes;
    if (fits(mid)) good = mid;
    else bad = mid;
  }
  return good;
}

}  // namespace vramplan::plan
