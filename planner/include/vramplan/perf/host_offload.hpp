// vramplan/perf/host_offload.hpp — llama.cpp partial offload (-ngl below the layer count): the
// layers left on the CPU stream their weights from host memory. docs/performance.md §5, "llama.cpp".
//
// Decode: every weight is read once per token, from where it lives, so the step's memory time is
//   gpu_bytes / BW_gpu + host_bytes / BW_host  =  bytes / BW_eff,  BW_eff = 1 / (s / BW_gpu + (1 - s) / BW_host)
// with s the share of the streamed bytes in GPU memory (the KV of a layer sits with the layer, and
// is counted at the same share).
// Prompt processing: llama.cpp runs a micro-batch of >= 32 tokens on the GPU even for CPU layers,
// copying their weights over PCIe once per micro-batch (ggml/src/ggml-cuda/ggml-cuda.cu
// ggml_backend_cuda_device_offload_op, min_batch_size 32; llama.cpp PR #6083), so the host link
// takes the place of host memory: BW_eff = 1 / (s / BW_gpu + (1 - s) / BW_pcie).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "vramplan/model/spec.hpp"
#include "vramplan/perf/perf_model.hpp"

namespace vramplan::perf {

//! Host memory bandwidth when --host-bandwidth is not given, GB/s (10^9 B/s): dual-channel
//! DDR5-4800, 2 channels x 8 B x 4800 MT/s = 76.8 GB/s peak (JEDEC JESD79-5), x 0.8 streaming
//! efficiency (data/perf_defaults.json bandwidth_efficiency, expected) = 61.4, rounded down to 60.
//! A desktop figure: servers (8-12 channels) are several times faster, laptops with DDR4 slower.
inline constexpr double kDefaultHostBandwidthGBps = 60;

//! Where a llama.cpp model's streamed bytes live.
struct HostOffload {
  double gpu_share = 1;                   //!< s: share of the streamed weight bytes in GPU memory
  double host_bandwidth_bytes_per_s = 0;  //!< achieved host memory read bandwidth
  double pcie_bytes_per_s = 0;            //!< host -> GPU link, one direction
};

//! s for llama.cpp's placement: layers [first_gpu_layer, n_layer) on the GPU, the output matrix
//! on the GPU when `output_on_gpu`; the token embedding is gathered (a few rows) and not counted,
//! as in shape_from_model. `tensor_bytes[i]` are the bytes of `spec.tensors[i]`.
double streamed_gpu_share(const ModelSpec& spec, std::span<const std::uint64_t> tensor_bytes,
                          std::uint64_t first_gpu_layer, bool output_on_gpu);

//! The GPU's rates with the bandwidth replaced by the decode mixture above (expected, slow and
//! fast each from their own GPU bandwidth; the host figure is an achieved one and has no range).
PerfHardware decode_with_host_offload(const PerfHardware& gpu, const HostOffload& offload);
//! The same for prompt processing: the CPU layers' weights cross the PCIe link.
PerfHardware prefill_with_host_offload(const PerfHardware& gpu, const HostOffload& offload);

}  // namespace vramplan::perf
