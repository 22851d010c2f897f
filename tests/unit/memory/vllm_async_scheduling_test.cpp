// vLLM's async scheduling by configuration (memory/vllm_async_scheduling.hpp), as
// vllm/config/vllm.py VllmConfig.__post_init__ resolves SchedulerConfig.async_scheduling (read in
// the 0.14.0 and 0.15.1 wheels), and what it does to a plan's engine_view.
#include <gtest/gtest.h>

#include "support/engine_plans.hpp"
#include "support/test_models.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/vllm_async_scheduling.hpp"

namespace vramplan::memory {
namespace {

bool async(const char* release, EngineArgs args = {}, std::uint64_t pp = 1) {
  return vllm_async_scheduling(release, args, pp).on;
}

TEST(VllmAsyncScheduling, DefaultOnFrom014) {
  // PR #27614 (v0.14.0): async_scheduling None -> True unless something is incompatible.
  EXPECT_FALSE(async("0.6.4"));
  EXPECT_FALSE(async("0.11"));
  EXPECT_FALSE(async("0.13.9"));
  EXPECT_TRUE(async("0.14"));
  EXPECT_TRUE(async("0.15.1"));
  EXPECT_TRUE(async("0.19.0rc1"));
  EXPECT_TRUE(async(""));         // no release given: the current one
  EXPECT_TRUE(async("nightly"));  // not a release number: the current one
}

TEST(VllmAsyncScheduling, PipelineParallelTurnsItOffOn014Only) {
  // 0.14.0: "Async scheduling is not yet supported with pipeline_parallel_size > 1 and will be
  // disabled"; the 0.15.1 wheel has no such branch (PR #32359, async scheduling with PP).
  EXPECT_FALSE(async("0.14.0", {}, 2));
  EXPECT_FALSE(async("0.14.1", {}, 4));
  EXPECT_TRUE(async("0.14.0", {}, 1));
  EXPECT_TRUE(async("0.15.1", {}, 2));
  EXPECT_TRUE(async("0.19", {}, 2));
  EXPECT_FALSE(async("0.11", {}, 2));  // off anyway before 0.14
}

TEST(VllmAsyncScheduling, FlagsWin) {
  EXPECT_FALSE(async("0.19", {{"no-async-scheduling", ""}}));
  EXPECT_FALSE(async("0.15.1", {{"no-async-scheduling", ""}}, 2));
  EXPECT_TRUE(async("0.11", {{"async-scheduling", ""}}));  // opt-in before it became the default
  EXPECT_TRUE(async("0.15.1", {{"async-scheduling", ""}}, 2));
  // Explicitly on with PP before 0.15: vLLM raises ValueError at start-up.
  EXPECT_THROW(async("0.14.0", {{"async-scheduling", ""}}, 2), Error);
  EXPECT_THROW(async("0.19", {{"async-scheduling", ""}, {"no-async-scheduling", ""}}), Error);
  EXPECT_NE(vllm_async_scheduling("0.19", {{"no-async-scheduling", ""}}, 1).why.find("--no-async-scheduling"),
            std::string::npos);
}

TEST(VllmAsyncScheduling, PlanRecordsItFromTheReleaseNotTheProfile) {
  // vllm@0.15.1 is planned with the 0.11 profile (0.11 - 0.16) but schedules asynchronously;
  // vllm@0.13 with the same profile does not, and says why in the notes.
  const ModelSpec model = test::dense_model({});
  const GpuTarget gpu = test::gpu_target(Bytes::from_gib(79.1));
  const EngineArgs args{{"max-model-len", "8192"}};
  const MemoryPlan p015 = test::plan_engine("vllm@0.15.1", model, gpu, args);
  EXPECT_EQ(p015.engine_version, "0.11");
  EXPECT_EQ(p015.engine_view.at("async_scheduling"), true);
  const MemoryPlan p013 = test::plan_engine("vllm@0.13", model, gpu, args);
  EXPECT_EQ(p013.engine_view.at("async_scheduling"), false);
  bool noted = false;
  for (const auto& n : p013.notes) noted = noted || n.find("async scheduling off: vLLM 0.13") != std::string::npos;
  EXPECT_TRUE(noted);
  EngineArgs off = args;
  off["no-async-scheduling"] = "";
  EXPECT_EQ(test::plan_engine("vllm", model, gpu, off).engine_view.at("async_scheduling"), false);
}

}  // namespace
}  // namespace vramplan::memory
