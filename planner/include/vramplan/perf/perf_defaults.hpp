// vramplan/perf/perf_defaults.hpp — the documented default efficiencies (data/perf_defaults.json)
// the performance model uses for every figure a calibration does not measure.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace vramplan::perf {

//! min <= expected <= max, in the unit of the field that holds it.
struct DefaultRange {
  double min = 0, expected = 0, max = 0;
};

//! The kernels one decoder layer launches on the critical path of an engine's decode step (one
//! CUDA graph), apart from its two tensor-parallel all-reduces, as counted in the engine's source
//! for one architecture and checkpoint format (file: kernel_counts.architectures; docs/performance.md
//! §1, "kernels counted"). Kernels on a second CUDA stream count only where they are the longer path.
//! `launches` counts every kernel of the same parts on every stream, the all-reduces included (at the
//! tensor parallelism the census read): what a forward outside the CUDA graphs launches from the host.
struct LayerKernelCounts {
  std::string weights;  //!< the checkpoint format counted: "bf16", "fp8-block" or "mxfp4"
  //! The compute capability (major) the count was read for, where the engine picks other kernels
  //! on other generations (gpt-oss: trtllm-gen attention and MoE on 10, fa3 and triton_kernels on
  //! 9): the count applies only there. Unset: it applies on every GPU of the vendor.
  std::optional<int> capability_major;
  //! Attention part (input norm to output projection) by layer kind (layer_attention_name: "full",
  //! "mla", "recurrent", ...); a layer kind missing here leaves the architecture uncounted.
  std::map<std::string, double, std::less<>> attention;
  double moe_mlp = 0;    //!< MLP part of an MoE layer (post-attention norm to the expert output)
  double dense_mlp = 0;  //!< MLP part of a dense layer
  //! Latency-bound all-reduces per layer besides the two of every layer (MiniMax-M2's q/k norm
  //! over the whole projection sums 2 values a token over the TP group).
  double extra_allreduces = 0;
  struct Launches {
    std::map<std::string, double, std::less<>> attention;
    double moe_mlp = 0, dense_mlp = 0;
  } launches;
};

//! An engine's counted kernels: costs for one GPU vendor's kernel stack, and the architectures whose
//! kernels were counted. On that vendor a decode step of a counted architecture costs step + kernels
//! x per_kernel, and a forward with prompt tokens step + launches x per_prompt_launch + block-FP8
//! GEMMs x prompt_block_fp8, instead of the per-layer, per-MoE-layer and per-FP8-GEMM terms (which
//! keep serving every other architecture and vendor).
//! The checkpoint format kernel counts are keyed by (LayerKernelCounts::weights): "fp8-block" when
//! any tensor is stored as 2-D block-scaled FP8, "mxfp4" for gpt-oss's MXFP4 experts, "bf16" for
//! 16-bit float weights (bf16 and fp16 run the same kernels), else "" (no count applies: other
//! quantized formats launch other kernels).
std::string_view kernel_count_format(const std::vector<bool>& block_scaled_fp8, std::string_view weights_precision);

struct KernelCountDefaults {
  std::string vendor;       //!< data/gpus.json vendor the counts were read for ("nvidia")
  DefaultRange per_kernel_s;  //!< seconds per counted kernel of a decode step (file: kernel_us)
  //! The same for the GPUs of one compute capability major, where it was fitted apart (file:
  //! kernel_us_by_capability, keyed "9"); per_kernel_s serves the others.
  std::map<int, DefaultRange> per_kernel_s_by_capability;
  //! per_kernel_s_by_capability's entry for `capability_major`, else per_kernel_s.
  const DefaultRange& per_kernel_for(std::optional<int> capability_major) const;
  //! Seconds per kernel a forward with prompt tokens launches (file: prompt_launch_us) and extra
  //! seconds per block-scaled FP8 GEMM launch in it (file: prompt_block_fp8_gemm_us).
  DefaultRange per_prompt_launch_s, prompt_block_fp8_s;
  bool fitted = false;
  std::map<std::string, LayerKernelCounts, std::less<>> architectures;  //!< by HF architectures[0]
};

//! Fixed time of one forward step on one GPU, outside GEMMs, attention and all-reduces: kernel
//! launches, scheduling, input preparation, sampling, host synchronisation. Modelled as
//! `per_step + layers_on_the_gpu x per_layer` (docs/performance.md §1, "step overhead").
struct StepOverheadDefaults {
  DefaultRange per_step_s;   //!< seconds per forward (file: step_ms)
  DefaultRange per_layer_s;  //!< seconds per decoder layer on the GPU per forward (file: layer_us)
  bool fitted = false;       //!< least-squares values (file: "fitted": true), else a judgement
  //! Extra seconds per MoE layer in a decode-only forward (file: moe_layer_us) and in a forward
  //! with prompt tokens (file: prompt_moe_layer_us); absent = 0.
  DefaultRange per_moe_layer_s{};
  DefaultRange prompt_per_moe_layer_s{};
  bool moe_fitted = false;  //!< the MoE terms are least-squares values ("fitted": true in them)
  //! Extra seconds per GEMM launch on 2-D block-scaled FP8 weights, by GPU vendor, in a decode-only
  //! forward (file: block_fp8_gemm_us {"amd": range}) and in a forward with prompt tokens (file:
  //! prompt_block_fp8_gemm_us); a vendor absent = 0.
  std::map<std::string, DefaultRange, std::less<>> block_fp8_gemm_s{};
  std::map<std::string, DefaultRange, std::less<>> prompt_block_fp8_gemm_s{};
  bool block_fp8_fitted = false;
  std::optional<KernelCountDefaults> kernel_counts;  //!< file: kernel_counts; absent = none counted

  //! The counted kernels of `architecture` on a GPU of `vendor` and compute capability
  //! `capability_major` (0: unknown), for weights stored as the plan resolved them (per-tensor
  //! block-scaled FP8 flags and the weights precision, kernel_count_format), or nullptr where this
  //! entry has none (another vendor, capability, architecture or format).
  const LayerKernelCounts* counted_layers(std::string_view vendor, int capability_major, std::string_view architecture,
                                          const std::vector<bool>& block_scaled_fp8,
                                          std::string_view weights_precision) const;
};

struct PerfDefaults {
  std::string source;              //!< the file read
  DefaultRange bandwidth_efficiency;  //!< fraction of datasheet memory bandwidth
  DefaultRange tensor_efficiency;     //!< fraction of dense datasheet TFLOPS
  //! Fraction of a card's measured matmul ceiling (GpuSpec::mamf_tflops) a forward's GEMMs
  //! reach, used instead of tensor_efficiency where the card has one: derived from it (its range
  //! over its max, 0.625 / 0.8125 / 1), not read.
  DefaultRange tensor_share_of_mamf;
  //! Fraction of dense datasheet TFLOPS a training step achieves on the FLOPs it executes
  //! (`vramplan train` time; published utilisation figures, not fitted).
  DefaultRange training_efficiency;
  //! Per engine ("vllm", "trtllm", ...); "default" serves every engine without its own entry.
  std::map<std::string, StepOverheadDefaults, std::less<>> step_overhead;
  DefaultRange link_efficiency;       //!< fraction of one-direction link bandwidth
  DefaultRange link_latency_s;        //!< seconds per all-reduce (file: microseconds)
  //! Between hosts (docs/performance.md "Across hosts"): the share of a NIC's line rate a
  //! collective achieves as bus bandwidth, the fixed time of one collective between hosts
  //! (file: microseconds), and the NIC rate per GPU (Gb/s) assumed for a card whose catalogue
  //! entry sources no reference platform (GpuSpec::Interconnect::network_gbit).
  DefaultRange network_efficiency;
  DefaultRange network_latency_s;
  DefaultRange network_gbit_default;
  //! Share of the shorter of a kernel's memory and math times hidden behind the longer (0..1;
  //! the fitted expected value may be 0, so this range may include zero).
  DefaultRange memory_compute_overlap;
  std::map<int, double> pcie_gbps_per_direction;  //!< PCIe generation -> GB/s of a x16 link
  //! Bytes per SM cycle llama.cpp's one-token quantized mat-vec kernel (MMVQ) streams at most
  //! (perf/llamacpp_mmvq.hpp; file: llamacpp_mmvq_bytes_per_sm_cycle, fitted); absent = no cap.
  std::optional<DefaultRange> llamacpp_mmvq_bytes_per_sm_cycle;

  //! The engine's entry, else "default" (an empty name also gives "default").
  const StepOverheadDefaults& step_overhead_for(std::string_view engine) const;
};

//! The step_overhead entry a planned configuration runs with: the engine's name, except
//!  - vLLM scheduling serially ("vllm-sync": engine_view async_scheduling false; the engine
//!    resolves it from the release, --[no-]async-scheduling and PP, memory/vllm_async_scheduling.hpp).
//!    With async scheduling vllm/v1/engine/core.py EngineCore.step_with_batch_queue schedules step
//!    N+1 and processes step N's output while the GPU runs step N (docs/performance.md §1);
//!  - llama.cpp without CUDA graphs ("llamacpp-nograph": engine_view cuda_graphs false,
//!    --llamacpp-cuda-graphs off), whose decode step launches every kernel from the host (§5).
//! A view without the figure (a vLLM encoder on the pooling runner: no decode steps) keeps the
//! engine's entry. The one choice of entry: plan, check, sweep and simulate all call it.
std::string step_overhead_entry(std::string_view engine, const nlohmann::json& engine_view);

//! Reads and validates the file: every range positive and ordered, fractions <= 1. Errors are
//! Error(InputFile) naming the file and JSON pointer, or Error(Io).
PerfDefaults load_perf_defaults(const std::filesystem::path& file);

}  // namespace vramplan::perf
