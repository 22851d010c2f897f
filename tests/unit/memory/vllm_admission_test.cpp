// vLLM's full-sequence admission gate by configuration (memory/vllm_admission.hpp):
// SchedulerConfig.scheduler_reserve_full_isl, on by default from 0.19.0 (read in the 0.19.0,
// 0.28.0 and 0.34.0 wheels; absent from 0.17.0, 0.18.0 and 0.18.1), and what it puts in a plan's
// engine_view for the simulator.
#include <gtest/gtest.h>

#include "support/engine_plans.hpp"
#include "support/test_models.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/vllm_admission.hpp"

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

TEST(VllmWatermark, FromTheFlagOn024AndLater) {
  EXPECT_DOUBLE_EQ(vllm_watermark("0.19", {}, false), 0.0);  // no flag: no watermark on any V1 release
  EXPECT_DOUBLE_EQ(vllm_watermark("0.24", {{"watermark", "0.05"}}, false), 0.05);
  EXPECT_DOUBLE_EQ(vllm_watermark("", {{"watermark", "0"}}, false), 0.0);
  // SchedulerConfig.watermark: Field(ge=0.0, lt=1.0); the flag arrived in 0.24.0.
  EXPECT_THROW(vllm_watermark("0.23.0", {{"watermark", "0.05"}}, false), Error);
  EXPECT_THROW(vllm_watermark("0.6.4", {{"watermark", "0.05"}}, true), Error);
  EXPECT_THROW(vllm_watermark("0.28", {{"watermark", "1"}}, false), Error);
  EXPECT_THROW(vllm_watermark("0.28", {{"watermark", "-0.1"}}, false), Error);
  const ModelSpec model = test::dense_model({});
  const GpuTarget gpu = test::gpu_target(Bytes::from_gib(79.1));
  const MemoryPlan p = test::plan_engine("vllm@0.28", model, gpu, {{"max-model-len", "8192"}, {"watermark", "0.1"}});
  EXPECT_DOUBLE_EQ(p.engine_view.at("watermark").get<double>(), 0.1);
}

}  // namespace
}  // namespace vramplan::memory
