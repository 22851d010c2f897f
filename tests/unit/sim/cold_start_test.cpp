// --cold-start's bookkeeping (vramplan/sim/cold_start.hpp): which fused-MoE kernel variant a
// forward of M tokens launches, what a fresh vLLM server has compiled, and which steps stall.
// Values by hand for Mixtral-8x7B (E = 8 experts, top_k = 2) under the blis runs' flags
// (max_num_seqs 128, max_num_batched_tokens 2048).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/sim/cold_start.hpp"
#include "vramplan/sim/simulate.hpp"

namespace vramplan::sim {
namespace {

TEST(ColdStart, TunedBatchIsTheNearestGridEntryTiesToTheSmaller) {
  EXPECT_EQ(nearest_tuned_batch(0), 1u);
  EXPECT_EQ(nearest_tuned_batch(600), 512u);   // |600 - 512| = 88 < |1024 - 600| = 424
  EXPECT_EQ(nearest_tuned_batch(768), 512u);   // 256 either way: Python's min keeps the first key
  EXPECT_EQ(nearest_tuned_batch(769), 1024u);
  EXPECT_EQ(nearest_tuned_batch(1800), 2048u);  // |1800 - 1536| = 264 > |2048 - 1800| = 248
  EXPECT_EQ(nearest_tuned_batch(20000), 4096u);
}

TEST(ColdStart, VariantFollowsTheDivisibilityOfTheTokenCountArguments) {
  // M = 600: num_valid_tokens = 1200 = 75 x 16; EM = 1200 - 8 = 1192 = 74 x 16 + 8 (mod 16).
  EXPECT_EQ(fused_moe_variant(600, 8, 2), (FusedMoeVariant{512, true, false}));
  // M = 604: 1208 = 75 x 16 + 8; EM = 1200 (mod 16) = 0.
  EXPECT_EQ(fused_moe_variant(604, 8, 2), (FusedMoeVariant{512, false, true}));
  // M = 601: 1202 and 1194, neither divisible.
  EXPECT_EQ(fused_moe_variant(601, 8, 2), (FusedMoeVariant{512, false, false}));
  // E = 256, top_k = 8 (DeepSeek-V3), M = 1000: 8000 = 500 x 16, EM = 8000 - 256 = 7744 = 484 x 16.
  EXPECT_EQ(fused_moe_variant(1000, 256, 8), (FusedMoeVariant{1024, true, true}));
}

TEST(ColdStart, FreshVllmServerHasItsGraphSizesAndProfileForwardCompiled) {
  ColdStartState s = vllm_fresh_server(8, 2, 128, 2048, false, 1.5);
  EXPECT_EQ(s.graph_tokens, 256u);  // min(2 x 128, 512, 2048)
  EXPECT_EQ(s.charge(200), 0.0);    // padded to a captured graph
  EXPECT_EQ(s.charge(256), 0.0);
  EXPECT_EQ(s.charge(2048), 0.0);   // the profile forward's variant: {2048, 4096 % 16 = 0, 4088 % 16 = 8}
  EXPECT_EQ(s.charge(600), 1.5);    // {512, true, false}: first use
  EXPECT_EQ(s.charge(600), 0.0);
  EXPECT_EQ(s.charge(608), 0.0);    // 1216 % 16 = 0, 1208 % 16 = 8: the same variant
  EXPECT_EQ(s.charge(604), 1.5);    // {512, false, true}
  EXPECT_EQ(s.charge(2040), 0.0);   // 4080 % 16 = 0, 4072 % 16 = 8: the profile forward's variant
  EXPECT_EQ(s.charge(2044), 1.5);   // 4088 % 16 = 8, 4080 % 16 = 0: {2048, false, true}
  EXPECT_EQ(s.first_uses, 3u);
  EXPECT_DOUBLE_EQ(s.stalled_s, 4.5);
}

TEST(ColdStart, DenseModelsAndEagerServers) {
  ColdStartState dense = vllm_fresh_server(0, 0, 128, 2048, false, 1.5);
  EXPECT_EQ(dense.charge(600), 0.0);
  EXPECT_TRUE(dense.compiled.empty());
  ColdStartState eager = vllm_fresh_server(8, 2, 128, 2048, true, 1.5);
  EXPECT_EQ(eager.graph_tokens, 0u);
  EXPECT_EQ(eager.charge(1), 1.5);  // no graph captured: even a one-token decode compiles
  EXPECT_EQ(eager.charge(1), 0.0);
}

TEST(ColdStart, ClockAddsTheStallToTheStepThatLaunchesTheVariant) {
  auto state = std::make_shared<ColdStartState>(vllm_fresh_server(8, 2, 128, 2048, false, 1.5));
  const StepClock clock = with_cold_start([](const perf::MixedStep&) { return 0.01; }, state);
  const std::vector<perf::PrefillChunk> chunk = {{0, 580}};
  const perf::MixedStep mixed{20, 20000, chunk};  // 20 decodes + 580 prompt tokens = 600
  EXPECT_DOUBLE_EQ(clock(mixed), 1.51);
  EXPECT_DOUBLE_EQ(clock(mixed), 0.01);
  EXPECT_DOUBLE_EQ(clock(perf::MixedStep{100, 50000, {}}), 0.01);  // a decode step: a captured graph
  EXPECT_EQ(state->first_uses, 1u);
}

TEST(ColdStart, OtherEnginesAreRefused) {
  SimulateRequest q;
  q.plan.model = "mixtral-8x7b";
  q.plan.gpu = "h100-sxm-80";
  q.plan.engine = "sglang";
  q.plan.args["tp-size"] = "2";
  q.cold_start.enabled = true;
  const PreparedEngine e = prepare_engine(q.plan, test::source_root());
  const std::string msg = test::error_message([&] { step_clock_for(e, q, test::source_root()); }, ErrorKind::Usage);
  EXPECT_NE(msg.find("--engine vllm only"), std::string::npos) << msg;
}

}  // namespace
}  // namespace vramplan::sim
