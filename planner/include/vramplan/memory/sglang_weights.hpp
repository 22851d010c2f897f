// vramplan/memory/sglang_weights.hpp — what SGLang's "Load weight end ... mem usage=X GB" counts
// beyond the checkpoint tensors of one rank.
//
// The figure is a difference of torch.cuda.mem_get_info() around loading (model_runner.py
// load_model; get_available_gpu_memory empties the cache first), so it counts allocator blocks and
// memory outside PyTorch, not tensor bytes:
//   - the rotary cos/sin caches, kept in fp32 on CUDA (layers/rotary_embedding.py: "cache needs to
//     be in FP32 for numerical stability"), one per distinct rope configuration, not sharded;
//   - the caching allocator's block rounding: SGLang's model files build the same modules in the
//     same order as vLLM's (QKVParallelLinear, MergedColumnParallelLinear, FusedMoE, ...), so the
//     replay of memory/vllm_weight_allocation.hpp applies with the caches at their fp32 size;
//   - memory outside PyTorch that loading leaves behind (CUDA kernel modules loaded lazily by the
//     first kernels), an engine-data constant measured on the published logs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/memory/component.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::memory {

struct SglangLoadExtras {
  std::uint64_t rope_bytes_per_value = 4;  //!< bytes per cos/sin cache value
  Bytes non_torch;                         //!< memory outside PyTorch left by loading
  std::string non_torch_source;
};

//! The components above for one rank sharded by `shard` (whose count_rope_tables is ignored:
//! the caches are counted here, at their own dtype), in the order rope cache, allocator rounding,
//! non-torch.
std::vector<Component> sglang_load_extras(const ModelSpec& model, const ResolvedWeights& weights,
                                          const ShardOptions& shard, const SglangLoadExtras& extras);

}  // namespace vramplan::memory
