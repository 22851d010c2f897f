// llama.cpp partial offload; the formulas and their sources are in host_offload.hpp.
#include "vramplan/perf/host_offload.hpp"

#include <cstdio>

#include "vramplan/core/error.hpp"

namespace vramplan::perf {
namespace {

// 1 / (s / a + (1 - s) / b): bytes split s : 1 - s over two memories read one after the other.
double offload_mixed_bandwidth(double s, double gpu, double other) {
  if (s >= 1) return gpu;
  return 1 / (s / gpu + (1 - s) / other);
}

PerfHardware with_offload_memory(const PerfHardware& gpu, double s, double other, const char* what) {
  if (!(other > 0)) throw_usage(std::string("performance model: partial offload needs a positive ") + what);
  PerfHardware hw = gpu;
  hw.expected.bandwidth_bytes_per_s = offload_mixed_bandwidth(s, gpu.expected.bandwidth_bytes_per_s, other);
  if (hw.slow) hw.slow->bandwidth_bytes_per_s = offload_mixed_bandwidth(s, gpu.slow->bandwidth_bytes_per_s, other);
  if (hw.fast) hw.fast->bandwidth_bytes_per_s = offload_mixed_bandwidth(s, gpu.fast->bandwidth_bytes_per_s, other);
  char buf[160];
  std::snprintf(buf, sizeof buf, "; partial offload: %.1f %% of the streamed bytes on the GPU, the rest at %s %.1f GB/s",
                100 * s, what, other / 1e9);
  hw.basis += buf;
  return hw;
}

}  // namespace

double streamed_gpu_share(const ModelSpec& spec, std::span<const std::uint64_t> tensor_bytes,
                          std::uint64_t first_gpu_layer, bool output_on_gpu) {
  if (tensor_bytes.size() != spec.tensors.size())
    throw_usage("performance model: tensor sizes do not match the inventory of " + spec.id);
  bool has_output = false;
  for (const TensorInfo& t : spec.tensors) has_output = has_output || t.role == TensorRole::Output;
  const bool embedding_is_head = spec.arch.tied_embeddings && !has_output;
  double on_gpu = 0, total = 0;
  for (std::size_t i = 0; i < spec.tensors.size(); ++i) {
    const TensorInfo& t = spec.tensors[i];
    const double b = static_cast<double>(tensor_bytes[i]);
    bool gpu = false;
    if (t.layer) {
      gpu = static_cast<std::uint64_t>(*t.layer) >= first_gpu_layer;
    } else if (t.role == TensorRole::Output || (t.role == TensorRole::TokenEmbedding && embedding_is_head)) {
      gpu = output_on_gpu;  // the output layer (or the tied embedding doubling as it)
    } else if (t.role == TensorRole::TokenEmbedding || t.role == TensorRole::PositionEmbedding) {
      continue;  // gathered, not streamed
    } else {
      gpu = output_on_gpu;  // output norm and other non-layer tensors go with the output layer
    }
    total += b;
    if (gpu) on_gpu += b;
  }
  return total > 0 ? on_gpu / total : 1;
}

PerfHardware decode_with_host_offload(const PerfHardware& gpu, const HostOffload& o) {
  return with_offload_memory(gpu, o.gpu_share, o.host_bandwidth_bytes_per_s, "host memory");
}

PerfHardware prefill_with_host_offload(const PerfHardware& gpu, const HostOffload& o) {
  return with_offload_memory(gpu, o.gpu_share, o.pcie_bytes_per_s, "host->GPU link");
}

}  // namespace vramplan::perf
