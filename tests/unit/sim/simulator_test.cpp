// The simulator core against theory (M/D/1 queue wait, Little's law), against the planner's own
// estimates (one request alone), and its invariants (issue 12, "How it is checked").
#include "vramplan/sim/simulator.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "support/list_source.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/sim/stats.hpp"

namespace vramplan::sim {
namespace {

using vramplan::test::ListSource;

// Poisson arrivals at `rate`, fixed lengths, `n` requests; prefix ids cycle over `prefixes`
// groups when set. The exponential gap is -ln(1 - u) / rate from a 53-bit uniform u.
class PoissonSource : public RequestSource {
 public:
  PoissonSource(double rate, std::uint64_t n, std::uint32_t in, std::uint32_t out, std::uint64_t seed,
                std::uint32_t prefixes = 0, std::uint32_t prefix_tokens = 0)
      : rate_(rate), n_(n), in_(in), out_(out), rng_(seed), prefixes_(prefixes), prefix_tokens_(prefix_tokens) {}
  std::optional<Request> next() override {
    if (i_ == n_) return std::nullopt;
    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    t_ += -std::log1p(-u) / rate_;
    Request q{i_, t_, in_, out_, 0, 0};
    if (prefixes_) {
      q.prefix_id = 1 + i_ % prefixes_;
      q.prefix_tokens = prefix_tokens_;
    }
    ++i_;
    return q;
  }

 private:
  double rate_;
  std::uint64_t n_, i_ = 0;
  std::uint32_t in_, out_;
  std::mt19937_64 rng_;
  double t_ = 0;
  std::uint32_t prefixes_, prefix_tokens_;
};

// A clock with round numbers: 10 ms per step + 10 us per token in it.
double linear_clock(const perf::MixedStep& s) {
  double tokens = static_cast<double>(s.decode_sequences);
  for (const auto& c : s.chunks) tokens += static_cast<double>(c.end - c.start);
  return 0.01 + 1e-5 * tokens;
}

// `requests` under `r`, the simulator's invariants checked after every step.
SimResult run_checked(const SchedulerRules& r, const StepClock& clock, std::vector<Request> requests) {
  SimOptions checked;
  checked.check_invariants = true;
  ListSource src(std::move(requests));
  return simulate(r, clock, src, checked);
}

// `n` requests of `in` / `out` tokens, all ready at t = 0.
std::vector<Request> all_at_zero(std::uint64_t n, std::uint32_t in, std::uint32_t out) {
  std::vector<Request> all;
  for (std::uint64_t i = 0; i < n; ++i) all.push_back({i, 0, in, out, 0, 0});
  return all;
}

SchedulerRules vllm_like(std::uint64_t blocks, std::uint64_t max_seqs = 256) {
  SchedulerRules r;
  r.engine = "vllm";
  r.kv_blocks = blocks;
  r.block_tokens = 16;
  r.kv_block_bytes = 2 << 20;
  r.max_seqs = max_seqs;
  r.step_tokens = 2048;
  r.max_model_len = 8192;
  r.non_kv_bytes = 20ull << 30;
  return r;
}

TEST(Simulator, OneRequestAloneTakesPrefillThenDecodeSteps) {
  ListSource src({{0, 0.5, 3000, 4, 0, 0}});
  const SimResult r = simulate(vllm_like(1000), linear_clock, src, {});
  // Prompt 3000 in chunks of 2048 + 952: steps of 0.01 + 0.02048 and 0.01 + 0.00952 s
  // -> TTFT 0.05 s; then 3 decode steps of 0.01001 s -> e2e 0.08003 s.
  EXPECT_NEAR(r.ttft.mean, 0.05, 1e-12);
  EXPECT_NEAR(r.e2e.mean, 0.08003, 1e-12);
  EXPECT_NEAR(r.tpot.mean, 0.01001, 1e-12);  // (e2e - ttft) / (4 - 1)
  EXPECT_EQ(r.steps, 5u);
  EXPECT_EQ(r.completed, 1u);
  EXPECT_NEAR(r.queue.mean, 0.0, 1e-12);
  // The last decode step computes token 3002 (0-based): ceil(3003 / 16) = 188 blocks at the peak.
  EXPECT_EQ(r.kv_blocks_peak, 188u);
  EXPECT_NEAR(r.duration_s, 0.08003, 1e-12);  // first arrival .. last completion
}

TEST(Simulator, AWarmPrefixServesTheFirstRequestFromTheCache) {
  // The request above, its whole prompt declared as prefix 7, which the server holds before the
  // run (a load generator's warm-up): full blocks only and at least the last token computed, so
  // min(3000 / 16, 2999 / 16) = 187 blocks (2992 tokens) are reused and 8 computed: TTFT one step
  // of 0.01 + 8 x 1e-5 = 0.01008 s.
  SimOptions o;
  o.warm_prefixes = {{7, 3000}};
  ListSource warm({{0, 0.5, 3000, 4, 7, 3000}});
  const SimResult r = simulate(vllm_like(1000), linear_clock, warm, o);
  EXPECT_NEAR(r.ttft.mean, 0.01008, 1e-12);
  EXPECT_EQ(r.prefix_hits, 1u);
  // Another prefix cached: no hit, the 0.05 s TTFT of a cold prompt.
  ListSource other({{0, 0.5, 3000, 4, 8, 3000}});
  const SimResult r2 = simulate(vllm_like(1000), linear_clock, other, o);
  EXPECT_NEAR(r2.ttft.mean, 0.05, 1e-12);
  EXPECT_EQ(r2.prefix_hits, 0u);
  // A warm prefix the pool cannot hold (4000 / 16 = 250 blocks in a pool of 200) is not seeded.
  SimOptions big;
  big.warm_prefixes = {{7, 4000}};
  big.check_invariants = true;
  ListSource again({{0, 0.5, 3000, 4, 7, 3000}});
  const SimResult r3 = simulate(vllm_like(200), linear_clock, again, big);
  EXPECT_NEAR(r3.ttft.mean, 0.05, 1e-12);
  EXPECT_EQ(r3.prefix_hits, 0u);
  // With prefix caching off nothing is seeded.
  SchedulerRules off = vllm_like(1000);
  off.prefix_caching = false;
  ListSource plain({{0, 0.5, 3000, 4, 7, 3000}});
  EXPECT_NEAR(simulate(off, linear_clock, plain, o).ttft.mean, 0.05, 1e-12);
}

TEST(Simulator, TimelineWindowsCarryTheLatencyOfTheirRequests) {
  // The request of the test above: first token at 0.5 + 0.05 = 0.55 s (TTFT 0.05 s), last at
  // 0.58003 s (TPOT 0.01001 s). Sampled every 10 ms, exactly one window holds each, within the
  // histogram's 0.25 % (stats.hpp); every other window is empty.
  ListSource src({{0, 0.5, 3000, 4, 0, 0}});
  SimOptions o;
  o.sample_every_s = 0.01;
  std::vector<TimelineSample> samples;
  o.on_sample = [&](const TimelineSample& t) { samples.push_back(t); };
  simulate(vllm_like(1000), linear_clock, src, o);
  std::uint64_t ttft_n = 0, tpot_n = 0;
  for (const auto& t : samples) {
    ttft_n += t.ttft_window.count;
    tpot_n += t.tpot_window.count;
    if (t.ttft_window.count) {
      EXPECT_NEAR(t.ttft_window.p99, 0.05, 0.05 * 0.0025);
      EXPECT_NEAR(t.t_s, 0.55, 0.0101);
    }
    if (t.tpot_window.count) {
      EXPECT_NEAR(t.tpot_window.p50, 0.01001, 0.01001 * 0.0025);
      EXPECT_NEAR(t.t_s, 0.58, 0.0101);
    }
  }
  EXPECT_EQ(ttft_n, 1u);
  EXPECT_EQ(tpot_n, 1u);
}

TEST(Simulator, MD1QueueWaitMatchesPollaczekKhinchine) {
  // One request at a time (max_seqs 1), fixed lengths: service S = prefill 0.01 + 100 x 1e-5
  // = 0.011 s + 9 decode steps x 0.01001 s = 0.10109 s. Poisson arrivals at 7/s: rho = 0.70763.
  // M/D/1 mean wait W_q = rho S / (2 (1 - rho)) = 0.70763 x 0.10109 / (2 x 0.29237) = 0.122338 s.
  PoissonSource src(7.0, 200000, 100, 10, 42);
  const SimResult r = simulate(vllm_like(1000, 1), linear_clock, src, {});
  const double S = 0.011 + 9 * 0.01001, rho = 7.0 * S, wq = rho * S / (2 * (1 - rho));
  ASSERT_EQ(r.completed, 200000u);
  EXPECT_NEAR(r.queue.mean / wq, 1.0, 0.03) << "simulated " << r.queue.mean << " s, M/D/1 " << wq << " s";
  EXPECT_NEAR(r.e2e.mean - r.queue.mean, S, 1e-9);  // every service takes exactly S
  EXPECT_EQ(r.verdict.state, "stable");
}

TEST(Simulator, LittlesLawHolds) {
  // Mean number in the system (time average of the engine's own count) = arrival rate x mean
  // time in the system, continuous batching with prefix sharing and chunked prompts.
  PoissonSource src(20.0, 50000, 700, 60, 7, 8, 256);
  const SimResult r = simulate(vllm_like(4000), linear_clock, src, {});
  ASSERT_EQ(r.completed, 50000u);
  const double span = r.end_s - r.first_arrival_s;
  const double lambda = static_cast<double>(r.arrived) / span;
  EXPECT_NEAR(r.mean_in_system / (lambda * r.e2e.mean), 1.0, 0.01);
  EXPECT_GT(r.prefix_hits, 40000u);  // 8 shared prefixes of 256 tokens, cached after first use
}

TEST(Simulator, PreemptionKeepsEveryBlockAccountedFor) {
  // A 60-block pool (960 tokens) for requests that start at 200 tokens (13 blocks) and grow to
  // 500 (32 blocks): admitted on their prompts, the decodes run out of blocks and the newest
  // requests are preempted and recomputed. check_invariants recounts every block after every step.
  PoissonSource src(30.0, 400, 200, 300, 3, 4, 64);
  SimOptions o;
  o.check_invariants = true;
  const SimResult r = simulate(vllm_like(60), linear_clock, src, o);
  EXPECT_GT(r.preemptions, 0u);
  EXPECT_EQ(r.completed, 400u);
  // A preempted or prefix-hit request still produces exactly its output tokens.
  EXPECT_DOUBLE_EQ(r.output_tokens, 400.0 * 300);
  EXPECT_GT(r.prefix_hits, 0u);
  EXPECT_LE(r.kv_blocks_peak, 60u);
  EXPECT_EQ(r.in_system, 0u);
}

TEST(Simulator, FullLengthAdmissionNeverPreempts) {
  PoissonSource src(30.0, 300, 200, 100, 3);
  SchedulerRules rules = vllm_like(25);
  rules.admission = Admission::FullLength;
  rules.out_of_blocks = OutOfBlocks::Fail;  // would throw if the pool ever ran out
  SimOptions o;
  o.check_invariants = true;
  const SimResult r = simulate(rules, linear_clock, src, o);
  EXPECT_EQ(r.preemptions, 0u);
  EXPECT_EQ(r.completed, 300u);
  // 300 tokens = 19 blocks reserved each: at most one request of a 25-block pool runs at a time.
  EXPECT_LE(r.running.max, 1.0);
}

TEST(Simulator, SglangStyleReservationAndRetraction) {
  // A token-granular pool of 3000 tokens, prompt batches apart from decode batches, admission
  // reserving ratio x outstanding output, and retraction when decode runs out: requests of 200
  // prompt tokens growing to 1000 at 30/s overload it. Every token is recounted after every step.
  SchedulerRules r = vllm_like(3000);
  r.engine = "sglang";
  r.block_tokens = 1;
  r.mix_prefill_decode = false;
  r.admission = Admission::ExpectedOutput;
  r.reserve_ratio = 0.7;
  r.reserve_ratio_min = 0.098;
  r.reserve_ratio_decay = (0.7 - 0.098) / 600;
  r.reserve_clip_tokens = 4096;
  r.out_of_blocks = OutOfBlocks::Retract;
  r.retract_decode_steps = 20;
  PoissonSource src(30.0, 300, 200, 800, 9);
  SimOptions o;
  o.check_invariants = true;
  const SimResult res = simulate(r, linear_clock, src, o);
  EXPECT_EQ(res.completed, 300u);
  EXPECT_DOUBLE_EQ(res.output_tokens, 300.0 * 800);
  EXPECT_GT(res.preemptions, 0u);  // retractions
  EXPECT_LE(res.kv_blocks_peak, 3000u);
}

TEST(Simulator, ReservationKeepsAdmissionsWithinTheExpectedGrowth) {
  // With ratio 1 and no decay the reservation is every running request's whole remaining
  // output: admitted requests can always finish, so nothing is ever retracted.
  SchedulerRules r = vllm_like(3000);
  r.block_tokens = 1;
  r.admission = Admission::ExpectedOutput;
  r.reserve_ratio = 1;
  r.reserve_ratio_min = 1;
  r.out_of_blocks = OutOfBlocks::Retract;
  r.retract_decode_steps = 20;
  PoissonSource src(30.0, 300, 200, 800, 9);
  SimOptions o;
  o.check_invariants = true;
  const SimResult res = simulate(r, linear_clock, src, o);
  EXPECT_EQ(res.completed, 300u);
  EXPECT_EQ(res.preemptions, 0u);
  // Each request needs 1000 tokens by its end: at most 3 of them fit the 3000-token pool.
  EXPECT_LE(res.running.max, 3.0);
}

TEST(Simulator, InterTokenGapsWhenPromptsRunInTheirOwnSteps) {
  // Prompt steps apart from decode steps (SGLang's default). A (100 + 5 tokens) arrives at 0,
  // B (100 + 5) at 0.015 s, during A's first decode step:
  //   [0, 0.011]        A's prompt           A's first token
  //   [0.011, 0.02101]  decode A             A: gap 0.01001
  //   [0.02101, 0.03201] B's prompt          B's first token
  //   [0.03201, 0.04203] decode A, B         A: 0.02102 (since its last token), B: 0.01002 (since its first)
  //   [0.04203, 0.05205], [0.05205, 0.06207] decode A, B: 0.01002 each; A done
  //   [0.06207, 0.07208] decode B            B: 0.01001; B done
  // 8 gaps: 0.01001 + 0.02102 + 5 x 0.01002 + 0.01001 = 0.09114 s, mean 0.0113925 s.
  SchedulerRules r = vllm_like(1000);
  r.mix_prefill_decode = false;
  ListSource src({{0, 0, 100, 5, 0, 0}, {1, 0.015, 100, 5, 0, 0}});
  const SimResult res = simulate(r, linear_clock, src, {});
  EXPECT_EQ(res.itl.count, 8u);
  EXPECT_NEAR(res.itl.mean, 0.0113925, 1e-9);
  EXPECT_NEAR(res.itl.max, 0.02102, 1e-9);
}

TEST(Simulator, ABurstOfSendsReachesAnIdleEngineOneRequestAtATime) {
  // Three users send A, B, C (100 prompt tokens, 1 output token) at t = 0. The server's front end
  // hands them over one by one and an idle engine starts on the first (simulator.cpp
  // kBurstSpacing_s): [0, 0.011] A's prompt alone (0.01 + 100 x 1e-5), then [0.011, 0.023] B's and
  // C's (200 tokens): TTFTs 0.011, 0.023, 0.023.
  SimOptions closed;
  closed.concurrency = 3;
  ListSource users(all_at_zero(3, 100, 1));
  const SimResult burst = simulate(vllm_like(1000), linear_clock, users, closed);
  EXPECT_NEAR(burst.ttft.mean, (0.011 + 0.023 + 0.023) / 3, 1e-9);
  EXPECT_NEAR(burst.ttft.max, 0.023, 1e-9);
  EXPECT_EQ(burst.steps, 2u);
  // An offline job is queued with the engine at t = 0: one step of 300 tokens, 0.013 s each.
  ListSource job(all_at_zero(3, 100, 1));
  const SimResult offline = simulate(vllm_like(1000), linear_clock, job, {});
  EXPECT_NEAR(offline.ttft.max, 0.013, 1e-9);
  EXPECT_NEAR(offline.ttft.mean, 0.013, 1e-9);
  EXPECT_EQ(offline.steps, 1u);
}

TEST(Simulator, OverlapSchedulingDelaysAClosedLoopRequestByOneStep) {
  // Closed loop, 2 users, prompt steps apart (SGLang); A (100 + 2), B (100 + 10), C (100 + 3) all
  // sent at 0. The front end hands A to the idle engine first, B just after (simulator.cpp
  // kBurstSpacing_s), so A's prompt runs alone:
  //   [0, 0.011]          A's prompt (100 tokens)             A's first token: TTFT 0.011
  //   [0.011, 0.022]      B's prompt                          B's first token: TTFT 0.022
  //   [0.022, 0.03202]    decode A, B; A done: its user sends C at 0.03202
  // Without the overlap C's prompt runs next, [0.03202, 0.04302]: TTFT 0.011 s. With it, the
  // batch after 0.03202 was formed at 0.022, before C was sent, and still holds A (its last token
  // was not yet seen):
  //   [0.03202, 0.04204] decode B + A riding; [0.04204, 0.05304] C's prompt -> TTFT 0.02102 s.
  // (B, sent at 0, is in the second batch either way: with the overlap that batch is formed at the
  // first step's start, when B is already sent.)
  auto run = [](bool overlap) {
    SchedulerRules r = vllm_like(1000);
    r.overlap_schedule = overlap;
    r.finished_rides_next_step = overlap;  // SGLang
    r.mix_prefill_decode = false;
    ListSource src({{0, 0, 100, 2, 0, 0}, {1, 0, 100, 10, 0, 0}, {2, 0, 100, 3, 0, 0}});
    SimOptions o;
    o.concurrency = 2;
    return simulate(r, linear_clock, src, o);
  };
  const SimResult sync = run(false);
  EXPECT_NEAR(sync.ttft.max, 0.022, 1e-9);
  EXPECT_NEAR(sync.ttft.mean, (0.011 + 0.022 + 0.011) / 3, 1e-9);
  const SimResult overlap = run(true);
  EXPECT_NEAR(overlap.ttft.max, 0.022, 1e-9);
  EXPECT_NEAR(overlap.ttft.mean, (0.011 + 0.022 + 0.02102) / 3, 1e-9);
  EXPECT_EQ(overlap.completed, 3u);
}

TEST(Simulator, OverlapSchedulingRunsAFinishedRequestOnceMore) {
  // One user, overlap on (SGLang event_loop_overlap: the batch after a request's last token was
  // formed before that token was seen, so the finished request decodes once more). A (100 + 2),
  // then B (100 + 2), sent when A completes:
  //   [0, 0.011]          A's prompt, first token
  //   [0.011, 0.02101]    decode A: A done, B sent at 0.02101
  //   [0.02101, 0.03102]  decode A again (riding; its token discarded); B's batch not yet formed
  //   [0.03102, 0.04202]  B's prompt -> TTFT 0.02101 s (0.011 s without the overlap)
  // Nothing is left to arrive after B: its ride changes nothing measured and is not run.
  auto run = [](bool overlap) {
    SchedulerRules r = vllm_like(1000);
    r.overlap_schedule = overlap;
    r.finished_rides_next_step = overlap;  // SGLang
    r.mix_prefill_decode = false;
    ListSource src({{0, 0, 100, 2, 0, 0}, {1, 0, 100, 2, 0, 0}});
    SimOptions o;
    o.concurrency = 1;
    return simulate(r, linear_clock, src, o);
  };
  const SimResult sync = run(false);
  EXPECT_NEAR(sync.ttft.max, 0.011, 1e-9);
  EXPECT_EQ(sync.steps, 4u);
  const SimResult overlap = run(true);
  EXPECT_NEAR(overlap.ttft.max, 0.02101, 1e-9);
  EXPECT_NEAR(overlap.ttft.mean, (0.011 + 0.02101) / 2, 1e-9);
  EXPECT_NEAR(overlap.e2e.max, 0.02101 + 0.01001, 1e-9);  // B: TTFT + one decode step
  EXPECT_EQ(overlap.steps, 5u);
  EXPECT_EQ(overlap.completed, 2u);
}

TEST(Simulator, VllmAsyncSchedulingRunsNoStepForAFinishedRequest) {
  // The one-user case above with vLLM's async scheduling: its batches are formed a step ahead
  // too, but Scheduler.schedule skips a request sure to have reached max_tokens, so after A's
  // last decode step nothing runs and B, sent at 0.02101, is taken at once by an idle engine:
  //   [0, 0.011] A's prompt; [0.011, 0.02101] decode A, done; [0.02101, 0.03201] B's prompt
  // -> B's TTFT 0.011 s, 4 steps (5 and 0.02101 s with SGLang's riding step).
  SchedulerRules r = vllm_like(1000);
  r.overlap_schedule = true;
  r.finished_rides_next_step = false;
  r.mix_prefill_decode = false;
  ListSource src({{0, 0, 100, 2, 0, 0}, {1, 0, 100, 2, 0, 0}});
  SimOptions o;
  o.concurrency = 1;
  const SimResult res = simulate(r, linear_clock, src, o);
  EXPECT_NEAR(res.ttft.max, 0.011, 1e-9);
  EXPECT_EQ(res.steps, 4u);
  EXPECT_EQ(res.completed, 2u);
}

TEST(Simulator, OverlapSchedulingDelaysAnArrivalDuringAStepByOneStep) {
  // Prompt steps apart, overlap on. A (100 + 5) arrives at 0, B (100 + 5) at 0.015, during A's
  // first decode step [0.011, 0.02101], whose successor was formed at 0.011 (before B came):
  //   [0.02101, 0.03102] decode A; [0.03102, 0.04202] B's prompt -> B's TTFT 0.02702 s,
  // one decode step (0.01001 s) more than without the overlap (0.03201 - 0.015 = 0.01701 s).
  // An idle engine takes a request at once: A's TTFT is its prompt step, 0.011 s.
  SchedulerRules r = vllm_like(1000);
  r.mix_prefill_decode = false;
  r.overlap_schedule = true;
  ListSource src({{0, 0, 100, 5, 0, 0}, {1, 0.015, 100, 5, 0, 0}});
  const SimResult res = simulate(r, linear_clock, src, {});
  EXPECT_NEAR(res.ttft.max, 0.02702, 1e-9);
  EXPECT_NEAR(res.ttft.mean, (0.011 + 0.02702) / 2, 1e-9);
}

TEST(Simulator, RejectsRequestsLongerThanMaxModelLen) {
  ListSource src({{0, 0, 8000, 300, 0, 0}, {1, 0.1, 100, 100, 0, 0}, {2, 0.2, 8100, 92, 0, 0}});
  const SimResult r = simulate(vllm_like(1000), linear_clock, src, {});
  EXPECT_EQ(r.completed, 2u);  // 8100 + 92 = 8192 is exactly max_model_len: accepted
  EXPECT_EQ(r.rejected, 1u);
  ASSERT_EQ(r.rejections.size(), 1u);
  EXPECT_EQ(r.rejections[0].reason, "prompt + output tokens exceed max_model_len 8192");
}

TEST(Simulator, AnAdmissionWatermarkKeepsBlocksFreeBesideAPrompt) {
  // vLLM V0 (core/block_manager_v2.py can_allocate): a prompt is admitted only if `watermark`
  // blocks stay free beside it. A pool of 10 blocks, a watermark of 2. A (96 tokens, 6 blocks) is
  // admitted, leaving 4; B (48 tokens, 3 blocks) would leave 1 and waits. Step 1: A's prompt,
  // 0.01 + 96e-5 s; step 2: A's last token (block 7), 0.01001 s, and A leaves; step 3: B's prompt,
  // 0.01 + 48e-5 s: B's first token at 0.01096 + 0.01001 + 0.01048 = 0.03145 s. Without the
  // watermark both prompts share step 1 (0.01 + 144e-5 s).
  SchedulerRules r = vllm_like(10);
  r.admission_watermark_blocks = 2;
  ListSource src({{0, 0, 96, 2, 0, 0}, {1, 0, 48, 2, 0, 0}});
  SimOptions checked;
  checked.check_invariants = true;
  const SimResult held = simulate(r, linear_clock, src, checked);
  EXPECT_EQ(held.completed, 2u);
  EXPECT_NEAR(held.ttft.max, 0.03145, 0.03145 * 0.01);
  ListSource again({{0, 0, 96, 2, 0, 0}, {1, 0, 48, 2, 0, 0}});
  EXPECT_NEAR(simulate(vllm_like(10), linear_clock, again, checked).ttft.max, 0.01144, 0.01144 * 0.01);
  // A request of 9 blocks can never leave 2 of 10 free: refused as vLLM ignores it (AllocStatus.NEVER).
  ListSource big({{0, 0, 128, 16, 0, 0}});
  const SimResult never = simulate(r, linear_clock, big, checked);
  EXPECT_EQ(never.rejected, 1u);
  ASSERT_EQ(never.rejections.size(), 1u);
  EXPECT_EQ(never.rejections[0].reason, "needs more KV blocks than the pool holds above its admission watermark");
}

TEST(Simulator, AWatermarkBesideRunningRequestsOnlyNeverRefusesOne) {
  // vLLM 0.24+ --watermark (kv_cache_manager.py allocate_slots, has_scheduled_reqs): the blocks
  // are kept free only while a request runs. The V0 case above: A (6 blocks) is admitted into the
  // empty engine, B (3 blocks) waits while A runs: B's first token at 0.03145 s again. The request
  // of 9 blocks that V0 refuses is served: alone, it needs no watermark.
  SchedulerRules r = vllm_like(10);
  r.admission_watermark_blocks = 2;
  r.watermark_beside_running_only = true;
  EXPECT_NEAR(run_checked(r, linear_clock, {{0, 0, 96, 2, 0, 0}, {1, 0, 48, 2, 0, 0}}).ttft.max, 0.03145, 0.03145 * 0.01);
  const SimResult alone = run_checked(r, linear_clock, {{0, 0, 128, 16, 0, 0}});
  EXPECT_EQ(alone.completed, 1u);
  EXPECT_EQ(alone.rejected, 0u);
}

TEST(Simulator, AFullSequenceGateAdmitsOnlyWhatTheFreeBlocksCanFinish) {
  // vLLM from 0.19 (scheduler_reserve_full_isl: kv_cache_manager.py can_fit_full_sequence): a
  // waiting request is admitted only when the blocks of its whole prompt are free. A pool of 10
  // blocks, 64 tokens a step. A (96 tokens, 6 blocks, 2 out) and B (80 tokens, 5 blocks, 2 out)
  // both at t = 0.
  //   step 1: A's first 64 tokens (4 blocks), 0.01 + 64e-5 = 0.01064 s;
  //   step 2: A's last 32 (6 blocks held); B needs 5 of the 4 free and waits: 0.01032 s;
  //   step 3: A's decode (block 7, 3 free: B still waits), A done: 0.01001 s;
  //   step 4: B's first 64 tokens, 0.01064 s; step 5: B's last 16, 0.01016 s.
  // B's first token at 0.01064 + 0.01032 + 0.01001 + 0.01064 + 0.01016 = 0.05177 s, no
  // preemption. Asking for the first chunk only (before 0.19), B starts in step 2 beside A, and
  // in step 3 A's decode leaves 1 block for B's next 3: B preempts itself and recomputes.
  SchedulerRules r = vllm_like(10);
  r.step_tokens = 64;
  r.full_sequence_admission = true;
  const SimResult gated = run_checked(r, linear_clock, {{0, 0, 96, 2, 0, 0}, {1, 0, 80, 2, 0, 0}});
  EXPECT_EQ(gated.completed, 2u);
  EXPECT_EQ(gated.preemptions, 0u);
  EXPECT_NEAR(gated.ttft.max, 0.05177, 1e-9);
  r.full_sequence_admission = false;
  EXPECT_EQ(run_checked(r, linear_clock, {{0, 0, 96, 2, 0, 0}, {1, 0, 80, 2, 0, 0}}).preemptions, 1u);
}

// A and B, 64 prompt tokens (4 blocks) and 40 out each, both at t = 0, under `r` with invariants
// checked: both complete after one preemption. Where the chunk that brings B back to 81 tokens
// (64 + 17 generated) starts: what its readmission found cached.
std::uint64_t readmission_start(const SchedulerRules& r) {
  std::vector<std::uint64_t> starts;
  const StepClock clock = [&](const perf::MixedStep& st) {
    for (const auto& c : st.chunks)
      if (c.end == 81) starts.push_back(c.start);
    return linear_clock(st);
  };
  const SimResult res = run_checked(r, clock, {{0, 0, 64, 40, 0, 0}, {1, 0, 64, 40, 0, 0}});
  EXPECT_EQ(res.completed, 2u);
  EXPECT_EQ(res.preemptions, 1u);
  EXPECT_EQ(starts.size(), 1u);
  return starts.empty() ? 81 : starts.front();
}

TEST(Simulator, APreemptedRequestTakesBackWhatSurvivesOfItsCachedBlocks) {
  // vLLM V1 with prefix caching: a preempted request's full blocks stay cached, its tail evicted
  // first, and its readmission recomputes only the evicted part. A pool of 10 blocks:
  //   step 1: both prompts (8 blocks); steps 2..17: both decode (block 5 each at step 2: full);
  //   step 18: each needs block 6: B, the newest, is preempted with 64 + 16 = 80 computed tokens
  //   (5 full blocks, cached) and 17 generated; A takes one of them (B's tail): 4 left;
  //   step 34: A's block 7 takes one more: 3 left; A's last token in step 40;
  //   step 41: B comes back with 81 tokens, 3 blocks (48 tokens) found: it computes 48..81.
  // Without the cache it computes all 81 again.
  SchedulerRules r = vllm_like(10);
  r.preempted_cache = PreemptedCache::AllBlocks;
  EXPECT_EQ(readmission_start(r), 48u);
  r.preempted_cache = PreemptedCache::None;
  EXPECT_EQ(readmission_start(r), 0u);
}

TEST(Simulator, ARetractedSglangRequestFindsItsPromptInTheRadixTreeUnlessEvicted) {
  // SGLang keeps a retracted request's prompt in the radix tree (release_kv_cache with
  // is_insert=False frees only what lies past cache_protected_len) and evicts it as a whole leaf.
  // The scenario above with 11 blocks: at step 18 B goes with its 4 prompt blocks cached and its
  // decode block freed, so A's block 6 and (step 34) block 7 come from free ones; B, back at
  // step 41 with 81 tokens, computes 64..81. With 10 blocks A's block 6 must evict the cached
  // prompt, whole, and B computes all 81.
  SchedulerRules r = vllm_like(11);
  r.preempted_cache = PreemptedCache::Prompt;
  EXPECT_EQ(readmission_start(r), 64u);
  r.kv_blocks = 10;
  EXPECT_EQ(readmission_start(r), 0u);
}

TEST(Simulator, OverloadIsDetectedWithTheQueueGrowthRate) {
  // Capacity with max_seqs 1: 1 / 0.10109 s = 9.89 requests/s. At 20/s the system grows at
  // about 20 - 9.89 = 10.1 requests/s.
  PoissonSource src(20.0, 20000, 100, 10, 5);
  SimOptions o;
  o.timeout_s = 30;
  const SimResult r = simulate(vllm_like(1000, 1), linear_clock, src, o);
  EXPECT_EQ(r.verdict.state, "overloaded");
  EXPECT_NEAR(r.verdict.served_per_s, 1 / 0.10109, 0.05);
  EXPECT_NEAR(r.verdict.queue_growth_per_s, 20 - 1 / 0.10109, 1.0);
  // Request n arrives at n / 20 s and starts at about n x 0.10109 s, so it waits
  // n x 0.05109 s: 30 s for n ~ 587, which arrived at ~29.4 s and times out at ~59.4 s.
  ASSERT_TRUE(r.verdict.first_timeout_s.has_value());
  EXPECT_NEAR(*r.verdict.first_timeout_s, 59.0, 6.0);
}

TEST(Simulator, ArrivalsFasterThanAStepAreOverloaded) {
  // 2,000 requests 1 us apart (1e6/s) on a one-at-a-time engine of 0.10109 s a request (the
  // M/D/1 test's). The arrivals end at 1.999 ms, inside the first step (request 0's prompt,
  // 0.011 s): a window of the arrivals alone holds no completion (it read "stable ... completed at
  // 0/s" before 2026-12-08). The queue never drains until request 1999 is admitted at
  // 1999 x 0.10109 = 202.08891 s, when 1999 have completed, the last at that instant; measured
  // from the first step's end (0.011 s, none completed): 1999 / (202.08891 - 0.011) = 9.89227/s.
  // Arrival rate 2000 / 0.001999 s = 1,000,500.25/s.
  std::vector<Request> all;
  for (std::uint64_t i = 0; i < 2000; ++i) all.push_back({i, static_cast<double>(i) * 1e-6, 100, 10, 0, 0});
  ListSource src(all);
  const SimResult r = simulate(vllm_like(1000, 1), linear_clock, src, {});
  ASSERT_EQ(r.completed, 2000u);
  EXPECT_EQ(r.verdict.state, "overloaded") << r.verdict.explanation;
  const double served = 1999 / (1999 * 0.10109 - 0.011), rate = 2000 / 0.001999;
  EXPECT_NEAR(r.verdict.served_per_s, served, 1e-6);
  EXPECT_NEAR(r.verdict.queue_growth_per_s, rate - served, 1e-3 * rate);
  EXPECT_NE(r.verdict.explanation.find("never drained"), std::string::npos) << r.verdict.explanation;
}

TEST(Simulator, AnOfflineBatchsServiceRateLeavesOutItsTail) {
  // 99 requests of 100 / 10 tokens (0.10109 s each, one at a time) and a last one of 100 / 1000
  // tokens (0.011 + 999 x 0.01001 = 10.01099 s), all at t = 0. The queue empties when the last is
  // admitted, at 99 x 0.10109 = 10.00791 s. Over the second half of that stretch (from 5.00396 s:
  // the last completion by then is the 49th, at 49 x 0.10109 s) 50 requests completed in
  // 50 x 0.10109 s: 1 / 0.10109 = 9.89218/s, the engine's rate. The whole run's average, its
  // 10 s tail included, is 100 / (99 x 0.10109 + 10.01099) = 4.99528/s.
  std::vector<Request> all;
  for (std::uint64_t i = 0; i < 100; ++i) all.push_back({i, 0, 100, i == 99 ? 1000u : 10u, 0, 0});
  ListSource src(all);
  const SimResult r = simulate(vllm_like(1000, 1), linear_clock, src, {});
  EXPECT_EQ(r.verdict.state, "offline");
  EXPECT_NEAR(r.verdict.served_per_s, 1 / 0.10109, 1e-6);
  EXPECT_NEAR(static_cast<double>(r.completed) / r.duration_s, 100 / (99 * 0.10109 + 10.01099), 1e-6);
}

TEST(Simulator, TimeAveragesCountTheIdleGaps) {
  // Little's law on the printed figures: the time-averaged running + waiting counts against
  // arrival rate x mean time in the system. One request at a time, 100 / 100 tokens: service
  // 0.011 + 99 x 0.01001 = 1.00199 s; Poisson arrivals at 0.5/s, 50 % load, so the engine idles
  // half the time. Weighed over its steps alone (before 2026-12-08) the running count read 1.0.
  // A request that arrives during a step is counted waiting from the step's end: ~5 ms of a
  // ~1.5 s stay for half of them, 0.2 %.
  PoissonSource src(0.5, 10000, 100, 100, 3);
  const SimResult r = simulate(vllm_like(1000, 1), linear_clock, src, {});
  ASSERT_EQ(r.completed, 10000u);
  const double span = r.end_s - r.first_arrival_s;
  const double lambda = static_cast<double>(r.arrived) / span;
  EXPECT_NEAR((r.running.mean + r.waiting.mean) / (lambda * r.e2e.mean), 1.0, 0.01);
  // Running is exact: each request runs 1.00199 s, so the mean is 10000 x 1.00199 s over the span.
  EXPECT_NEAR(r.running.mean, 10000 * 1.00199 / span, 1e-9);
  EXPECT_LT(r.running.mean, 0.55);
}

TEST(Simulator, TimelineSamplesInAnIdleGapShowTheIdleEngine) {
  // A request at 0 (0.10109 s of service) and one at 5 s, sampled every second: the samples at
  // 1..4 s fall in the idle gap and show nothing running, one completed (before 2026-12-08 they
  // were taken at the end of the step at 5 s: running 1). The one at 0 s is taken when the first
  // step ends, running; the one at 5 s when the step that starts then ends, running again.
  ListSource src({{0, 0, 100, 10, 0, 0}, {1, 5.0, 100, 10, 0, 0}});
  SimOptions o;
  o.sample_every_s = 1;
  std::vector<TimelineSample> samples;
  o.on_sample = [&](const TimelineSample& t) { samples.push_back(t); };
  const SimResult r = simulate(vllm_like(1000, 1), linear_clock, src, o);
  ASSERT_EQ(samples.size(), 6u);  // 0 .. 5 s; the run ends at 5.10109 s
  EXPECT_EQ(samples[0].running, 1u);
  for (std::size_t i = 1; i <= 4; ++i) {
    EXPECT_NEAR(samples[i].t_s, static_cast<double>(i), 1e-12);
    EXPECT_EQ(samples[i].running, 0u) << i;
    EXPECT_EQ(samples[i].waiting, 0u) << i;
    EXPECT_EQ(samples[i].completed, 1u) << i;
  }
  EXPECT_EQ(samples[5].running, 1u);
  // Two services of 0.10109 s over the 5.10109 s from the first arrival to the end.
  EXPECT_NEAR(r.running.mean, 2 * 0.10109 / 5.10109, 1e-9);
  EXPECT_NEAR(r.mean_in_system, 2 * 0.10109 / 5.10109, 1e-9);
}

TEST(Simulator, ALightLoadIsNotReadAsFilling) {
  // A light load (Poisson 2/s, 300 output tokens: ~3 s a request, about 6 in the system) moves
  // by a few requests between two instants by chance: the 2 %-of-the-arrival-rate test alone
  // read seeds 4 and 5 (a rise of 6 over 130 s, 0.046/s against 0.038/s, and of 6 over 122.5 s)
  // as the running batch still filling. Judged against the count's noise, 2 sqrt(N_mid + N_last)
  // ~ 7, every seed is stable.
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    PoissonSource src(2.0, 500, 200, 300, seed);
    const SimResult r = simulate(vllm_like(20000), linear_clock, src, {});
    EXPECT_EQ(r.verdict.state, "stable") << "seed " << seed << ": " << r.verdict.explanation;
  }
}

TEST(Simulator, TooFewRequestsCannotTellStability) {
  // One request, or two a second apart: nothing queues behind them either way (a lone request
  // read "an offline batch", two read "stable ... completed at 0/s" before 2026-12-08).
  ListSource one({{0, 0, 100, 10, 0, 0}});
  const SimResult a = simulate(vllm_like(1000), linear_clock, one, {});
  EXPECT_EQ(a.verdict.state, "inconclusive");
  EXPECT_NE(a.verdict.explanation.find("one request"), std::string::npos) << a.verdict.explanation;
  ListSource two({{0, 0, 100, 10, 0, 0}, {1, 1.0, 100, 10, 0, 0}});
  const SimResult b = simulate(vllm_like(1000), linear_clock, two, {});
  EXPECT_EQ(b.verdict.state, "inconclusive");
  EXPECT_NE(b.verdict.explanation.find("only 2 requests arrived: too few"), std::string::npos) << b.verdict.explanation;
}

TEST(Simulator, SameInputsGiveIdenticalResults) {
  auto run = [] {
    PoissonSource src(25.0, 5000, 300, 80, 11, 3, 128);
    SimOptions o;
    o.check_invariants = true;
    return simulate(vllm_like(400), linear_clock, src, o);
  };
  const SimResult a = run(), b = run();
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.preemptions, b.preemptions);
  EXPECT_EQ(a.ttft.p99, b.ttft.p99);
  EXPECT_EQ(a.e2e.mean, b.e2e.mean);
}

TEST(Simulator, ClosedLoopKeepsConcurrencyOutstanding) {
  ListSource src(all_at_zero(400, 500, 50));
  SimOptions o;
  o.concurrency = 8;
  const SimResult r = simulate(vllm_like(2000), linear_clock, src, o);
  EXPECT_EQ(r.completed, 400u);
  EXPECT_EQ(r.verdict.state, "closed-loop");
  // Never more than 8 sent, and a user sends again as soon as its request completes: the
  // engine holds 8 the whole time except the last few requests' tail.
  EXPECT_LE(r.running.max + r.waiting.max, 16.0);
  EXPECT_LE(r.running.max, 8.0);
  EXPECT_GT(r.mean_in_system, 7.5);
  EXPECT_LE(r.mean_in_system, 8.0);
}

TEST(Simulator, ClosedLoopStopsSendingAtItsDuration) {
  // One user, requests of 100 / 10 tokens: a prefill step of 0.01 + 100 x 1e-5 = 0.011 s and 9
  // decode steps of 0.01001 s, 0.10109 s a request, so request n is sent at n x 0.10109 s. With
  // --duration 1 s the user sends n = 0..9 (9 x 0.10109 = 0.910 s) and not n = 10 (1.011 s),
  // though the list holds 400 (a generated closed loop never runs out).
  ListSource src(all_at_zero(400, 100, 10));
  SimOptions o;
  o.concurrency = 1;
  o.send_until_s = 1.0;
  const SimResult r = simulate(vllm_like(2000), linear_clock, src, o);
  EXPECT_EQ(r.arrived, 10u);
  EXPECT_EQ(r.completed, 10u);
  EXPECT_NEAR(r.duration_s, 10 * 0.10109, 1e-9);
}

TEST(Simulator, ABatchStillFillingIsInconclusive) {
  // 40 requests at a constant 20 / s, each decoding 1,000 tokens (over 10 s): when arrivals end
  // at 1.95 s nothing has completed, every request runs (the waiting queue drains each step), and
  // the number in the system grows at the arrival rate: not stable, not shown overloaded.
  std::vector<Request> all;
  for (std::uint64_t i = 0; i < 40; ++i) all.push_back({i, 0.05 * static_cast<double>(i), 100, 1000, 0, 0});
  ListSource src(all);
  const SimResult r = simulate(vllm_like(20000), linear_clock, src, {});
  EXPECT_EQ(r.verdict.state, "inconclusive");
  EXPECT_EQ(r.verdict.served_per_s, 0.0);
  EXPECT_NEAR(r.verdict.queue_growth_per_s, 20.0, 1.5);
  EXPECT_NE(r.verdict.explanation.find("too short to tell"), std::string::npos) << r.verdict.explanation;
  EXPECT_EQ(r.completed, 40u);
}

TEST(Simulator, AnUnchunkedPromptOverTheStepBudget) {
  // Budget 2,048 tokens a step, prompts not chunked; a 3,000-token prompt between two short ones.
  auto rules = vllm_like(2000);
  rules.chunked_prefill = false;
  const std::vector<Request> reqs = {{0, 0, 100, 5, 0, 0}, {1, 0, 3000, 5, 0, 0}, {2, 0, 100, 5, 0, 0}};
  // TensorRT-LLM refuses it when it arrives; the others run.
  rules.refuses_prompt_over_step = true;
  ListSource a(reqs);
  const SimResult refused = simulate(rules, linear_clock, a, {});
  EXPECT_EQ(refused.completed, 2u);
  ASSERT_EQ(refused.rejections.size(), 1u);
  EXPECT_EQ(refused.rejections[0].reason, "prompt longer than the 2048 tokens of a step, unchunked");
  // SGLang runs it whole once it is the first of a prompt batch: all three complete (it had made
  // the simulator stop with an internal error until 2026-12-05).
  rules.refuses_prompt_over_step = false;
  rules.runs_oversized_prompt_alone = true;
  ListSource b(reqs);
  SimOptions o;
  o.check_invariants = true;
  const SimResult alone = simulate(rules, linear_clock, b, o);
  EXPECT_EQ(alone.completed, 3u);
  EXPECT_EQ(alone.rejected, 0u);
}

// What held a sent request in the waiting queue, step by step (SimResult::held_back). Two requests
// of 100 / 3 tokens at t = 0, the linear clock: a 100-token prompt step takes 0.01 + 100 x 1e-5 =
// 0.011 s, a one-token decode step 0.01001 s; a request's 3 tokens are its prompt step's and two
// decode steps'.
TEST(Simulator, HeldBackNamesTheLimitThatKeptARequestWaiting) {
  // One running request at most: B waits through A's prompt step and two decode steps for the
  // running limit alone, 0.011 + 2 x 0.01001 = 0.03102 s, half of the run (B takes as long again).
  const SimResult slots = run_checked(vllm_like(1000, 1), linear_clock, all_at_zero(2, 100, 3));
  EXPECT_NEAR(slots.held_back[HeldLimit::RunningLimit], 0.03102, 1e-12);
  EXPECT_EQ(slots.held_back[HeldLimit::KvPool], 0.0);
  EXPECT_EQ(slots.held_back[HeldLimit::TokenBudget], 0.0);
  EXPECT_NEAR(slots.end_s, 2 * 0.03102, 1e-12);

  // 10 blocks of 16 tokens: A's prompt takes ceil(100 / 16) = 7, so B (7 more) waits for blocks
  // while A holds them, through A's three steps (its decode steps compute positions 100 and 101,
  // still within 7 blocks): 0.03102 s, with no running limit in the way.
  const SimResult kv = run_checked(vllm_like(10), linear_clock, all_at_zero(2, 100, 3));
  EXPECT_NEAR(kv.held_back[HeldLimit::KvPool], 0.03102, 1e-12);
  EXPECT_EQ(kv.held_back[HeldLimit::RunningLimit], 0.0);
  EXPECT_EQ(kv.held_back[HeldLimit::TokenBudget], 0.0);

  // A step budget of 100 tokens: A's prompt spends it all in the first step (0.011 s); in the
  // next B's prompt shares the step with A's decode token (99 + 1 tokens), so only the first
  // step held it.
  auto budget_rules = vllm_like(1000);
  budget_rules.step_tokens = 100;
  const SimResult budget = run_checked(budget_rules, linear_clock, all_at_zero(2, 100, 3));
  EXPECT_NEAR(budget.held_back[HeldLimit::TokenBudget], 0.011, 1e-12);
  EXPECT_EQ(budget.held_back[HeldLimit::KvPool] + budget.held_back[HeldLimit::RunningLimit], 0.0);

  // Nothing held: both requests join the first step.
  EXPECT_EQ(run_checked(vllm_like(1000), linear_clock, all_at_zero(2, 100, 3)).held_back.total(), 0.0);
}

TEST(Simulator, TimelineSamplesCarryTheHeldBackSoFar) {
  // The running-limit case above, sampled every 10 ms: B is held through A's prompt step (ends at
  // 0.011 s) and two decode steps (0.02101, 0.03102 s). Each sample carries the held seconds after
  // the step that ended at or past it: 0.011 at 0 and 0.01 s (both sampled when the first step
  // ends), 0.02101 at 0.02 s, 0.03102 from 0.03 s on.
  ListSource src(all_at_zero(2, 100, 3));
  SimOptions o;
  o.sample_every_s = 0.01;
  std::vector<TimelineSample> samples;
  o.on_sample = [&](const TimelineSample& t) { samples.push_back(t); };
  const SimResult r = simulate(vllm_like(1000, 1), linear_clock, src, o);
  ASSERT_GE(samples.size(), 4u);
  const double expected[] = {0.011, 0.011, 0.02101, 0.03102};
  for (std::size_t i = 0; i < samples.size(); ++i) {
    EXPECT_NEAR(samples[i].held_back[HeldLimit::RunningLimit], expected[std::min<std::size_t>(i, 3)], 1e-12) << samples[i].t_s;
    EXPECT_EQ(samples[i].held_back[HeldLimit::KvPool] + samples[i].held_back[HeldLimit::TokenBudget], 0.0);
  }
  EXPECT_NEAR(samples.back().held_back[HeldLimit::RunningLimit], r.held_back[HeldLimit::RunningLimit], 1e-12);
}

TEST(Simulator, EveryRequestRejectedIsSaidSo) {
  ListSource src({{0, 0, 8000, 300, 0, 0}, {1, 0.1, 9000, 100, 0, 0}});
  const SimResult r = simulate(vllm_like(1000), linear_clock, src, {});
  EXPECT_EQ(r.verdict.state, "rejected");
  EXPECT_EQ(r.verdict.explanation, "every request was rejected (prompt + output tokens exceed max_model_len 8192)");
}

TEST(Simulator, OfflineBatchIsJudgedByItsMakespan) {
  ListSource src(all_at_zero(300, 200, 20));
  const SimResult r = simulate(vllm_like(4000), linear_clock, src, {});
  EXPECT_EQ(r.verdict.state, "offline");
  EXPECT_EQ(r.completed, 300u);
  EXPECT_GT(r.duration_s, 0.0);
}

TEST(Simulator, ReplicasBehindARouter) {
  // Two one-at-a-time replicas (service 0.10109 s each, as in the M/D/1 test) at 14 requests/s:
  // 70.8 % load each. Split at random (Poisson, 7/s each) each would be the M/D/1 queue of that
  // test, mean wait 0.1223 s. Both routers see the stream instead: round-robin hands each
  // replica every other arrival (Erlang-2 gaps, less variable) and least-outstanding sends each
  // request where fewer wait — both must wait less than the random split, and every request is
  // served by exactly one replica.
  auto run = [](Router router) {
    PoissonSource src(14.0, 40000, 100, 10, 21);
    return simulate_replicas(vllm_like(1000, 1), linear_clock, src, 2, router, {});
  };
  const auto least = run(Router::LeastOutstanding), robin = run(Router::RoundRobin);
  ASSERT_EQ(least.size(), 2u);
  EXPECT_EQ(least[0].completed + least[1].completed, 40000u);
  EXPECT_GE(least[0].completed, least[1].completed);  // ties (both idle) go to the first replica
  EXPECT_EQ(robin[0].completed, 20000u);  // alternating: exactly half each
  EXPECT_EQ(robin[1].completed, 20000u);
  const double md1 = 0.1223;
  const double wait_least = (least[0].queue.mean * static_cast<double>(least[0].completed) +
                             least[1].queue.mean * static_cast<double>(least[1].completed)) / 40000;
  const double wait_robin = (robin[0].queue.mean + robin[1].queue.mean) / 2;
  EXPECT_LT(wait_least, 0.6 * md1);
  EXPECT_LT(wait_robin, 0.6 * md1);
  EXPECT_GT(wait_least, 0.0);
  EXPECT_EQ(least[0].verdict.state, "stable");
}

TEST(Simulator, RefusesRulesThatCannotRun) {
  ListSource src({});
  SchedulerRules r = vllm_like(0);
  EXPECT_THROW(simulate(r, linear_clock, src, {}), Error);
  r = vllm_like(100);
  r.max_seqs = 0;
  EXPECT_THROW(simulate(r, linear_clock, src, {}), Error);
}

TEST(Simulator, LlamaCppSlotsTruncateOrFail) {
  // 4 slots of 1024 cells: a 1000-token prompt asking for 100 tokens stops at 24 (prompt +
  // output reaches the slot), a 1100-token prompt does not fit at all.
  SchedulerRules r = vllm_like(256);  // 4 x 1024 tokens
  r.engine = "llamacpp";
  r.max_seqs = 4;
  r.slot_tokens = 1024;
  r.truncate_at_slot = true;
  r.prefix_caching = false;
  r.max_model_len = 0;
  ListSource src({{0, 0, 1000, 100, 0, 0}, {1, 0, 1100, 10, 0, 0}, {2, 0, 100, 10, 0, 0}});
  const SimResult res = simulate(r, linear_clock, src, {});
  EXPECT_EQ(res.completed, 2u);
  EXPECT_EQ(res.truncated, 1u);
  EXPECT_DOUBLE_EQ(res.output_tokens, 24.0 + 10.0);
  ASSERT_EQ(res.rejections.size(), 1u);
  EXPECT_EQ(res.rejections[0].reason, "prompt does not fit the slot's 1024 tokens");
  // Without truncation the server fails the long request as a whole.
  r.truncate_at_slot = false;
  ListSource again({{0, 0, 1000, 100, 0, 0}});
  EXPECT_EQ(simulate(r, linear_clock, again, {}).rejected, 1u);
}

}  // namespace
}  // namespace vramplan::sim

namespace vramplan::sim {
namespace {

TEST(Simulator, RecurrentStateBlocksCapTheRunningRequests) {
  // A hybrid's running request holds 3 state blocks besides its tokens' (vLLM MambaSpec pages):
  // requests of 100 prompt + 10 output tokens need cdiv(110, 16) = 7 token blocks + 3 = 10, so a
  // 100-block pool runs at most 10 at once; without the state blocks 14 (98 blocks).
  // check_invariants recounts the pool, state blocks included, after every step.
  auto run = [](std::uint64_t state_blocks) {
    ListSource all([] {
      std::vector<Request> v;
      for (std::uint64_t i = 0; i < 40; ++i) v.push_back(Request{i, 0.0, 100, 10, 0, 0});
      return v;
    }());
    SchedulerRules r = vllm_like(100);
    r.state_blocks = state_blocks;
    r.prefix_caching = false;
    SimOptions o;
    o.check_invariants = true;
    return simulate(r, linear_clock, all, o);
  };
  const SimResult hybrid = run(3), plain = run(0);
  EXPECT_EQ(hybrid.completed, 40u);
  EXPECT_EQ(hybrid.preemptions, 0u);
  EXPECT_DOUBLE_EQ(hybrid.running.max, 10.0);
  EXPECT_DOUBLE_EQ(plain.running.max, 14.0);
  EXPECT_LE(hybrid.kv_blocks_peak, 100u);
}

// ---- percentiles (planner/src/sim/stats.cpp): numpy's np.percentile (linear) while the samples
// are few and unweighted, the bucket nearest rank otherwise. Hand-computed values.

TEST(LogHistogram, FewUnweightedSamplesGiveNumpysLinearPercentiles) {
  // 1 .. 10 s: np.percentile(x, 99) = x[8] + 0.91 (x[9] - x[8]) = 9 + 0.91 = 9.91 (position
  // 0.99 x 9 = 8.91); np.median = (5 + 6) / 2 = 5.5; p90 at 0.9 x 9 = 8.1: 9 + 0.1 = 9.1.
  LogHistogram h;
  for (int v = 10; v >= 1; --v) h.add(v);
  const auto s = h.summary();
  EXPECT_DOUBLE_EQ(s.p99, 9.91);
  EXPECT_DOUBLE_EQ(s.p50, 5.5);
  EXPECT_DOUBLE_EQ(s.p90, 9.1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
}

TEST(LogHistogram, RepeatedSamplesCountEachCopy) {
  // 3 x 1 s and 1 x 5 s: sorted 1, 1, 1, 5; p50 at 1.5 -> 1; p99 at 2.97 -> 1 + 0.97 x 4 = 4.88.
  LogHistogram h;
  h.add_samples(1, 3);
  h.add(5);
  EXPECT_DOUBLE_EQ(h.quantile(0.5), 1);
  EXPECT_DOUBLE_EQ(h.quantile(0.99), 4.88);
  EXPECT_EQ(h.summary().count, 4u);
}

TEST(LogHistogram, WeightedOrManySamplesUseTheBuckets) {
  // A weighted sample ends exact mode: the nearest rank of the 0.5 %-wide buckets, within 0.25 %.
  LogHistogram w;
  w.add(1, 0.5);
  w.add(2, 0.5);
  EXPECT_NEAR(w.quantile(0.99), 2, 2 * 0.0025);
  // Over kExactSamples samples: 0.001 .. 5.000 s; the nearest rank at 0.99 x 5000 = 4950 is
  // 4.950 s (numpy would give 4.95001); the bucket middle is within 0.25 % of it.
  LogHistogram many;
  for (int i = 1; i <= 5000; ++i) many.add(i * 0.001);
  EXPECT_NEAR(many.quantile(0.99), 4.95, 4.95 * 0.0025);
}

// A sample finds its bucket by comparing with the previous sample's bucket edges, and a whole
// number by a table: both must give the bucket of the formula ceil(log(v / floor) / log 1.005).
// Values at each bucket edge (floor x 1.005^i), one ulp either side and mid-bucket, added in
// ascending order (each next to the previous one: the comparison path) and in an order that jumps
// 37 buckets at a time (the formula path each time), give the same weighted quantiles.
TEST(LogHistogram, BucketSearchFromThePreviousSampleMatchesTheFormula) {
  std::vector<double> values;
  for (int i = 100; i < 201; ++i) {
    const double edge = 1e-9 * std::pow(1.005, i);
    for (double v : {std::nextafter(edge, 0.0), edge, std::nextafter(edge, 1.0), edge * 1.0025}) values.push_back(v);
  }
  for (int n = 1; n <= 300; ++n) values.push_back(n);  // whole numbers: the table
  LogHistogram ascending, jumping;
  for (double v : values) ascending.add(v, 0.5);
  const std::size_t n = values.size();
  for (std::size_t k = 0; k < n; ++k) jumping.add(values[(k * 37) % n], 0.5);  // 37 and n = 704 coprime
  ASSERT_EQ(std::gcd(std::size_t{37}, n), 1u);
  for (int q = 1; q <= 400; ++q)
    EXPECT_EQ(ascending.quantile(q / 400.0), jumping.quantile(q / 400.0)) << "q = " << q / 400.0;
}

}  // namespace
}  // namespace vramplan::sim
