// vramplan/memory/encoder_memory.hpp — memory of a pooling model (embedder / reranker) per engine.
//
// An encoder (model/encoder.hpp) or a decoder served as an embedder holds no KV cache: the GPU
// carries the weights, the activation peak of one forward pass over the largest batch the engine
// runs, the pooled outputs and the engine's fixed overhead. The engines differ in what that
// largest batch is and whether it is padded (docs/encoders.md):
//  * transformers / sentence-transformers: `--batch` inputs padded to `--context` tokens;
//    eager attention materialises batch x heads x seq x seq scores, SDPA does not;
//  * vLLM pooling runner: encoder-only attention layers get no KV cache spec, so no profile run
//    and no pool (vllm/v1/engine/core.py EngineCore._initialize_kv_caches); the peak is the first
//    step scheduling max_num_batched_tokens unpadded tokens, then the pooler;
//  * text-embeddings-inference: warmup runs --max-batch-tokens unpadded tokens on GPU
//    (backends/src/lib.rs Backend::warmup), flash attention (varlen, no scores).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/memory/component.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/engine_data.hpp"

namespace vramplan::memory {

//! One forward pass: `inputs` sequences of `seq_len` tokens each (padded: every input is
//! seq_len long; unpadded engines pass inputs x seq_len = their token budget).
struct EncoderForward {
  std::uint64_t inputs = 1;
  std::uint64_t seq_len = 1;
  std::uint64_t compute_bytes = 2;  //!< bytes per activation element
  bool eager_scores = false;        //!< attention scores materialised (transformers eager)
};

//! The activation peak of one forward pass: the larger of the attention and the MLP live sets
//! of one layer (layers run one after the other under inference_mode, nothing is kept for
//! backward), plus the eager scores when materialised. Each component carries its formula.
std::vector<Component> encoder_forward_activation(const ModelSpec& model, const EncoderForward& f);

//! FLOPs of one input of `seq_len` tokens: 2 x (non-embedding parameters) per token for the
//! matrix multiplies + 4 x seq_len x heads x head_dim per token and layer for QK^T and PV
//! (bidirectional: every token attends to every token).
double encoder_flops_per_input(const ModelSpec& model, std::uint64_t seq_len);

//! Flags that apply to a pooling model under `engine`; any other flag given is Error(Usage) with
//! a one-line message naming the flag and why (no KV cache, no generation).
void refuse_non_pooling_flags(const EngineArgs& args, std::string_view engine, const ModelSpec& model,
                              const std::vector<std::string>& applicable);

//! sentence-transformers' defaults under `hf`: encode(batch_size=32) inputs padded to
//! min(the model's longest input, 512) tokens (the max_seq_length of BERT-style checkpoints).
Workload hf_pooling_default_workload(const ModelSpec& model);
//! TEI's input length before --auto-truncate: the model's longest input (router/src/lib.rs
//! base_input_length: max_position_embeddings - position_offset), and what it serves within
//! `max_batch_tokens` (truncated to it, or refused, per profile: plan_pooling_tei).
std::uint64_t tei_base_input_length(const ModelSpec& model);

//! Workload flags that mean nothing for a pooling model under `engine`, refused with one line
//! naming the flag (docs/encoders.md): --spec-accept-length (nothing is generated, so nothing
//! is drafted), --batch under tei (batches by tokens) and under vllm for an encoder (the pooling
//! runner batches by --max-num-batched-tokens / --max-num-seqs), --context under tei (no such
//! flag: the input length is the model's). `given` names the flags the user gave.
struct PoolingWorkloadFlags {
  bool batch = false, context = false, spec_accept_length = false;
};
void refuse_pooling_workload_flags(const ModelSpec& model, std::string_view engine, const PoolingWorkloadFlags& given);

//! The plans of a pooling model under each engine (engine data `d` of that engine).
MemoryPlan plan_pooling_transformers(const Engine& engine, const EngineProfileData& d, const PlanInput& in);
MemoryPlan plan_pooling_vllm(const Engine& engine, const EngineProfileData& d, const PlanInput& in);
MemoryPlan plan_pooling_tei(const Engine& engine, const EngineProfileData& d, const PlanInput& in);

}  // namespace vramplan::memory
