// The batch table's and the sweep's step model (plan/throughput.cpp) moves the KV bytes the
// memory plan holds, as the simulator's does (sim/serving_plan.cpp plan_performance).
#include "vramplan/plan/throughput.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace vramplan::plan {
namespace {

TEST(ThroughputModel, ReadsTheKvRowsThePlanHolds) {
  // GLM-5 FP8 with an fp8 KV cache on 8 x B200 under the newest SGLang: the trtllm NSA backend
  // keeps plain fp8 latent rows of (512 + 64) x 1 = 576 B, not fp8_ds_mla's 656, beside the
  // indexer's 132 B keys (memory/sglang_dsa.cpp): 78 layers x (576 + 132) = 55,224 B a token.
  const PlanSession session(test::source_root(), "glm-5", "sglang");
  const GpuSpec b200 = session.device("b200", std::nullopt);
  const memory::EngineArgs args{{"tp-size", "8"}, {"quantization", "fp8"}, {"kv-cache-dtype", "fp8_e4m3"}};
  const memory::MemoryPlan plan = session.plan(b200, args, std::nullopt, {1, 4096});
  ASSERT_EQ(plan.kv.bytes_per_token, 55224u);
  const perf::PerfDefaults defaults = perf::load_perf_defaults(test::source_root().data_file("perf_defaults.json"));
  const ThroughputModel m = throughput_model(session, b200, args, std::nullopt, defaults, 0, plan);
  double total = 0;
  bool latent = false;
  for (const auto& g : m.shape.attention) {
    total += g.layers * g.kv_bytes_per_token;
    if (!g.fixed_row) {
      EXPECT_NEAR(g.kv_bytes_per_token, 576.0, 1e-9);
      latent = true;
    }
  }
  EXPECT_TRUE(latent);
  EXPECT_NEAR(total, 55224.0, 1e-6);
}

}  // namespace
}  // namespace vramplan::plan
