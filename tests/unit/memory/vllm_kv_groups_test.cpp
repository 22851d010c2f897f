#include <gtest/gtest.h>

#include "vramplan/memory/vllm_kv_groups.hpp"

namespace vramplan::memory {
namespace {

KvLayout layout(std::uint64_t full, std::uint64_t sliding, std::uint64_t window, std::uint64_t bytes) {
  KvLayout l;
  for (std::uint64_t i = 0; i < full + sliding; ++i) {
    LayerKv k;
    k.layer = static_cast<int>(i);
    const bool is_sliding = i < sliding;
    k.kind = is_sliding ? LayerAttention::Sliding : LayerAttention::Full;
    k.window = is_sliding ? window : 0;
    k.bytes_per_token = bytes;
    l.bytes_per_token += bytes;
    l.layers.push_back(k);
  }
  return l;
}

TEST(VllmKvGroups, UniformModelIsOneGroup) {
  // Llama-3.1-8B: 32 layers x 4,096 B/token/layer; block 16 -> 2 MiB per block.
  const auto g = vllm_kv_groups(layout(32, 0, 0, 4096), 16, 8192, 8192, true);
  EXPECT_EQ(g.num_groups, 1u);
  EXPECT_EQ(g.block_bytes, 2097152u);
  EXPECT_EQ(g.blocks_per_request, 512u);  // cdiv(8192, 16)
}

TEST(VllmKvGroups, Gemma3PatternMakesSixGroups) {
  // Gemma-3-12B: 8 full + 40 sliding (window 1024), 8,192 B/token/layer. group_size = 8;
  // full -> 1 group, sliding -> 5 groups. Block = 16 x 8,192 x 8 = 1 MiB.
  const auto g = vllm_kv_groups(layout(8, 40, 1024, 8192), 16, 8192, 8192, true);
  EXPECT_EQ(g.group_size, 8u);
  EXPECT_EQ(g.num_groups, 6u);
  EXPECT_EQ(g.block_bytes, 1048576u);
  // Per request: full 512 + 5 sliding groups x (cdiv(min(1023 + 8192, 8192), 16) + 1 = 513) = 3,077
  // (llm-d 0.19 log: 48,867 blocks / 3,077 = 15.88 = the printed max concurrency).
  EXPECT_EQ(g.blocks_per_request, 3077u);
}

TEST(VllmKvGroups, WithoutHybridAllocatorSlidingLayersAreFull) {
  const auto g = vllm_kv_groups(layout(8, 40, 1024, 8192), 16, 8192, 8192, false);
  EXPECT_EQ(g.num_groups, 1u);
  EXPECT_EQ(g.blocks_per_request, 512u);
}

}  // namespace
}  // namespace vramplan::memory

namespace vramplan::memory {
namespace {

TEST(VllmKvGroups, ChunkedLayersHoldOneChunkPlusAStep) {
  KvLayout l;
  for (int i = 0; i < 4; ++i) {
    LayerKv k;
    k.layer = i;
    k.kind = i == 3 ? LayerAttention::Full : LayerAttention::Chunked;
    k.window = i == 3 ? 0 : 8192;
    k.bytes_per_token = 4096;
    l.layers.push_back(k);
  }
  // Llama-4 style 3 chunked : 1 full; group_size 1 -> 3 + 1 groups. max_model_len 65536,
  // T 8192: chunked cdiv(min(8192 + 8192, 65536), 16) = 1024 blocks each, full 4096.
  const auto g = vllm_kv_groups(l, 16, 65536, 8192, true);
  EXPECT_EQ(g.num_groups, 4u);
  EXPECT_EQ(g.blocks_per_request, 3u * 1024u + 4096u);
}

}  // namespace
}  // namespace vramplan::memory
