// The simulator with vLLM V0 multi-step scheduling (SchedulerRules::decode_round_steps; vllm 0.6.0,
// docs/research/vllm-0.6-multi-step.md): one-step prompt rounds that pause decodes, N-step decode
// rounds over a frozen batch whose blocks are taken at its start, arrivals held to the next round
// boundary, one streamed chunk a round. Hand-computed timings.
#include <gtest/gtest.h>

#include <vector>

#include "support/list_source.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/sim/simulator.hpp"

namespace vramplan::sim {
namespace {

using Requests = vramplan::test::ListSource;

// A prompt step 2 ms; a decode step 1 ms when the host's per-step work precedes it (a round's
// first step), 0.5 ms inside a round (MixedStep::host_step false).
double round_clock(const perf::MixedStep& s) {
  if (!s.chunks.empty()) return 2e-3;
  return s.host_step ? 1e-3 : 0.5e-3;
}

SchedulerRules multi_step(std::uint32_t steps, bool per_round = true) {
  SchedulerRules r;
  r.engine = "vllm";
  r.kv_blocks = 100;
  r.block_tokens = 16;
  r.kv_block_bytes = 1 << 20;
  r.max_seqs = 8;
  r.step_tokens = 4096;
  r.chunked_prefill = false;
  r.refuses_prompt_over_step = true;
  r.mix_prefill_decode = false;  // V0 _schedule_default
  r.prefix_caching = false;
  r.decode_round_steps = steps;
  r.stream_per_round = per_round;
  return r;
}

SimOptions checked() {
  SimOptions o;
  o.check_invariants = true;
  return o;
}

TEST(MultiStepSimulator, ARequestDoneInsideARoundLeavesAtItsEnd) {
  // 16-token prompt, 6 output tokens. Prompt round 0 -> 2 ms: the first token (TTFT 2 ms). Five
  // tokens left, rounds of 4: two rounds (8 steps, 3 of them padding), each 1 + 3 x 0.5 = 2.5 ms:
  // 2 -> 4.5 -> 7 ms. The request ends with the second round: e2e 7 ms, TPOT (7 - 2) / 5 = 1 ms;
  // one chunk a round, so two ITL samples of 2.5 ms; 1 + 8 steps.
  Requests src({{0, 0.0, 16, 6, 0, 0}});
  const SimResult r = simulate(multi_step(4), round_clock, src, checked());
  EXPECT_EQ(r.completed, 1u);
  EXPECT_EQ(r.steps, 9u);
  EXPECT_EQ(r.output_tokens, 6.0);
  EXPECT_NEAR(r.ttft.mean, 2e-3, 1e-12);
  EXPECT_NEAR(r.e2e.mean, 7e-3, 1e-12);
  EXPECT_NEAR(r.tpot.mean, 1e-3, 1e-12);
  EXPECT_EQ(r.itl.count, 2u);
  EXPECT_NEAR(r.itl.mean, 2.5e-3, 1e-12);
  // One step a time, for comparison: five decode steps of 1 ms each: e2e 7 ms as well, but five
  // ITL samples of 1 ms.
  Requests again({{0, 0.0, 16, 6, 0, 0}});
  const SimResult single = simulate(multi_step(1), round_clock, again, checked());
  EXPECT_EQ(single.steps, 6u);
  EXPECT_NEAR(single.e2e.mean, 7e-3, 1e-12);
  EXPECT_EQ(single.itl.count, 5u);
  EXPECT_NEAR(single.itl.mean, 1e-3, 1e-12);
}

TEST(MultiStepSimulator, AnArrivalDuringARoundWaitsForItsEnd) {
  // A (t = 0, 16 / 9): prompt round 0 -> 2 ms, then a decode round 2 -> 4.5 ms. B (t = 3 ms, 16 / 2)
  // arrives inside it and is admitted at the boundary: a prompt round 4.5 -> 6.5 ms that runs alone
  // (A pauses), B's TTFT 3.5 ms. Then one round of both, 6.5 -> 9 ms: A's last four tokens, B's one
  // token and three steps of padding; both leave at 9 ms. A: e2e 9, TPOT (9 - 2) / 8 = 0.875 ms;
  // B: e2e 6, TPOT 2.5 ms. ITL: A's chunks 2.5 (2 -> 4.5) and 4.5 ms (4.5 -> 9, B's prompt round
  // inside), B's one chunk 2.5 ms (6.5 -> 9).
  Requests src({{0, 0.0, 16, 9, 0, 0}, {1, 3e-3, 16, 2, 0, 0}});
  const SimResult r = simulate(multi_step(4), round_clock, src, checked());
  EXPECT_EQ(r.completed, 2u);
  EXPECT_EQ(r.steps, 10u);  // 2 prompt rounds + 2 decode rounds of 4
  EXPECT_NEAR(r.ttft.mean, (2e-3 + 3.5e-3) / 2, 1e-12);
  EXPECT_NEAR(r.ttft.max, 3.5e-3, 3.5e-3 * 0.01);
  EXPECT_NEAR(r.e2e.mean, (9e-3 + 6e-3) / 2, 1e-12);
  EXPECT_NEAR(r.tpot.mean, (0.875e-3 + 2.5e-3) / 2, 1e-12);
  EXPECT_EQ(r.itl.count, 3u);
  EXPECT_NEAR(r.itl.mean, (2.5e-3 + 4.5e-3 + 2.5e-3) / 3, 1e-12);
  // B queued from 3 to 4.5 ms.
  EXPECT_NEAR(r.queue.max, 1.5e-3, 1.5e-3 * 0.01);
}

TEST(MultiStepSimulator, ARoundTakesTheBlocksOfAllItsStepsAtItsStart) {
  // Blocks of 4 tokens, a 15-token prompt (4 blocks) and 2 output tokens: one step at a time, the
  // one decode step fills position 16 (still 4 blocks); a round of 4 takes positions 16-19 at its
  // start (lookahead slots, core/scheduler.py _append_slots), 5 blocks.
  SchedulerRules r = multi_step(4);
  r.block_tokens = 4;
  Requests src({{0, 0.0, 15, 2, 0, 0}});
  EXPECT_EQ(simulate(r, round_clock, src, checked()).kv_blocks_peak, 5u);
  SchedulerRules one = multi_step(1);
  one.block_tokens = 4;
  Requests again({{0, 0.0, 15, 2, 0, 0}});
  EXPECT_EQ(simulate(one, round_clock, again, checked()).kv_blocks_peak, 4u);
}

TEST(MultiStepSimulator, StreamingEachStepCountsOnlyRealTokens) {
  // The first test's request with --multi-step-stream-outputs (vLLM 0.6.3+): each step's token is
  // its own chunk, the padding steps stream nothing: five ITL samples, the round's first step 1 ms
  // and the others 0.5 ms: 1 + 0.5 + 0.5 + 0.5 (round 1), 1 (round 2) = 3.5 ms over five.
  Requests src({{0, 0.0, 16, 6, 0, 0}});
  const SimResult r = simulate(multi_step(4, /*per_round=*/false), round_clock, src, checked());
  EXPECT_EQ(r.itl.count, 5u);
  EXPECT_NEAR(r.itl.mean, 3.5e-3 / 5, 1e-12);
  EXPECT_NEAR(r.e2e.mean, 7e-3, 1e-12);  // it still leaves with its round
}

TEST(MultiStepSimulator, BlockAccountingHoldsUnderPreemptionAcrossRounds) {
  // A pool too small for everyone: requests are preempted at the boundaries where a round's
  // blocks do not fit, and the block accounting (checked after every step, lookahead blocks
  // included) stays exact through the rounds.
  SchedulerRules r = multi_step(8);
  r.kv_blocks = 12;
  r.block_tokens = 4;
  std::vector<Request> reqs;
  for (std::uint64_t i = 0; i < 12; ++i) reqs.push_back({i, 1e-4 * static_cast<double>(i), 8, 13, 0, 0});
  Requests src(reqs);
  const SimResult res = simulate(r, round_clock, src, checked());
  EXPECT_EQ(res.completed, 12u);
  EXPECT_GT(res.preemptions, 0u);
  EXPECT_LE(res.kv_blocks_peak, 12u);
}

TEST(MultiStepSimulator, MixedRoundsRunPromptsInTheirFirstStep) {
  // vLLM 0.6.3+ with chunked prefill: every round is N = 4 steps; a prompt (whole) runs in a
  // round's first step beside the decodes and decodes in the other three. A (16 / 6): round 1,
  // its prompt 0 -> 2 ms (TTFT 2 ms), tokens 2-4 in three 0.5 ms steps (3.5 ms); round 2 (1 +
  // 3 x 0.5 ms) its tokens 5 and 6 and two steps of padding: it leaves at 6 ms. Streaming each
  // step: five ITL samples, 0.5 x 3, 1 and 0.5 ms. Blocks of 4 tokens: the prompt takes 4 + the
  // round's 3 lookahead tokens (19 tokens, 5 blocks); round 2 takes 4 more (23 tokens, 6 blocks).
  SchedulerRules r = multi_step(4, /*per_round=*/false);
  r.mix_prefill_decode = true;
  r.block_tokens = 4;
  Requests src({{0, 0.0, 16, 6, 0, 0}});
  const SimResult res = simulate(r, round_clock, src, checked());
  EXPECT_EQ(res.completed, 1u);
  EXPECT_EQ(res.steps, 8u);
  EXPECT_NEAR(res.ttft.mean, 2e-3, 1e-12);
  EXPECT_NEAR(res.e2e.mean, 6e-3, 1e-12);
  EXPECT_NEAR(res.tpot.mean, 4e-3 / 5, 1e-12);
  EXPECT_EQ(res.itl.count, 5u);
  EXPECT_NEAR(res.itl.mean, 3e-3 / 5, 1e-12);
  EXPECT_EQ(res.kv_blocks_peak, 6u);
  // A second request arriving during round 1 joins round 2's first step beside A's decodes.
  Requests two({{0, 0.0, 16, 6, 0, 0}, {1, 1e-3, 16, 2, 0, 0}});
  const SimResult both = simulate(r, round_clock, two, checked());
  EXPECT_EQ(both.completed, 2u);
  EXPECT_EQ(both.steps, 8u);  // B's prompt, and its one more token, ride in round 2
  // B: sent at 1 ms, its prompt in round 2's first step (3.5 -> 5.5 ms): TTFT 4.5 ms.
  EXPECT_NEAR(both.ttft.max, 4.5e-3, 4.5e-3 * 0.01);
}

TEST(MultiStepSimulator, PrefixHitsAndPreemptionKeepTheBlocksAccountedForInBothModes) {
  // Varied lengths, four shared 64-token prefixes and a pool too small for the load: hits,
  // preemptions and padding inside rounds of 8, with prompt rounds (0.6.0) and mixed rounds
  // (0.6.3+ with chunked prefill), streamed per round and per step. check_invariants recounts
  // every block (lookahead included) after every step.
  for (const bool mixed : {false, true}) {
    for (const bool per_round : {true, false}) {
      SchedulerRules r = multi_step(8, per_round);
      r.kv_blocks = 60;
      r.mix_prefill_decode = mixed;
      r.prefix_caching = true;
      std::vector<Request> reqs;
      for (std::uint32_t i = 0; i < 300; ++i)
        reqs.push_back({i, 2e-3 * i, 100 + (i * 37) % 200, 1 + (i * 53) % 150, 1 + i % 4, 64});
      Requests src(reqs);
      const SimResult res = simulate(r, round_clock, src, checked());
      EXPECT_EQ(res.completed, 300u) << mixed << per_round;
      EXPECT_GT(res.preemptions, 0u) << mixed << per_round;
      EXPECT_GT(res.prefix_hits, 0u) << mixed << per_round;
      double out = 0;
      for (const Request& q : reqs) out += q.output_tokens;
      EXPECT_DOUBLE_EQ(res.output_tokens, out) << mixed << per_round;  // padding is never counted
      EXPECT_LE(res.kv_blocks_peak, 60u);
    }
  }
}

TEST(MultiStepSimulator, RefusesRulesItDoesNotModel) {
  SchedulerRules chunked = multi_step(4);
  chunked.chunked_prefill = true;  // prompt chunks inside rounds
  Requests src({{0, 0.0, 16, 6, 0, 0}});
  EXPECT_THROW(simulate(chunked, round_clock, src, checked()), Error);
  SchedulerRules zero = multi_step(0);
  EXPECT_THROW(simulate(zero, round_clock, src, checked()), Error);
}

}  // namespace
}  // namespace vramplan::sim
