// perf/host_offload: llama.cpp partial offload, hand-computed.
#include <gtest/gtest.h>

#include <vector>

#include "vramplan/core/error.hpp"
#include "vramplan/perf/host_offload.hpp"

namespace vramplan::perf {
namespace {

TensorInfo offload_tensor(TensorRole role, std::optional<int> layer, std::uint64_t elements) {
  TensorInfo t;
  t.role = role;
  t.layer = layer;
  t.shape = {elements};
  return t;
}

// Two layers of 100 B each, an output matrix of 50 B, an output norm of 10 B and a token
// embedding of 1000 B (gathered: not streamed).
ModelSpec offload_toy_model() {
  ModelSpec m;
  m.id = "toy";
  m.tensors = {offload_tensor(TensorRole::TokenEmbedding, std::nullopt, 1000), offload_tensor(TensorRole::AttnQ, 0, 100),
               offload_tensor(TensorRole::AttnQ, 1, 100), offload_tensor(TensorRole::OutputNorm, std::nullopt, 10),
               offload_tensor(TensorRole::Output, std::nullopt, 50)};
  return m;
}

TEST(HostOffload, GpuShareCountsTheOffloadedLayersAndTheOutput) {
  const ModelSpec m = offload_toy_model();
  const std::vector<std::uint64_t> bytes = {1000, 100, 100, 10, 50};
  // Streamed: 100 + 100 + 10 + 50 = 260 B (the embedding is gathered).
  EXPECT_DOUBLE_EQ(streamed_gpu_share(m, bytes, 0, true), 1.0);
  // -ngl 1: layer 1 on the GPU, layer 0 and the output on the host: 100 / 260.
  EXPECT_DOUBLE_EQ(streamed_gpu_share(m, bytes, 1, false), 100.0 / 260);
  // -ngl 0: nothing streamed from the GPU.
  EXPECT_DOUBLE_EQ(streamed_gpu_share(m, bytes, 2, false), 0.0);
}

TEST(HostOffload, DecodeBandwidthIsTheHarmonicMixture) {
  PerfHardware gpu;
  gpu.expected.bandwidth_bytes_per_s = 1000e9;
  gpu.expected.tensor_flops_per_s = 100e12;
  gpu.slow = gpu.expected;
  gpu.slow->bandwidth_bytes_per_s = 600e9;
  const HostOffload off{0.5, 60e9, 31.5e9};
  const PerfHardware d = decode_with_host_offload(gpu, off);
  // 1 / (0.5 / 1000 + 0.5 / 60) GB/s = 1 / (0.0005 + 0.0083333) = 113.207 GB/s.
  EXPECT_NEAR(d.expected.bandwidth_bytes_per_s / 1e9, 113.207, 0.001);
  // Slow end: 1 / (0.5 / 600 + 0.5 / 60) = 1 / (0.00083333 + 0.0083333) = 109.091 GB/s.
  EXPECT_NEAR(d.slow->bandwidth_bytes_per_s / 1e9, 109.091, 0.001);
  EXPECT_EQ(d.expected.tensor_flops_per_s, 100e12);  // compute stays the GPU's
  // Prefill: the PCIe link instead, 1 / (0.5 / 1000 + 0.5 / 31.5) = 1 / (0.0005 + 0.015873) = 61.076 GB/s.
  EXPECT_NEAR(prefill_with_host_offload(gpu, off).expected.bandwidth_bytes_per_s / 1e9, 61.076, 0.001);
  // Everything on the GPU: unchanged.
  EXPECT_EQ(decode_with_host_offload(gpu, {1.0, 60e9, 31.5e9}).expected.bandwidth_bytes_per_s, 1000e9);
}

}  // namespace
}  // namespace vramplan::perf
