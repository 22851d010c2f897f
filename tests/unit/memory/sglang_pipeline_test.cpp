// SGLang pipeline parallelism in the memory plan (memory/sglang_pipeline.hpp): the layer split,
// each stage's own weights and pool, the smallest pool taken, and what is refused.
#include <gtest/gtest.h>

#include "support/catalogs.hpp"
#include "support/engine_plans.hpp"
#include "support/test_models.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/model/catalogue.hpp"

namespace vramplan::memory {
namespace {

TEST(PpLayerRange, SglangGivesTheExtraLayersToTheLastStages) {
  // 32 layers over 3 stages: 10 each and 2 left over. SGLang (get_pp_indices): the last two get
  // one more, 10 / 11 / 11; vLLM: the two before the last, 11 / 11 / 10.
  EXPECT_EQ(pp_layer_range(32, 3, 0, true), (std::pair<std::uint64_t, std::uint64_t>{0, 10}));
  EXPECT_EQ(pp_layer_range(32, 3, 1, true), (std::pair<std::uint64_t, std::uint64_t>{10, 21}));
  EXPECT_EQ(pp_layer_range(32, 3, 2, true), (std::pair<std::uint64_t, std::uint64_t>{21, 32}));
  EXPECT_EQ(pp_layer_range(32, 3, 0), (std::pair<std::uint64_t, std::uint64_t>{0, 11}));
  EXPECT_EQ(pp_layer_range(32, 3, 2), (std::pair<std::uint64_t, std::uint64_t>{22, 32}));
  // DeepSeek's 61 layers on 2 stages: 30 + 31 (SGLang), 31 + 30 (vLLM).
  EXPECT_EQ(pp_layer_range(61, 2, 0, true).second, 30u);
  EXPECT_EQ(pp_layer_range(61, 2, 0).second, 31u);
}

// The Llama-3.1-8B shape (32 layers; KV 4,096 B a token a layer in bf16; tensors 16,060,522,496 B
// of which the embedding and the lm_head 1,050,673,152 B each, the final norm 8,192 B, a layer
// 436,224,000 B) at --pp-size 2, --mem-fraction-static 0.8 on an 80e9 B card.
TEST(SglangPipeline, EachStageSizesItsPoolAndTheSmallestIsTaken) {
  const auto run = [](EngineArgs a) {
    a.emplace("mem-fraction-static", "0.8");
    return test::plan_engine("sglang@0.5.9", test::dense_model({}), test::gpu_target(Bytes(80000000000u)), a);
  };
  const MemoryPlan pp = run({{"pp-size", "2"}});
  EXPECT_EQ(pp.gpu_count, 2u);
  EXPECT_EQ(pp.engine_view.at("pp_size"), 2);
  // Stage 0: the embedding + layers 0-15 = 1,050,673,152 + 16 x 436,224,000 = 8,030,257,152 B;
  // stage 1: layers 16-31 + the norm + the lm_head = 8,030,265,344 B. Each with the rope cache
  // (67,108,864 B) and the load's non-torch 96,636,764 B: 8,194,002,780 and 8,194,010,972 B.
  // Budget (80e9 - 0.5 GiB) x 0.8 = 63,570,503,270.4 B; KV 16 x 4,096 = 65,536 B a token:
  // stage 0 (63,570,503,270.4 - 8,194,002,780) / 65,536 = 844,978.7 -> 844,978 tokens, stage 1
  // 844,978.6 -> 844,978. Shown: stage 1, 8,192 B more.
  EXPECT_EQ(*pp.kv.capacity_tokens, 844978u);
  EXPECT_EQ(pp.kv.bytes_per_token, 65536u);
  EXPECT_EQ(pp.weights_bytes().count(), 8194010972u);
  EXPECT_EQ(test::component(pp.weights, "weights.lm_head").bytes.count(), 1050673152u);
  EXPECT_EQ(pp.kv_cache_bytes().count(), 844978ull * 65536u);
  // Without PP one GPU holds everything: 361,223 tokens of 131,072 B (SglangEngine's first case).
  EXPECT_EQ(*run({}).kv.capacity_tokens, 361223u);
  // PP turns the overlap scheduler off (server_args.py _handle_pipeline_parallelism).
  EXPECT_FALSE(pp.engine_view.at("overlap_schedule").get<bool>());
  EXPECT_TRUE(run({}).engine_view.at("overlap_schedule").get<bool>());
}

TEST(SglangPipeline, TheDefaultFractionReservesEveryRank) {
  // reserve_sum (0.5.3+): tp_size x pp_size x 128 MiB; PP 2 at TP 1 reserves 128 MiB more of the
  // card's 76,294 MiB, 0.0017 of it, within the rule's rounding to 0.001.
  const auto fraction = [](EngineArgs a) {
    return test::plan_engine("sglang@0.5.9", test::dense_model({}), test::gpu_target(Bytes(80000000000u)), a)
        .engine_view.at("mem_fraction_static")
        .get<double>();
  };
  EXPECT_NEAR(fraction({}) - fraction({{"pp-size", "2"}}), 128.0 / (80000000000.0 / 1048576.0), 0.001);
}

TEST(SglangPipeline, CombinationsNotModelledAreRefused) {
  const auto model = load_catalogue_model(test::source_root(), "qwen3-30b-a3b");
  const auto gpu = test::gpu_target(Bytes(80000000000u), test::kH100Name, 4);
  EXPECT_THROW(test::plan_engine("sglang@0.5.9", model, gpu,
                                 {{"tp-size", "2"}, {"pp-size", "2"}, {"dp-size", "2"}, {"enable-dp-attention", "true"}}),
               Error);
  EXPECT_THROW(test::plan_engine("sglang@0.5.9", test::dense_model({}), gpu, {{"pp-size", "0"}}), Error);
  // Hybrid pools: gpt-oss's sliding-window pools, Qwen3-Next's recurrent state.
  EXPECT_THROW(test::plan_engine("sglang@0.5.9", load_catalogue_model(test::source_root(), "gpt-oss-20b"), gpu,
                                 {{"pp-size", "2"}}),
               Error);
  EXPECT_THROW(test::plan_engine("sglang@0.5.9", load_catalogue_model(test::source_root(), "qwen3-next-80b-a3b"),
                                 test::gpu_target(Bytes::from_gib(141), test::kH100Name, 4), {{"tp-size", "2"}, {"pp-size", "2"}}),
               Error);
}

}  // namespace
}  // namespace vramplan::memory
