// vramplan/memory/vllm_encoder_profile.hpp — what vLLM's multimodal encoder profiling keeps alive.
//
// For a multimodal model, GPUModelRunner.profile_run (vllm/v1/worker/gpu_model_runner.py) first
// builds `batched_dummy_mm_inputs = _get_mm_dummy_batch(modality, N)` — N copies of the dummy
// item of the maximum feature size, batched onto the GPU — runs `embed_multimodal` on them and
// stores the outputs in `self.encoder_cache`. Only then come `_dummy_run(max_num_tokens)` and
// `_dummy_sampler_run`; `encoder_cache.clear()` follows them, and the local
// `batched_dummy_mm_inputs` lives until profile_run returns. So both the batched pixel values and
// the embeddings sit under the text forward and the sampler, i.e. under the peak the text law
// describes (vllm_activation.hpp):
//
//   N       = max(1, min(budget // P, max_num_seqs x max(1, min(999, max_model_len // P))))
//             (vllm/multimodal/encoder_budget.py MultiModalBudget._get_max_items; 999 = the
//              default limit_mm_per_prompt, vllm/config/multimodal.py get_limit_per_prompt)
//   budget  = max(max_num_batched_tokens, P)  (v1/core/encoder_cache_manager.py
//             compute_mm_encoder_budget: both the compute budget and the cache size default to
//             max_num_batched_tokens, raised to one item)
//   held    = N x (pixel values per item + P x h) x a
//             (inputs are cast to the model dtype: InputProcessingContext.call_hf_processor
//              maybe_cast_dtype; the embeddings are the projector output, P x h each)
//
// with P the embeddings per item and h the width of one cached embedding (the text hidden size,
// or ModelArch::mm_embedding_width: Qwen3-VL's deepstack levels widen it). Per family, P and the
// pixel values of the largest dummy item come from the model builder (model/vision_*.cpp): the
// processor's image_size_with_most_features as vLLM's <model>.py ProcessingInfo computes it. The encoder's own transient peak (before the text forward) is
// not modelled: it is below the text-phase peak for the Gemma-3 records (32 SigLIP images of
// 4096 patches: ~1 GiB per MLP intermediate), and the profile takes the larger of the two.
#pragma once

#include <cstdint>
#include <string>

#include "vramplan/model/spec.hpp"

namespace vramplan::memory {

struct VllmEncoderProfile {
  std::uint64_t items = 0;          //!< N dummy items
  std::uint64_t budget_tokens = 0;  //!< encoder budget
  double held_bytes = 0;            //!< pixel values + cached embeddings
  std::string explain;
};

//! Zero (items 0) for a text-only model or one whose per-item size the config does not fix.
VllmEncoderProfile vllm_encoder_profile(const ModelArch& arch, std::uint64_t max_num_batched_tokens,
                                        std::uint64_t max_num_seqs, std::uint64_t max_model_len,
                                        std::uint64_t compute_bytes);

}  // namespace vramplan::memory
