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

TEST(ThroughputModel, MultiStepSpreadsTheHostTermOverARound) {
  // vLLM 0.6.0 with --num-scheduler-steps 10 does the host's per-step work once a round, so a
  // steady decode step carries a tenth of the vllm-sync step term (0.65 ms): 0.065 ms, and the
  // batch table's decode step is 0.585 ms shorter than with one scheduler call a step.
  const PlanSession session(test::source_root(), "llama-3.1-8b", "vllm@0.6.0");
  const GpuSpec a100 = session.device("a100-sxm-80", std::nullopt);
  const perf::PerfDefaults defaults = perf::load_perf_defaults(test::source_root().data_file("perf_defaults.json"));
  auto model = [&](const memory::EngineArgs& args) {
    const memory::MemoryPlan plan = session.plan(a100, args, std::nullopt, {1, 4096});
    return throughput_model(session, a100, args, std::nullopt, defaults, 0, plan);
  };
  const ThroughputModel one = model({{"max-model-len", "4096"}});
  const ThroughputModel ten = model({{"max-model-len", "4096"}, {"num-scheduler-steps", "10"}});
  ASSERT_TRUE(one.decode_hardware && ten.decode_hardware);
  EXPECT_EQ(ten.decode_round_steps, 10u);
  EXPECT_NEAR(one.decode_hardware->expected.step_overhead_s, 0.65e-3, 1e-12);
  EXPECT_NEAR(ten.decode_hardware->expected.step_overhead_s, 0.065e-3, 1e-12);
  const perf::DecodeBatch batch{32, 1000};
  EXPECT_NEAR(perf::estimate_decode(one.shape, *one.decode_hardware, batch).step_s.expected -
                  perf::estimate_decode(ten.shape, *ten.decode_hardware, batch).step_s.expected,
              0.585e-3, 1e-9);
  EXPECT_NE(ten.decode_hardware->basis.find("once a round of 10 decode steps"), std::string::npos);
  // The prefill rates keep the whole term: a prompt round pays it.
  EXPECT_NEAR(ten.hardware->expected.step_overhead_s, 0.65e-3, 1e-12);
}

}  // namespace
}  // namespace vramplan::plan
