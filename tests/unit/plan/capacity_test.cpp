// Capacity answers on the simulator (issue 15) against hand-computed queues: an engine whose
// every step takes exactly 10 ms and that runs one request at a time serves a 100-token prompt
// with 10 output tokens in 10 steps = 0.1 s, so one replica completes at most 10 requests/s.
#include "vramplan/plan/capacity.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/plan/slo.hpp"

namespace vramplan::plan {
namespace {

// The message of the Error(Usage) that `f` throws.
std::string test_error(const std::function<void()>& f) { return test::error_message(f, ErrorKind::Usage); }

sim::PreparedEngine ten_ms_engine() {
  sim::PreparedEngine e;
  e.rules.engine = "vllm";
  e.rules.kv_blocks = 1000;
  e.rules.block_tokens = 16;
  e.rules.max_seqs = 1;
  e.rules.step_tokens = 2048;
  e.rules.max_model_len = 4096;
  // No weights, no attention: every step is the fixed overhead alone.
  e.rates.bandwidth_bytes_per_s = 1e12;
  e.rates.tensor_flops_per_s = 1e15;
  e.rates.step_overhead_s = 0.01;
  return e;
}

sim::WorkloadSpec constant_workload() {
  sim::WorkloadSpec w;
  w.arrivals.process = sim::ArrivalProcess::Constant;
  w.input.kind = sim::LengthSpec::Kind::Fixed;
  w.input.fixed = 100;
  w.output.kind = sim::LengthSpec::Kind::Fixed;
  w.output.fixed = 10;
  return w;
}

TEST(Slo, ParsesTargetsWithUnits) {
  const auto t = parse_slo("p99_ttft<=2s, p50_tpot<=60ms,mean_queue<=0.5s");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].metric, SloMetric::Ttft);
  EXPECT_EQ(t[0].stat, SloStat::P99);
  EXPECT_DOUBLE_EQ(t[0].limit_s, 2.0);
  EXPECT_EQ(t[1].metric, SloMetric::Tpot);
  EXPECT_DOUBLE_EQ(t[1].limit_s, 0.06);
  EXPECT_EQ(t[2].stat, SloStat::Mean);
  EXPECT_EQ(t[1].text, "p50_tpot<=60ms");
}

TEST(Slo, RefusesWhatDoesNotParse) {
  for (const char* bad : {"p99_ttft<2s", "p99_ttft<=2", "p95_ttft<=2s", "p99_latency<=2s", "p99_ttft<=-1s", "", "p99_ttft<=2s,"}) {
    try {
      parse_slo(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << bad;
      EXPECT_NE(std::string(e.what()).find("--slo"), std::string::npos) << e.what();
    }
  }
}

TEST(Capacity, MaxRateIsTheServiceRateOfAOneAtATimeEngine) {
  const sim::PreparedEngine e = ten_ms_engine();
  CapacityOptions o;
  o.requests_per_probe = 400;
  const MaxRateAnswer a = find_max_rate(e, constant_workload(), parse_slo("p99_ttft<=1s"), o);
  // Offline: 400 requests x 0.1 s back to back -> 10 requests/s, while the queue lasts (200
  // completions from the 199th at 19.9 s to the 399th at 39.9 s, when the last is admitted) and
  // over the whole run alike.
  EXPECT_NEAR(a.capacity_per_s, 10.0, 1e-6);
  EXPECT_NEAR(a.offline_average_per_s, 10.0, 1e-6);
  ASSERT_TRUE(a.found);
  // Constant arrivals at up to 10/s never queue (TTFT = one 10 ms step): the bisection from 0.5
  // meets at 5.25, 7.625, 8.81, 9.41, 9.70 and 9.85, where the bracket is under 2 % of 10. No
  // probe failed, so the ceiling is probed: at exactly 10/s each request arrives as the one before
  // finishes (D/D/1 at full load), still no queue, met. The top raised by a quarter to 12.5, the
  // bisection goes on: 11.25, 10.63, 10.31 and 10.16 are overloaded, and the bracket 10 .. 10.16
  // is under 2 %.
  EXPECT_NEAR(a.rate_per_s, 10.0, 1e-6);
  EXPECT_EQ(a.binding, "overloaded");
  std::string probes;
  for (const RateProbe& p : a.probes) probes += std::to_string(p.rate_per_s) + (p.met ? " met, " : " failed, ");
  ASSERT_EQ(a.probes.size(), 12u) << probes;  // 0.5, six bisections, 10, four bisections
  EXPECT_NEAR(a.probes[7].rate_per_s, 10.0, 1e-6);
  EXPECT_TRUE(a.probes[7].met);
  EXPECT_NEAR(a.probes[8].rate_per_s, 11.25, 1e-6);
  EXPECT_TRUE(a.probes[8].overloaded);
  EXPECT_NEAR(a.probes[11].rate_per_s, 10.15625, 1e-6);
  EXPECT_TRUE(a.probes[11].overloaded);
  EXPECT_NEAR(a.at_rate.ttft.p99, 0.01, 1e-4);
}

TEST(Capacity, TheCeilingIsProbedBeforeBoundByIsSaid) {
  // Before 2026-12-08 the bisection never probed its top (the offline run's average, which a
  // batch's finishing tail lowers), yet named "overloaded" as what bound the answer. Here the
  // ten-millisecond engine takes four at a time (max_seqs 4): prompts of 4 x 100 tokens in one
  // 10 ms step and 9 decode steps, 4 requests every 0.1 s, 40/s. Under p99_ttft<=1s the
  // answer is bracketed by probes that failed, each overloaded.
  sim::PreparedEngine e = ten_ms_engine();
  e.rules.max_seqs = 4;
  CapacityOptions o;
  o.requests_per_probe = 400;
  const MaxRateAnswer a = find_max_rate(e, constant_workload(), parse_slo("p99_ttft<=1s"), o);
  EXPECT_NEAR(a.capacity_per_s, 40.0, 1e-6);
  ASSERT_TRUE(a.found);
  EXPECT_EQ(a.binding, "overloaded");
  bool failed_above = false;
  for (const RateProbe& p : a.probes) {
    if (p.rate_per_s > a.rate_per_s) {
      EXPECT_FALSE(p.met) << p.rate_per_s;
      failed_above = failed_above || p.overloaded;
    }
  }
  EXPECT_TRUE(failed_above);
  EXPECT_GT(a.rate_per_s, 0.98 * 40.0);
}

TEST(Capacity, NoRateWhenALoneRequestMissesTheTarget) {
  const sim::PreparedEngine e = ten_ms_engine();
  CapacityOptions o;
  o.requests_per_probe = 200;
  // End to end is 0.1 s even alone.
  const MaxRateAnswer a = find_max_rate(e, constant_workload(), parse_slo("p99_e2e<=50ms"), o);
  EXPECT_FALSE(a.found);
  EXPECT_EQ(a.binding, "p99_e2e<=50ms");
}

TEST(Capacity, ReplicasForATargetLoad) {
  const sim::PreparedEngine e = ten_ms_engine();
  CapacityOptions o;
  o.requests_per_probe = 300;
  const auto slo = parse_slo("p99_ttft<=1s");
  const MaxRateAnswer m = find_max_rate(e, constant_workload(), slo, o);
  // 25 requests/s over replicas of 10/s: ceil(25 / 10) = 3, each then sees 8.33/s and meets the
  // target; 2 (12.5/s each) are overloaded.
  const ReplicaAnswer r = replicas_for(e, constant_workload(), slo, 25.0, m, PriceBook{}, {}, o);
  EXPECT_TRUE(r.met);
  EXPECT_EQ(r.replicas, 3u);
  EXPECT_EQ(r.gpus, 3u);
  EXPECT_EQ(r.requests_simulated, 900u);  // 3 x 300
  EXPECT_FALSE(r.usd_per_hour.has_value());  // this engine's GPU has no price
}

TEST(Capacity, FewerReplicasAreTriedWhenTheEstimateMeets) {
  // A max rate of 5/s (an underestimate of the engine's 10/s) puts the start at ceil(25 / 5) = 5
  // replicas; 5, 4 (6.25/s each) and 3 (8.33/s) meet p99_ttft<=1s, 2 (12.5/s) are overloaded:
  // the answer is 3, where before 2026-12-08 the count only grew from its start (5).
  MaxRateAnswer m;
  m.found = true;
  m.rate_per_s = 5;
  CapacityOptions o;
  o.requests_per_probe = 300;
  const ReplicaAnswer r = replicas_for(ten_ms_engine(), constant_workload(), parse_slo("p99_ttft<=1s"), 25.0, m, PriceBook{}, {}, o);
  EXPECT_TRUE(r.met);
  EXPECT_EQ(r.replicas, 3u);
}

TEST(Capacity, CostPerOutputTokenIsTheLoadTimesTheTokensARequestAsks) {
  // Priced as an H100 SXM from the catalogue: 3 replicas bill 3 x the GPU-hour, and serve 25
  // requests/s x 10 output tokens = 250 tokens/s = 0.9 million an hour: USD/h / 0.9 per million.
  sim::PreparedEngine e = ten_ms_engine();
  e.plan.gpu.id = "h100-sxm-80";
  CapacityOptions o;
  o.requests_per_probe = 300;
  MaxRateAnswer m;
  m.found = true;
  m.rate_per_s = 10;
  const PriceBook prices = load_price_book(test::source_root(), std::nullopt);
  const ReplicaAnswer r = replicas_for(e, constant_workload(), parse_slo("p99_ttft<=1s"), 25.0, m, prices, {}, o);
  ASSERT_EQ(r.replicas, 3u);
  ASSERT_TRUE(r.usd_per_hour.has_value());
  EXPECT_NEAR(*r.usd_per_hour, 3 * prices.price("h100-sxm-80")->usd_per_gpu_hour, 1e-9);
  ASSERT_TRUE(r.usd_per_million_output_tokens.has_value());
  EXPECT_NEAR(*r.usd_per_million_output_tokens, *r.usd_per_hour / 0.9, 1e-9);
}

TEST(Capacity, ReplicaCountsBeyondTheCapAreRefusedBeforeAnyRun) {
  MaxRateAnswer m;
  m.found = true;
  m.rate_per_s = 10;
  EXPECT_EQ(replicas_at_least(25, m), 3u);                       // ceil(2.5)
  EXPECT_EQ(replicas_at_least(1e-3, m), 1u);                     // at least one
  EXPECT_EQ(replicas_at_least(10'000, m), kMaxReplicas);         // exactly 1,000
  EXPECT_EQ(replicas_at_least(10'010, m), kMaxReplicas + 1);     // 1,001
  EXPECT_EQ(replicas_at_least(1e300, m), kMaxReplicas + 1);      // no wrap past 2^64
  // 1e9 requests/s would be 1e8 replicas of 3000 requests each: refused, nothing simulated.
  EXPECT_EQ(test_error([&] {
              replicas_for(ten_ms_engine(), constant_workload(), parse_slo("p99_ttft<=1s"), 1e9, m, PriceBook{}, {}, {});
            }),
            "--target-rate: 1e+09 requests/s needs more than 1000 replicas of 10 requests/s each, more than vramplan "
            "simulates");
}

TEST(Capacity, OfflineJobsAndProbesAreBounded) {
  sim::WorkloadSpec w = constant_workload();
  w.requests = 10;
  EXPECT_EQ(test_error([&] { offline_job(ten_ms_engine(), w, 11, 24, PriceBook{}, {}); }),
            "--workers: at most 10 (one request per worker at the least, and at most 1000 workers)");
  EXPECT_EQ(test_error([] { check_probe_requests(1'000'001); }),
            "--probe-requests: at most 1000000 (each probe simulates that many requests)");
  EXPECT_EQ(test_error([] { check_probe_requests(99); }), "--probe-requests: at least 100, or the p99 means nothing");
  check_probe_requests(100);
  check_probe_requests(1'000'000);
}

TEST(Capacity, OfflineJobOnWorkers) {
  const sim::PreparedEngine e = ten_ms_engine();
  sim::WorkloadSpec w = constant_workload();
  w.requests = 100;
  const std::vector<RentalPeriod> periods = {{"30d", 720}, {"3d", 72}, {"7d", 168}};
  const OfflineAnswer a = offline_job(e, w, 4, 24, PriceBook{}, periods);
  // 25 requests per worker, one at a time, 0.1 s each: 2.5 s; 4 GPUs x 2.5 s = 1/360 GPU-hour.
  EXPECT_NEAR(a.makespan_s, 2.5, 1e-9);
  EXPECT_NEAR(a.gpu_hours, 4 * 2.5 / 3600, 1e-12);
  // 1000 output tokens in 2.5 s.
  EXPECT_NEAR(a.output_tokens_per_s, 400.0, 1e-6);
  EXPECT_EQ(a.period, "3d");  // 2.5 s + 24 h fits the shortest period
}

}  // namespace
}  // namespace vramplan::plan
