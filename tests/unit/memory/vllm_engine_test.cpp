#include <gtest/gtest.h>

#include "support/engine_plans.hpp"
#include "support/test_models.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan::memory {
namespace {

MemoryPlan plan(const ModelSpec& m, Bytes total, EngineArgs args, const std::string& gpu_name = test::kH100Name) {
  return test::plan_engine("vllm@0.19", m, test::gpu_target(total, gpu_name), std::move(args));
}

TEST(VllmEngine, Llama8bWeightsAreTheLoggedModelWeights) {
  const auto p = plan(test::dense_model({}), Bytes::from_gib(79.19), {{"gpu-memory-utilization", "0.95"}, {"max-model-len", "8192"}});
  // 32 layers x 218,112,000 params x 2 B = 13,959,168,000 B; embedding and lm_head
  // 128,256 x 4,096 x 2 B = 1,050,673,152 B each; final norm 8,192 B; rope cache
  // 131,072 x 128 x 2 B = 33,554,432 B. Sum 16,094,076,928 B = 14.99 GiB, vLLM 0.19 logs 14.99.
  EXPECT_EQ(test::component(p.weights, "weights.layers").bytes.count(), 13959168000u);
  EXPECT_EQ(test::component(p.weights, "weights.rope_cache").bytes.count(), 33554432u);
  EXPECT_EQ(p.weights_bytes().count(), 16094076928u);
  EXPECT_EQ(p.kv.bytes_per_token, 131072u);
  EXPECT_TRUE(p.fits);
  EXPECT_EQ(p.engine_view.at("max_num_seqs"), 1024);  // >= 70 GiB, not A100
  EXPECT_EQ(p.engine_view.at("kv_cache_tokens").get<std::uint64_t>() % 16, 0u);
}

// --enable-expert-parallel (EP = TP with one data-parallel rank): Qwen3-30B-A3B's 128 experts over
// 4 GPUs, 32 whole experts each, the bytes of the TP 4 slices; a dense model ignores it (vLLM builds
// no FusedMoE); gpt-oss's padded MXFP4 experts under EP are refused as not modelled.
TEST(VllmEngine, ExpertParallelKeepsTheTpBytes) {
  const auto moe = load_catalogue_model(test::source_root(), "qwen3-30b-a3b");
  const auto run = [](const ModelSpec& m, EngineArgs a, const std::string& tp) {
    a.emplace("tensor-parallel-size", tp);
    a.emplace("max-model-len", "8192");
    return test::plan_engine("vllm", m, test::gpu_target(Bytes::from_gib(79.19), test::kH100Name, 4), a);
  };
  const auto tp = run(moe, {}, "4");
  const auto ep = run(moe, {{"enable-expert-parallel", "true"}}, "4");
  EXPECT_EQ(tp.engine_view.at("ep_size"), 1);
  EXPECT_EQ(ep.engine_view.at("ep_size"), 4);
  EXPECT_EQ(ep.weights_bytes(), tp.weights_bytes());
  EXPECT_EQ(run(test::dense_model({}), {{"enable-expert-parallel", "true"}}, "4").engine_view.at("ep_size"), 1);
  EXPECT_THROW(run(load_catalogue_model(test::source_root(), "gpt-oss-20b"), {{"enable-expert-parallel", "true"}}, "2"),
               Error);
}

TEST(VllmEngine, SmallGpusGetSmallerBatchDefaults) {
  const auto p = plan(test::dense_model({}), Bytes::from_gib(79.0), {{"max-model-len", "8192"}}, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(p.engine_view.at("max_num_seqs"), 256);
  EXPECT_EQ(p.engine_view.at("max_num_batched_tokens"), 2048);
}

TEST(VllmEngine, RefusesWhenNothingIsLeftForTheCache) {
  const auto p = plan(test::dense_model({}), Bytes::from_gib(16), {});
  EXPECT_FALSE(p.fits);
  EXPECT_NE(p.reason.find("No available memory for the cache blocks"), std::string::npos) << p.reason;
  EXPECT_EQ(p.kv_cache_bytes().count(), 0u);
}

TEST(VllmEngine, RefusesWhenOneMaxLengthRequestDoesNotFit) {
  // 24 GiB x 0.9 = 21.6 GiB - 14.99 weights - ~0.55 activation - 0.25 non-torch leaves ~5.8 GiB:
  // 131,072 tokens x 128 KiB = 16 GiB needed.
  const auto p = plan(test::dense_model({}), Bytes::from_gib(24), {});
  EXPECT_FALSE(p.fits);
  EXPECT_NE(p.reason.find("To serve at least one request with the model's max seq len (131072)"), std::string::npos) << p.reason;
  EXPECT_NE(p.reason.find("estimated maximum model length is"), std::string::npos);
}

TEST(VllmEngine, LoraSlotsAreAddedToTheWeights) {
  const auto p = plan(test::dense_model({}), Bytes::from_gib(79.19),
                      {{"max-model-len", "8192"}, {"enable-lora", "true"}, {"max-loras", "4"}, {"max-lora-rank", "16"}});
  // Per layer rank 16 x (qkv 4096 + 6144, o 4096 + 4096, gate_up 4096 + 28672, down 14336 + 4096)
  // = 1,114,112 values x 4 slots x 2 B = 8,912,896 B; x 32 layers = 285,212,672 B.
  EXPECT_EQ(test::component(p.weights, "weights.lora_slots").bytes.count(), 285212672u);
}

TEST(VllmEngine, TensorParallelShardsWeightsAndAddsAllReduceMemory) {
  const auto m = test::dense_model({});
  const auto tp1 = plan(m, Bytes::from_gib(79.19), {{"max-model-len", "8192"}});
  const auto tp2 = plan(m, Bytes::from_gib(79.19), {{"max-model-len", "8192"}, {"tensor-parallel-size", "2"}});
  // Everything but the rope cache and the norms (65 x 8,192 B = 532,480 B, replicated) halves:
  // (16,094,076,928 - 33,554,432 - 532,480) / 2 + 532,480 + 33,554,432 = 8,064,081,920 B. Plus
  // PyTorch's allocator rounding: embedding and lm_head (64,128 rows x 8 KiB = 501 MiB each) get
  // 502 MiB segments whose 1 MiB tails are not split off: +2,097,152 B (every other tensor is a
  // multiple of 2 MiB).
  EXPECT_EQ(test::component(tp2.weights, "weights.allocator_rounding").bytes.count(), 2097152u);
  EXPECT_EQ(tp2.weights_bytes().count(), 8064081920u + 2097152u);
  EXPECT_EQ(tp2.kv.bytes_per_token, 65536u);
  EXPECT_GT(test::component(tp2.overhead, "overhead.non_torch").bytes, test::component(tp1.overhead, "overhead.non_torch").bytes);
  EXPECT_EQ(tp2.gpu_count, 2u);
}

TEST(VllmEngine, EnforceEagerHasNoCudaGraphs) {
  const auto p = plan(test::dense_model({}), Bytes::from_gib(79.19), {{"max-model-len", "8192"}, {"enforce-eager", "true"}});
  EXPECT_EQ(test::component(p.overhead, "overhead.cuda_graphs").bytes.count(), 0u);
}

TEST(VllmEngine, CudaGraphPoolGrowsWithCapturedSizesAndLayers) {
  const auto m = test::dense_model({});  // 32 layers
  // Defaults (max_num_seqs 1024): 51 captured sizes. 0.3280 GiB = 352,187,318.272 B; 0.3426 MiB =
  // 359,242.1376 B per piece; 352,187,318.272 + 51 x 32 x 359,242.1376 = 938,470,486.84 B
  // (0.87 GiB; vLLM 0.19 logged 0.91 GiB for Llama-3.1-8B).
  const auto p = plan(m, Bytes::from_gib(79.19), {{"max-model-len", "8192"}});
  EXPECT_EQ(test::component(p.overhead, "overhead.cuda_graphs").bytes.count(), 938470487u);
  // PP 2: 16 layers on the first stage -> 352,187,318.272 + 51 x 16 x 359,242.1376 = 645,328,902.55 B.
  const auto pp = plan(m, Bytes::from_gib(79.19), {{"max-model-len", "8192"}, {"pipeline-parallel-size", "2"}});
  EXPECT_NEAR(pp.engine_view.at("cuda_graph_gib").get<double>(), 645328902.55 / 1073741824.0, 1e-4);
  // max_num_seqs 16: 7 sizes -> 352,187,318.272 + 7 x 32 x 359,242.1376 = 432,657,557.09 B.
  const auto small = plan(m, Bytes::from_gib(79.19), {{"max-model-len", "8192"}, {"max-num-seqs", "16"}});
  EXPECT_EQ(test::component(small.overhead, "overhead.cuda_graphs").bytes.count(), 432657557u);
}

TEST(VllmEngine, UnknownFlagsAndBadValuesAreUsageErrors) {
  const auto m = test::dense_model({});
  EXPECT_THROW(plan(m, Bytes::from_gib(80), {{"max-num-sequences", "4"}}), Error);
  EXPECT_THROW(plan(m, Bytes::from_gib(80), {{"gpu-memory-utilization", "1.5"}}), Error);
  EXPECT_THROW(plan(m, Bytes::from_gib(80), {{"max-model-len", "-3"}}), Error);
}

}  // namespace
}  // namespace vramplan::memory
