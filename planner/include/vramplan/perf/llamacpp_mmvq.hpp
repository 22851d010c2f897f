// vramplan/perf/llamacpp_mmvq.hpp — the rate llama.cpp's one-token mat-vec kernel (MMVQ) can stream
// block-quantized weights at on an NVIDIA GPU: concurrency-bound on fast memory. docs/performance.md
// §5, "llama.cpp".
//
// For a decode batch of 1, ggml_cuda_mul_mat sends every block-quantized weight (Q4_0, Q8_0, Q4_K,
// ...) to mul_mat_vec_q (ggml/src/ggml-cuda/mmvq.cu; ggml_cuda_should_use_mmvq: quantized type and
// ne11 <= MMVQ_MAX_BATCH_SIZE = 8). On NVIDIA its launch (calc_launch_params with the GENERIC
// table: calc_nwarps(1) = 4, calc_rows_per_block(1) = 1) gives every output row its own 128-thread
// block, and each thread walks only vdr x 32 / qi weight blocks per iteration (Q4_0: 2 iterations
// for a 4096-wide row). A block therefore lives a few memory round trips, and the bytes the GPU has
// in flight are (SMs) x (resident blocks per SM) x (bytes per block per round trip): a rate that
// grows with SM count x SM clock, not with the memory's bandwidth. Cards whose memory is fast for
// their SM count (HBM: A100, H100) stream below the bandwidth the model otherwise assumes; GDDR
// cards do not reach this cap (the plain bandwidth term binds).
//
//   cap = k x SM cycles per second,   SM cycles per second = fp32 dense FLOP/s / (2 x fp32 lanes per SM)
//
// fp32 lanes per SM by compute capability: CUDA C++ Programming Guide, "Arithmetic Instructions"
// (throughput of 32-bit floating-point add, multiply, multiply-add per clock per SM): 64 on 6.0,
// 7.x and 8.0, 128 on 5.x, 6.1, 6.2, 8.6, 8.7, 8.9, 9.0, 10.x and 12.x. k (bytes per SM cycle) is
// FITTED (data/perf_defaults.json llamacpp_mmvq_bytes_per_sm_cycle, with its fit set and held-out set).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/model/spec.hpp"
#include "vramplan/perf/perf_defaults.hpp"
#include "vramplan/perf/perf_model.hpp"

namespace vramplan::perf {

//! FP32 lanes per SM of an NVIDIA compute capability (see the file comment); nullopt when not
//! listed there (then no cap is applied).
std::optional<int> fp32_lanes_per_sm(int major, int minor);

//! SM cycles per second of the whole card (SM count x boost clock), from its dense fp32 rate and
//! compute capability; nullopt for non-NVIDIA cards or when either figure is missing.
std::optional<double> sm_cycles_per_s(const GpuSpec& gpu);

//! Share of the streamed weight bytes (not the gathered token embedding) held in block-quantized
//! tensors: stored at fewer than 2 bytes per element (GGUF's F16 / BF16 / F32 tensors have 2 or 4).
double block_quantized_share(const ModelSpec& spec, std::span<const std::uint64_t> tensor_bytes);

//! block_quantized_share for an engine whose decode rate depends on it (llama.cpp, the one
//! decode_hardware caps); 0 for the others, which are spared the walk over every tensor.
double decode_quantized_share(std::string_view engine, const ModelSpec& spec,
                              std::span<const std::uint64_t> tensor_bytes);

//! The decode rates with the weight stream limited by the MMVQ cap: the quantized share q reads at
//! min(bandwidth, k x sm_hz), the rest at the bandwidth; each end of the range with its own k.
PerfHardware with_llamacpp_mmvq_cap(const PerfHardware& hw, double sm_hz, double quantized_share,
                                    const DefaultRange& bytes_per_sm_cycle);

//! The rates an engine's decode steps run at on `gpu`: for llama.cpp with block-quantized weights
//! (quantized_share > 0) on a card with SM figures, `hw` under the MMVQ cap; otherwise `hw`. Prompt
//! steps keep `hw` (MMQ / cuBLAS are compute-bound). plan, check --batch-range, sweep and the
//! simulator all take their decode rates from here.
PerfHardware decode_hardware(const PerfHardware& hw, std::string_view engine, const GpuSpec& gpu,
                             double quantized_share, const PerfDefaults& defaults);

}  // namespace vramplan::perf
