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

}  // namespace vramplan::test
