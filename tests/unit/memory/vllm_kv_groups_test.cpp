#include <gtest/gtest.h>

#include "vramplan/core/error.hpp"
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

namespace vramplan::memory {
namespace {

// Gemma 4 26B-A4B at TP 1: 25 sliding layers (window 1024) of 8,192 B/token and 5 full layers of
// 4,096 (head_dim 512, 2 KV heads): two page sizes in one pool.
KvLayout gemma4_like() {
  KvLayout l = layout(5, 25, 1024, 8192);
  for (auto& k : l.layers)
    if (k.kind == LayerAttention::Full) k.bytes_per_token = 4096;
  return l;
}

TEST(VllmKvGroups, SmallerPagesGetLargerBlocks) {
  // kv_cache_utils.py unify_kv_cache_spec_page_size: the full layers' page (16 x 4,096) is half
  // the sliding one (16 x 8,192), so their block holds 16 x 2 = 32 tokens. group_size 5: the full
  // layers make 1 group, the sliding ones 5. Block = 16 x 8,192 x 5 = 655,360 B.
  const auto g = vllm_kv_groups(gemma4_like(), 16, 8192, 2048, true);
  EXPECT_EQ(g.group_size, 5u);
  EXPECT_EQ(g.num_groups, 6u);
  EXPECT_EQ(g.block_bytes, 655360u);
  // Per request: full cdiv(8192, 32) = 256; sliding 5 x (cdiv(min(1023 + 2048, 8192), 16) + 1) = 5 x 193.
  EXPECT_EQ(g.blocks_per_request, 256u + 5u * 193u);
  // Bytes: 256 x 32 x 4,096 x 5 + 193 x 16 x 8,192 x 25 = 167,772,160 + 632,422,400.
  EXPECT_EQ(g.bytes_one_request, 800'194'560u);
  EXPECT_NE(g.explain.find("5 full (32-token blocks) -> 1 group(s)"), std::string::npos);
}

TEST(VllmKvGroups, WithoutHybridAllocatorEveryLayerKeepsItsOwnPage) {
  // UniformTypeKVCacheSpecs: one group, a block of every layer's 16-token page:
  // 16 x (25 x 8,192 + 5 x 4,096) = 3,604,480 B; a request needs cdiv(8192, 16) = 512 of them.
  const auto g = vllm_kv_groups(gemma4_like(), 16, 8192, 2048, false);
  EXPECT_EQ(g.num_groups, 1u);
  EXPECT_EQ(g.block_bytes, 3'604'480u);
  EXPECT_EQ(g.blocks_per_request, 512u);
}

TEST(VllmKvGroups, PrintedTokensFollowTheRelease) {
  // 12,210 blocks, 6 groups, 1,221 blocks a request of 8,192 tokens (above). Up to 0.20 the log
  // prints 12,210 // 6 x 16 = 32,560 tokens; from 0.21 int(12,210 / 1,221 x 8,192) = 81,920, the
  // sliding groups counted by their window only.
  const auto g = vllm_kv_groups(gemma4_like(), 16, 8192, 2048, true);
  EXPECT_EQ(vllm_printed_kv_tokens("0.20.0", 12210, g, 16, 8192), 32'560u);
  EXPECT_EQ(vllm_printed_kv_tokens("0.21", 12210, g, 16, 8192), 81'920u);
  EXPECT_EQ(vllm_printed_kv_tokens("", 12210, g, 16, 8192), 81'920u);  // the current release
  // A uniform model prints the same either way when max_model_len is whole blocks: 7,891 blocks of
  // 16 at 8,192 tokens (the llm-d CodeLlama-7B 0.19 log: 126,256).
  const auto u = vllm_kv_groups(layout(32, 0, 0, 4096), 16, 8192, 8192, true);
  EXPECT_EQ(vllm_printed_kv_tokens("0.19", 7891, u, 16, 8192), 126'256u);
  EXPECT_EQ(vllm_printed_kv_tokens("0.34", 7891, u, 16, 8192), 126'256u);
}

TEST(VllmKvGroups, PageThatDoesNotDivideTheLargestIsRefused) {
  KvLayout l = gemma4_like();
  l.layers.back().bytes_per_token = 3072;  // 8,192 % 3,072 != 0
  EXPECT_THROW(vllm_kv_groups(l, 16, 8192, 2048, true), Error);
}

}  // namespace
}  // namespace vramplan::memory
