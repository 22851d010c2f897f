// vLLM V0 multi-step scheduling by release (memory/vllm_multi_step.hpp), as the 0.5.5 - 0.11.0
// source releases resolve --num-scheduler-steps, and what it puts in a plan's engine_view.
#include <gtest/gtest.h>

#include <string>

#include "support/engine_plans.hpp"
#include "support/test_models.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/vllm_multi_step.hpp"

namespace vramplan::memory {
namespace {

const EngineArgs kTen{{"num-scheduler-steps", "10"}};

std::string refusal(const char* release, bool v0, bool chunked, const EngineArgs& args = kTen) {
  return test::error_message([&] { vllm_multi_step(release, v0, chunked, 1, args); }, ErrorKind::Usage);
}

TEST(VllmMultiStep, OneStepIsTheDefaultEverywhere) {
  EXPECT_EQ(vllm_multi_step("0.19", false, true, 1, {}).steps, 1u);
  EXPECT_EQ(vllm_multi_step("0.6.0", true, false, 1, {{"num-scheduler-steps", "1"}}).steps, 1u);
  EXPECT_TRUE(vllm_multi_step("0.6.0", true, false, 1, {}).why.empty());
}

TEST(VllmMultiStep, StreamsOnceARoundUpTo062) {
  // 0.5.5 - 0.6.1: one output a round; 0.6.2 adds --multi-step-stream-outputs, off; from 0.6.3 on
  // by default (PR #9047).
  const VllmMultiStep old = vllm_multi_step("0.6.0", true, false, 1, kTen);
  EXPECT_EQ(old.steps, 10u);
  EXPECT_FALSE(old.streams_each_step);
  EXPECT_NE(old.why.find("one chunk"), std::string::npos) << old.why;
  EXPECT_FALSE(vllm_multi_step("0.6.2", true, false, 1, kTen).streams_each_step);
  EXPECT_TRUE(vllm_multi_step("0.6.3", true, false, 1, kTen).streams_each_step);
  EXPECT_TRUE(vllm_multi_step("0.7.3", true, false, 1, kTen).streams_each_step);
}

TEST(VllmMultiStep, RefusesWhatVllmRefusesOrVramplanDoesNotModel) {
  EXPECT_NE(refusal("0.6.0", true, false, {{"num-scheduler-steps", "0"}}).find("1..4096"), std::string::npos);
  // 0.10.1 removed the flag (PR #22138); no release given means the current one.
  EXPECT_NE(refusal("0.10.1", true, false).find("removed in 0.10.1"), std::string::npos);
  EXPECT_NE(refusal("", true, false).find("removed in 0.10.1"), std::string::npos);
  // 0.8 - 0.10.0 fall back to the V0 engine, which the V1 profiles do not plan.
  EXPECT_NE(refusal("0.9.2", false, false).find("falls back to its V0 engine"), std::string::npos);
  // Chunked prefill: 0.6.0 - 0.6.2 raise; 0.6.3 runs both (PR #8378), but not with PP > 1.
  EXPECT_NE(refusal("0.6.2", true, true).find("Chunked prefill is not supported with multi-step"), std::string::npos);
  EXPECT_EQ(vllm_multi_step("0.6.3", true, true, 1, kTen).steps, 10u);
  const std::string pp = test::error_message([] { vllm_multi_step("0.7.3", true, true, 2, kTen); }, ErrorKind::Usage);
  EXPECT_NE(pp.find("Multi-Step Chunked-Prefill is not supported for pipeline-parallel-size > 1"), std::string::npos) << pp;
  EXPECT_EQ(vllm_multi_step("0.7.3", true, false, 2, kTen).steps, 10u);  // PP alone is allowed
}

TEST(VllmMultiStep, PlanCarriesItInTheEngineView) {
  // max_model_len 4096 keeps V0's chunked prefill off (on by default only above 32,768).
  const ModelSpec model = test::dense_model({});
  const GpuTarget gpu = test::gpu_target(Bytes::from_gib(79.1));
  EngineArgs args = kTen;
  args["max-model-len"] = "4096";
  const MemoryPlan p = test::plan_engine("vllm@0.6.0", model, gpu, args);
  EXPECT_EQ(p.engine_view.at("num_scheduler_steps"), 10);
  EXPECT_EQ(p.engine_view.at("multi_step_stream_outputs"), false);
  bool noted = false;
  for (const auto& n : p.notes) noted = noted || n.find("--num-scheduler-steps 10") != std::string::npos;
  EXPECT_TRUE(noted);
  // Without the flag the view has no such key (existing plans unchanged).
  EXPECT_FALSE(test::plan_engine("vllm@0.6.0", model, gpu, {{"max-model-len", "4096"}}).engine_view.contains("num_scheduler_steps"));
  // Chunked prefill on (by default above max_model_len 32,768, or by the flag): 0.6.0 refuses.
  args["enable-chunked-prefill"] = "true";
  const std::string msg = test::error_message([&] { test::plan_engine("vllm@0.6.0", model, gpu, args); }, ErrorKind::Usage);
  EXPECT_NE(msg.find("Chunked prefill is not supported with multi-step"), std::string::npos) << msg;
  // 0.6.4 runs them together, with the whole context as the step's budget (config.py
  // SchedulerConfig: max(max_model_len, 2048), where chunked prefill alone gets 512).
  const MemoryPlan both = test::plan_engine("vllm@0.6.4", model, gpu, args);
  EXPECT_EQ(both.engine_view.at("max_num_batched_tokens"), 4096);
  EXPECT_EQ(both.engine_view.at("enable_chunked_prefill"), true);
  EngineArgs chunked_only = args;
  chunked_only.erase("num-scheduler-steps");
  EXPECT_EQ(test::plan_engine("vllm@0.6.4", model, gpu, chunked_only).engine_view.at("max_num_batched_tokens"), 512);
}

}  // namespace
}  // namespace vramplan::memory
