// SGLang DP attention's lockstep step (perf::dp_attention_step_seconds): the slowest rank's
// attention, the MLP over every rank's tokens gathered, the gather and scatter collectives.
#include <gtest/gtest.h>

#include <vector>

#include "vramplan/core/error.hpp"
#include "support/perf_shapes.hpp"
#include "vramplan/perf/perf_model.hpp"

namespace vramplan::perf {
namespace {

// Two layers, 3e9 B of dense weights a GPU of which 1e9 B are the attention projections (0.5e9
// of 1.5e9 params), one full-attention group of 8 heads of 64 + 64 and 1,000 KV bytes a token a
// layer; tp GPUs as `dp` ranks of tp / dp.
PerfModelShape round_dp_shape(std::uint32_t tp, std::uint32_t dp) {
  PerfModelShape s = test::round_two_layer_shape();
  s.tp = tp;
  s.dp_attention_ranks = dp;
  s.attention_tp = tp / dp;
  s.dense_weight_bytes = 3e9;
  s.attention_weight_bytes = 1e9;
  s.active_params = 1.5e9;
  s.attention_params = 0.5e9;
  return s;
}


TEST(DpAttentionStep, DecodeWaitsForTheBusiestRankAndPadsToItsBatch) {
  // Rank 0 decodes 3 sequences attending 3,000 tokens, rank 1 one attending 500 (tp 2, dp 2).
  // Rank 0's attention: weights 1e9 / 1e12 = 1 ms + 2 x 0.5e9 x 3 / 1e15 = 3 us; KV 2 x 1000 x
  // 3000 = 6e6 B = 6 us + 2 layers x 2 x 8 x 128 x 3000 FLOPs = 12.288 ns -> 1.009012288 ms.
  // Gathered under the CUDA graphs' MAX_LEN: 2 x 3 = 6 rows. MLP: 2e9 B = 2 ms + 2 x 1e9 x 6 /
  // 1e15 = 12 us. Per layer an all-gather and a reduce-scatter: 2 x 10 us + 2 x 1/2 x 6 x 2000 B
  // / 1e11 = 20.12 us, x 2 layers = 40.24 us. Step 0.5 ms. Sum 3.561252288 ms.
  const std::vector<MixedStep> ranks = {{3, 3000, {}}, {1, 500, {}}};
  EXPECT_NEAR(dp_attention_step_seconds(round_dp_shape(2, 2), test::round_lockstep_rates(), ranks), 3.561252288e-3, 1e-15);
}

TEST(DpAttentionStep, APromptAnywhereSumsTheTokensAndAllReducesTwice) {
  // Rank 0 prefills positions [0, 100) of a prompt, rank 1 decodes one sequence at 500.
  // Rank 0: 1 ms + 2 x 0.5e9 x 100 / 1e15 = 0.1 ms; KV 2 x 1000 x (100 + 100) = 0.4 us;
  // attention 2 x 2 x 8 x 128 x 5050 FLOPs = 20.6848 ns -> 1.1004206848 ms.
  // SUM_LEN: 100 + 1 = 101 rows. MLP: 2 ms + 2 x 1e9 x 101 / 1e15 = 0.202 ms. Per layer two
  // all-reduces: 2 x (10 us + 2 x 1/2 x 101 x 2000 / 1e11) = 24.04 us, x 2 = 48.08 us.
  // Step 0.5 ms. Sum 3.8505006848 ms.
  const std::vector<PrefillChunk> chunk = {{0, 100}};
  const std::vector<MixedStep> ranks = {{0, 0, chunk}, {1, 500, {}}};
  EXPECT_NEAR(dp_attention_step_seconds(round_dp_shape(2, 2), test::round_lockstep_rates(), ranks), 3.8505006848e-3, 1e-15);
}

TEST(DpAttentionStep, AttentionGroupsRoundUpAndExchangeWithinThemselves) {
  // tp 4 as 2 ranks of 2: the counts 3 and 1 round up to 4 and 2, so 2 x 4 = 8 rows gathered.
  // Attention as in the first case (1.009012288 ms). MLP 2 ms + 2 x 1e9 x 8 / 1e15 = 16 us.
  // Per layer: 20 us + 2 x 3/4 x 8 x 2000 / 1e11 = 20.24 us over tp, plus a reduce-scatter and
  // an all-gather of a rank's 4 rows within its group: 2 x (10 us + 1/2 x 4 x 2000 / 1e11) =
  // 20.08 us; x 2 layers = 80.64 us. Step 0.5 ms. Sum 3.605652288 ms.
  const std::vector<MixedStep> ranks = {{3, 3000, {}}, {1, 500, {}}};
  EXPECT_NEAR(dp_attention_step_seconds(round_dp_shape(4, 2), test::round_lockstep_rates(), ranks), 3.605652288e-3, 1e-15);
}

TEST(DpAttentionStep, ASpeculativeIterationGathersEveryForward) {
  // EAGLE under DP attention, the draft here the target's own shape so that each forward's time
  // is one of the cases above. Verify of 2 tokens a sequence: rank 0 runs 6 tokens, rank 1 2.
  // Rank 0's attention: 1 ms + 2 x 0.5e9 x 6 / 1e15 = 6 us; its KV read once, 6 us; the
  // attention math twice, 2 x 12.288 = 24.576 ns -> 1.012024576 ms. MAX_LEN: 2 x 6 = 12 rows.
  // MLP 2 ms + 2 x 1e9 x 12 / 1e15 = 24 us. Per layer 20 us + 2 x 1/2 x 12 x 2000 / 1e11 =
  // 20.24 us, x 2 = 40.48 us. Step 0.5 ms. Target 3.576504576 ms.
  // Draft extend over the same tokens, inside the iteration (no step term): 3.076504576 ms.
  // One single-token draft forward over the 3 + 1 sequences: the first case less its step term,
  // 3.061252288 ms. Two host rounds: 1 ms. Sum 10.71426144 ms.
  const PerfModelShape shape = round_dp_shape(2, 2);
  const std::vector<MixedStep> verify = {{3, 3000, {}, 2}, {1, 500, {}, 2}};
  EXPECT_NEAR(speculative_lockstep_step_seconds(shape, {&shape, 1, 2}, test::round_lockstep_rates(), verify),
              10.71426144e-3, 1e-15);
  // A prompt on rank 0, rank 1 idle: the target's forward is the second case's rank 0 alone,
  // 1.1004206848 ms of attention, 100 rows summed: MLP 2 ms + 0.2 ms, per layer 2 x (10 us + 2 x
  // 1/2 x 100 x 2000 / 1e11) = 24 us, x 2 = 48 us, step 0.5 ms: 3.8484206848 ms. The draft extend
  // in the iteration 3.3484206848 ms and one host round 0.5 ms; no single-token forward.
  // Sum 7.6968413696 ms.
  const std::vector<PrefillChunk> chunk = {{0, 100}};
  const std::vector<MixedStep> prompt = {{0, 0, chunk}, {}};
  EXPECT_NEAR(speculative_lockstep_step_seconds(shape, {&shape, 1, 2}, test::round_lockstep_rates(), prompt),
              7.6968413696e-3, 1e-15);
  // The draft must run over the target's ranks.
  const PerfModelShape other = round_dp_shape(2, 1);
  EXPECT_THROW(speculative_lockstep_step_seconds(shape, {&other, 1, 2}, test::round_lockstep_rates(), verify), Error);
}

TEST(DpAttentionStep, AllIdleIsNoStepAndTheRankCountMustMatch) {
  const std::vector<MixedStep> idle(2);
  EXPECT_EQ(dp_attention_step_seconds(round_dp_shape(2, 2), test::round_lockstep_rates(), idle), 0.0);
  const std::vector<MixedStep> three(3);
  EXPECT_THROW(dp_attention_step_seconds(round_dp_shape(2, 2), test::round_lockstep_rates(), three), Error);
}

}  // namespace
}  // namespace vramplan::perf
