// The decode step model sits in the inner loop of batch / context sweeps (the knee search alone
// evaluates every batch up to the memory limit): keep one evaluation well under a microsecond.
#include <benchmark/benchmark.h>

#include "vramplan/perf/perf_model.hpp"

namespace {

using namespace vramplan::perf;

// Llama-3.1-8B-like (bf16) on H200-like rates, with a slow/fast range as an uncalibrated GPU has.
PerfModelShape dense_shape() {
  PerfModelShape s;
  s.dense_weight_bytes = 15.0e9;
  s.active_params = 7.5e9;
  s.layers = 32;
  s.hidden = 4096;
  s.attention = {AttentionGroup{32, 32, 128, 128, 4096, 0}};
  return s;
}

// DeepSeek-V3-like MoE slice at TP 8: MLA attention, 256 experts top-8 over 58 MoE layers.
PerfModelShape moe_shape() {
  PerfModelShape s;
  s.dense_weight_bytes = 2.0e9;
  s.num_experts = 256;
  s.experts_per_token = 8;
  s.local_experts = 256;
  s.moe_layers = 58;
  s.expert_bytes = 44040192.0 / 8;
  s.active_params = 36.6e9 / 8;
  s.layers = 61;
  s.hidden = 7168;
  s.tp = 8;
  s.attention = {AttentionGroup{61, 16, 576, 512, 576, 0}};
  return s;
}

PerfHardware hardware() {
  PerfHardware hw;
  hw.expected = HardwareRates{3.84e12, 643e12, 0.5e-3, 315e9, 10e-6};
  hw.slow = HardwareRates{2.88e12, 495e12, 2e-3, 270e9, 25e-6};
  hw.fast = HardwareRates{4.32e12, 792e12, 0.1e-3, 382e9, 5e-6};
  return hw;
}

void BM_DecodeStepDense(benchmark::State& state) {
  const PerfModelShape s = dense_shape();
  const PerfHardware hw = hardware();
  std::uint64_t b = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(estimate_decode(s, hw, DecodeBatch{b, 8192}).tokens_per_s.expected);
    b = b % 256 + 1;
  }
}
BENCHMARK(BM_DecodeStepDense);

void BM_DecodeStepMoe(benchmark::State& state) {
  const PerfModelShape s = moe_shape();
  const PerfHardware hw = hardware();
  std::uint64_t b = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(estimate_decode(s, hw, DecodeBatch{b, 8192}).tokens_per_s.expected);
    b = b % 256 + 1;
  }
}
BENCHMARK(BM_DecodeStepMoe);

// One rate set only: what the knee scan evaluates per batch.
void BM_DecodeStepSingleRates(benchmark::State& state) {
  const PerfModelShape s = dense_shape();
  const HardwareRates r = hardware().expected;
  std::uint64_t b = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(decode_step(s, r, b, 8192).memory_s);
    b = b % 256 + 1;
  }
}
BENCHMARK(BM_DecodeStepSingleRates);

void BM_ThroughputCurve(benchmark::State& state) {
  const PerfModelShape s = dense_shape();
  const PerfHardware hw = hardware();
  for (auto _ : state)
    benchmark::DoNotOptimize(throughput_vs_batch(s, hw, 8192, 256).knee_batch);
}
BENCHMARK(BM_ThroughputCurve);

}  // namespace
