// vLLM's full-sequence admission gate by configuration (memory/vllm_full_isl_admission.hpp):
// SchedulerConfig.scheduler_reserve_full_isl, on by default from 0.19.0 (read in the 0.19.0,
// 0.28.0 and 0.34.0 wheels; absent from 0.17.0, 0.18.0 and 0.18.1), and what it puts in a plan's
// engine_view for the simulator.
#include <gtest/gtest.h>

#include "support/engine_plans.hpp"
#include "support/test_models.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/vllm_full_isl_admission.hpp"

namespace vramplan::memory {
namespace {

TEST(VllmFullIslAdmission, DefaultOnFrom019) {
  EXPECT_FALSE(vllm_full_isl_admission("0.11", {}, false));
  EXPECT_FALSE(vllm_full_isl_admission("0.15.1", {}, false));
  EXPECT_FALSE(vllm_full_isl_admission("0.18.1", {}, false));
  EXPECT_TRUE(vllm_full_isl_admission("0.19", {}, false));
  EXPECT_TRUE(vllm_full_isl_admission("0.19.0rc1", {}, false));
  EXPECT_TRUE(vllm_full_isl_admission("0.34.0", {}, false));
  EXPECT_TRUE(vllm_full_isl_admission("", {}, false));         // no release given: the current one
  EXPECT_TRUE(vllm_full_isl_admission("nightly", {}, false));  // not a release number: the current one
  // V0's block manager checks the whole prompt's blocks when it admits one (can_allocate).
  EXPECT_TRUE(vllm_full_isl_admission("0.6.4", {}, true));
}

TEST(VllmFullIslAdmission, FlagsWinWhereTheOptionExists) {
  EXPECT_FALSE(vllm_full_isl_admission("0.19", {{"no-scheduler-reserve-full-isl", ""}}, false));
  EXPECT_TRUE(vllm_full_isl_admission("0.28", {{"scheduler-reserve-full-isl", ""}}, false));
  // Before 0.19 (and in V0) vLLM has no such option: its argument parser refuses the flag.
  EXPECT_THROW(vllm_full_isl_admission("0.18.1", {{"no-scheduler-reserve-full-isl", ""}}, false), Error);
  EXPECT_THROW(vllm_full_isl_admission("0.6.4", {{"scheduler-reserve-full-isl", ""}}, true), Error);
  EXPECT_THROW(vllm_full_isl_admission("0.19", {{"scheduler-reserve-full-isl", ""}, {"no-scheduler-reserve-full-isl", ""}}, false),
               Error);
}

TEST(VllmFullIslAdmission, PlanRecordsItFromTheReleaseNotTheProfile) {
  // vllm@0.18 is planned with the 0.17 profile (0.17 - 0.18) and asks for the first chunk only;
  // vllm@0.19.1 and the default release gate on the whole sequence.
  const ModelSpec model = test::dense_model({});
  const GpuTarget gpu = test::gpu_target(Bytes::from_gib(79.1));
  const EngineArgs args{{"max-model-len", "8192"}};
  EXPECT_EQ(test::plan_engine("vllm@0.18", model, gpu, args).engine_view.at("scheduler_reserve_full_isl"), false);
  EXPECT_EQ(test::plan_engine("vllm@0.19.1", model, gpu, args).engine_view.at("scheduler_reserve_full_isl"), true);
  EngineArgs off = args;
  off["no-scheduler-reserve-full-isl"] = "";
  EXPECT_EQ(test::plan_engine("vllm", model, gpu, off).engine_view.at("scheduler_reserve_full_isl"), false);
}

}  // namespace
}  // namespace vramplan::memory
