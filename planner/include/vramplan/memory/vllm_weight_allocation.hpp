// vramplan/memory/vllm_weight_allocation.hpp — the parameters vLLM allocates while it builds a
// model, in module-construction order, replayed through PyTorch's caching allocator
// (memory/torch_allocator.hpp) to give what "Model loading took X GiB" counts: allocator blocks,
// not tensor bytes.
//
// vLLM builds the model under the target device (model_loader/base_loader.py: `with
// target_device: model = initialize_model(...)`), so every parameter is a torch.empty on the GPU,
// allocated in __init__ order. The parameters are derived from the inventory by a table (role ->
// construction slot), not per model: per decoder layer, attention first (qkv_proj = q, k, v
// concatenated, QKVParallelLinear; MLA's fused_qkv_a_proj / q_b / kv_b), o_proj, the rope cache
// (built by get_rope() when the first layer's attention is constructed), q/k norms, then the
// MLP (gate_up_proj = gate + up, MergedColumnParallelLinear; down_proj) or the MoE block (router,
// shared experts, experts stacked as w13 [E, 2I, H] and w2 [E, H, I], FusedMoE.create_weights),
// then the layer norms; before the layers the vision tower (multimodal wrappers build it first)
// and the token embedding; after them the final norm and lm_head. A weight and its bias are two
// parameters. Each parameter's bytes are the engine's per-rank bytes (weights.hpp:
// tensor_rank_bytes), so quantized formats enter with the final sizes the precision plan gives.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/memory/component.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::memory {

//! How one rotary cos/sin cache is built (rotary_embedding/base.py RotaryEmbeddingBase:
//! _compute_cos_sin_cache in fp32 on the default device, then .to(dtype)): t = arange(P) [P]
//! fp32, freqs = outer(t, inv_freq) [P, R/2], cos and sin [P, R/2] (YaRN-style tables multiply by
//! mscale: a second tensor each, the first freed), cache = cat(cos, sin) [P, R]; the scratch is
//! freed when the function returns, the fp32 cache after .to(dtype) (a no-op for fp32 models).
struct VllmRopeBuild {
  std::uint64_t positions = 0, rotary_dim = 0, dtype_bytes = 2;
  bool mscale = false;  //!< yarn / deepseek_yarn: cos = freqs.cos() * mscale
};

//! One kept allocation, in construction order: a parameter, or a rope cache built as `rope` says.
struct VllmAllocationStep {
  std::string name;  //!< "layers.3.qkv_proj.weight", "rope_cache[0]", ...
  std::uint64_t bytes = 0;
  std::optional<VllmRopeBuild> rope;
};

//! The allocation sequence of one rank of one PP stage (zero-byte tensors left out).
std::vector<VllmAllocationStep> vllm_allocation_plan(const ModelSpec& model, const ResolvedWeights& weights,
                                                     const ShardOptions& options);

struct VllmAllocatorReplay {
  std::size_t parameters = 0;     //!< kept tensors (parameters and rope caches)
  std::uint64_t exact_bytes = 0;  //!< their bytes as requested
  std::uint64_t allocated = 0;    //!< memory_allocated() after the replay
  std::uint64_t peak = 0;         //!< max_memory_allocated() during it
  std::uint64_t reserved = 0;     //!< memory_reserved() after it
};

VllmAllocatorReplay replay_vllm_allocations(const std::vector<VllmAllocationStep>& plan);

//! "weights.allocator_rounding": allocated - exact bytes of the replay, with its explain text.
Component vllm_allocator_rounding(const ModelSpec& model, const ResolvedWeights& weights,
                                  const ShardOptions& options);

}  // namespace vramplan::memory
