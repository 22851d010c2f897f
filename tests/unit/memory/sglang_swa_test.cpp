// SGLang's hybrid sliding-window pools (mem_cache/swa_memory_pool.py SWAKVPool;
// model_runner_kv_cache_mixin.py set_num_tokens_hybrid_swa; model_config.py is_hybrid_swa_model):
// for gpt-oss and Llama-4 the profiled token count M is re-split into a full-layer pool and a
// sliding-layer pool of swa_full_tokens_ratio (0.8) times as many tokens; Gemma-3 is not in
// SGLang's hybrid-SWA list and keeps one full-length pool for every layer.
#include <gtest/gtest.h>

#include <cstdlib>

#include "support/engine_plans.hpp"
#include "support/test_support.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/model/catalogue.hpp"

namespace vramplan::memory {
namespace {

// 0.5.9: --max-total-tokens caps M before the split (init_memory caps, then splits).
MemoryPlan sglang_swa_plan(const std::string& id, EngineArgs args) {
  const auto model = load_catalogue_model(test::source_root(), id);
  args.emplace("mem-fraction-static", "0.85");
  args.emplace("max-total-tokens", "100000");
  return test::plan_engine("sglang@0.5.9", model, test::gpu_target(Bytes::from_gib(79.2)), std::move(args));
}

TEST(SglangSwa, GptOssSplitsTheTokenPool) {
  const auto p = sglang_swa_plan("gpt-oss-20b", {});
  // 24 layers alternating sliding (128) / full, 8 kv heads x 64 x 2 (K+V) x 2 B = 2,048 B/token/layer:
  // F = 12 x 2,048 = 24,576, S = 24,576. full = int(100,000 x 49,152 / (24,576 + 0.8 x 24,576))
  // = int(111,111.1) = 111,111; swa = int(111,111 x 0.8) = 88,888.
  EXPECT_EQ(p.engine_view.at("full_max_total_num_tokens"), 111111);
  EXPECT_EQ(p.engine_view.at("swa_max_total_num_tokens"), 88888);
  EXPECT_EQ(p.engine_view.at("max_total_num_tokens"), 111111);
  EXPECT_EQ(*p.kv.capacity_tokens, 111111u);
  // Pool bytes: (111,111 + 88,888) x 24,576 = 4,915,175,424 (<= M x cell = 4,915,200,000).
  EXPECT_EQ(test::component(p.kv_cache, "kv_cache").bytes.count(), 4915175424ull);
  // --disable-hybrid-swa-memory: one pool, every layer full length.
  const auto off = sglang_swa_plan("gpt-oss-20b", {{"disable-hybrid-swa-memory", "true"}});
  EXPECT_EQ(off.engine_view.at("max_total_num_tokens"), 100000);
  EXPECT_FALSE(off.engine_view.contains("swa_max_total_num_tokens"));
}

TEST(SglangSwa, Llama4ChunkedLayersUseTheSwaPool) {
  const auto p = sglang_swa_plan("llama-4-scout", {{"tp-size", "4"}});
  // 48 layers: 36 chunked (get_hybrid_layer_ids: (i + 1) % 4 != 0) + 12 full; TP 4: 2 kv heads x 128
  // x 2 x 2 B = 1,024 B/token/layer; F = 12,288, S = 36,864. full = int(100,000 x 49,152 /
  // (12,288 + 0.8 x 36,864 = 41,779.2)) = int(117,647.06) = 117,647; swa = int(94,117.6) = 94,117.
  EXPECT_EQ(p.engine_view.at("full_max_total_num_tokens"), 117647);
  EXPECT_EQ(p.engine_view.at("swa_max_total_num_tokens"), 94117);
  // Bytes: 117,647 x 12,288 + 94,117 x 36,864 = 1,445,646,336 + 3,469,529,088 = 4,915,175,424.
  EXPECT_EQ(test::component(p.kv_cache, "kv_cache").bytes.count(), 4915175424ull);
}

TEST(SglangSwa, Gemma3KeepsOneFullLengthPool) {
  const auto p = sglang_swa_plan("gemma-3-12b", {});
  EXPECT_EQ(p.engine_view.at("max_total_num_tokens"), 100000);
  EXPECT_FALSE(p.engine_view.contains("full_max_total_num_tokens"));
}

TEST(SglangSwa, Gemma4PoolsHaveTwoCellSizes) {
  // Gemma 4 is in is_hybrid_swa_model from 0.5.11. 26B-A4B: 5 full layers of 2 KV heads x 512
  // (K and V, bf16) = 4,096 B/token, 25 sliding of 8 x 256 = 8,192: F = 20,480, S = 204,800.
  // On 139 GiB at 0.85, 48.9 GiB of weights leave ~67 GiB: rest // (F + 0.8 S = 184,320) is
  // ~390,000 full tokens, capped at 100,000 (0.5.11's order); swa = int(100,000 x 0.8) = 80,000.
  const auto p = test::plan_engine("sglang@0.5.11", load_catalogue_model(test::source_root(), "gemma-4-26b-a4b"),
                                   test::gpu_target(Bytes::from_gib(139)),
                                   {{"mem-fraction-static", "0.85"}, {"max-total-tokens", "100000"}});
  EXPECT_EQ(p.engine_view.at("full_max_total_num_tokens"), 100000);
  EXPECT_EQ(p.engine_view.at("swa_max_total_num_tokens"), 80000);
  // 100,000 x 20,480 + 80,000 x 204,800 = 2,048,000,000 + 16,384,000,000.
  EXPECT_EQ(test::component(p.kv_cache, "kv_cache").bytes.count(), 18'432'000'000ull);
}

TEST(SglangSwa, From0511TheCapBoundsTheFullPool) {
  // pool_configurator.py HybridSWAPoolConfigurator (0.5.11+): --max-total-tokens caps the full pool
  // after the split. gpt-oss-20b capped at 100,000: full 100,000, swa int(100,000 x 0.8) = 80,000
  // (0.5.9 capped M first: 111,111 / 88,888, above).
  const auto model = load_catalogue_model(test::source_root(), "gpt-oss-20b");
  const auto p = test::plan_engine("sglang@0.5.11", model, test::gpu_target(Bytes::from_gib(79.2)),
                                   {{"mem-fraction-static", "0.85"}, {"max-total-tokens", "100000"}});
  EXPECT_EQ(p.engine_view.at("full_max_total_num_tokens"), 100000);
  EXPECT_EQ(p.engine_view.at("swa_max_total_num_tokens"), 80000);
  // Uncapped, the two rules agree but for rounding: rest // (F + r S) against int(M (F + S) / (F + r S)).
  const auto old_rule = test::plan_engine("sglang@0.5.9", model, test::gpu_target(Bytes::from_gib(79.2)), {{"mem-fraction-static", "0.85"}});
  const auto new_rule = test::plan_engine("sglang@0.5.11", model, test::gpu_target(Bytes::from_gib(79.2)), {{"mem-fraction-static", "0.85"}});
  const auto a = old_rule.engine_view.at("full_max_total_num_tokens").get<std::int64_t>();
  const auto b = new_rule.engine_view.at("full_max_total_num_tokens").get<std::int64_t>();
  EXPECT_LE(std::abs(a - b), 2) << a << " " << b;
}

TEST(SglangVlm, DefaultFractionShrinksWithTheVisionTower) {
  // server_args.py adjust_mem_fraction_for_vlm: Gemma 4's tower, 27 layers x 1152^2 over
  // 24 x 1024^2 = 1.4238; 0.95 x (1 - 0.1 x 0.4238) = 0.9097 times the default.
  const auto model = load_catalogue_model(test::source_root(), "gemma-4-31b");
  const auto p = test::plan_engine("sglang", model, test::gpu_target(Bytes::from_gib(139)), {});
  bool noted = false;
  for (const auto& n : p.notes) noted = noted || n.find("x 0.9097 for the vision tower (27 layers x 1152^2") != std::string::npos;
  EXPECT_TRUE(noted);
  // A given fraction is the user's: not scaled.
  const auto given = test::plan_engine("sglang", model, test::gpu_target(Bytes::from_gib(139)),
                                       {{"mem-fraction-static", "0.85"}});
  EXPECT_DOUBLE_EQ(given.engine_view.at("mem_fraction_static").get<double>(), 0.85);
  // A text-only model has no such factor.
  const auto text = test::plan_engine("sglang", load_catalogue_model(test::source_root(), "llama-3.1-8b"),
                                      test::gpu_target(Bytes::from_gib(139)), {});
  for (const auto& n : text.notes) EXPECT_EQ(n.find("adjust_mem_fraction_for_vlm"), std::string::npos) << n;
}

}  // namespace
}  // namespace vramplan::memory
