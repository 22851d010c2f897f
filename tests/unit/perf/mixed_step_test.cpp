// The simulator's step clock against the planner's own estimates: a decode-only step is
// estimate_decode's round, a prompt-only step is estimate_prefill's chunk (issue 12 item 3).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "support/perf_shapes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/perf/perf_model.hpp"

namespace vramplan::perf {
namespace {

// The exact rates plus 2 us per layer, so that the per-layer overhead is in every comparison.
PerfHardware hw_with_layer_overhead() {
  PerfHardware hw = test::exact_hardware();
  hw.expected.layer_overhead_s = 2e-6;
  return hw;
}

TEST(MixedStep, DecodeOnlyEqualsDecodeEstimate) {
  const PerfModelShape shape = test::round_dense_shape();
  const PerfHardware hw = hw_with_layer_overhead();
  // 16 sequences with 8192 cached tokens each attend 8193 tokens each (the new one included),
  // which is what estimate_decode calls context 8193.
  const double step = mixed_step_seconds(shape, hw.expected, MixedStep{16, 16.0 * 8193, {}});
  EXPECT_DOUBLE_EQ(step, estimate_decode(shape, hw, DecodeBatch{16, 8193}).step_s.expected);
}

TEST(MixedStep, TheHeadMultipliesDecodeRowsAndOneRowPerPromptChunk) {
  // 16 decoding sequences and a 1000-token chunk: 1016 rows through every layer, 17 through the
  // head (vLLM V1 logits_indices = query_start_loc[1:] - 1, a partial chunk included). With
  // 0.5e9 head params moved out of the body's 7.5e9 the step's GEMMs lose 2 x 0.5e9 x 999 FLOPs,
  // 0.999 ms at 1 PFLOP/s (the step is compute-bound either way: 1.5e13 FLOPs against 15e9 B).
  const PerfModelShape plain = test::round_dense_shape();
  PerfModelShape headed = plain;
  headed.head_params = 0.5e9;
  const PerfHardware hw = hw_with_layer_overhead();
  const std::vector<PrefillChunk> chunk = {{0, 1000}};
  const MixedStep step{16, 16.0 * 8193, chunk};
  EXPECT_NEAR(mixed_step_seconds(plain, hw.expected, step) - mixed_step_seconds(headed, hw.expected, step), 0.999e-3, 1e-12);
  // Decode rows alone: every row reaches the head, nothing changes.
  const MixedStep decode{16, 16.0 * 8193, {}};
  EXPECT_DOUBLE_EQ(mixed_step_seconds(plain, hw.expected, decode), mixed_step_seconds(headed, hw.expected, decode));
}

TEST(MixedStep, DecodeOnlyUnderPipelineParallelismEqualsTheRound) {
  PerfModelShape shape = test::round_dense_shape();
  shape.pp = 4;
  shape.layers = 8;
  shape.attention[0].layers = 8;
  const PerfHardware hw = hw_with_layer_overhead();
  for (std::uint64_t b : {1u, 3u, 4u, 10u}) {
    const double step = mixed_step_seconds(shape, hw.expected, MixedStep{b, static_cast<double>(b) * 1000, {}});
    EXPECT_DOUBLE_EQ(step, estimate_decode(shape, hw, DecodeBatch{b, 1000}).step_s.expected) << "batch " << b;
  }
}

TEST(MixedStep, AStepInsideAMultiStepRoundSkipsTheHostTerm) {
  // vLLM V0 multi-step: steps 2..N of a round replay the batch without the host's per-step work,
  // so such a step is the same step less step_overhead_s, once per pipeline slot (here pp = 1).
  const PerfModelShape shape = test::round_dense_shape();
  PerfHardware hw = hw_with_layer_overhead();
  hw.expected.step_overhead_s = 0.65e-3;
  MixedStep step{16, 16.0 * 1000, {}};
  const double with_host = mixed_step_seconds(shape, hw.expected, step);
  step.host_step = false;
  EXPECT_NEAR(with_host - mixed_step_seconds(shape, hw.expected, step), 0.65e-3, 1e-15);
}

TEST(MixedStep, PromptChunksSumToThePrefillEstimate) {
  const PerfModelShape shape = test::round_dense_shape();
  const PerfHardware hw = hw_with_layer_overhead();
  // A 5000-token prompt in chunks of 2048: [0,2048) [2048,4096) [4096,5000), one step each.
  double total = 0;
  for (std::uint64_t a = 0; a < 5000; a += 2048) {
    const std::vector<PrefillChunk> chunk = {{a, std::min<std::uint64_t>(a + 2048, 5000)}};
    total += mixed_step_seconds(shape, hw.expected, MixedStep{0, 0, chunk});
  }
  EXPECT_NEAR(total, estimate_ttft(shape, hw, 5000, 2048).expected, 1e-15);
  // Whole prompt in one step.
  const std::vector<PrefillChunk> whole = {{0, 5000}};
  EXPECT_NEAR(mixed_step_seconds(shape, hw.expected, MixedStep{0, 0, whole}), estimate_ttft(shape, hw, 5000, 0).expected,
              1e-15);
}

TEST(MixedStep, MixingCostsLessThanSeparateSteps) {
  // Decode tokens ride on the prompt chunk's weight reads: one mixed step of 64 decodes + a
  // 512-token chunk is cheaper than the two steps apart, and dearer than either alone.
  const PerfModelShape shape = test::round_dense_shape();
  const HardwareRates r = hw_with_layer_overhead().expected;
  const std::vector<PrefillChunk> chunk = {{0, 512}};
  const double mixed = mixed_step_seconds(shape, r, MixedStep{64, 64.0 * 2000, chunk});
  const double decode = mixed_step_seconds(shape, r, MixedStep{64, 64.0 * 2000, {}});
  const double prompt = mixed_step_seconds(shape, r, MixedStep{0, 0, chunk});
  EXPECT_LT(mixed, decode + prompt);
  EXPECT_GT(mixed, std::max(decode, prompt));
}

TEST(MixedStep, SlidingWindowCapsDecodeAttention) {
  PerfModelShape shape = test::round_dense_shape();
  shape.attention[0].window = 1024;
  const PerfHardware hw = hw_with_layer_overhead();
  // Every sequence is past the window, so each attends exactly 1024 tokens: the uniform estimate.
  const double step = mixed_step_seconds(shape, hw.expected, MixedStep{8, 8.0 * 5000, {}});
  EXPECT_DOUBLE_EQ(step, estimate_decode(shape, hw, DecodeBatch{8, 5000}).step_s.expected);
}

TEST(MixedStep, EmptyStepTakesNoTime) {
  EXPECT_EQ(mixed_step_seconds(test::round_dense_shape(), hw_with_layer_overhead().expected, MixedStep{}), 0.0);
}

TEST(MixedStep, TokensCountDecodeSequencesAndChunkLengths) {
  // 5 decode sequences + chunk [0, 512) + chunk [2048, 2100): 5 + 512 + 52 = 569.
  const std::vector<PrefillChunk> chunks{{0, 512}, {2048, 2100}};
  EXPECT_EQ((MixedStep{5, 5.0 * 100, chunks}.tokens()), 569u);
  EXPECT_EQ(MixedStep{}.tokens(), 0u);
}

TEST(MixedStep, TokensThrowOnOverflowAndOnAReversedChunk) {
  // (2^64 - 1) decode sequences + one prompt token does not fit in 64 bits.
  const std::vector<PrefillChunk> one{{0, 1}};
  EXPECT_THROW((MixedStep{UINT64_MAX, 0, one}.tokens()), Error);
  const std::vector<PrefillChunk> reversed{{10, 4}};
  EXPECT_THROW((MixedStep{0, 0, reversed}.tokens()), Error);
}

}  // namespace
}  // namespace vramplan::perf
