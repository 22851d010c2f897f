// sim/serving_plan.hpp: the performance figures sit on top of the memory plan and change none of
// it; a pooling plan gets inputs/s instead of decode / TTFT.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/memory/plan_request.hpp"
#include "vramplan/sim/serving_plan.hpp"

namespace vramplan::sim {
namespace {

memory::PlanRequest serving_request(const std::string& model, const std::string& engine) {
  memory::PlanRequest r;
  r.model = model;
  r.gpu = "h100-sxm-80";
  r.engine = engine;
  return r;
}

TEST(ServingPlan, AddsPerformanceWithoutChangingTheMemoryPlan) {
  const memory::PlanRequest r = serving_request("llama-3.1-8b", "vllm");
  const ServingPlan serving = run_serving_plan(r, test::source_root());
  const memory::PlanOutcome memory_only = memory::run_plan(r, test::source_root());
  EXPECT_EQ(serving.plan.total_bytes(), memory_only.plan.total_bytes());
  EXPECT_EQ(serving.plan.kv.capacity_tokens, memory_only.plan.kv.capacity_tokens);
  EXPECT_EQ(serving.plan.notes, memory_only.plan.notes);
  // H100 SXM has datasheet bandwidth and TFLOPS: a decode estimate and the step model the
  // simulator times its steps with.
  ASSERT_TRUE(serving.performance.estimate.has_value()) << serving.performance.unavailable;
  EXPECT_TRUE(serving.performance.shape.has_value());
  EXPECT_TRUE(serving.performance.hardware.has_value());
  // No --batch / --prompt-len: batch 1, perf::kDefaultPromptTokens (1024) as prompt and context.
  EXPECT_EQ(serving.performance.query.batch, 1u);
  EXPECT_EQ(serving.performance.query.prompt_tokens, 1024u);
  EXPECT_EQ(serving.performance.query.decode_context, 1024u);
}

TEST(ServingPlan, PoolingPlanGetsInputsPerSecondInstead) {
  const ServingPlan serving = run_serving_plan(serving_request("bge-large-en-v1.5", "tei"), test::source_root());
  EXPECT_FALSE(serving.performance.estimate.has_value());
  EXPECT_NE(serving.performance.unavailable.find("pooling model"), std::string::npos) << serving.performance.unavailable;
  ASSERT_TRUE(serving.plan.engine_view.contains("inputs_per_s"));
  // The memory-only plan has no performance side, so no inputs/s either.
  EXPECT_FALSE(memory::run_plan(serving_request("bge-large-en-v1.5", "tei"), test::source_root())
                   .plan.engine_view.contains("inputs_per_s"));
}

}  // namespace
}  // namespace vramplan::sim
