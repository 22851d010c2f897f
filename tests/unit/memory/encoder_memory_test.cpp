// Pooling-model plans (memory/encoder_memory.cpp): hand-computed activation peaks per engine, no
// KV cache, refused flags, encoders refused by engines that do not serve them.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/plan_request.hpp"

namespace vramplan::memory {
namespace {

PlanOutcome pooling_plan_of(const std::string& model, const std::string& engine, EngineArgs args = {},
                    Workload w = {}) {
  PlanRequest r;
  r.model = model;
  r.gpu = "h100-sxm-80";
  r.engine = engine;
  r.args = std::move(args);
  r.workload = w;
  return run_plan(r, test::source_root());
}

std::uint64_t pooled_component_bytes(const std::vector<Component>& parts, const std::string& name) {
  for (const auto& c : parts)
    if (c.name == name) return c.bytes.count();
  return 0;
}

// bge-large-en-v1.5 (BERT-large: h 1024, 16 heads x 64, intermediate 4096). One layer's live sets
// per token: attention h + 2 x 1024 (q, context) + 2 x 1024 (k, v) = 5120 values; MLP h + 2 x 4096
// (intermediate + GELU output) = 9216 values.
TEST(EncoderMemory, SentenceTransformersSdpaFp32PeakIsTheMlp) {
  const auto out = pooling_plan_of("bge-large-en-v1.5", "hf", {}, {32, 512});
  // 32 x 512 tokens x 4 B x 9216 = 603,979,776 B > attention 32 x 512 x 4 x 5120 = 335,544,320 B.
  EXPECT_EQ(pooled_component_bytes(out.plan.activation, "activation.mlp"), 603'979'776ull);
  EXPECT_EQ(pooled_component_bytes(out.plan.activation, "activation.pooled"), 32ull * 1024 * 4);
  // fp32 weights: 335,141,888 parameters x 4 B.
  EXPECT_EQ(out.plan.weights_bytes().count(), 335'141'888ull * 4);
  EXPECT_TRUE(out.plan.kv_cache.empty());
  EXPECT_EQ(out.plan.kv.bytes_per_token, 0u);
}

TEST(EncoderMemory, EagerAttentionMaterialisesTheScores) {
  const auto out = pooling_plan_of("bge-large-en-v1.5", "hf", {{"attn-implementation", "eager"}}, {32, 512});
  // 32 inputs x 16 heads x 512² x (scores + softmax) x 4 B = 1,073,741,824 B on top of the
  // attention live set 335,544,320 B, which now exceeds the MLP's 603,979,776 B.
  EXPECT_EQ(pooled_component_bytes(out.plan.activation, "activation.attention_scores"), 1'073'741'824ull);
  EXPECT_EQ(pooled_component_bytes(out.plan.activation, "activation.attention"), 335'544'320ull);
  EXPECT_EQ(pooled_component_bytes(out.plan.activation, "activation.mlp"), 0u);
}

TEST(EncoderMemory, TeiWarmupRunsMaxBatchTokensInFloat16) {
  const auto out = pooling_plan_of("bge-large-en-v1.5", "tei");
  // --max-batch-tokens 16384 in requests of 512 tokens (32 of them), fp16:
  // 16384 x 2 B x 9216 = 301,989,888 B; weights 335,141,888 x 2 B.
  EXPECT_EQ(pooled_component_bytes(out.plan.activation, "activation.mlp"), 301'989'888ull);
  EXPECT_EQ(out.plan.weights_bytes().count(), 335'141'888ull * 2);
  EXPECT_EQ(out.plan.engine_view.at("warmup_requests").get<std::uint64_t>(), 32u);
}

TEST(EncoderMemory, VllmPoolingBudgetIsTheServerDefaultOrTheModelLength) {
  const auto out = pooling_plan_of("bge-m3", "vllm");
  // vLLM 0.19 on an H100 (>= 70 GiB, not A100): get_batch_defaults gives the server 8192 tokens and
  // 1024 sequences; without chunked prefill the budget is max(max_model_len, 8192), where
  // max_model_len is BGE-M3's max_seq_length 8192 = 8194 positions - (pad_token_id 1 + 1), below
  // the cap 1024 x 8192. fp32 checkpoint served in 2-byte floats: the MLP live set
  // 8192 x 2 B x 9216 = 150,994,944 B (attention 8192 x 2 x 5120 is smaller).
  EXPECT_EQ(out.plan.engine_view.at("max_model_len").get<std::uint64_t>(), 8192u);
  EXPECT_EQ(out.plan.engine_view.at("max_num_batched_tokens").get<std::uint64_t>(), 8192u);
  EXPECT_EQ(out.plan.engine_view.at("max_num_seqs").get<std::uint64_t>(), 1024u);
  EXPECT_EQ(pooled_component_bytes(out.plan.activation, "activation.mlp"), 150'994'944ull);
  EXPECT_TRUE(out.plan.kv_cache.empty());
  // A short max_model_len keeps the server default: max(512, 8192) = 8192 tokens,
  // 8192 x 2 B x 9216 = 150,994,944 B.
  const auto short_len = pooling_plan_of("bge-large-en-v1.5", "vllm");
  EXPECT_EQ(short_len.plan.engine_view.at("max_num_batched_tokens").get<std::uint64_t>(), 8192u);
  EXPECT_EQ(pooled_component_bytes(short_len.plan.activation, "activation.mlp"), 150'994'944ull);
}

TEST(EncoderMemory, VllmPoolingBudgetBeforeTheUsageDefaultsIsThePoolingConstant) {
  // vLLM 0.9 profile: SchedulerConfig raises the unset budget to POOLING_MODEL_MAX_NUM_BATCHED_TOKENS:
  // max(8194, 32768) = 32768; 32768 x 2 B x 9216 = 603,979,776 B.
  const auto out = pooling_plan_of("bge-m3", "vllm@0.9.2");
  EXPECT_EQ(out.plan.engine_view.at("max_num_batched_tokens").get<std::uint64_t>(), 32768u);
  EXPECT_EQ(pooled_component_bytes(out.plan.activation, "activation.mlp"), 603'979'776ull);
}

TEST(EncoderMemory, VllmPoolingPeakIsCheckedAgainstTheWholeGpuNotTheUtilisation) {
  // No profile run for an encoder-only model: gpu_memory_utilization caps nothing, so a budget
  // whose batch exceeds 0.1 x 80 GiB still fits on the GPU.
  const auto out = pooling_plan_of("bge-m3", "vllm", {{"gpu-memory-utilization", "0.1"}, {"max-num-batched-tokens", "524288"}});
  EXPECT_GT(out.plan.total_bytes().gib(), 0.1 * out.plan.gpu_total.gib());
  EXPECT_TRUE(out.plan.fits) << out.plan.reason;
}

TEST(EncoderMemory, FlagsWithoutMeaningForAPoolingModelAreRefused) {
  try {
    pooling_plan_of("bge-m3", "vllm", {{"kv-cache-dtype", "fp8"}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("--kv-cache-dtype does not apply to bge-m3"), std::string::npos) << e.what();
  }
  try {
    pooling_plan_of("bge-m3", "tei", {{"max-num-seqs", "8"}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("--max-num-seqs is not a flag of engine 'tei'"), std::string::npos) << e.what();
  }
}

TEST(EncoderMemory, EnginesWithoutAPoolingRunnerRefuseEncoders) {
  try {
    pooling_plan_of("bge-m3", "sglang");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("encoders are planned under hf"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vramplan::memory
