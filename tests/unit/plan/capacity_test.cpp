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
  // Offline: 400 requests x 0.1 s back to back -> 10 requests/s.
  EXPECT_NEAR(a.capacity_per_s, 10.0, 1e-6);
  ASSERT_TRUE(a.found);
  // Constant arrivals below 10/s never queue (TTFT = one 10 ms step); above, the queue grows.
  // The bisection stops within 2 % of the bracket: 9.8 .. 10.
  EXPECT_GT(a.rate_per_s, 9.8 - 1e-9);
  EXPECT_LT(a.rate_per_s, 10.0);
  EXPECT_EQ(a.binding, "overloaded");
  EXPECT_NEAR(a.at_rate.ttft.p99, 0.01, 1e-4);
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
  // 25 requests/s over replicas of ~9.9/s: ceil(25 / 9.9) = 3, each then sees 8.33/s.
  const ReplicaAnswer r = replicas_for(e, constant_workload(), slo, 25.0, m, PriceBook{}, {}, o);
  EXPECT_TRUE(r.met);
  EXPECT_EQ(r.replicas, 3u);
  EXPECT_EQ(r.gpus, 3u);
  EXPECT_FALSE(r.usd_per_hour.has_value());  // this engine's GPU has no price
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
