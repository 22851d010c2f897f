// vramplan/memory/hf_encoder_replay.hpp — one transformers forward of a BERT-style encoder,
// tensor by tensor, through PyTorch's caching allocator (memory/torch_allocator.hpp).
//
// The closed-form live set of memory/encoder_memory.hpp counts what one layer must hold; what the
// process holds on the device is the allocator's *reserved* memory: whole segments (20 MiB for
// requests of 1-10 MiB, 2 MiB steps above), cached after each forward and reused best-fit, so
// score-sized blocks split for smaller tensors leave gaps the next score matrix cannot use.
// The replay walks the allocations of transformers' eager BERT code (models/bert/modeling_bert.py,
// 4.34: BertModel.forward, BertEmbeddings.forward, BertSelfAttention.forward, BertSelfOutput,
// BertIntermediate, BertOutput, BertPooler; RobertaModel is the same code, "Copied from", but for
// RobertaEmbeddings' per-token position ids and lookup) and
// reports max_memory_allocated() and memory_reserved() as PyTorch would. Beyond the closed form it
// holds: the operand copies at::matmul makes of the permuted q / k / v views, the context's
// .contiguous() copy, the embedding output (bound in BertModel.forward until it returns) and the
// previous forward's outputs (a loop rebinding its result keeps them while the next forward runs).
#pragma once

#include <cstdint>
#include <vector>

#include "vramplan/memory/encoder_memory.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::memory {

struct HfEncoderReplay {
  std::uint64_t weights_allocated = 0;  //!< blocks holding the weights and buffers after loading
  std::uint64_t peak_allocated = 0;     //!< torch.cuda.max_memory_allocated() over the forwards, weights included
  std::uint64_t reserved = 0;           //!< torch.cuda.memory_reserved() after the forwards (never released)
  std::uint64_t workspace = 0;          //!< the cuBLAS workspace among them (allocated at the first GEMM)
  std::uint64_t forwards = 0;           //!< identical forwards replayed until reserved stopped growing
};

//! True for the families whose transformers code the replay follows (bert, roberta).
bool hf_encoder_replay_applies(const ModelSpec& model);

//! Loads the weights (`tensor_bytes`, parallel to model.tensors, in checkpoint order: model.to()
//! moves one parameter at a time) and the two int64 position / token-type buffers, allocates the
//! inputs (input_ids, attention_mask, token_type_ids: int64), then replays identical forwards of
//! `f` until the reserved memory stops growing (at most 4). `f.eager_scores` picks
//! BertSelfAttention (eager) or the SDPA path (no score matrix; the mask expansion is not counted).
HfEncoderReplay replay_hf_encoder_forward(const ModelSpec& model, const std::vector<std::uint64_t>& tensor_bytes,
                                          const EncoderForward& f, std::uint64_t cublas_workspace);

//! The cuBLAS workspace PyTorch allocates through the caching allocator for its handle / stream
//! pair at the first GEMM (aten/src/ATen/cuda/CublasHandlePool.cpp parseChosenWorkspaceSize,
//! CUBLAS_WORKSPACE_CONFIG unset): ":4096:2:16:8" = 2 x 4096 KiB + 8 x 16 KiB, 32 MiB
//! (4096 KiB x 8) on compute capability 9.x and later.
std::uint64_t cublas_workspace_bytes(int compute_major);

}  // namespace vramplan::memory
