// llama.cpp's MMVQ concurrency cap; the mechanism and sources are in llamacpp_mmvq.hpp.
#include "vramplan/perf/llamacpp_mmvq.hpp"

#include <algorithm>
#include <cstdio>

#include "vramplan/core/error.hpp"

namespace vramplan::perf {
namespace {

// The engine whose decode runs llama.cpp's MMVQ kernels (the cap and the share it needs).
constexpr std::string_view kMmvqEngine = "llamacpp";

// 1 / (q / capped + (1 - q) / bw): the quantized share of the weights streams at the capped rate.
double mixed_weight_bandwidth(double q, double bw, double cap) {
  const double capped = std::min(bw, cap);
  return 1 / (q / capped + (1 - q) / bw);
}

}  // namespace

std::optional<int> fp32_lanes_per_sm(int major, int minor) {
  switch (major) {
    case 5: return 128;
    case 6: return minor == 0 ? 64 : 128;
    case 7: return 64;
    case 8: return minor == 0 ? 64 : 128;
    case 9: case 10: case 11: case 12: return 128;
    default: return std::nullopt;
  }
}

std::optional<double> sm_cycles_per_s(const GpuSpec& gpu) {
  if (gpu.vendor != "nvidia" || !gpu.compute_capability || !gpu.tflops.fp32) return std::nullopt;
  const auto lanes = fp32_lanes_per_sm(gpu.compute_capability->major, gpu.compute_capability->minor);
  if (!lanes) return std::nullopt;
  return *gpu.tflops.fp32 * 1e12 / (2.0 * *lanes);  // an FMA is 2 FLOPs per lane per cycle
}

double block_quantized_share(const ModelSpec& spec, std::span<const std::uint64_t> tensor_bytes) {
  if (tensor_bytes.size() != spec.tensors.size())
    throw_usage("performance model: tensor sizes do not match the inventory of " + spec.id);
  bool has_output = false;
  for (const TensorInfo& t : spec.tensors) has_output = has_output || t.role == TensorRole::Output;
  const bool embedding_is_head = spec.arch.tied_embeddings && !has_output;
  double quantized = 0, total = 0;
  for (std::size_t i = 0; i < spec.tensors.size(); ++i) {
    const TensorInfo& t = spec.tensors[i];
    const bool gathered = (t.role == TensorRole::TokenEmbedding && !embedding_is_head) ||
                          t.role == TensorRole::PositionEmbedding;
    if (gathered) continue;
    const double b = static_cast<double>(tensor_bytes[i]);
    total += b;
    if (b < 2.0 * static_cast<double>(t.elements())) quantized += b;
  }
  return total > 0 ? quantized / total : 0;
}

double decode_quantized_share(std::string_view engine, const ModelSpec& spec,
                              std::span<const std::uint64_t> tensor_bytes) {
  return engine == kMmvqEngine ? block_quantized_share(spec, tensor_bytes) : 0.0;
}

PerfHardware with_llamacpp_mmvq_cap(const PerfHardware& hw, double sm_hz, double q, const DefaultRange& k) {
  PerfHardware out = hw;
  const auto cap = [&](HardwareRates& r, double bytes_per_cycle) {
    r.weight_bandwidth_bytes_per_s = mixed_weight_bandwidth(q, r.bandwidth_bytes_per_s, bytes_per_cycle * sm_hz);
  };
  cap(out.expected, k.expected);
  if (out.slow) cap(*out.slow, k.min);  // the slow end: the lower rate per SM cycle
  if (out.fast) cap(*out.fast, k.max);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "; llama.cpp MMVQ: %.1f %% of the weight bytes block-quantized, streamed at most at %.3g "
                "[%.3g-%.3g] B per SM cycle x %.4g G SM cycles/s = %.4g GB/s (data/perf_defaults.json "
                "llamacpp_mmvq_bytes_per_sm_cycle, fitted)",
                100 * q, k.expected, k.min, k.max, sm_hz / 1e9, k.expected * sm_hz / 1e9);
  out.basis += buf;
  return out;
}

PerfHardware decode_hardware(const PerfHardware& hw, std::string_view engine, const GpuSpec& gpu,
                             double quantized_share, const PerfDefaults& defaults) {
  if (engine != kMmvqEngine || quantized_share <= 0 || !defaults.llamacpp_mmvq_bytes_per_sm_cycle) return hw;
  const std::optional<double> sm_hz = sm_cycles_per_s(gpu);
  if (!sm_hz) return hw;
  return with_llamacpp_mmvq_cap(hw, *sm_hz, quantized_share, *defaults.llamacpp_mmvq_bytes_per_sm_cycle);
}

}  // namespace vramplan::perf
