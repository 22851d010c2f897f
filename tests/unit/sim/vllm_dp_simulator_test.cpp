// vLLM's data-parallel engines in the simulator (simulate_dp_attention with vLLM's rules): the
// API server's least-loaded routing over a view refreshed every 100 ms, and the lockstep wave that
// runs dummy forwards until its all-reduce finds every engine empty (docs/simulator.md#vllm-data-parallelism).
#include <gtest/gtest.h>

#include <vector>

#include "support/list_source.hpp"
#include "support/sim_rules.hpp"
#include "vramplan/sim/simulator.hpp"

namespace vramplan::sim {
namespace {

using vramplan::test::ListSource;

SchedulerRules engine_rules(RankDispatch dispatch, std::uint64_t sync_steps) {
  SchedulerRules r = test::lockstep_rank_rules("vllm");
  r.dp_ranks = 2;
  r.dp_dispatch = dispatch;
  r.dp_stats_refresh_s = dispatch == RankDispatch::RoundRobin ? 0 : 0.1;
  r.dp_wave_sync_steps = sync_steps;
  r.dp_name = "vLLM data-parallel engines";
  return r;
}

double tokens_of(const perf::MixedStep& s) {
  double tokens = static_cast<double>(s.decode_sequences);
  for (const auto& c : s.chunks) tokens += static_cast<double>(c.end - c.start);
  return tokens;
}

// 10 ms a forward, whatever it holds.
double ten_ms(std::span<const perf::MixedStep>) { return 0.01; }

// Which engine ran request C's prompt: A (1,000 output tokens) and B (2) at t = 0 go to engines 0
// and 1; C (a 64-token prompt) comes at t = 1 s, when B is long done and A still decoding.
int engine_of_late_prompt(RankDispatch dispatch) {
  int engine = -1;
  double now = 0;
  const LockstepClock clock = [&](std::span<const perf::MixedStep> ranks) {
    for (int d = 0; d < 2; ++d)
      if (now > 0.99 && engine < 0 && !ranks[d].chunks.empty()) engine = d;
    now += 0.01;
    return 0.01;
  };
  ListSource src({{0, 0, 16, 1000, 0, 0}, {1, 0, 16, 2, 0, 0}, {2, 1.0, 64, 5, 0, 0}});
  const SimResult r = simulate_dp_attention(engine_rules(dispatch, 32), clock, src, 2, {});
  EXPECT_EQ(r.completed, 3u);
  return engine;
}

TEST(VllmDpSimulator, RoutesToTheLeastLoadedEngine) {
  // At t = 1 s the coordinator's view (refreshed at most every 100 ms) has engine 0 running A and
  // engine 1 empty: 4 x 0 + 1 against 0, so C goes to engine 1 (0.10.1 - 0.26; the same for the
  // 0.9.2 order and the 0.28 in-flight score). Round-robin (SGLang) would deal it to engine 0.
  EXPECT_EQ(engine_of_late_prompt(RankDispatch::WeightedQueue), 1);
  EXPECT_EQ(engine_of_late_prompt(RankDispatch::WaitingThenRunning), 1);
  EXPECT_EQ(engine_of_late_prompt(RankDispatch::InflightKvPressure), 1);
  EXPECT_EQ(engine_of_late_prompt(RankDispatch::RoundRobin), 0);
}

TEST(VllmDpSimulator, ABurstIsSpreadByTheClientsOwnBumps) {
  // Six requests at t = 0, before any refresh could show them: each one sent adds 1 to its
  // engine's waiting count in the client's view (score 4 x waiting + running), so they alternate:
  // three prompts of 100 tokens on each engine in the first forward.
  std::vector<std::vector<double>> seen;
  const LockstepClock clock = [&](std::span<const perf::MixedStep> ranks) {
    seen.push_back({tokens_of(ranks[0]), tokens_of(ranks[1])});
    return 0.01;
  };
  std::vector<Request> all;
  for (std::uint64_t i = 0; i < 6; ++i) all.push_back({i, 0, 100, 2, 0, 0});
  ListSource src(all);
  const SimResult r = simulate_dp_attention(engine_rules(RankDispatch::WeightedQueue, 32), clock, src, 2, {});
  EXPECT_EQ(r.completed, 6u);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), (std::vector<double>{300, 300}));
}

TEST(VllmDpSimulator, TheWaveRunsDummyForwardsToItsSyncStep) {
  // One request of 16 / 3 tokens: a prompt forward and two decodes, then the engines run dummy
  // forwards until the 32nd, where the all-reduce finds both empty (DPEngineCoreProc
  // _has_global_unfinished_reqs). Its latency is that of the three forwards: e2e 0.03 s.
  ListSource a({{0, 0, 16, 3, 0, 0}});
  const SimResult vllm = simulate_dp_attention(engine_rules(RankDispatch::WeightedQueue, 32), ten_ms, a, 2, {});
  EXPECT_EQ(vllm.steps, 32u);
  EXPECT_NEAR(vllm.e2e.mean, 0.03, 1e-12);
  EXPECT_NEAR(vllm.end_s, 0.32, 1e-9);
  // SGLang's ranks stop with the last request.
  ListSource b({{0, 0, 16, 3, 0, 0}});
  const SimResult sglang = simulate_dp_attention(engine_rules(RankDispatch::RoundRobin, 0), ten_ms, b, 2, {});
  EXPECT_EQ(sglang.steps, 3u);
  // A request arriving during the dummy forwards joins the running wave at the next forward:
  // sent at 0.105 s, it is admitted at 0.11 s (the 12th forward) and done 3 forwards later; the
  // wave then ends at forward 32.
  ListSource c({{0, 0, 16, 3, 0, 0}, {1, 0.105, 16, 3, 0, 0}});
  const SimResult joined = simulate_dp_attention(engine_rules(RankDispatch::WeightedQueue, 32), ten_ms, c, 2, {});
  EXPECT_EQ(joined.completed, 2u);
  EXPECT_EQ(joined.steps, 32u);
  EXPECT_NEAR(joined.e2e.max, 0.035, 1e-9);
}

// 10 ms + 10 us a token of the step, one engine alone.
double single_linear(const perf::MixedStep& s) { return 0.01 + 1e-5 * tokens_of(s); }

TEST(VllmDpSimulator, IndependentEnginesAreEachAnEngineAlone) {
  // A dense model's engines from 0.14: round-robin (no counts published), each stepping on its own.
  // Requests at 0, 0.001, 0.002, 0.003 s alternate: engine 0 runs requests 0 and 2 exactly as one
  // engine given only those two would, engine 1 requests 1 and 3.
  const std::vector<Request> all = {{0, 0.000, 300, 20, 0, 0}, {1, 0.001, 200, 30, 0, 0},
                                    {2, 0.002, 100, 10, 0, 0}, {3, 0.003, 400, 5, 0, 0}};
  SchedulerRules rules = engine_rules(RankDispatch::RoundRobin, 0);
  rules.dp_lockstep = false;
  ListSource src(all);
  const SimResult both = simulate_independent_engines(rules, single_linear, src, 2, {});
  EXPECT_EQ(both.completed, 4u);
  ListSource even({all[0], all[2]}), odd({all[1], all[3]});
  SchedulerRules one = rules;
  one.dp_ranks = 1;
  const SimResult e0 = simulate(one, single_linear, even, {});
  const SimResult e1 = simulate(one, single_linear, odd, {});
  EXPECT_EQ(both.steps, e0.steps + e1.steps);
  EXPECT_NEAR(both.e2e.max, std::max(e0.e2e.max, e1.e2e.max), 1e-12);
  EXPECT_NEAR(both.ttft.mean, (2 * e0.ttft.mean + 2 * e1.ttft.mean) / 4, 1e-12);
  EXPECT_NEAR(both.last_completion_s, std::max(e0.last_completion_s, e1.last_completion_s), 1e-12);
}

TEST(VllmDpSimulator, HeldBackTimesAreSummedOverTheEngines) {
  // One running request an engine. Engine 0 runs request 0 (300 / 20): a 0.013 s prompt step and
  // 19 decode steps of 0.01001 s; request 2, sent at 0.002 s, is held by the running limit from
  // the second step to the end of request 0: 19 x 0.01001 = 0.19019 s. The server's figure is
  // the sum of its engines'.
  const std::vector<Request> all = {{0, 0.000, 300, 20, 0, 0}, {1, 0.001, 200, 30, 0, 0},
                                    {2, 0.002, 100, 10, 0, 0}, {3, 0.003, 400, 5, 0, 0}};
  SchedulerRules rules = engine_rules(RankDispatch::RoundRobin, 0);
  rules.dp_lockstep = false;
  rules.max_seqs = 1;
  ListSource src(all);
  const SimResult both = simulate_independent_engines(rules, single_linear, src, 2, {});
  SchedulerRules one = rules;
  one.dp_ranks = 1;
  ListSource even({all[0], all[2]}), odd({all[1], all[3]});
  const SimResult e0 = simulate(one, single_linear, even, {});
  const SimResult e1 = simulate(one, single_linear, odd, {});
  EXPECT_NEAR(e0.held_back[HeldLimit::RunningLimit], 19 * 0.01001, 1e-12);
  EXPECT_GT(e1.held_back[HeldLimit::RunningLimit], 0.0);
  EXPECT_NEAR(both.held_back[HeldLimit::RunningLimit], e0.held_back[HeldLimit::RunningLimit] + e1.held_back[HeldLimit::RunningLimit], 1e-12);
  EXPECT_EQ(both.held_back[HeldLimit::KvPool] + both.held_back[HeldLimit::TokenBudget], 0.0);
}

TEST(VllmDpSimulator, IndependentEnginesServeOneClosedLoop) {
  // Three users over two independent engines, twelve requests: never more than three out at once,
  // all complete, and the least-loaded score (0.28+) spreads them.
  std::vector<Request> all;
  for (std::uint64_t i = 0; i < 12; ++i) all.push_back({i, 0, 64, 8, 0, 0});
  SchedulerRules rules = engine_rules(RankDispatch::InflightKvPressure, 0);
  rules.dp_lockstep = false;
  ListSource src(all);
  SimOptions o;
  o.concurrency = 3;
  const SimResult r = simulate_independent_engines(rules, single_linear, src, 2, o);
  EXPECT_EQ(r.completed, 12u);
  EXPECT_LE(r.running.max, 3.0);
  EXPECT_EQ(r.verdict.state, "closed-loop");
}

}  // namespace
}  // namespace vramplan::sim
