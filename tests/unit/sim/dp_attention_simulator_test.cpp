// SGLang DP attention in the simulator (simulate_dp_attention): D schedulers dealt requests
// round-robin, stepping in lockstep under one clock (docs/simulator.md#dp-attention).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "support/list_source.hpp"
#include "support/sim_rules.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/sim/simulator.hpp"

namespace vramplan::sim {
namespace {

using vramplan::test::ListSource;

SchedulerRules rank_rules(std::uint64_t blocks = 1000) { return test::lockstep_rank_rules("sglang", blocks); }

double step_tokens(const perf::MixedStep& s) {
  double tokens = static_cast<double>(s.decode_sequences);
  for (const auto& c : s.chunks) tokens += static_cast<double>(c.end - c.start);
  return tokens;
}

// 10 ms per step + 10 us per token of all ranks together.
double lockstep_linear(std::span<const perf::MixedStep> ranks) {
  double tokens = 0;
  for (const auto& s : ranks) tokens += step_tokens(s);
  return 0.01 + 1e-5 * tokens;
}

std::vector<Request> at_zero(std::uint64_t n, std::uint32_t in, std::uint32_t out, std::uint64_t prefix = 0,
                             std::uint32_t prefix_tokens = 0) {
  std::vector<Request> all;
  for (std::uint64_t i = 0; i < n; ++i) all.push_back({i, 0, in, out, prefix, prefix_tokens});
  return all;
}

TEST(DpAttentionSimulator, DealsRoundRobinAndStepsInLockstep) {
  // Four requests of 100 / 3 tokens queued at t = 0 on two ranks: rank 0 gets requests 0 and 2,
  // rank 1 requests 1 and 3. Step 1 prefills 200 tokens on each rank: 0.01 + 1e-5 x 400 = 0.014 s
  // (the first token of all four); steps 2 and 3 decode two sequences on each: 0.01004 s each.
  // TTFT 0.014 s, e2e 0.014 + 2 x 0.01004 = 0.03408 s.
  std::vector<std::vector<double>> seen;
  const LockstepClock clock = [&](std::span<const perf::MixedStep> ranks) {
    seen.push_back({step_tokens(ranks[0]), step_tokens(ranks[1])});
    return lockstep_linear(ranks);
  };
  ListSource src(at_zero(4, 100, 3));
  const SimResult r = simulate_dp_attention(rank_rules(), clock, src, 2, {});
  EXPECT_EQ(r.completed, 4u);
  EXPECT_EQ(r.steps, 3u);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], (std::vector<double>{200, 200}));
  EXPECT_EQ(seen[1], (std::vector<double>{2, 2}));
  EXPECT_NEAR(r.ttft.mean, 0.014, 1e-12);
  EXPECT_NEAR(r.e2e.max, 0.03408, 1e-12);
  EXPECT_DOUBLE_EQ(r.output_tokens, 12);
  EXPECT_EQ(r.verdict.state, "offline");
}

TEST(DpAttentionSimulator, AnIdleRankWaitsAndChangesNothing) {
  // One request alone on two ranks: every step pairs its batch with an empty one, so a clock
  // that times the busy rank alone gives what simulate() gives for one engine.
  const std::vector<Request> one = {{0, 0.25, 3000, 6, 0, 0}};
  const StepClock single = [](const perf::MixedStep& s) { return 0.01 + 1e-5 * step_tokens(s); };
  ListSource a(one), b(one);
  const SimResult plain = simulate(rank_rules(), single, a, {});
  const SimResult dp = simulate_dp_attention(rank_rules(), lockstep_linear, b, 2, {});
  EXPECT_EQ(dp.steps, plain.steps);
  EXPECT_DOUBLE_EQ(dp.ttft.mean, plain.ttft.mean);
  EXPECT_DOUBLE_EQ(dp.e2e.mean, plain.e2e.mean);
  EXPECT_DOUBLE_EQ(dp.first_arrival_s, 0.25);
  EXPECT_DOUBLE_EQ(dp.duration_s, plain.duration_s);
}

TEST(DpAttentionSimulator, ClosedLoopUsersSpanAllRanks) {
  // Three users over two ranks, nine requests: never more than three requests in a step, and
  // every request completes.
  std::uint64_t most = 0;
  const LockstepClock clock = [&](std::span<const perf::MixedStep> ranks) {
    std::uint64_t requests = 0;
    for (const auto& s : ranks) requests += s.decode_sequences + s.chunks.size();
    most = std::max(most, requests);
    return lockstep_linear(ranks);
  };
  ListSource src(at_zero(9, 50, 5));
  SimOptions o;
  o.concurrency = 3;
  const SimResult r = simulate_dp_attention(rank_rules(), clock, src, 2, o);
  EXPECT_EQ(r.completed, 9u);
  EXPECT_EQ(most, 3u);
  EXPECT_EQ(r.verdict.state, "closed-loop");
  EXPECT_LE(r.running.max, 3.0);
}

TEST(DpAttentionSimulator, WarmUpRequestsTakeTheirTurnInTheRoundRobin) {
  // bench_serving's warm-up request went to rank 0 and left its prompt cached there, so the run's
  // first request goes to rank 1 (no hit) and the second to rank 0 (a hit on the 64-token prefix).
  SchedulerRules r = rank_rules();
  r.prefix_caching = true;
  SimOptions warm;
  warm.warm_prefixes = {{7, 64}};
  ListSource a(at_zero(2, 100, 2, 7, 64));
  EXPECT_EQ(simulate_dp_attention(r, lockstep_linear, a, 2, warm).prefix_hits, 1u);
  ListSource b(at_zero(2, 100, 2, 7, 64));
  EXPECT_EQ(simulate_dp_attention(r, lockstep_linear, b, 2, {}).prefix_hits, 0u);
}

TEST(DpAttentionSimulator, LittlesLawHoldsOverTheServer) {
  // Poisson arrivals at 30 / s over two ranks: mean in system = rate x mean time in system (1 %).
  std::vector<Request> all;
  std::mt19937_64 rng(5);
  double t = 0;
  const double rate = 30;
  for (std::uint64_t i = 0; i < 20000; ++i) {
    t += -std::log1p(-static_cast<double>(rng() >> 11) * 0x1.0p-53) / rate;
    all.push_back({i, t, 200, 20, 0, 0});
  }
  ListSource src(all);
  const SimResult r = simulate_dp_attention(rank_rules(), lockstep_linear, src, 2, {});
  ASSERT_EQ(r.completed, 20000u);
  const double measured_rate = 20000 / (all.back().arrival_s - all.front().arrival_s);
  EXPECT_NEAR(r.mean_in_system / (measured_rate * r.e2e.mean), 1.0, 0.01);
  EXPECT_EQ(r.verdict.state, "stable");
}

TEST(DpAttentionSimulator, OverloadIsTheWorstRanksWithTheServersGrowth) {
  // 5,000 requests/s of 2,000-token prompts on two ranks, far beyond what 2,048-token steps of
  // >= 30 ms serve: every rank's queue grows, and the server's growth is the sum of the ranks'.
  std::vector<Request> all;
  for (std::uint64_t i = 0; i < 20000; ++i) all.push_back({i, static_cast<double>(i) / 5000, 2000, 20, 0, 0});
  ListSource src(all);
  const SimResult r = simulate_dp_attention(rank_rules(), lockstep_linear, src, 2, {});
  EXPECT_EQ(r.verdict.state, "overloaded");
  EXPECT_GT(r.verdict.queue_growth_per_s, 1000.0);
  EXPECT_NE(r.verdict.explanation.find("over all ranks the number in the system changed by"), std::string::npos)
      << r.verdict.explanation;
}

TEST(DpAttentionSimulator, BlockAccountingHoldsUnderPreemption) {
  // Small pools (40 blocks of 16 tokens a rank) and long outputs: ranks preempt and readmit;
  // every step rechecks every rank's blocks (check_invariants) and everything completes.
  SchedulerRules r = rank_rules(40);
  r.admission = Admission::OnDemand;
  ListSource src(at_zero(24, 120, 200));
  SimOptions o;
  o.check_invariants = true;
  const SimResult res = simulate_dp_attention(r, lockstep_linear, src, 3, o);
  EXPECT_EQ(res.completed, 24u);
  EXPECT_GT(res.preemptions, 0u);
  EXPECT_LE(res.kv_blocks_peak, 40u);
}

TEST(DpAttentionSimulator, WithSpeculationAPromptAnywherePausesEveryDecode) {
  // Request 0 (100 / 5 tokens) at t = 0 to rank 0, request 1 (100 / 3) at 0.025 s to rank 1, in
  // separate prompt and decode batches (SGLang). Rank 0: prefill 0.011 s, decodes of 0.01001 s
  // end at 0.02101 and 0.03102; request 1, sent during the second, is prefilled in the step from
  // 0.03102. Mixed ranks (plain DP attention): rank 0 decodes in that step, {1, 100}. With
  // dp_prompt_steps_alone (speculative decoding) rank 0 runs an idle batch, {0, 100}, and its last
  // two decodes come one step later: both ranks decode in the steps after.
  auto run = [](bool alone, std::vector<std::vector<double>>& seen) {
    SchedulerRules r = rank_rules();
    r.mix_prefill_decode = false;
    r.dp_prompt_steps_alone = alone;
    const LockstepClock clock = [&](std::span<const perf::MixedStep> ranks) {
      seen.push_back({step_tokens(ranks[0]), step_tokens(ranks[1])});
      return lockstep_linear(ranks);
    };
    ListSource src({{0, 0, 100, 5, 0, 0}, {1, 0.025, 100, 3, 0, 0}});
    return simulate_dp_attention(r, clock, src, 2, {});
  };
  std::vector<std::vector<double>> mixed, alone;
  const SimResult m = run(false, mixed);
  const SimResult a = run(true, alone);
  ASSERT_EQ(mixed.size(), 6u);
  ASSERT_EQ(alone.size(), 6u);
  EXPECT_EQ(mixed[3], (std::vector<double>{1, 100}));
  EXPECT_EQ(alone[3], (std::vector<double>{0, 100}));
  EXPECT_EQ(alone[4], (std::vector<double>{1, 1}));
  EXPECT_EQ(a.completed, 2u);
  // Request 0 ends a step later: its last token comes in a sixth step (both ranks decoding,
  // 0.01 + 2e-5 s), less the token it no longer adds to the prompt step (1e-5 s): 0.01001 s.
  EXPECT_NEAR(a.e2e.max - m.e2e.max, 0.01001, 1e-9);
  // Six steps either way: mixed, request 1's last decode runs alone (request 0 is done).
  EXPECT_EQ(mixed[5], (std::vector<double>{0, 1}));
  EXPECT_EQ(alone[5], (std::vector<double>{1, 1}));
}

TEST(DpAttentionSimulator, RefusesOneRank) {
  ListSource src(at_zero(1, 10, 2));
  EXPECT_THROW(simulate_dp_attention(rank_rules(), lockstep_linear, src, 1, {}), Error);
}

TEST(DpAttentionSimulator, TimelineSumsTheRanks) {
  // The run of DealsRoundRobinAndStepsInLockstep sampled every 10 ms. Samples are taken when a
  // step ends, for every sampling time it passed, and a window's latencies go with the first of
  // them (as for one engine). After the prefill step (0.014 s) the samples at 0, 0.01: 4 running
  // on the two ranks, each request holding ceil(101 / 16) = 7 blocks, 28 of the 2 x 1000; the four
  // first tokens in the first sample. After the decode steps (0.02404, 0.03408 s) the samples at
  // 0.02 and 0.03: at 0.03 all four completed, their TPOT in that window.
  std::vector<TimelineSample> samples;
  SimOptions o;
  o.sample_every_s = 0.01;
  o.on_sample = [&](const TimelineSample& t) { samples.push_back(t); };
  ListSource src(at_zero(4, 100, 3));
  const SimResult r = simulate_dp_attention(rank_rules(), lockstep_linear, src, 2, o);
  ASSERT_EQ(r.completed, 4u);
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(samples[0].running, 4u);
  EXPECT_EQ(samples[0].kv_blocks_used, 28u);
  EXPECT_DOUBLE_EQ(samples[0].kv_usage, 28.0 / 2000.0);
  EXPECT_EQ(samples[0].ttft_window.count, 4u);
  EXPECT_EQ(samples[1].ttft_window.count, 0u);
  EXPECT_DOUBLE_EQ(samples[2].t_s, 0.02);
  EXPECT_EQ(samples[2].completed, 0u);
  EXPECT_DOUBLE_EQ(samples[3].t_s, 0.03);
  EXPECT_EQ(samples[3].completed, 4u);
  EXPECT_EQ(samples[3].running, 0u);
  EXPECT_EQ(samples[3].tpot_window.count, 4u);
}

}  // namespace
}  // namespace vramplan::sim
