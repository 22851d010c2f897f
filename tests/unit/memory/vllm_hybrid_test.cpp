// vLLM's hybrid attention + recurrent pool (Qwen3-Next): the block size it raises, the padded
// state pages, the groups and what one request takes (config.py
// HybridAttentionMambaModelConfig.verify_and_update_config, kv_cache_utils.py
// _get_kv_cache_groups_uniform_page_size, kv_cache_interface.py MambaSpec).
#include <gtest/gtest.h>

#include "support/engine_plans.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/vllm_kv_groups.hpp"
#include "vramplan/model/catalogue.hpp"
#include "support/test_support.hpp"

namespace vramplan::memory {
namespace {

// Qwen3-Next at TP 1 in bf16: full layers 2 x 2 kv_heads x 256 x 2 B = 2,048 B/token; recurrent
// layers 1,097,728 B of state (qwen3_next_test.cpp).
KvLayout qwen3_next_layout(std::uint64_t attn_bytes, std::uint64_t state_bytes) {
  KvLayout l;
  for (int i = 0; i < 48; ++i) {
    LayerKv k;
    k.layer = i;
    k.kind = (i + 1) % 4 == 0 ? LayerAttention::Full : LayerAttention::Recurrent;
    if (k.kind == LayerAttention::Full) k.bytes_per_token = attn_bytes;
    else k.state_bytes = state_bytes;
    l.layers.push_back(k);
  }
  return l;
}

TEST(VllmHybrid, AttentionBlockIsRaisedToHoldOneState) {
  // 16 x cdiv(1,097,728, 16 x 2,048 = 32,768) = 16 x 34 = 544 tokens; page 544 x 2,048 = 1,114,112 B
  // (the state padded by 1.49 %).
  const auto m = vllm_mamba_pages(qwen3_next_layout(2048, 1097728), std::nullopt);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->block_size, 544u);
  EXPECT_EQ(m->page_bytes, 1114112u);
  EXPECT_EQ(m->recurrent_layers, 36u);
  // TP 4: kv heads max(1, 2 / 4) = 1 -> 1,024 B/token; state 1,097,728 / 4 = 274,432 B:
  // 16 x cdiv(274,432, 16,384) = 16 x 17 = 272 tokens.
  EXPECT_EQ(vllm_mamba_pages(qwen3_next_layout(1024, 274432), std::nullopt)->block_size, 272u);
  // A larger --block-size is kept, a smaller one raised.
  EXPECT_EQ(vllm_mamba_pages(qwen3_next_layout(2048, 1097728), 1024)->block_size, 1024u);
  EXPECT_EQ(vllm_mamba_pages(qwen3_next_layout(2048, 1097728), 16)->block_size, 544u);
  EXPECT_FALSE(vllm_mamba_pages(qwen3_next_layout(2048, 0), std::nullopt));
}

TEST(VllmHybrid, RecurrentLayersFormTheirOwnGroups) {
  // 12 full + 36 recurrent: group_size 12 -> 1 full group + 3 recurrent groups; a block is
  // 12 layers x 1,114,112 B = 13,369,344 B. One request of 262,144 tokens: cdiv(262,144, 544)
  // = 482 attention blocks + 3 groups x 1 state page ("none") = 485; with "align" 482 + 6 = 488.
  const auto none = vllm_kv_groups(qwen3_next_layout(2048, 1097728), 544, 262144, 8192, true, 1);
  EXPECT_EQ(none.group_size, 12u);
  EXPECT_EQ(none.num_groups, 4u);
  EXPECT_EQ(none.block_bytes, 13369344u);
  EXPECT_EQ(none.blocks_per_request, 485u);
  // 12 x 482 x 1,114,112 + 36 x 1 x 1,114,112 = 6,484,131,840 B.
  EXPECT_EQ(none.bytes_one_request, 6484131840u);
  EXPECT_EQ(vllm_kv_groups(qwen3_next_layout(2048, 1097728), 544, 262144, 8192, true, 2).blocks_per_request, 488u);
  // Without paging the state (mamba_blocks 0) only the attention layers form the pool.
  EXPECT_EQ(vllm_kv_groups(qwen3_next_layout(2048, 1097728), 544, 262144, 8192, true, 0).num_groups, 1u);
}

TEST(VllmHybrid, PlanReportsBlockSizeStateAndConcurrency) {
  const auto model = load_catalogue_model(test::source_root(), "qwen3-next-80b-a3b");
  const auto p = test::plan_engine("vllm@0.19", model, test::gpu_target(Bytes::from_gib(139.8), test::kH100Name),
                                   {{"tensor-parallel-size", "2"}, {"max-model-len", "32768"}});
  // TP 2: 1 kv head -> 1,024 B/token; state 548,864 B; 16 x cdiv(548,864, 16,384) = 544.
  const auto& h = p.engine_view.at("hybrid");
  EXPECT_EQ(h.at("attention_block_size"), 544);
  EXPECT_EQ(h.at("recurrent_state_bytes_per_layer"), 548864);
  EXPECT_EQ(h.at("recurrent_page_bytes"), 544 * 1024);
  EXPECT_EQ(h.at("mamba_cache_mode"), "align");
  // cdiv(32,768, 544) = 61 attention blocks + 3 recurrent groups x 2 pages = 67 per request.
  EXPECT_EQ(h.at("blocks_per_request"), 67);
  const auto blocks = p.engine_view.at("gpu_blocks").get<std::uint64_t>();
  EXPECT_EQ(h.at("max_concurrent_requests").get<std::uint64_t>(), blocks / 67);
  // vLLM's printed KV size: blocks // 4 groups x 544.
  EXPECT_EQ(p.engine_view.at("kv_cache_tokens").get<std::uint64_t>(), blocks / 4 * 544);
  EXPECT_EQ(p.engine_view.at("block_size"), 544);
  // 0.11 switched prefix caching off for hybrids: "none", one page each.
  const auto old = test::plan_engine("vllm@0.11", model, test::gpu_target(Bytes::from_gib(139.8), test::kH100Name),
                                     {{"tensor-parallel-size", "2"}, {"max-model-len", "32768"}});
  EXPECT_EQ(old.engine_view.at("hybrid").at("mamba_cache_mode"), "none");
  EXPECT_EQ(old.engine_view.at("hybrid").at("blocks_per_request"), 64);
  EXPECT_EQ(old.engine_view.at("enable_prefix_caching"), false);
}

}  // namespace
}  // namespace vramplan::memory
