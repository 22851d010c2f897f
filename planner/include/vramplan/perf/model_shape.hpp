// vramplan/perf/model_shape.hpp — builds the performance model's per-GPU view of a model
// (PerfModelShape) from the one tensor inventory (ModelSpec) and the bytes each tensor takes in
// the chosen precision.
//
// What a decode step streams, per tensor role:
//   token / position embeddings  gathered (a few rows), not streamed — unless the embedding is
//                                tied and doubles as the lm_head, which reads all of it
//   routed experts (stacked)     only the experts the batch touches (perf_model.hpp)
//   MTP, vision, audio           not part of a text decode step
//   everything else              streamed once per step
// Sharding: dense weights / (tp x pp), MLA's down-projections (q_a, kv_a_mqa: ReplicatedLinear in
// vLLM and SGLang) whole on every rank; routed experts TP-sliced (ep = 1) or whole experts spread
// over ep ranks; KV heads per rank max(1, n_kv / tp) (MLA latents replicated), as in vLLM
// (docs/memory-model.md §3.7). DeepSeek sparse attention (index_topk > 0): the indexer's weights
// are replicated on every rank, its heads score every cached indexer key (an attention group of
// its own), and the MLA reads at most index_topk latent rows per query (the group's window).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "vramplan/model/spec.hpp"
#include "vramplan/perf/perf_defaults.hpp"
#include "vramplan/perf/perf_model.hpp"

namespace vramplan::perf {

struct ShapeOptions {
  std::uint32_t tp = 1;  //!< tensor-parallel ranks
  std::uint32_t pp = 1;  //!< pipeline stages (layers split evenly)
  //! Expert-parallel ranks: 1 = every GPU holds a 1/tp slice of every expert; > 1 = each GPU
  //! holds num_experts / ep whole experts.
  std::uint32_t ep = 1;
  double kv_element_bytes = 2;    //!< KV cache bytes per element (bf16 2, fp8 1, q8_0 34/32)
  double activation_bytes = 2;    //!< bytes per element of the TP all-reduce (bf16 2)
  //! The memory plan's KV bytes per token on one GPU (all its layers; MemoryPlan::kv.bytes_per_token).
  //! When set, every attention group's per-layer KV bytes are scaled so that their sum over the
  //! GPU's layers equals it: the memory and the performance model then read the same KV size (a
  //! note records any difference from the shape's own derivation). 0 = derive from the config.
  double kv_bytes_per_token_per_gpu = 0;
  //! The decode attention kernel reads each cached K/V head once per QUERY head (one thread block
  //! per (sequence, query head), no sharing within a GQA group): TensorRT-LLM's masked MHA before
  //! the XQA kernel (docs/performance.md §1). false = once per KV head (FlashAttention,
  //! FlashInfer, XQA: vLLM, SGLang, current TensorRT-LLM).
  bool decode_kv_read_per_query_head = false;
  //! Parallel to the model's tensors: stored as 2-D block-scaled FP8 (memory::ResolvedWeights
  //! ::block_scaled_fp8). Empty = none; counts PerfModelShape::block_fp8_gemms.
  std::vector<bool> block_scaled_fp8{};
  //! The memory plan's recurrent state of one sequence on one GPU (MemoryPlan::kv
  //! .state_bytes_per_sequence: the engine's state dtypes). 0 = derive it from the config (the
  //! recurrent layers' state in the model dtype, split over tp).
  double state_bytes_per_seq_per_gpu = 0;
  //! The engine's counted kernels of this architecture and checkpoint format
  //! (StepOverheadDefaults::counted_layers); nullptr = not counted. Sets
  //! PerfModelShape::decode_kernels, prompt_launches and extra_allreduces.
  const LayerKernelCounts* counted_kernels = nullptr;
  //! SGLang DP attention (memory/sglang_dp_attention.hpp): the attention projections split over
  //! `attention_tp` GPUs (tp / dp) instead of tp, the output head over `head_tp`, and
  //! `dp_attention_ranks` ranks stepping in lockstep (dp_attention_step_seconds). 0 / 1 = off.
  std::uint32_t attention_tp = 0;
  std::uint32_t head_tp = 0;
  std::uint32_t dp_attention_ranks = 1;
  //! vLLM data parallelism (memory/vllm_data_parallel.hpp): the GPUs a sliced routed expert
  //! spreads over, D x tp (FusedMoEParallelConfig.make flattens TP across DP); 0 = tp. Whole
  //! experts over D x tp come as `ep` instead.
  std::uint32_t expert_tp = 0;
  //! vLLM data parallelism: the engines stepping in lockstep (vllm_dp_step_seconds); 1 = off.
  VllmDpLockstep vllm_dp{};
};

//! `tensor_bytes[i]` are the stored bytes of `spec.tensors[i]` in the chosen precision. Throws
//! Error(Usage) when the sizes do not match the inventory or the architecture lacks the
//! dimensions the model needs (layers, hidden size, heads).
PerfModelShape shape_from_model(const ModelSpec& spec, std::span<const std::uint64_t> tensor_bytes,
                                const ShapeOptions& options);

//! What a one-layer draft adds to one of the target's layers, on one GPU.
struct OneLayerDraft {
  double head_bytes = 0, head_params = 0;  //!< the target's output projection, which the draft shares
  //! The draft's input projection (an MTP layer's eh_proj, 2h -> h), stored whole on every GPU.
  double input_proj_bytes = 0, input_proj_params = 0;
};

//! The draft of speculative decoding that is one more decoder layer of the target's kind (a
//! checkpoint's MTP layer, which SGLang and vLLM build as a DeepSeek-V3 decoder layer with the
//! target's output head), per GPU: the target's mean layer (weights, routed experts, attention
//! groups, counted kernels), plus the head (its weight read; its FLOPs, over one token per request,
//! are left out) and the input projection. The mean over layers
//! counts the target's few dense-MLP layers in, which an MTP layer (MoE) does not have; the note
//! says so. Lockstep ranks (SGLang DP attention, vLLM data parallelism) are the target's (the
//! attention share per layer too). Throws Error(Usage) for a target under pipeline parallelism
//! (the engines refuse it).
PerfModelShape one_layer_draft_shape(const PerfModelShape& target, const OneLayerDraft& draft);

}  // namespace vramplan::perf
