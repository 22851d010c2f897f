// vramplan/plan/fit.hpp — fit and headroom per GPU for a workload, naming the first thing that
// breaks.
//
// Per GPU (the engine's limiting rank / stage):
//   used      = weights + activation peak + overheads + KV the workload needs
//   KV needed = batch x KV of one sequence of `context` tokens, in the engine's own allocation
//               unit (vLLM blocks, TRT-LLM blocks, SGLang tokens): the engine's KV capacity
//               figures give it, so block rounding and sliding-window groups are the engine's.
//   KV pool   = what the engine leaves for KV after everything else (its own budget rule)
//   headroom  = capacity - used, and as % of capacity (the runtime-reported total)
// It fits when the engine accepts the configuration, the KV needed fits the pool, and the headroom
// is at least the requested one. Expected figures decide by default; --conservative decides on
// the upper bounds (bounds.hpp). Data-parallel replicas each get ceil(batch / replicas).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "vramplan/core/bytes.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/plan/bounds.hpp"

namespace vramplan::plan {

//! What the user asks on top of the engine configuration.
struct FitPolicy {
  double headroom = 0.10;     //!< required free share of capacity per GPU (0.10 = 10 %)
  bool conservative = false;  //!< decide on upper bounds instead of expected values
};

//! Per-GPU figures of one side (expected or upper bound).
struct FitFigures {
  Bytes capacity;    //!< runtime-reported total per GPU
  Bytes weights, activation, overhead;
  Bytes kv_pool;     //!< KV memory the engine has after its other reservations
  Bytes kv_needed;   //!< batch x per-sequence KV
  Bytes used;        //!< weights + activation + overhead + kv_needed
  std::int64_t headroom_bytes = 0;  //!< capacity - used (negative when over)
  double headroom_fraction = 0;     //!< headroom_bytes / capacity
  Bytes non_kv() const { return weights + activation + overhead; }
};

//! The first thing that breaks, in order of checking.
enum class Limit {
  None,      //!< fits
  Engine,    //!< the engine refuses (no room for KV blocks, one max-length request does not fit)
  KvCache,   //!< KV for the workload exceeds the engine's KV pool
  Headroom,  //!< fits, but with less headroom than asked
};
std::string_view limit_name(Limit limit);  //!< "none", "engine", "kv_cache", "headroom"

struct FitResult {
  std::uint64_t batch = 1;         //!< concurrent sequences per replica
  std::uint64_t context = 0;       //!< tokens per sequence
  std::uint64_t per_sequence_kv = 0;  //!< bytes per GPU of one sequence of `context` tokens
  std::optional<double> engine_max_concurrency;  //!< sequences of `context` the pool holds
  FitFigures expected, upper;
  bool conservative = false;       //!< which side decided
  double required_headroom = 0.10;
  Limit limit = Limit::None;
  bool fits = false;
  std::string reason;              //!< what breaks, with the numbers ("" when it fits)
  const FitFigures& decided() const { return conservative ? upper : expected; }
};

//! Per-sequence KV bytes per GPU at the plan's context, from the engine's KV figures:
//! capacity_tokens x bytes_per_token / max_concurrency (exact for block pools: blocks per
//! request x block bytes). Falls back to bytes_per_token x context when the pool is empty.
std::uint64_t per_sequence_kv(const memory::MemoryPlan& plan, std::uint64_t context);

//! Judges one plan (made with the engine at `context` and `batch`) for `batch` sequences per
//! replica. `engine_refusal` is the engine's reason when it refuses the configuration itself
//! (a plan of the same configuration without a batch, so that "the batch does not fit the pool"
//! is judged here, with the numbers); "" when it accepts it. `kv_plan`, when given, is a plan
//! made at max length = `context` (sequences shorter than the engine's configured maximum): its
//! KV figures give the per-sequence KV.
FitResult assess_fit(const memory::MemoryPlan& plan, const std::string& engine_refusal, std::uint64_t batch,
                     std::uint64_t context, const FitPolicy& policy, const ErrorBounds& bounds,
                     const memory::MemoryPlan* kv_plan = nullptr);

//! "FITS h100-sxm-80 x2 tp2: 61.2/79.1 GiB per GPU, headroom 22.6%" or
//! "DOES NOT FIT h100-sxm-80 x1: <reason>".
std::string fit_line(const FitResult& fit, const std::string& gpu_id, std::uint64_t gpus,
                     std::uint64_t tp, std::uint64_t pp, std::uint64_t replicas);

}  // namespace vramplan::plan
