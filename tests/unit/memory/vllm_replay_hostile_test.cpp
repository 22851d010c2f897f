// vLLM's weight-allocation replay on an odd-but-valid model (issue 14): a rotary table one column
// wide. (Its speed on 100,000 tensors in one layer: tools/bench/scale_bench.cpp.)
#include <gtest/gtest.h>

#include "vramplan/memory/vllm_weight_allocation.hpp"

namespace vramplan::memory {
namespace {

TEST(VllmReplayHostile, OneColumnRopeTableAllocatesNoEmptyTensor) {
  // head_dim 1 gives rotary_dim 1 and rotary_dim / 2 = 0 inverse frequencies: the freqs, cos and
  // sin tensors are empty and PyTorch gives them no block (was: exit 70, "malloc: 0 bytes").
  // 4096 positions: t = 4096 x 4 B = 16 KiB, cache = 4096 x 1 x 4 B = 16 KiB in fp32, then
  // .to(bf16) = 8 KiB; t and the fp32 cache are freed, so 8 KiB stays allocated.
  const std::vector<VllmAllocationStep> plan = {{"rope_cache[0]", 8192, VllmRopeBuild{4096, 1, 2, false}}};
  const auto r = replay_vllm_allocations(plan);
  EXPECT_EQ(r.allocated, 8192u);
  EXPECT_EQ(r.exact_bytes, 8192u);
}

}  // namespace
}  // namespace vramplan::memory
