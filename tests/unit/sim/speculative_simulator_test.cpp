// The simulator with speculative decoding: every decode step verifies SchedulerRules::
// decode_query_tokens tokens per request and keeps floor((n + 1) L) - floor(n L) of them
// (docs/simulator.md#speculative-decoding). Hand-computed timings, and the block accounting checked after
// every step under preemption and retraction.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "support/list_source.hpp"
#include "vramplan/sim/simulator.hpp"

namespace vramplan::sim {
namespace {

using SpecRequests = vramplan::test::ListSource;

// 10 ms per step + 10 us per token the step computes (a verify of q tokens counts q).
double spec_clock(const perf::MixedStep& s) { return 0.01 + 1e-5 * static_cast<double>(s.tokens()); }

SchedulerRules spec_vllm(std::uint64_t blocks, double accept) {
  SchedulerRules r;
  r.engine = "vllm";
  r.kv_blocks = blocks;
  r.block_tokens = 16;
  r.kv_block_bytes = 1 << 20;
  r.max_seqs = 64;
  r.step_tokens = 2048;
  r.max_model_len = 8192;
  r.decode_query_tokens = 4;
  r.accept_length = accept;
  r.state_blocks = 1;  // k = 3 lookahead slots: ceil(3 / 16)
  return r;
}

TEST(SpeculativeSimulator, EachDecodeStepKeepsTheAcceptLengthOnAverage) {
  // A 100-token prompt: one step of 0.01 + 100 x 1e-5 = 0.011 s, the first token. Then 100 more
  // tokens at L = 2.5: steps keep 2, 3, 2, 3, ... (floor((n + 1) 2.5) - floor(n 2.5)), 100 tokens
  // in exactly 40 steps of 0.01 + 4 x 1e-5 = 0.01004 s: e2e 0.011 + 0.4016 s, TPOT 0.4016 / 100.
  SpecRequests src({{0, 0.0, 100, 101, 0, 0}});
  SimOptions o;
  o.check_invariants = true;
  const SimResult r = simulate(spec_vllm(100, 2.5), spec_clock, src, o);
  EXPECT_EQ(r.completed, 1u);
  EXPECT_EQ(r.steps, 41u);
  EXPECT_NEAR(r.ttft.mean, 0.011, 1e-12);
  EXPECT_NEAR(r.e2e.mean, 0.4126, 1e-12);
  EXPECT_NEAR(r.tpot.mean, 0.004016, 1e-12);
  EXPECT_EQ(r.output_tokens, 101.0);
  // Each step's gap is split over the tokens it kept (SGLang's bench_serving: n samples of gap / n):
  // 20 steps give 2 samples of 5.02 ms, 20 give 3 of 3.3467 ms; the mean is 0.4016 s / 100.
  EXPECT_EQ(r.itl.count, 100u);
  EXPECT_NEAR(r.itl.mean, 0.004016, 1e-12);
  EXPECT_NEAR(r.itl.p50, 0.01004 / 3, 0.01004 / 3 * 0.0025);
  // The prompt and 100 kept tokens in the cache (200 tokens = 13 blocks) + 1 lookahead block.
  EXPECT_EQ(r.kv_blocks_peak, 14u);
}

TEST(SpeculativeSimulator, AStepThatPassesTheLastTokenDropsTheSurplus) {
  // 99 tokens after the first: 39 steps keep floor(39 x 2.5) = 97, the 40th passes 99 (keeps 3
  // to 100) and the request ends with the 100 tokens it asked for; TPOT 40 x 0.01004 / 99.
  SpecRequests src({{0, 0.0, 100, 100, 0, 0}});
  SimOptions o;
  o.check_invariants = true;
  const SimResult r = simulate(spec_vllm(100, 2.5), spec_clock, src, o);
  EXPECT_EQ(r.output_tokens, 100.0);
  EXPECT_EQ(r.steps, 41u);
  EXPECT_NEAR(r.tpot.mean, 40 * 0.01004 / 99, 1e-12);
}

TEST(SpeculativeSimulator, AVerifyTakesItsTokensFromTheStepBudget) {
  // A budget of 5 tokens a step. Step 1 takes prompt 0 (4 tokens) and 1 token of prompt 1 (100
  // tokens). Request 0 then decodes 49 more tokens, one kept per step (L = 1), each step verifying
  // 4 tokens of the budget, so prompt 1 gets 1 token a step for 49 steps (50 of 100 done), then 5
  // a step alone: 10 more steps. Every step computes 5 tokens (0.01005 s): TTFT 60 x 0.01005.
  // Without speculation the decode takes 1 token and prompt 1 gets 4 a step: 96 tokens in 24
  // steps after the first, the last 3 in a 26th step of 1 + 3 tokens: TTFT 25 x 0.01005 + 0.01004.
  SchedulerRules tight = spec_vllm(100, 1.0);
  tight.step_tokens = 5;
  SimOptions o;
  o.check_invariants = true;
  SpecRequests src({{0, 0.0, 4, 50, 0, 0}, {1, 0.0, 100, 2, 0, 0}});
  EXPECT_NEAR(simulate(tight, spec_clock, src, o).ttft.max, 60 * 0.01005, 1e-12);
  tight.decode_query_tokens = 1;
  SpecRequests plain({{0, 0.0, 4, 50, 0, 0}, {1, 0.0, 100, 2, 0, 0}});
  EXPECT_NEAR(simulate(tight, spec_clock, plain, o).ttft.max, 25 * 0.01005 + 0.01004, 1e-12);
}

// SGLang's scheduling on top of spec_vllm's pool: prompts and decodes apart, the output
// reservation, retraction when the pool runs short (engine_rules.cpp sglang_rules).
void make_sglang_like(SchedulerRules& r) {
  r.engine = "sglang";
  r.mix_prefill_decode = false;
  r.admission = Admission::ExpectedOutput;
  r.reserve_ratio = 0.7;
  r.reserve_ratio_min = 0.1;
  r.reserve_ratio_decay = 0.002;
  r.reserve_clip_tokens = 150;
  r.retract_decode_steps = 20;
  r.out_of_blocks = OutOfBlocks::Retract;
}

TEST(SpeculativeSimulator, AccountingHoldsForEveryPageSizeAndAcceptLength) {
  // Poisson arrivals into pools far too small, so vLLM preempts and SGLang retracts. SGLang's pages
  // are 1 token, or 64 under DeepSeek sparse attention; vLLM's blocks 16. A step may keep 1-4
  // tokens and so cross a page boundary or not: every combination, the blocks and SGLang's
  // reservation recounted after every step (check_invariants).
  std::mt19937_64 rng(29);
  std::vector<Request> reqs;
  double t = 0;
  for (std::uint64_t i = 0; i < 250; ++i) {
    t += -std::log1p(-static_cast<double>(rng() >> 11) * 0x1.0p-53) / 80.0;
    reqs.push_back({i, t, static_cast<std::uint32_t>(1 + rng() % 700), static_cast<std::uint32_t>(1 + rng() % 200), 0, 0});
  }
  SimOptions o;
  o.check_invariants = true;
  for (const std::uint32_t page : {1u, 16u, 64u})
    for (const double accept : {1.3, 2.0, 3.2, 3.7, 4.0}) {
      SchedulerRules r = spec_vllm(6000 / page, accept);
      r.block_tokens = page;
      r.state_blocks = (3 + page - 1) / page;  // the held slots
      if (page != 16) make_sglang_like(r);
      SpecRequests src(reqs);
      const SimResult res = simulate(r, spec_clock, src, o);
      EXPECT_EQ(res.completed, 250u) << "page " << page << ", L " << accept;
      EXPECT_EQ(res.rejected, 0u) << "page " << page << ", L " << accept;
      EXPECT_GT(res.preemptions, 0u) << "page " << page << ", L " << accept << ": the pool was meant to run short";
    }
}

}  // namespace
}  // namespace vramplan::sim
