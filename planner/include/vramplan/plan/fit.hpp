// vramplan/plan/fit.hpp — the fit decision per GPU for a workload: three-valued, with the two
// quantities every verdict names.
//
// Per GPU (the engine's limiting rank / stage):
//   held      = what the engine allocates on the card, what nvidia-smi shows: weights +
//               activation peak + overheads + its KV allocation (vLLM, SGLang, TensorRT-LLM: the
//               whole preallocated pool; llama.cpp: the -c cells; HF: the batch's KV)
//   needed    = weights + activation peak + overheads + the KV of the requested sequences
//   KV needed = batch x KV of one sequence of `context` tokens, in the engine's own allocation
//               unit (vLLM / TRT-LLM blocks, SGLang tokens), from the engine's KV figures
//   KV pool   = what the engine has for KV (paged engines: what its budget leaves; HF: the free
//               card; llama.cpp: the cells it allocates)
//   spare     = KV pool - KV needed: what the workload leaves unused of what the engine can give it
//
// Verdict (bounds.hpp gives every non-KV component an upper bound from the observed errors):
//   DOES NOT FIT — on the expected values the engine refuses, the pool does not hold the
//                  sequences, or the spare is below --headroom (an extra user margin, default 0);
//   MARGINAL     — it fits on the expected values but not on the upper bounds (by how much is said
//                  in GiB and in sequences);
//   FITS         — it fits on the upper bounds too.
// On the upper bounds, an engine that sizes its pool from what is left (vLLM, SGLang, TRT-LLM, HF)
// loses the non-KV excess from the pool, and a component captured after the pool is sized (vLLM
// 0.19's CUDA graphs: Component::outside_kv_budget) adds to what it holds; an engine with a fixed
// KV allocation (llama.cpp) holds the whole excess on top. Data-parallel replicas each get
// ceil(batch / replicas).
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
  double headroom = 0.0;      //!< extra spare share of capacity required per GPU (0.10 = 10 %)
  bool conservative = false;  //!< MARGINAL counts as DOES NOT FIT (limits, sweep, exit code)
  bool accept_marginal = false;  //!< MARGINAL counts as FITS for the exit code (the CLI's --accept-marginal)
};

//! Per-GPU figures of one side (expected or upper bound).
struct FitFigures {
  Bytes capacity;    //!< runtime-reported total per GPU
  Bytes weights, activation, overhead;
  Bytes kv_pool;     //!< KV memory the engine has after its other reservations
  Bytes kv_needed;   //!< batch x per-sequence KV
  Bytes needed;      //!< weights + activation + overhead + kv_needed
  Bytes held;        //!< what the engine allocates on the card
  std::int64_t spare_bytes = 0;  //!< kv_pool - kv_needed (negative when short)
  double spare_fraction = 0;     //!< spare_bytes / capacity
  Bytes non_kv() const { return weights + activation + overhead; }
};

enum class Verdict { Fits, Marginal, DoesNotFit };
std::string_view verdict_name(Verdict v);  //!< "FITS", "MARGINAL", "DOES NOT FIT"

//! The first thing that breaks, in order of checking.
enum class Limit {
  None,      //!< fits
  Engine,    //!< the engine refuses (no room for KV blocks, one max-length request does not fit)
  KvCache,   //!< KV for the workload exceeds the engine's KV pool
  Card,      //!< what the engine holds exceeds the card (a fixed KV allocation, graphs on top)
  Headroom,  //!< fits, but with less spare than --headroom asks
};
std::string_view limit_name(Limit limit);  //!< "none", "engine", "kv_cache", "card", "headroom"

struct FitResult {
  std::uint64_t batch = 1;         //!< concurrent sequences per replica
  std::uint64_t context = 0;       //!< tokens per sequence
  std::uint64_t per_sequence_kv = 0;  //!< bytes per GPU of one sequence of `context` tokens
  std::uint64_t start_kv = 0;      //!< bytes per GPU of one sequence of the engine's max length
  std::optional<double> engine_max_concurrency;  //!< sequences of `context` the pool holds
  std::string engine;              //!< display name: "vLLM", "SGLang", "TensorRT-LLM", "llama.cpp", "HF"
  FitFigures expected, upper;
  double required_headroom = 0;
  Verdict verdict = Verdict::DoesNotFit;
  Limit limit = Limit::None;       //!< on the expected values (DOES NOT FIT) or the bounds (MARGINAL)
  bool fits = false;               //!< the decision: FITS, or MARGINAL unless the policy is conservative
  bool conservative = false;
  std::string reason;              //!< DOES NOT FIT: what breaks; MARGINAL: what breaks on the bounds
  std::int64_t margin_short_bytes = 0;    //!< MARGINAL: how much the upper bounds lack (> 0)
  std::uint64_t upper_sequences = 0;      //!< sequences of `context` the pool holds on the upper bounds
  std::uint64_t expected_sequences = 0;   //!< ... on the expected values
};

//! Per-sequence KV bytes per GPU at the plan's context, from the engine's KV figures:
//! capacity_tokens x bytes_per_token / max_concurrency (exact for block pools: blocks per
//! request x block bytes). Falls back to bytes_per_token x context when the pool is empty.
std::uint64_t per_sequence_kv(const memory::MemoryPlan& plan, std::uint64_t context);

//! "vLLM", "SGLang", "TensorRT-LLM", "llama.cpp", "HF transformers" for a plan's engine name.
std::string engine_display_name(const std::string& engine);

//! Judges one plan (made with the engine at its max length and `batch`) for `batch` sequences
//! of `context` tokens per replica. `engine_refusal` is the engine's reason when it refuses the
//! configuration itself (a plan of the same configuration without a batch, so that "the batch
//! does not fit the pool" is judged here, with the numbers); "" when it accepts it. `kv_plan`,
//! when given, is a plan made at max length = `context` (sequences shorter than the engine's
//! configured maximum): its KV figures give the per-sequence KV.
FitResult assess_fit(const memory::MemoryPlan& plan, const std::string& engine_refusal, std::uint64_t batch,
                     std::uint64_t context, const FitPolicy& policy, const ErrorBounds& bounds,
                     const memory::MemoryPlan* kv_plan = nullptr);

//! "FITS h100-sxm-80 x4 tp4: needs 39.3 GiB, vLLM holds 73.0 of 79.2 GiB; KV pool 34.3 GiB = 54
//! sequences of 8192", "MARGINAL ...; on the upper bounds ..." or "DOES NOT FIT ...: <reason>".
std::string fit_line(const FitResult& fit, const std::string& gpu_id, std::uint64_t gpus,
                     std::uint64_t tp, std::uint64_t pp, std::uint64_t replicas);

}  // namespace vramplan::plan
