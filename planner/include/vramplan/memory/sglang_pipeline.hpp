// vramplan/memory/sglang_pipeline.hpp — SGLang's pipeline parallelism (--pp-size N) in the memory
// plan: each stage's GPUs hold their own layers and size their own token pool, and every rank then
// takes the smallest pool over the stages.
//
// Read in sglang 0.5.9:
//   - the layer split: python/sglang/srt/distributed/utils.py get_pp_indices, an even split with
//     the remainder one layer each to the LAST stages (vLLM gives it to the stages before the
//     last); SGLANG_PP_LAYER_PARTITION is not modelled;
//   - the embedding on the first stage, the final norm and lm_head on the last (its own copy of
//     tied embeddings): models/llama.py, deepseek_v2.py (PPMissingLayer elsewhere);
//   - each rank's pool: rest = free x mem_fraction_static - its weights, // its cell size (its
//     layers' KV), rounded to a page, then an all_reduce MIN over the world group
//     (model_executor/model_runner_kv_cache_mixin.py: "different pp rank may have different num
//     of layers, so we need to reduce the max_total_num_tokens");
//   - server_args.py: the mem_fraction_static reserve counts tp_size x pp_size ranks, and PP turns
//     the overlap scheduler off (_handle_pipeline_parallelism).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/memory/component.hpp"
#include "vramplan/memory/kv_cache.hpp"
#include "vramplan/memory/sglang_weights.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::memory {

struct SglangPipeline {
  std::uint64_t min_tokens = 0;  //!< the smallest stage pool, in tokens (before the page rounding)
  std::uint64_t binding = 0;     //!< the stage with that pool
  //! The stage the plan shows: the most memory at min_tokens (its weights, KV bytes a token and
  //! cell size in tokens counted by the release).
  std::uint64_t shown = 0;
  std::string shown_layers;  //!< "0-29"
  std::vector<Component> shown_weights;
  std::uint64_t shown_kv_bytes = 0, shown_cell = 0;
  std::string explain;  //!< every stage's layers, weights and pool
};

//! The stages of `shard` (shard.pp of them, split as shard.pp_extra_layers_last says; SGLang's
//! plan sets it): each one's weights (shard_weights and sglang_load_extras), KV bytes a token
//! (kv's layers in its range; `cell` is the whole model's count per token, scaled alike) and
//! pool = floor((static_budget - weights) / cell) tokens.
//! Throws Error(Usage) when kv counts bytes outside its layers (attention-free layers padded into
//! the pool: the split of such a pool over stages is not modelled).
SglangPipeline sglang_pipeline(const ModelSpec& model, const ResolvedWeights& weights, const ShardOptions& shard,
                               const SglangLoadExtras& extras, const KvLayout& kv, std::uint64_t cell,
                               double static_budget);

}  // namespace vramplan::memory
