// vramplan/memory/weights.hpp — resident weight bytes per GPU under tensor / pipeline parallelism.
//
// Two steps. resolve_weights(): the bytes of every tensor of the inventory as the engine holds
// it (checkpoint quantization kept; --dtype / --weights / online fp8 applied to the linear
// layers). shard_weights(): which part of each tensor one TP rank of one PP stage holds —
// column/row-parallel projections split by TP, norms and routers replicated, vocab padded to a
// multiple of `vocab_pad` and split, KV projections replicated when num_kv_heads < TP, the last
// PP stage holding the final norm and lm_head (its own copy when embeddings are tied), plus the
// rotary cos/sin caches one per distinct rope configuration (engine-mechanisms.md items 1, 2, 6, 7).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/memory/component.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan {
class QuantCatalog;
struct QuantFormat;
}

namespace vramplan::memory {

struct WeightRequest {
  std::optional<std::string> dtype;         //!< --dtype (auto/bfloat16/float16/float32)
  std::optional<std::string> quantization;  //!< --quantization (engine's method name)
  std::optional<std::string> weights;       //!< --weights: a weight scheme (quant/scheme.hpp)
  bool downcast_fp32 = true;                //!< dtype=auto serves fp32 checkpoints in bf16
};

//! Weights the plan took in place of what the checkpoint stores (--weights): the engine must be told
//! to load them (plan/launch_command.cpp). Set only when they differ from the serving dtype.
struct PlannedWeights {
  std::string scheme;         //!< canonical scheme name ("fp8", "nf4", "gptq-4bit-g128", "gguf:Q4_K_M")
  std::string engine_method;  //!< the --quantization method that loads it ("" if none)
  //! The checkpoint is already quantized (a quantization_config or quantized tensors), so the
  //! engine cannot quantize it again at load.
  bool checkpoint_quantized = false;
};

struct ResolvedWeights {
  std::vector<std::uint64_t> tensor_bytes;  //!< parallel to ModelSpec::tensors (whole tensor)
  //! Parallel to tensor_bytes: stored as 2-D block-scaled FP8 (DeepSeek-V3's 128 x 128 tiles),
  //! which some engines' kernel stacks run at an extra cost per GEMM (perf::ShapeOptions).
  std::vector<bool> block_scaled_fp8;
  std::string weights_precision;            //!< "bf16", "fp8-e4m3 (linear) + bf16", ...
  std::string compute_precision;            //!< activation dtype ("bf16")
  std::uint64_t compute_bytes = 2;          //!< bytes per activation element
  std::vector<std::string> notes;
  std::optional<PlannedWeights> planned;    //!< when --weights replaced the checkpoint's format
};

//! Throws Error(Usage) for a dtype / quantization it cannot model (naming it).
//! The format of the config's torch_dtype; Error(InputFile) naming the file's field when no format
//! has that name (plan and inspect alike).
const QuantFormat& config_dtype_format(const ModelSpec& model, const QuantCatalog& quant);

ResolvedWeights resolve_weights(const ModelSpec& model, const QuantCatalog& quant,
                                const WeightRequest& request);

//! The layers [first, end) of pipeline stage `stage` of `pp`: an even split, the remainder one
//! layer each to the stages before the last (vLLM vllm/distributed/utils.py get_pp_indices) or,
//! with `extra_layers_last`, to the last stages (SGLang python/sglang/srt/distributed/utils.py
//! get_pp_indices: "the last N partitions will have one extra layer"; SGLANG_PP_LAYER_PARTITION
//! not modelled).
std::pair<std::uint64_t, std::uint64_t> pp_layer_range(std::uint64_t num_layers, std::uint64_t pp,
                                                        std::uint64_t stage, bool extra_layers_last = false);

struct ShardOptions {
  std::uint64_t tp = 1;
  std::uint64_t pp = 1;
  std::uint64_t stage = 0;
  std::uint64_t vocab_pad = 64;    //!< vocabulary rows padded to a multiple of this
  bool count_rope_tables = true;   //!< engine keeps cos/sin caches in "model weights"
  //! Gemma 4 attention_k_eq_v layers get a V slot copied from k_proj (vLLM / SGLang build a full
  //! QKVParallelLinear there; llama.cpp and transformers use K itself).
  bool k_eq_v_value_slot = false;
  //! SGLang DP attention (--enable-dp-attention): the attention projections split over the
  //! attention TP group (tp / dp ranks), the token embedding and the lm_head over their own groups.
  //! 0 = tp (plain tensor parallelism).
  std::uint64_t attention_tp = 0, embedding_tp = 0, head_tp = 0;
  //! vLLM data parallelism (--data-parallel-size D): the routed experts' group, D x TP GPUs
  //! (FusedMoEParallelConfig.make flattens TP across DP), every other tensor over the rank's TP.
  //! 0 = tp.
  std::uint64_t expert_tp = 0;
  //! vLLM's sequence-parallel MoE (data parallelism with --enable-expert-parallel and TP > 1,
  //! from 0.11): the shared experts whole on every GPU (deepseek_v2.py DeepseekV2MLP built with
  //! disable_tp=is_sequence_parallel). 0 = tp.
  std::uint64_t shared_expert_tp = 0;
  //! SGLang's split of the layers over the stages (pp_layer_range: the extra layers last).
  bool pp_extra_layers_last = false;
};

//! How a vLLM MXFP4 MoE kernel backend lays out the experts of one TP rank
//! (engine-mechanisms.md item 8). create_weights (vllm/model_executor/layers/quantization/mxfp4.py
//! Mxfp4MoEMethod) rounds the rank's intermediate size and the hidden size up; the kernel layout
//! may pad each GEMM again: w13 is [N = 2 x intermediate, K = hidden], w2 [N = hidden, K =
//! intermediate], packed fp4 values padded to (value_n, value_k) multiples, e8m0 scales (one per
//! 32 K elements) to (scale_n, scale_k) multiples (triton_kernels Hopper swizzle).
struct MoePadding {
  std::string backend;                    //!< "triton", "marlin", "sm100"
  std::uint64_t intermediate_multiple = 1;
  std::uint64_t hidden_multiple = 1;
  std::uint64_t bias_bytes = 2;           //!< bytes per bias element as held
  std::uint64_t value_n_multiple = 1, value_k_multiple = 1;
  std::uint64_t scale_n_multiple = 1, scale_k_multiple = 1;
};

//! Replaces the bytes of the expert tensors (gate_up / down values, scales and biases) by their
//! padded size, expressed so that shard_weights() hands each of the `tp` ranks exactly its padded
//! shard (column-split tensors: tp x the rank's bytes; the down bias, whole on every rank: the
//! rank's bytes). Returns the padded per-rank shapes as explain text ("" when there are no experts).
std::string pad_moe_experts(const ModelSpec& model, ResolvedWeights& weights, std::uint64_t tp,
                            const MoePadding& padding);

//! True for a k_proj whose copy the engine also keeps as the V part of its fused QKV
//! (ShardOptions::k_eq_v_value_slot on a Gemma 4 attention_k_eq_v full layer): shard_weights and
//! vLLM's allocation replay count it twice.
bool copied_into_value_slot(const ModelArch& arch, const TensorInfo& t, const ShardOptions& options);

//! The bytes of tensor `t` (whole tensor: `bytes`) that one of `tp` ranks holds, by the split
//! rules of shard_weights (column/row/vocab/KV/fused-QKV; 0 for tensors not resident, e.g. MTP).
//! Which PP stage holds the tensor is not decided here.
std::uint64_t tensor_rank_bytes(const ModelSpec& model, const TensorInfo& t, std::uint64_t bytes, std::uint64_t tp,
                                std::uint64_t vocab_pad);

//! The ranks a tensor of `role` is split over under `options` (its own group where ShardOptions
//! gives one: attention, embedding, lm_head, routed and shared experts; else tp).
std::uint64_t split_degree(TensorRole role, const ShardOptions& options);

//! Weight components of one rank of one stage: decoder layers, embedding, lm_head, other
//! (final norm, vision tower, ...), rope caches.
std::vector<Component> shard_weights(const ModelSpec& model, const ResolvedWeights& weights,
                                     const ShardOptions& options);

}  // namespace vramplan::memory
