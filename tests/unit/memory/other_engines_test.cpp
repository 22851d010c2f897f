// First-order SGLang, TensorRT-LLM and HF profiles: hand-computed figures.
#include <gtest/gtest.h>

#include "support/engine_plans.hpp"
#include "support/test_models.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan::memory {
namespace {

MemoryPlan plan(const std::string& engine, const ModelSpec& m, Bytes total, EngineArgs args, Workload w = {}) {
  return test::plan_engine(engine, m, test::gpu_target(total), std::move(args), w);
}

// Llama-3.1-8B shape without the rope cache (these engines do not count it): 16,060,522,496 B.
constexpr std::uint64_t kLlamaWeights = 16060522496u;

// SGLang: tests/unit/memory/sglang_engine_test.cpp.

TEST(TrtllmEngine, KvIsAFractionOfWhatIsLeft) {
  const Bytes total(80000000000u);
  const auto p = plan("trtllm", test::dense_model({}), total, {{"max-num-tokens", "8192"}, {"max-batch-size", "256"}});
  // activation = 8192 x 2 x (3 x 4096 + 3 x 14336) = 905,969,664 B; logits 256 x 128,256 x 4 = 131,334,144 B;
  // runtime 0.75 GiB = 805,306,368 B; free = 80e9 - weights - those = 62,096,867,328 B; x 0.9 = the budget;
  // tokens = budget // 131,072 B, rounded UP to whole blocks of 32 (TensorRT-LLM allocates the partial block).
  const std::uint64_t free = 80000000000u - kLlamaWeights - 905969664u - 131334144u - 805306368u;
  const std::uint64_t budget = static_cast<std::uint64_t>(static_cast<double>(free) * 0.9);
  EXPECT_EQ(*p.kv.capacity_tokens, (budget / 131072u + 31u) / 32u * 32u);
  EXPECT_EQ(p.kv_cache_bytes().count(), *p.kv.capacity_tokens * 131072u);
}

TEST(HfEngine, DynamicCacheGrowsWithBatchAndLength) {
  const auto p = plan("hf", test::dense_model({}), Bytes(80000000000u), {}, {4, 4096});
  // 4 sequences x 4096 tokens x 131,072 B = 2 GiB exactly.
  EXPECT_EQ(p.kv_cache_bytes().count(), 2147483648u);
  EXPECT_TRUE(p.fits);
  const auto eager = plan("hf", test::dense_model({}), Bytes(80000000000u), {{"attn-implementation", "eager"}}, {4, 4096});
  // Eager attention adds 4 x 32 heads x 4096^2 x (2 + 4) B = 12 GiB of scores for one layer.
  EXPECT_EQ(eager.activation_bytes().count() - p.activation_bytes().count(), 12884901888u);
}

// --max-new-tokens 4096 of --context 8192, batch 8: the prefill holds 8 x 4096 x 131,072 B = 4 GiB of cache
// + 8 x 4096 x 2 x (3 x 4096 + 3 x 14336) = 3,623,878,656 B of layer activations (7.375 GiB); the last
// decode step holds 8 x 8192 x 131,072 B = 8 GiB + fp32 logits 8 x vocab x 4 B: the decode step is the peak.
TEST(HfEngine, PeakIsTheLargerOfPrefillAndLastDecodeStep) {
  const auto m = test::dense_model({});
  const auto p = plan("hf", m, Bytes(80000000000u), {{"max-new-tokens", "4096"}}, {8, 8192});
  EXPECT_EQ(p.kv_cache_bytes().count(), 8589934592u);
  EXPECT_EQ(p.activation_bytes().count(), 8u * m.arch.vocab_size * 4u);
  // All 8192 tokens prompt: the prefill (8 GiB cache + 7,247,757,312 B of activations) is the peak.
  const auto q = plan("hf", m, Bytes(80000000000u), {}, {8, 8192});
  EXPECT_EQ(q.kv_cache_bytes().count(), 8589934592u);
  EXPECT_EQ(q.activation_bytes().count(), 7247757312u);
}

}  // namespace
}  // namespace vramplan::memory
