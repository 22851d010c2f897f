#include "vramplan/memory/sglang_weights.hpp"

#include "vramplan/core/bytes.hpp"
#include "vramplan/memory/vllm_weight_allocation.hpp"

namespace vramplan::memory {

std::vector<Component> sglang_load_extras(const ModelSpec& model, const ResolvedWeights& weights,
                                          const ShardOptions& shard, const SglangLoadExtras& extras) {
  ShardOptions with_ropes = shard;
  with_ropes.count_rope_tables = true;
  std::vector<VllmAllocationStep> steps = vllm_allocation_plan(model, weights, with_ropes);
  std::uint64_t rope = 0;
  std::string terms;
  for (auto& step : steps) {
    if (!step.rope) continue;
    step.rope->dtype_bytes = extras.rope_bytes_per_value;
    step.bytes = checked_mul(checked_mul(step.rope->positions, step.rope->rotary_dim), extras.rope_bytes_per_value);
    rope = checked_add(rope, step.bytes);
    terms += (terms.empty() ? "" : " + ") + std::to_string(step.rope->positions) + " positions x " +
             std::to_string(step.rope->rotary_dim) + " x " + std::to_string(extras.rope_bytes_per_value) + " B";
  }
  const VllmAllocatorReplay r = replay_vllm_allocations(steps);
  const std::uint64_t rounding = r.allocated - r.exact_bytes;
  std::vector<Component> out;
  if (rope > 0)
    out.push_back({"weights.rope_cache", Bytes(rope),
                   "rotary cos/sin caches kept in fp32 on CUDA (one per distinct rope config, not sharded): " + terms +
                       " = " + grouped(rope) + " B"});
  out.push_back({"weights.allocator_rounding", Bytes(rounding),
                 "PyTorch caching allocator over " + std::to_string(r.parameters) +
                     " parameters and caches in construction order (blocks of 512 B, >= 10 MiB requests in 2 MiB "
                     "segments): " + grouped(r.allocated) + " B held - " + grouped(r.exact_bytes) + " B asked = +" +
                     grouped(rounding) + " B"});
  out.push_back({"weights.load_non_torch", extras.non_torch,
                 "memory outside PyTorch left by loading (lazily loaded CUDA modules) = " +
                     grouped(extras.non_torch.count()) + " B (" + extras.non_torch_source + ")"});
  return out;
}

}  // namespace vramplan::memory
