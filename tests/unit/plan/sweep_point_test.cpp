// The sweep's inner point under pipeline parallelism gives the decode round of the performance
// model itself (perf::estimate_decode): same micro-batching, same bubble, same hand-offs between hosts.
#include <gtest/gtest.h>

#include "vramplan/plan/sweep.hpp"

namespace vramplan::plan {
namespace {

TEST(SweepPoint, PipelineRoundMatchesThePerfModel) {
  GpuFixed g;
  g.capacity = Bytes(80ull << 30);
  g.kv_pool = Bytes(40ull << 30);
  g.kv_pool_upper = 40ull << 30;
  g.non_kv_1 = 20ull << 30;
  g.rates = perf::HardwareRates{2.68e12, 6.4e14, 5e-4, 3.15e11, 1e-5};
  // The fitted overlap, not the roofline's 1: the point must run the model's two kernel classes
  // (until 2026-12-07 it took max(memory, compute) of the whole step and came out fast).
  g.rates->memory_compute_overlap = 0.4;
  // Hosts of 2 GPUs: the 4 stages span 2 of them, so the round pays the network hand-offs.
  g.rates->scale_up_gpus = 2;
  g.rates->network_bytes_per_s = 46e9;
  g.rates->network_latency_s = 45e-6;
  perf::PerfModelShape shape;  // Llama-3.1-70B-like, one of 4 stages at TP 1: 20 layers
  shape.dense_weight_bytes = 35e9;
  shape.active_params = 17.5e9;
  shape.layers = 20;
  shape.hidden = 8192;
  shape.tp = 1;
  shape.pp = 4;
  shape.attention = {perf::AttentionGroup{20, 64, 128, 128, 327680.0 / 80, 0, 1}};
  const perf::PerfHardware hw{*g.rates, std::nullopt, std::nullopt, "", false};
  for (const std::uint64_t batch : {1u, 3u, 4u, 9u, 64u}) {
    const PointResult p = evaluate_point(g, shape, 1 << 20, 4096, batch, FitPolicy{0.1});
    ASSERT_TRUE(p.fits);
    const perf::DecodeResult d = perf::estimate_decode(shape, hw, perf::DecodeBatch{batch, 4096});
    EXPECT_NEAR(p.tpot_s, d.step_s.expected, 1e-12 * d.step_s.expected) << batch;
    EXPECT_NEAR(p.pipeline_bubble, d.pipeline_bubble, 1e-12) << batch;
  }
  // Batch 1 on 4 stages: 1 micro-batch, rounds of 4 stage steps, 3/4 idle.
  EXPECT_DOUBLE_EQ(evaluate_point(g, shape, 1 << 20, 4096, 1, FitPolicy{0.1}).pipeline_bubble, 0.75);
}

}  // namespace
}  // namespace vramplan::plan
