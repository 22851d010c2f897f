// SGLang profile (planner/src/memory/sglang_engine.cpp): hand-computed pools and defaults.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/catalogs.hpp"
#include "support/engine_plans.hpp"
#include "support/test_models.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/engine_profiles.hpp"
#include "vramplan/model/catalogue.hpp"

namespace vramplan::memory {
namespace {

MemoryPlan plan(const std::string& engine, Bytes total, EngineArgs args) {
  return test::plan_engine(engine, test::dense_model({}), test::gpu_target(total), std::move(args));
}

// Llama-3.1-8B shape: tensors 16,060,522,496 B; rope cache 131072 x 128 x 4 B (fp32) = 67,108,864 B;
// every parameter a whole 2 MiB multiple (no allocator rounding); load non-torch 0.09 GiB = 96,636,764 B.
constexpr std::uint64_t kWeights = 16060522496u + 67108864u + 96636764u;

TEST(SglangEngine, PoolIsTheFreeMemoryBeforeLoadingTimesTheFractionMinusWeights) {
  const auto p = plan("sglang", Bytes(80000000000u), {{"mem-fraction-static", "0.8"}});
  EXPECT_EQ(test::component(p.weights, "weights.rope_cache").bytes.count(), 67108864u);
  EXPECT_EQ(test::component(p.weights, "weights.allocator_rounding").bytes.count(), 0u);
  EXPECT_EQ(p.weights_bytes().count(), kWeights);
  // free before loading = 80e9 - 0.5 GiB = 79,463,129,088 B; x 0.8 = 63,570,503,270.4;
  // - 16,224,268,124 B weights = 47,346,235,146 B; / 131,072 B per token = 361,223 tokens.
  EXPECT_EQ(*p.kv.capacity_tokens, 361223u);
  EXPECT_EQ(p.kv_cache_bytes().count(), 361223ull * 131072ull);
}

TEST(SglangEngine, PageSizeAndMaxTotalTokensCapThePool) {
  const auto paged = plan("sglang", Bytes(80000000000u), {{"mem-fraction-static", "0.8"}, {"page-size", "64"}});
  EXPECT_EQ(*paged.kv.capacity_tokens, 361223ull / 64u * 64u);  // 361,216
  const auto capped = plan("sglang", Bytes(80000000000u), {{"mem-fraction-static", "0.8"}, {"max-total-tokens", "1000"}});
  EXPECT_EQ(*capped.kv.capacity_tokens, 1000u);
}

TEST(SglangEngine, AUsersMaxRunningRequestsIsCutByTheReleasesRule) {
  // A 1,000-token pool (--max-total-tokens) at context 8,192: half the pool is 500; the estimate
  // clamp(1000 / 8192 x 512 = 62, 2048, 4096) = 2048.
  const auto running = [](const std::string& engine, const std::string& user) {
    EngineArgs a{{"mem-fraction-static", "0.8"}, {"max-total-tokens", "1000"}, {"context-length", "8192"}};
    if (!user.empty()) a.emplace("max-running-requests", user);
    return plan(engine, Bytes(80000000000u), a).engine_view.at("max_running_requests").get<std::uint64_t>();
  };
  EXPECT_EQ(running("sglang@0.5.9", ""), 500u);   // unset, every release: min(2048, 500)
  EXPECT_EQ(running("sglang@0.5.9", "3000"), 3000u);   // 0.4 - 0.5.9: the user's figure as it is
  EXPECT_EQ(running("sglang@0.4.7", "3000"), 3000u);
  EXPECT_EQ(running("sglang@0.5.11", "3000"), 2048u);  // 0.5.10 - 0.5.13: min(3000, estimate 2048)
  EXPECT_EQ(running("sglang@0.5.11", "700"), 700u);
  EXPECT_EQ(running("sglang@0.5.14", "700"), 500u);    // 0.5.14+: min(700, half the pool)
}

TEST(SglangEngine, DefaultFractionReservesPrefillGraphsAndRanks) {
  // 0.5.3+: 80e9 B = 76,293.9 MiB -> chunked_prefill_size 8192, cuda_graph_max_bs 256 (TP < 4);
  // reserve = 512 + 8192 x 1.5 + 256 x 2 + 1 x 128 = 13,440 MiB (over the 10 GiB floor);
  // f = round((76,293.9 - 13,440) / 76,293.9, 3) = round(0.82384, 3) = 0.824 (0.5.3 - 0.5.9).
  const auto p = plan("sglang@0.5.9", Bytes(80000000000u), {});
  EXPECT_DOUBLE_EQ(p.engine_view.at("mem_fraction_static").get<double>(), 0.824);
  // The (1 - f) share shows SGLang's own reserve estimates, in its units (MiB): 8192 x 1.5 MiB =
  // 12,288 MiB = 12,884,901,888 B; 256 x 2 MiB = 512 MiB = 536,870,912 B.
  EXPECT_EQ(test::component(p.activation, "activation.reserve").bytes.count(), 12884901888u);
  EXPECT_EQ(test::component(p.overhead, "overhead.cuda_graphs").bytes.count(), 536870912u);
}

TEST(SglangEngine, From0510ThePrefillGraphsAreReserved) {
  // server_args.py _handle_gpu_memory_settings (0.5.10+): + 8 MiB per prefill CUDA-graph size up to
  // chunked_prefill_size 8192: 8 (4-32) + 14 (48-256) + 8 (288-512) + 8 (576-1024) + 12 (1280-4096) +
  // 8 (4608-8192) = 58 sizes, 464 MiB: reserve 13,904 MiB, f = round(0.81776, 3) = 0.818.
  const auto p = plan("sglang@0.5.10", Bytes(80000000000u), {});
  EXPECT_DOUBLE_EQ(p.engine_view.at("mem_fraction_static").get<double>(), 0.818);
  // Turned off: the 0.5.9 figure.
  EXPECT_DOUBLE_EQ(plan("sglang@0.5.10", Bytes(80000000000u), {{"disable-piecewise-cuda-graph", "true"}})
                       .engine_view.at("mem_fraction_static").get<double>(),
                   0.824);
  // An MLA model reserves a flat 1.5 GiB (14,976 MiB: f = round(0.80371, 3) = 0.804), except in
  // 0.5.16 - 0.5.17, which keep its prefill graphs off.
  const auto mla = load_catalogue_model(test::source_root(), "deepseek-v2-lite");
  const auto gpu = test::gpu_target(Bytes(80000000000u));
  EXPECT_DOUBLE_EQ(test::plan_engine("sglang@0.5.10", mla, gpu, {}).engine_view.at("mem_fraction_static").get<double>(), 0.804);
  EXPECT_DOUBLE_EQ(test::plan_engine("sglang@0.5.16", mla, gpu, {}).engine_view.at("mem_fraction_static").get<double>(), 0.824);
}

TEST(SglangEngine, OlderVersionsTakeTheirOwnDefaultRule) {
  // 0.4.0-0.4.6: by TP size alone.
  EXPECT_DOUBLE_EQ(plan("sglang@0.4.3", Bytes(80000000000u), {}).engine_view.at("mem_fraction_static").get<double>(), 0.88);
  EXPECT_DOUBLE_EQ(plan("sglang@0.4.3", Bytes(80000000000u), {{"tp-size", "4"}}).engine_view.at("mem_fraction_static").get<double>(),
                   0.85);
  // ... with 2048 / 80 on a card under 25,000 MiB at TP4 (24e9 B = 22,888 MiB).
  const auto small = plan("sglang@0.4.3", Bytes(24000000000u), {{"tp-size", "4"}});
  EXPECT_EQ(small.engine_view.at("chunked_prefill_size").get<std::uint64_t>(), 2048u);
  EXPECT_EQ(small.engine_view.at("cuda_graph_max_bs").get<std::uint64_t>(), 80u);
  // 0.4.7-0.5.2: reserve (9.5 + TP / 2) GiB under 90 GiB: 10,240 MiB of 76,293.9 -> round(0.86578, 3).
  EXPECT_DOUBLE_EQ(plan("sglang@0.5.1", Bytes(80000000000u), {}).engine_view.at("mem_fraction_static").get<double>(), 0.866);
}

TEST(SglangEngine, WeightsOverTheStaticBudgetDoNotFit) {
  const auto p = plan("sglang", Bytes(16000000000u), {{"mem-fraction-static", "0.9"}});
  EXPECT_FALSE(p.fits);
  EXPECT_EQ(*p.kv.capacity_tokens, 0u);
  EXPECT_NE(p.reason.find("Not enough memory. Please try to increase --mem-fraction-static"), std::string::npos) << p.reason;
}

TEST(SglangEngine, AContextLongerThanTheModelsIsRefusedAtStart) {
  // The test model: max_position_embeddings 131,072, no rope scaling, so SGLang derives 131,072
  // (configs/model_config.py _derive_context_length) and refuses more without its env override.
  EXPECT_TRUE(plan("sglang", Bytes(80000000000u), {{"context-length", "131072"}}).fits);
  const auto longer = plan("sglang", Bytes(80000000000u), {{"context-length", "131073"}});
  EXPECT_FALSE(longer.fits);
  EXPECT_EQ(longer.reason, "User-specified context_length (131073) is greater than the derived context_length (131072). To "
                           "allow overriding this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 "
                           "(configs/model_config.py _derive_context_length)");
  // Below 2 no request (one prompt token and one output token) stays under it.
  EXPECT_EQ(test::error_message([] { plan("sglang", Bytes(80000000000u), {{"context-length", "1"}}); }, ErrorKind::Usage),
            "--context-length: must be at least 2 (SGLang serves requests whose prompt + output tokens stay below it), got 1");
}

TEST(SglangEngine, BadFlagsAreUsageErrors) {
  EXPECT_THROW(plan("sglang", Bytes(80000000000u), {{"mem-fraction-static", "1.5"}}), Error);
  EXPECT_THROW(plan("sglang", Bytes(80000000000u), {{"page-size", "0"}}), Error);
}

TEST(SglangEngine, ExpertParallelKeepsTheTpBytesAndIsChecked) {
  // Mixtral-8x7B (8 experts) at --tp 8: --ep 8 puts one whole expert on each GPU, --ep 4 two
  // experts, each split over tp / ep = 2 ranks; either way a GPU holds 1/8 of the expert bytes.
  const auto model = load_catalogue_model(test::source_root(), "mixtral-8x7b");
  const auto run = [&](EngineArgs a) {
    a.emplace("tp-size", "8");
    a.emplace("mem-fraction-static", "0.85");
    return test::plan_engine("sglang@0.5.9", model, test::gpu_target(Bytes(80000000000u), test::kH100Name, 8), a);
  };
  const auto tp = run({});
  const auto ep8 = run({{"ep-size", "8"}});
  const auto ep4 = run({{"ep-size", "4"}});
  EXPECT_EQ(tp.engine_view.at("ep_size"), 1);
  EXPECT_EQ(ep8.engine_view.at("ep_size"), 8);
  EXPECT_EQ(ep4.engine_view.at("ep_size"), 4);
  EXPECT_EQ(ep8.weights_bytes(), tp.weights_bytes());
  EXPECT_EQ(*ep8.kv.capacity_tokens, *tp.kv.capacity_tokens);
  // SGLang's own checks: ep divides tp (moe_tp_size = tp // ep) and the experts (FusedMoE).
  EXPECT_THROW(run({{"ep-size", "3"}}), Error);
  EXPECT_THROW(test::plan_engine("sglang@0.5.9", test::dense_model({}), test::gpu_target(Bytes(80000000000u)),
                                 {{"ep-size", "2"}, {"tp-size", "2"}}),
               Error);
}

// DP attention (docs/research/sglang-dp-attention.md): Qwen3-30B-A3B (48 layers, 32 q heads and 4 KV
// heads of 128, hidden 2048, vocab 151,936, bf16) on 4 GPUs, --tp 4 against --tp 4 --dp 4
// --enable-dp-attention (attention TP 1), SGLang 0.5.9.
TEST(SglangEngine, DpAttentionWidensAttentionAndMultipliesThePools) {
  const auto model = load_catalogue_model(test::source_root(), "qwen3-30b-a3b");
  const auto run = [&](EngineArgs a) {
    a.emplace("tp-size", "4");
    a.emplace("cuda-graph-max-bs", "100");
    a.emplace("max-running-requests", "100");
    return test::plan_engine("sglang@0.5.9", model, test::gpu_target(Bytes(80000000000u), test::kH100Name, 4), a);
  };
  const auto tp = run({});
  const auto dp = run({{"dp-size", "4"}, {"enable-dp-attention", "true"}});
  EXPECT_EQ(dp.engine_view.at("dp_size"), 4);
  EXPECT_EQ(dp.engine_view.at("attn_tp_size"), 1);
  // Attention projections a layer: q 2048 x 4096, k and v 2048 x 512, o 4096 x 2048 = 18,874,368
  // params x 2 B = 37,748,736 B; at TP 4 a GPU holds q / 4, one KV head (2048 x 128 each) and o / 4:
  // (2,097,152 + 262,144 x 2 + 2,097,152) x 2 B = 9,437,184 B. Over 48 layers DP attention adds
  // 48 x (37,748,736 - 9,437,184) = 1,358,954,496 B a GPU.
  EXPECT_EQ(test::component(dp.weights, "weights.layers").bytes.count() -
                test::component(tp.weights, "weights.layers").bytes.count(),
            1358954496u);
  // 0.5.9's embedding is split over the attention group (1): 151,936 x 2048 x 2 B whole, against
  // a quarter (37,984 rows) at TP 4; the lm_head stays split over all 4.
  EXPECT_EQ(test::component(dp.weights, "weights.embedding").bytes.count(), 151936ull * 2048 * 2);
  EXPECT_EQ(test::component(tp.weights, "weights.embedding").bytes.count(), 37984ull * 2048 * 2);
  EXPECT_EQ(test::component(dp.weights, "weights.lm_head").bytes, test::component(tp.weights, "weights.lm_head").bytes);
  // KV a token: 48 layers x (4 heads at attention TP 1, 1 at TP 4) x 128 x 2 (K, V) x 2 B.
  EXPECT_EQ(dp.kv.bytes_per_token, 48u * 4 * 128 * 2 * 2);
  EXPECT_EQ(tp.kv.bytes_per_token, 48u * 1 * 128 * 2 * 2);
  // Four pools, one a rank: max concurrency counts them all.
  const double ctx = dp.engine_view.at("context_length").get<double>();
  EXPECT_DOUBLE_EQ(*dp.kv.max_concurrency, 4.0 * static_cast<double>(*dp.kv.capacity_tokens) / ctx);
  EXPECT_EQ(dp.engine_view.at("dp_total_num_tokens"), 4 * *dp.kv.capacity_tokens);
  // Each scheduler runs --max-running-requests / dp (model_runner.py), prefills chunks of 8192 / 4
  // (server_args.py _handle_data_parallelism) and reserves 0.3 x the future tokens.
  EXPECT_EQ(dp.engine_view.at("max_running_requests"), 25);
  EXPECT_EQ(dp.engine_view.at("chunked_prefill_size"), tp.engine_view.at("chunked_prefill_size").get<std::uint64_t>() / 4);
  EXPECT_NEAR(dp.engine_view.at("init_new_token_ratio").get<double>(),
              0.3 * tp.engine_view.at("init_new_token_ratio").get<double>(), 1e-12);
  // The default mem_fraction_static reserves cuda_graph_max_bs 100 x dp 4 x 3 MiB = 1,200 MiB more
  // of the card's 76,294 MiB: 0.0157 less, within the rule's rounding to 0.001.
  const double gpu_mib = 80000000000.0 / 1048576.0;
  EXPECT_NEAR(tp.engine_view.at("mem_fraction_static").get<double>() - dp.engine_view.at("mem_fraction_static").get<double>(),
              1200.0 / gpu_mib, 0.001);
  // SGLang's own checks, and what is not modelled.
  EXPECT_THROW(run({{"dp-size", "3"}, {"enable-dp-attention", "true"}}), Error);  // tp % dp
  EXPECT_THROW(run({{"dp-size", "2"}}), Error);  // two servers: --replicas
  EXPECT_THROW(run({{"enable-dp-lm-head", "true"}}), Error);
  EXPECT_THROW(test::plan_engine("sglang@0.5.9", test::dense_model({}), test::gpu_target(Bytes(80000000000u), test::kH100Name, 2),
                                 {{"tp-size", "2"}, {"dp-size", "2"}, {"enable-dp-attention", "true"}}),
               Error);
}

// The token embedding under DP attention, by release (VocabParallelEmbedding enable_tp = not DP
// attention up to 0.5.7; use_attn_tp_group from 0.5.8 in deepseek_v2.py, from 0.5.9 in
// qwen2_moe.py): at --tp 8 --dp 4 the attention group is 2 GPUs.
TEST(SglangEngine, DpAttentionEmbeddingFollowsTheRelease) {
  const auto embedding = [](const std::string& id, const std::string& engine) {
    const auto p = test::plan_engine(engine, load_catalogue_model(test::source_root(), id),
                                     test::gpu_target(Bytes::from_gib(141), test::kH100Name, 8),
                                     {{"tp-size", "8"}, {"dp-size", "4"}, {"enable-dp-attention", "true"}});
    return test::component(p.weights, "weights.embedding").bytes.count();
  };
  // DeepSeek-V3: vocab 129,280 x 7168 x 2 B = 1,853,358,080 B whole; over 2 GPUs half of it.
  EXPECT_EQ(embedding("deepseek-v3", "sglang@0.5.7"), 1853358080u);
  EXPECT_EQ(embedding("deepseek-v3", "sglang@0.5.8"), 1853358080u / 2);
  // Qwen3-30B-A3B: 151,936 x 2048 x 2 B = 622,329,856 B, whole in 0.5.8, halved in 0.5.9.
  EXPECT_EQ(embedding("qwen3-30b-a3b", "sglang@0.5.8"), 622329856u);
  EXPECT_EQ(embedding("qwen3-30b-a3b", "sglang@0.5.9"), 622329856u / 2);
}

// The overlap scheduler: the default from 0.4 (sgl-project/sglang PR #2067, 2024-11-18), an opt-in
// before; --disable-overlap-schedule turns it off.
TEST(SglangEngine, OverlapSchedulerIsTheDefaultFrom04) {
  const auto overlap = [](const std::string& engine, EngineArgs a) {
    return plan(engine, Bytes(80000000000u), std::move(a)).engine_view.at("overlap_schedule").get<bool>();
  };
  EXPECT_FALSE(overlap("sglang@0.3.0", {}));
  EXPECT_TRUE(overlap("sglang@0.4", {}));
  EXPECT_TRUE(overlap("sglang@0.5.9", {}));
  EXPECT_FALSE(overlap("sglang@0.5.9", {{"disable-overlap-schedule", "true"}}));
}

TEST(SglangEngine, AMalformedDefaultsTableNamesTheFileAndPointer) {
  test::ScratchDir dir;
  const std::string p = R"({"value": 1, "source": "s"})";
  dir.write("engines/sglang.json",
            R"({"engine": "sglang", "default_profile": "0.5", "profiles": [{"version": "0.5", "min_version": "0.5",
               "max_version": null, "description": "d", "params": {
               "default_mem_fraction": {"value": {"rule": "guess"}, "source": "s"},
               "size_defaults": {"value": [[null, 8192, 256, 512]], "source": "s"},
               "rope_cache_bytes": )" + p + R"(, "load_non_torch_gib": {"value": 0.09, "source": "s"},
               "page_size": )" + p + R"(, "vocab_pad": {"value": 64, "source": "s"},
               "context_gib": {"value": 0.5, "source": "s"}}}]})");
  const auto engine = make_sglang_engine(dir.path(), "");
  const ModelSpec m = test::dense_model({});
  try {
    engine->plan(PlanInput{m, test::quant_catalog(), test::gpu_target(Bytes(80000000000u)), {}, {}, std::nullopt,
                           std::nullopt, ""});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InputFile);
    EXPECT_NE(std::string(e.what()).find("/profiles/0/params/default_mem_fraction/value/rule"), std::string::npos) << e.what();
  }
}

// DeciLM's attention-free blocks (Llama-3.3-Nemotron-Super-49B: 49 attention layers of 8 KV heads,
// 31 without): vLLM keeps KV for the 49 (49 x 2 x 8 x 128 x 2 B = 200,704 B per token); SGLang's
// MHATokenToKVPool spans all 80 layers the runner counts (+ 31 x 4,096 B = 327,680 B).
TEST(SglangEngine, PoolSpansAttentionFreeLayersOfANonHybridModel) {
  const auto model = load_catalogue_model(test::source_root(), "llama-3.3-nemotron-super-49b");
  const auto gpu = test::gpu_target(Bytes(150'000'000'000u));
  EXPECT_EQ(test::plan_engine("vllm", model, gpu, {}).kv.bytes_per_token, 200704u);
  EXPECT_EQ(test::plan_engine("sglang", model, gpu, {}).kv.bytes_per_token, 327680u);
}

}  // namespace
}  // namespace vramplan::memory
