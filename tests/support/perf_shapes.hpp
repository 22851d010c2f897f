// perf_shapes.hpp — the round-number step-model inputs the performance tests compute by hand.
#pragma once

#include "vramplan/perf/perf_model.hpp"

namespace vramplan::test {

// A Llama-3.1-8B-like dense model with round numbers: 15 GB streamed per step, 7.5e9 active
// params, 32 layers x 32 query heads of 128, 8 KV heads -> 8 x (128 + 128) x 2 B = 4096 B per
// token per layer (131072 B per token over 32 layers, docs/memory-model.md §8.1).
inline perf::PerfModelShape round_dense_shape() {
  perf::PerfModelShape s;
  s.dense_weight_bytes = 15e9;
  s.active_params = 7.5e9;
  s.layers = 32;
  s.hidden = 4096;
  s.attention = {perf::AttentionGroup{32, 32, 128, 128, 4096, 0}};
  return s;
}

// Exact rates, no range: 4 TB/s, 1 PFLOP/s, 0.1 ms per step.
inline perf::PerfHardware exact_hardware(double bandwidth = 4e12) {
  perf::PerfHardware hw;
  hw.expected = perf::HardwareRates{bandwidth, 1e15, 1e-4, 0, 0};
  hw.basis = "test rates";
  return hw;
}

// The lockstep-step tests' shape base: two layers of width 1000 (bf16 exchanges), one full-attention
// group of 8 heads of 64 + 64 with 1,000 KV bytes a token a layer; weights and params left to the test.
inline perf::PerfModelShape round_two_layer_shape() {
  perf::PerfModelShape s;
  s.layers = 2;
  s.hidden = 1000;
  s.activation_bytes = 2;
  perf::AttentionGroup g;
  g.layers = 2;
  g.kv_bytes_per_token = 1000;
  g.q_heads = 8;
  g.qk_dim = 64;
  g.v_dim = 64;
  s.attention.push_back(g);
  return s;
}

// The lockstep-step tests' rates: 1 TB/s, 1 PFLOP/s, no memory / math overlap, 100 GB/s links with
// 10 us a collective, 0.5 ms a step.
inline perf::HardwareRates round_lockstep_rates() {
  perf::HardwareRates r;
  r.bandwidth_bytes_per_s = 1e12;
  r.tensor_flops_per_s = 1e15;
  r.memory_compute_overlap = 0;
  r.link_bytes_per_s = 1e11;
  r.link_latency_s = 1e-5;
  r.step_overhead_s = 5e-4;
  return r;
}

}  // namespace vramplan::test
