// A speculative-decoding iteration on the step model: the target verifies several tokens per
// sequence in one forward, the draft (one more of the target's layers) runs its extend and its
// single-token forwards (docs/simulator.md#speculative-decoding). Every figure is computed by hand from
// the round shapes of support/perf_shapes.hpp.
#include <gtest/gtest.h>

#include <vector>

#include "support/perf_shapes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/perf/model_shape.hpp"
#include "vramplan/perf/perf_model.hpp"

namespace vramplan::perf {
namespace {

// The round dense shape's figures for 4 sequences with 8193 attended tokens each, verifying 3
// tokens each (12 tokens through the GEMMs), at 4 TB/s and 1 PFLOP/s with 0.1 ms per step:
//   weights 15e9 B / 4e12 = 3.75 ms (GEMMs 2 x 7.5e9 x 12 = 1.8e11 FLOP = 0.18 ms, hidden);
//   KV 32 layers x 4096 B x 32,772 tokens = 4,295,491,584 B / 4e12 = 1.073872896 ms
//   (attention math 3 x 32 x 2 x 32 x 256 x 32,772 = 5.15e10 FLOP = 0.05 ms, hidden).
constexpr double kWeights = 15e9 / 4e12;
constexpr double kKvOnce = 32.0 * 4096 * 32772 / 4e12;
constexpr double kStep = 1e-4;

TEST(SpeculativeStep, AVerifyReadsEachContextOnceAndMultipliesTheGemmTokens) {
  const PerfModelShape shape = test::round_dense_shape();
  const HardwareRates r = test::exact_hardware().expected;
  const MixedStep verify{4, 4.0 * 8193, {}, 3};
  EXPECT_EQ(verify.tokens(), 12u);
  EXPECT_NEAR(mixed_step_seconds(shape, r, verify), kWeights + kKvOnce + kStep, 1e-15);
  // Twelve separate sequences of the same contexts would read the KV three times over.
  EXPECT_NEAR(mixed_step_seconds(shape, r, MixedStep{12, 12.0 * 8193, {}}), kWeights + 3 * kKvOnce + kStep, 1e-15);
}

TEST(SpeculativeStep, SparseAttentionReadsItsRowsOncePerQueryToken) {
  // DeepSeek sparse attention picks rows per token: SGLang's NSA backend gives each draft token
  // its own row in a verify, so the 3 tokens read 3 x the KV (3.221618688 ms).
  PerfModelShape shape = test::round_dense_shape();
  shape.attention[0].per_query_reads = true;
  const HardwareRates r = test::exact_hardware().expected;
  EXPECT_NEAR(mixed_step_seconds(shape, r, MixedStep{4, 4.0 * 8193, {}, 3}), kWeights + 3 * kKvOnce + kStep, 1e-15);
}

TEST(SpeculativeStep, AVerifyOfZeroTokensIsRefused) {
  EXPECT_THROW((MixedStep{4, 4.0 * 100, {}, 0}.tokens()), Error);
}

// A draft of the round shape: its lm_head is 1e9 B / 5e8 params of the 15e9 B / 7.5e9 params,
// its input projection 4096 x 8192 = 33,554,432 params in bf16 (67,108,864 B).
OneLayerDraft round_draft() { return {1e9, 5e8, 67108864, 33554432}; }

TEST(SpeculativeStep, TheDraftIsTheTargetsMeanLayerPlusHeadAndInputProjection) {
  const PerfModelShape d = one_layer_draft_shape(test::round_dense_shape(), round_draft());
  EXPECT_EQ(d.layers, 1);
  // (15e9 - 1e9) / 32 + 1e9 + 67,108,864 = 437,500,000 + 1,067,108,864 = 1,504,608,864 B.
  EXPECT_DOUBLE_EQ(d.dense_weight_bytes, 1504608864.0);
  // (7.5e9 - 5e8) / 32 + 33,554,432 = 218,750,000 + 33,554,432 = 252,304,432 params: the head
  // multiplies one token per request (logits at the last position), so its FLOPs are left out.
  EXPECT_DOUBLE_EQ(d.active_params, 252304432.0);
  ASSERT_EQ(d.attention.size(), 1u);
  EXPECT_DOUBLE_EQ(d.attention[0].layers, 1.0);
  EXPECT_DOUBLE_EQ(d.attention[0].kv_bytes_per_token, 4096.0);
  PerfModelShape staged = test::round_dense_shape();
  staged.pp = 2;
  EXPECT_THROW(one_layer_draft_shape(staged, round_draft()), Error);
}

TEST(SpeculativeStep, AnIterationAddsTheDraftExtendItsForwardsAndItsHostRounds) {
  const PerfModelShape target = test::round_dense_shape();
  const PerfModelShape draft = one_layer_draft_shape(target, round_draft());
  const HardwareRates r = test::exact_hardware().expected;
  // The draft reads 1,504,608,864 B / 4e12 = 0.376152216 ms of weights (its GEMMs: 2 x 252,304,432
  // x 12 FLOP = 0.006 ms, hidden) and 1 layer x 4096 B x 32,772 tokens / 4e12 = 0.033558528 ms of
  // KV; without the per-step term, each of its forwards (the extend over the 12 tokens and every
  // single-token forward over 4) takes 0.409710744 ms.
  const double draft_forward = 1504608864.0 / 4e12 + 4096.0 * 32772 / 4e12;
  const MixedStep verify{4, 4.0 * 8193, {}, 3};
  // SGLang with 3 steps: the extend, 2 single-token forwards, 2 host rounds of 0.1 ms.
  EXPECT_NEAR(speculative_step_seconds(target, {&draft, 2, 2}, r, verify),
              kWeights + kKvOnce + kStep + 3 * draft_forward + 2 * kStep, 1e-15);
  // vLLM with k = 1: the extend alone, launched within the target's step.
  EXPECT_NEAR(speculative_step_seconds(target, {&draft, 0, 0}, r, MixedStep{4, 4.0 * 8193, {}, 2}),
              kWeights + kKvOnce + kStep + draft_forward, 1e-15);
  EXPECT_THROW(speculative_step_seconds(target, {nullptr, 0, 0}, r, verify), Error);
  // A prefill batch (no decoding sequence): the target's prompt forward, the draft extend over the
  // prompt and its one host round, no single-token forwards.
  const std::vector<PrefillChunk> prompt{{0, 1000}};
  const MixedStep prefill{0, 0, prompt};
  HardwareRates no_step = r;
  no_step.step_overhead_s = 0;
  EXPECT_NEAR(speculative_step_seconds(target, {&draft, 2, 2}, r, prefill),
              mixed_step_seconds(target, r, prefill) + mixed_step_seconds(draft, no_step, prefill) + kStep, 1e-15);
}

}  // namespace
}  // namespace vramplan::perf
