#include "vramplan/sim/serving_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <span>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/memory/encoder_memory.hpp"
#include "vramplan/memory/sglang_dp_attention.hpp"
#include "vramplan/memory/vllm_data_parallel.hpp"
#include "vramplan/perf/hardware_rates.hpp"
#include "vramplan/perf/host_offload.hpp"
#include "vramplan/perf/llamacpp_mmvq.hpp"
#include "vramplan/perf/model_shape.hpp"
#include "vramplan/perf/perf_defaults.hpp"
#include "vramplan/sim/scheduler_rules.hpp"

namespace vramplan::sim {

namespace {

using memory::MemoryPlan;
using memory::PlanBasis;

// The tensor-core rate a step runs at: fp8 GEMMs when the linear weights are fp8 and the card has
// an fp8 rate (vLLM / SGLang / TensorRT-LLM run W8A8 on Hopper and newer), else the activation dtype.
std::string tensor_dtype(const MemoryPlan& plan, const GpuSpec& gpu, const calib::Calibration* cal) {
  // llama.cpp's CUDA backend multiplies GGUF block-quantized weights in fp16 (cuBLAS on
  // dequantized weights for large batches; its MMQ kernels for small ones are not faster in peak):
  // ggml/src/ggml-cuda/ggml-cuda.cu ggml_cuda_mul_mat.
  if (plan.engine == "llamacpp") return "fp16";
  const bool fp8_weights = plan.weights_precision.rfind("fp8", 0) == 0;
  const bool fp8_rate = gpu.tflops.fp8 || (cal && cal->figures.achieved_tflops.count("fp8_e4m3"));
  return fp8_weights && fp8_rate ? "fp8" : plan.compute_precision;
}

// The performance side of a plan: the model's per-GPU shape from the same per-tensor bytes the
// engine resolved and the plan's KV bytes per token, the GPU's rates from the calibration or the
// datasheet. Everything it cannot know is `unavailable`, with the reason.
// A pooling model has no decode and no TTFT: its figure is inputs per second, compute-bound
// (every token of every input goes through every layer once): the tensor rate of the GPU (the
// same calibration / datasheet x efficiency basis as generation) over the FLOPs of one input of
// `length` tokens (encoder_flops_per_input). Recorded in the plan (engine_view, a note).
PlanPerformance pooling_performance(memory::PlanOutcome& out, const GpuSpec& gpu, const calib::Calibration* cal,
                                    const DataRoot& root, std::uint64_t length) {
  PlanPerformance perf;
  MemoryPlan& p = out.plan;
  perf.unavailable = "decode / TTFT do not apply to a pooling model (" + out.model.arch.architecture +
                     "); its throughput in inputs/s is in the plan's notes";
  try {
    perf.tensor_dtype = tensor_dtype(p, gpu, cal);
    perf::PerfDefaults defaults = perf::load_perf_defaults(root.data_file("perf_defaults.json"));
    defaults.source = "data/perf_defaults.json";
    const perf::PerfHardware hw =
        perf::perf_hardware_from(gpu, cal, perf.tensor_dtype, defaults, perf::step_overhead_entry(p.engine, p.engine_view));
    const double flops = memory::encoder_flops_per_input(out.model, length);
    const auto rate = [&](const perf::HardwareRates& h) { return h.tensor_flops_per_s / flops; };
    const double expected = rate(hw.expected);
    const double low = hw.slow ? rate(*hw.slow) : expected, high = hw.fast ? rate(*hw.fast) : expected;
    p.engine_view["inputs_per_s"] = {{"low", low}, {"expected", expected}, {"high", high}, {"input_tokens", length},
                                     {"flops_per_input", flops}};
    // Whole inputs/s above 10; below (a long max_model_len, a large embedder) three significant digits.
    const char* f = low >= 10 ? "%.0f" : "%.3g";
    char line[200];
    std::snprintf(line, sizeof line, "throughput (compute-bound): %s [%s-%s] inputs/s of %llu tokens = %s tensor rate / %.3g FLOPs per input",
                  format_number(f, expected).c_str(), format_number(f, low).c_str(), format_number(f, high).c_str(),
                  static_cast<unsigned long long>(length), perf.tensor_dtype.c_str(), flops);
    p.notes.push_back(std::string(line) + " (" + hw.basis + ")");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Usage) throw;
    p.notes.push_back("throughput unknown: " + std::string(e.what()));
  }
  return perf;
}

// llama.cpp with `host_layers` layers and the output on the CPU: decode reads them at the host
// bandwidth (--host-bandwidth, default perf::kDefaultHostBandwidthGBps), prompt micro-batches copy
// them to the GPU over its PCIe link (perf/host_offload.hpp).
perf::ServingEstimate partial_offload_serving(const memory::PlanRequest& r, const ModelSpec& model,
                                              std::span<const std::uint64_t> tensor_bytes, std::uint64_t host_layers,
                                              const GpuSpec& gpu, const perf::PerfDefaults& defaults,
                                              const perf::PerfModelShape& shape, const perf::PerfHardware& hw,
                                              const perf::ServingQuery& query) {
  perf::HostOffload off;
  off.gpu_share = perf::streamed_gpu_share(model, tensor_bytes, host_layers, false);
  const auto hb = memory::arg_string(r.args, "host-bandwidth");
  off.host_bandwidth_bytes_per_s = 1e9 * (hb ? parse_gbps(*hb, "--host-bandwidth") : perf::kDefaultHostBandwidthGBps);
  const auto pcie = gpu.interconnect.pcie_gen ? defaults.pcie_gbps_per_direction.find(*gpu.interconnect.pcie_gen)
                                              : defaults.pcie_gbps_per_direction.end();
  if (pcie == defaults.pcie_gbps_per_direction.end())
    throw_usage("performance model: partial offload needs the GPU's PCIe generation, which the catalogue lacks");
  off.pcie_bytes_per_s = 1e9 * pcie->second;
  perf::ServingEstimate e = perf::estimate_serving(shape, perf::decode_with_host_offload(hw, off), query);
  e.ttft_s = perf::estimate_ttft(shape, perf::prefill_with_host_offload(hw, off), query.prompt_tokens, query.token_budget);
  char host[48];
  std::snprintf(host, sizeof host, "%g GB/s", off.host_bandwidth_bytes_per_s / 1e9);
  e.notes.push_back("partial offload: " + std::to_string(host_layers) + " layers and the output on the CPU, read at " + host +
                    (hb ? " (--host-bandwidth)" : " (default; --host-bandwidth)") +
                    "; prompt micro-batches copy them over PCIe; CPU compute and core count not modelled");
  return e;
}

// The MTP draft as its iterations run it: one more of the target's layers, the target's output
// head (both engines share it: SGLang deepseek_nextn.py, vLLM deepseek_mtp.py) and the MTP
// layer's eh_proj, whole in the model dtype (memory/mtp_draft.hpp).
perf::PerfModelShape mtp_draft_shape(const ModelSpec& model, const memory::ResolvedWeights& rw,
                                     const perf::PerfModelShape& target) {
  perf::OneLayerDraft d;
  const double tp = target.tp;
  for (std::size_t i = 0; i < model.tensors.size(); ++i) {
    const TensorInfo& t = model.tensors[i];
    const double params = static_cast<double>(t.elements());
    if (t.role == TensorRole::Output) {
      d.head_bytes += static_cast<double>(rw.tensor_bytes.at(i)) / tp;
      d.head_params += params / tp;
    } else if (t.role == TensorRole::Mtp && t.name.find("eh_proj") != std::string::npos) {
      d.input_proj_params += params;
      d.input_proj_bytes += params * static_cast<double>(rw.compute_bytes);
    }
  }
  return perf::one_layer_draft_shape(target, d);
}

PlanPerformance plan_performance(const memory::PlanRequest& r, const memory::PlanOutcome& out, const PlanBasis& basis,
                                 const DataRoot& root) {
  const GpuSpec& gpu = basis.gpu;
  const calib::Calibration* cal = basis.calibration ? &*basis.calibration : nullptr;
  PlanPerformance perf;
  const MemoryPlan& p = out.plan;
  perf.query.batch = r.workload.batch.value_or(1);
  perf.query.prompt_tokens = r.prompt_tokens.value_or(perf::kDefaultPromptTokens);
  perf.query.decode_context = r.workload.context.value_or(perf.query.prompt_tokens);
  if (p.engine_view.contains("max_num_batched_tokens"))
    perf.query.token_budget = p.engine_view.at("max_num_batched_tokens").get<std::uint64_t>();
  else if (p.engine == "llamacpp" && p.engine_view.contains("n_ubatch"))  // llama_context::decode splits a prompt into ubatches
    perf.query.token_budget = p.engine_view.at("n_ubatch").get<std::uint64_t>();
  if (p.fits && p.kv.capacity_tokens && perf.query.decode_context > 0)
    perf.query.max_batch = *p.kv.capacity_tokens / perf.query.decode_context;
  // llama.cpp: engine_view "offloaded_layers" is "k/n" with n = layers + the output layer; with
  // k < n the first layers (and the output) stay on the CPU and stream from host memory
  // (perf/host_offload.hpp). A CPU-only plan has no such entry and no rates: not modelled.
  std::optional<std::uint64_t> host_layers;
  if (p.engine == "llamacpp") {
    const auto it = p.engine_view.find("offloaded_layers");
    const std::string layers = it != p.engine_view.end() && it->is_string() ? it->get<std::string>() : "";
    const std::size_t slash = layers.find('/');
    if (slash == std::string::npos) {
      perf.unavailable = "performance model: a CPU-only llama.cpp run (no GPU rates) is not modelled";
      return perf;
    }
    const std::uint64_t k = std::stoull(layers.substr(0, slash)), n = std::stoull(layers.substr(slash + 1));
    if (k < n) host_layers = n - 1 - std::min(k, n - 1);
  }
  const memory::ResolvedWeights rw = memory::resolve_weights(out.model, basis.quant, basis.weights);
  const bool dp_attention = p.engine_view.value("enable_dp_attention", false);
  try {
    perf::PerfDefaults defaults = perf::load_perf_defaults(root.data_file("perf_defaults.json"));
    defaults.source = "data/perf_defaults.json";  // the basis names the catalogue file, not this install's path
    const std::string entry = perf::step_overhead_entry(p.engine, p.engine_view);
    const perf::ShapeOptions so = plan_shape_options(p, rw, out.tp, out.pp, gpu, out.model.arch, defaults, entry);
    const perf::PerfModelShape shape = perf::shape_from_model(out.model, rw.tensor_bytes, so);
    perf.tensor_dtype = tensor_dtype(p, gpu, cal);
    const perf::PerfHardware hw = perf::perf_hardware_from(gpu, cal, perf.tensor_dtype, defaults, entry);
    perf.calibrated = hw.calibrated;
    if (dp_attention || shape.vllm_dp.ranks > 1) {  // only the simulator's lockstep clock times it
      perf.shape = shape;
      perf.hardware = hw;
      if (speculative_plan(p)) perf.draft_shape = mtp_draft_shape(out.model, rw, shape);
      perf.unavailable = std::string(dp_attention ? memory::kDpAttentionUnmodelled : memory::kVllmDpLockstepUnmodelled);
      return perf;
    }
    if (host_layers) {
      perf.estimate = partial_offload_serving(r, out.model, rw.tensor_bytes, *host_layers, gpu, defaults, shape, hw, perf.query);
      // The simulator times every step with one rate set; here decode and prompt steps read the CPU
      // layers over different paths, so it gets no step model (it refuses with this reason).
      perf.unavailable = "llama.cpp partial offload: decode reads the CPU layers from host memory, prompts copy them over PCIe; "
                         "plan shows both, the serving simulator's one-rate step clock does not model it";
      return perf;
    }
    // llama.cpp on an NVIDIA card: decode steps stream the block-quantized weights through MMVQ,
    // whose rate is capped by SM count x clock (perf::decode_hardware); prompt micro-batches run
    // MMQ / cuBLAS (compute-bound), so the TTFT keeps the plain rates. The simulator's step clock
    // is the decode one: decode steps dominate a llama.cpp run.
    const perf::PerfHardware decode_hw = perf::decode_hardware(
        hw, p.engine, gpu, perf::decode_quantized_share(p.engine, out.model, rw.tensor_bytes), defaults);
    perf.estimate = perf::estimate_serving(shape, decode_hw, perf.query);
    perf.estimate->ttft_s = perf::estimate_ttft(shape, hw, perf.query.prompt_tokens, perf.query.token_budget);
    perf.hardware = decode_hw;
    perf.shape = shape;
    if (speculative_plan(p)) perf.draft_shape = mtp_draft_shape(out.model, rw, shape);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Usage) throw;
    perf.unavailable = e.what();
  }
  return perf;
}

// Decode with the draft and verify steps at the query's batch and context, with the scheduler's
// speculation rules (scheduler_rules: one reading of the engine's settings) and the user's accept
// length. Nothing when the plan does not fit or has no step model; a usage error for an accept
// length the plan cannot take (scheduler_rules says why).
std::optional<PlanPerformance::Speculative> speculative_decode(const memory::PlanRequest& r, const ServingPlan& out) {
  const PlanPerformance& perf = out.performance;
  if (!out.plan.fits) return std::nullopt;
  const SchedulerRules rules = scheduler_rules(out, r.args, r.spec_accept_length);
  if (!perf.shape || !perf.hardware || !perf.draft_shape) return std::nullopt;
  // Lockstep ranks have no single-engine step (perf.unavailable says so); simulate times them.
  if (perf.shape->dp_attention_ranks > 1 || perf.shape->vllm_dp.ranks > 1) return std::nullopt;
  PlanPerformance::Speculative s;
  s.accept_length = rules.accept_length;
  s.verify_tokens = rules.decode_query_tokens;
  const std::uint64_t b = perf.query.batch;
  const perf::MixedStep step{b, static_cast<double>(b) * static_cast<double>(perf.query.decode_context), {}, rules.decode_query_tokens};
  const perf::DraftForwards draft{&*perf.draft_shape, rules.draft_forwards, rules.draft_host_rounds};
  const auto seconds = [&](const std::optional<perf::HardwareRates>& h) {
    return perf::speculative_step_seconds(*perf.shape, draft, h ? *h : perf.hardware->expected, step);
  };
  // The slow rates give the long step (low throughput), the fast ones the short step.
  s.step_s = {seconds(perf.hardware->fast), seconds(perf.hardware->expected), seconds(perf.hardware->slow)};
  const double l = s.accept_length, tokens = static_cast<double>(b) * l;
  s.tpot_s = {s.step_s.low / l, s.step_s.expected / l, s.step_s.high / l};
  s.tokens_per_s = {tokens / s.step_s.high, tokens / s.step_s.expected, tokens / s.step_s.low};
  return s;
}

}  // namespace

perf::ShapeOptions plan_shape_options(const memory::MemoryPlan& plan, const memory::ResolvedWeights& rw,
                                      std::uint64_t tp, std::uint64_t pp, const GpuSpec& gpu, const ModelArch& arch,
                                      const perf::PerfDefaults& defaults, const std::string& entry) {
  const auto& view = plan.engine_view;
  perf::ShapeOptions so;
  so.tp = static_cast<std::uint32_t>(tp);
  so.pp = static_cast<std::uint32_t>(pp);
  so.ep = static_cast<std::uint32_t>(view.value("ep_size", std::uint64_t{1}));
  // vLLM data parallelism (memory/vllm_data_parallel.hpp): tp is one engine's; the routed experts
  // span D x tp GPUs, whole (ep_size) or sliced (expert_tp); lockstep engines are timed together.
  if (const std::uint64_t dp = view.value("data_parallel_size", std::uint64_t{1}); dp > 1) {
    if (arch.num_experts > 0 && so.ep == 1) so.expert_tp = static_cast<std::uint32_t>(dp * tp);
    if (view.value("dp_lockstep", false)) {
      so.vllm_dp.ranks = static_cast<std::uint32_t>(dp);
      const std::string padding = view.value("dp_padding", std::string("none"));
      so.vllm_dp.pad = padding != "none";
      so.vllm_dp.pad_only_if_graphed = padding == "largest-if-graphed";
      so.vllm_dp.naive_combine = view.value("dp_combine", std::string()) == "naive";
      // vllm/config/vllm.py: graphs up to min(2 x max_num_seqs, 512), within the step's token budget.
      const std::uint64_t seqs = view.value("max_num_seqs", std::uint64_t{0});
      const std::uint64_t budget = view.value("max_num_batched_tokens", std::uint64_t{0});
      so.vllm_dp.max_graph_tokens = so.vllm_dp.pad ? std::min({2 * seqs, std::uint64_t{512}, budget}) : 0;
    }
  }
  if (view.value("enable_dp_attention", false)) {
    so.dp_attention_ranks = static_cast<std::uint32_t>(view.at("dp_size").get<std::uint64_t>());
    so.attention_tp = static_cast<std::uint32_t>(view.at("attn_tp_size").get<std::uint64_t>());
    so.head_tp = view.value("enable_dp_lm_head", false) ? so.attention_tp : so.tp;
  }
  so.activation_bytes = static_cast<double>(rw.compute_bytes);
  // The plan's own KV and state sizes: one KV size for the batch table, the sweep and the
  // simulator, e.g. SGLang's plain fp8 DSA latent rows (memory/sglang_dsa.cpp).
  so.kv_bytes_per_token_per_gpu = static_cast<double>(plan.kv.bytes_per_token);
  so.state_bytes_per_seq_per_gpu = static_cast<double>(plan.kv.state_bytes_per_sequence);
  so.block_scaled_fp8 = rw.block_scaled_fp8;
  so.counted_kernels = defaults.step_overhead_for(entry).counted_layers(
      gpu.vendor, gpu.compute_capability ? gpu.compute_capability->major : 0, arch.architecture, rw.block_scaled_fp8,
      rw.weights_precision);
  return so;
}

ServingPlan run_serving_plan(const memory::PlanRequest& r, const DataRoot& root) {
  memory::ResolvedPlan resolved = memory::resolve_plan(r, root);
  ServingPlan out;
  static_cast<memory::PlanOutcome&>(out) = std::move(resolved.outcome);
  const PlanBasis& basis = resolved.basis;
  const calib::Calibration* cal = basis.calibration ? &*basis.calibration : nullptr;
  if (basis.pooling) {
    // The length of one input: --context, else the engine's padded length, else its longest input.
    std::uint64_t length = r.workload.context.value_or(0);
    for (const char* key : {"sequence_length", "max_input_length", "max_model_len"})
      if (length == 0 && out.plan.engine_view.contains(key)) length = out.plan.engine_view.at(key).get<std::uint64_t>();
    out.performance = pooling_performance(out, basis.gpu, cal, root, length ? length : 512);
  } else {
    out.performance = plan_performance(r, out, basis, root);
    if (r.spec_accept_length) out.performance.speculative = speculative_decode(r, out);
  }
  return out;
}

}  // namespace vramplan::sim
