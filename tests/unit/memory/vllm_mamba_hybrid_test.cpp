// vLLM's hybrid page alignment for Mamba hybrids (the Qwen3-Next path, vllm_hybrid_test.cpp):
// the attention block is raised so one attention page holds one Mamba2 state
// (config.py HybridAttentionMambaModelConfig.verify_and_update_config), the Mamba layers form
// their own groups (kv_cache_utils.py _get_kv_cache_groups_uniform_page_size) and each request
// holds 2 state pages per group in "align" mode (kv_cache_interface.py MambaSpec).
#include <gtest/gtest.h>

#include "support/engine_plans.hpp"
#include "support/test_support.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/model/catalogue.hpp"

namespace vramplan::memory {
namespace {

MemoryPlan vllm_mamba_plan(const std::string& id, EngineArgs args) {
  const auto model = load_catalogue_model(test::source_root(), id);
  args.emplace("max-model-len", "32768");
  return test::plan_engine("vllm@0.19", model, test::gpu_target(Bytes::from_gib(79.2), test::kH100Name), std::move(args));
}

TEST(VllmMambaHybrid, Nemotron3NanoBlockHoldsOneState) {
  const auto p = vllm_mamba_plan("nemotron-3-nano-30b-a3b", {});
  const auto& h = p.engine_view.at("hybrid");
  // Attention: 2 x 2 kv heads x 128 x 2 B = 1,024 B/token/layer. State 2,134,016 B
  // (mamba_hybrid_test.cpp): block 16 x cdiv(2,134,016, 16 x 1,024) = 16 x 131 = 2,096 tokens,
  // page 2,096 x 1,024 = 2,146,304 B (the state padded by 0.58 %).
  EXPECT_EQ(h.at("recurrent_state_bytes_per_layer"), 2134016);
  EXPECT_EQ(h.at("attention_block_size"), 2096);
  EXPECT_EQ(h.at("recurrent_page_bytes"), 2146304);
  EXPECT_EQ(p.engine_view.at("block_size"), 2096);
  // 6 attention + 23 Mamba layers: group size 6 -> 1 attention group + cdiv(23, 6) = 4 Mamba groups.
  EXPECT_EQ(p.engine_view.at("kv_cache_groups"), 5);
  EXPECT_EQ(h.at("recurrent_groups"), 4);
  // One 32,768-token request: cdiv(32,768, 2,096) = 16 attention blocks + 4 groups x 2 pages = 24.
  EXPECT_EQ(h.at("blocks_per_request"), 24);
  // A block id costs one page per layer of a group: 2,146,304 x 6 = 12,877,824 B.
  EXPECT_EQ(p.engine_view.at("kv_block_bytes"), 12877824);
}

TEST(VllmMambaHybrid, GraniteTinyAndTheTpSplitOfItsGroup) {
  const auto p = vllm_mamba_plan("granite-4.0-h-tiny", {});
  const auto& h = p.engine_view.at("hybrid");
  // 2 x 4 kv heads x 128 x 2 B = 2,048 B/token; state 806,400 B -> 16 x cdiv(806,400, 32,768)
  // = 16 x 25 = 400 tokens; 4 attention + 36 Mamba -> 1 + 9 groups; cdiv(32,768, 400) = 82 + 9 x 2 = 100.
  EXPECT_EQ(h.at("attention_block_size"), 400);
  EXPECT_EQ(h.at("recurrent_page_bytes"), 400 * 2048);
  EXPECT_EQ(p.engine_view.at("kv_cache_groups"), 10);
  EXPECT_EQ(h.at("blocks_per_request"), 100);
  // TP 2: 2 kv heads -> 1,024 B/token; the single group is replicated to 2, state 403,968 B
  // (not half of 806,400): 16 x cdiv(403,968, 16,384) = 16 x 25 = 400.
  const auto tp2 = vllm_mamba_plan("granite-4.0-h-tiny", {{"tensor-parallel-size", "2"}});
  EXPECT_EQ(tp2.engine_view.at("hybrid").at("recurrent_state_bytes_per_layer"), 403968);
  EXPECT_EQ(tp2.engine_view.at("hybrid").at("attention_block_size"), 400);
}

TEST(VllmMambaHybrid, Nemotron8BDenseLayersHoldNoCache) {
  const auto p = vllm_mamba_plan("nemotron-h-8b", {{"max-model-len", "8192"}});
  const auto& h = p.engine_view.at("hybrid");
  // 2 x 8 x 128 x 2 B = 4,096 B/token; state 4,255,744 B -> 16 x cdiv(4,255,744, 65,536) = 16 x 65
  // = 1,040 tokens. The 24 MLP layers have no cache: 4 attention + 24 Mamba -> 1 + 6 groups.
  EXPECT_EQ(h.at("attention_block_size"), 1040);
  EXPECT_EQ(h.at("recurrent_layers"), 24);
  EXPECT_EQ(p.engine_view.at("kv_cache_groups"), 7);
  // cdiv(8192, 1040) = 8 + 6 x 2 = 20 blocks per request.
  EXPECT_EQ(h.at("blocks_per_request"), 20);
}

TEST(VllmMambaHybrid, FalconH1EveryLayerHoldsKvAndState) {
  // max_position_embeddings 16,384.
  const auto p = vllm_mamba_plan("falcon-h1-0.5b", {{"max-model-len", "16384"}});
  const auto& h = p.engine_view.at("hybrid");
  // Attention 2 x 2 kv heads x 64 x 2 B = 512 B/token/layer; state 403,968 B (mamba_hybrid_test.cpp):
  // block 16 x cdiv(403,968, 16 x 512) = 16 x 50 = 800 tokens, page 800 x 512 = 409,600 B.
  EXPECT_EQ(h.at("attention_block_size"), 800);
  EXPECT_EQ(h.at("recurrent_page_bytes"), 409600);
  // Every one of the 36 layers is both an attention and a Mamba layer (falcon_h1.py
  // FalconH1ParallelHybrid): 36 + 36 -> group size 36, 1 attention + 1 Mamba group.
  EXPECT_EQ(h.at("recurrent_layers"), 36);
  EXPECT_EQ(p.engine_view.at("kv_cache_groups"), 2);
  // cdiv(16,384, 800) = 21 attention blocks + 1 group x 2 pages = 23.
  EXPECT_EQ(h.at("blocks_per_request"), 23);
  EXPECT_EQ(p.engine_view.at("kv_block_bytes"), 409600 * 36);
}

TEST(VllmMambaHybrid, FalconH1SevenBAtTp2ReplicatesItsGroup) {
  const auto p = vllm_mamba_plan("falcon-h1-7b", {{"tensor-parallel-size", "2"}});
  const auto& h = p.engine_view.at("hybrid");
  // TP 2: 1 kv head per rank -> 2 x 1 x 128 x 2 B = 512 B/token/layer. State: the single group is
  // replicated to 2 (extra_groups_for_head_shards): conv 3 x (3072 + 2 x 2 x 256) / 2 = 6,144, SSM
  // 12 x 128 x 256 = 393,216 -> 798,720 B (not 1,594,368 / 2 = 797,184).
  EXPECT_EQ(h.at("recurrent_state_bytes_per_layer"), 798720);
  // 16 x cdiv(798,720, 8,192) = 16 x 98 = 1,568 tokens; cdiv(32,768, 1,568) = 21 + 2 = 23 blocks.
  EXPECT_EQ(h.at("attention_block_size"), 1568);
  EXPECT_EQ(h.at("blocks_per_request"), 23);
}

TEST(VllmMambaHybrid, JambaMambaOnePages) {
  const auto p = vllm_mamba_plan("jamba-1.5-mini", {});
  const auto& h = p.engine_view.at("hybrid");
  // Attention 2 x 8 x 128 x 2 B = 4,096 B/token; Mamba-1 state 311,296 B -> 16 x cdiv(311,296,
  // 65,536) = 16 x 5 = 80 tokens, page 80 x 4,096 = 327,680 B.
  EXPECT_EQ(h.at("attention_block_size"), 80);
  EXPECT_EQ(h.at("recurrent_page_bytes"), 327680);
  // 4 attention + 28 Mamba layers -> group size 4: 1 + 7 groups.
  EXPECT_EQ(p.engine_view.at("kv_cache_groups"), 8);
  // cdiv(32,768, 80) = 410 + 7 x 2 = 424 blocks per request.
  EXPECT_EQ(h.at("blocks_per_request"), 424);
  EXPECT_EQ(p.engine_view.at("kv_block_bytes"), 327680 * 4);
}

}  // namespace
}  // namespace vramplan::memory
