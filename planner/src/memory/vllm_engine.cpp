// vLLM V1 profile: how `vllm serve` sizes its KV pool (gpu_worker.py determine_available_memory,
// kv_cache_utils.py get_kv_cache_configs / check_enough_kv_cache_memory), per version profile in
// data/engines/vllm.json. Mechanisms: docs/engines.md and engine-mechanisms.md.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>

#include "vramplan/compat/compat.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/limits.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/memory/derived_context.hpp"
#include "vramplan/memory/encoder_memory.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/model/encoder.hpp"
#include "vramplan/memory/engine_setup.hpp"
#include "vramplan/memory/engine_data.hpp"
#include "vramplan/memory/engine_profiles.hpp"
#include "vramplan/memory/kv_cache.hpp"
#include "vramplan/memory/vllm_activation.hpp"
#include "vramplan/memory/vllm_cuda_graphs.hpp"
#include "vramplan/memory/vllm_data_parallel.hpp"
#include "vramplan/memory/vllm_kv_groups.hpp"
#include "vramplan/memory/vllm_speculative.hpp"
#include "vramplan/memory/mtp_draft.hpp"
#include "vramplan/memory/vllm_async_scheduling.hpp"
#include "vramplan/memory/vllm_admission.hpp"
#include "vramplan/memory/vllm_multi_step.hpp"
#include "vramplan/memory/vllm_scheduler_defaults.hpp"
#include "vramplan/memory/vllm_weight_allocation.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/quant/precision_plan.hpp"

namespace vramplan::memory {

namespace {

std::string gib2(std::uint64_t b) { return format_gib(Bytes(b), 2); }

// vLLM prints two decimals; four are kept so accuracy reports are not dominated by rounding.
double round4(double v) { return std::round(v * 10000.0) / 10000.0; }

struct StageResult {
  std::uint64_t stage = 0;
  std::vector<Component> weights, activation, overhead;
  std::uint64_t weights_bytes = 0, activation_bytes = 0, non_torch = 0, graphs = 0;
  std::int64_t pool = 0;  // available KV memory (may be negative)
  KvLayout kv;
  VllmKvGroups groups;
  std::uint64_t blocks = 0;
};

class VllmEngine final : public Engine {
 public:
  VllmEngine(EngineProfileData data, std::filesystem::path compat_dir)
      : d_(std::move(data)), compat_dir_(std::move(compat_dir)) {}
  std::string_view name() const override { return "vllm"; }
  std::string_view version() const override { return d_.version(); }
  std::string_view release() const override { return d_.release(); }

  std::vector<EngineOption> options() const override {
    return {
        {"gpu-memory-utilization", "fraction of total GPU memory vLLM may use (default from the profile)", false, {}, OptionValue::number},
        {"max-model-len", "context length (default: the model's max_position_embeddings)", false, {}, OptionValue::whole},
        {"max-num-seqs", "max sequences per step (default by GPU memory, arg_utils.py)", false, {}, OptionValue::whole},
        {"max-num-batched-tokens", "max tokens per step (default by GPU memory)", false, {}, OptionValue::whole},
        {"block-size", "KV block size in tokens (default 16)", false, {}, OptionValue::whole},
        {"kv-cache-dtype", "auto, fp8, fp8_e4m3, fp8_e5m2, ...", false, {}},
        {"kv-cache-memory", "fixed KV pool size per GPU (bypasses the utilization rule)", false, {}},
        {"enforce-eager", "no CUDA graphs", true, {}},
        {"tensor-parallel-size", "TP degree", false, {"tp"}, OptionValue::whole},
        {"pipeline-parallel-size", "PP degree", false, {"pp"}, OptionValue::whole},
        {"data-parallel-size-local", "data-parallel engines on this node: it holds local x tp x pp GPUs (the node size of collectives across hosts; memory/launch_nodes.hpp)", false, {}, OptionValue::whole},
        {"enable-expert-parallel", "MoE experts split whole over the TP ranks (x the DP engines) instead of sliced", true, {}},
        {"data-parallel-size", "DP engines of --tensor-parallel-size GPUs each (0.9.1+; MoE experts span them all)", false, {"dp"}, OptionValue::whole},
        {"quantization", "weight quantization method (fp8 = online fp8)", false, {}},
        {"dtype", "auto, bfloat16, float16, float32", false, {}},
        {"enable-lora", "pre-allocate LoRA slots", true, {}},
        {"max-loras", "LoRA slots (default 1)", false, {}, OptionValue::whole},
        {"max-lora-rank", "LoRA rank (default 16)", false, {}, OptionValue::whole},
        {"disable-hybrid-kv-cache-manager", "allocate sliding-window layers like full attention", true, {}},
        {"enable-prefix-caching", "share the KV blocks of a common prompt prefix (V1 default: on)", true, {}},
        {"no-enable-prefix-caching", "no automatic prefix caching", true, {}},
        {"enable-chunked-prefill", "split prompts at the per-step token budget (V1 default: on)", true, {}},
        {"no-enable-chunked-prefill", "a prompt runs in one step: max_num_batched_tokens must cover max_model_len", true, {}},
        {"async-scheduling", "form the next step's batch while the GPU runs this one (default from 0.14, not with PP > 1 on 0.14)", true, {}},
        {"no-async-scheduling", "form each step's batch when it starts (serial scheduling, the default before 0.14)", true, {}},
        {"scheduler-reserve-full-isl", "admit a waiting request only when its whole sequence's KV blocks are free (default from 0.19)", true, {}},
        {"no-scheduler-reserve-full-isl", "admit a waiting request when its first chunk's KV blocks are free (the rule before 0.19)", true, {}},
        {"watermark", "share of the KV blocks kept free when a waiting request is admitted beside running ones (0.24+; default 0)", false, {}, OptionValue::number},
        {"num-scheduler-steps", "V0 multi-step scheduling: decode steps a scheduler round runs (0.5.5 - 0.10.0; default 1)", false, {}, OptionValue::whole},
        {"speculative-config", "JSON; {\"method\": \"mtp\", \"num_speculative_tokens\": k}: the checkpoint's MTP layer drafts", false, {}},
    };
  }

  MemoryPlan plan(const PlanInput& in) const override;
  // An encoder's length without --max-model-len: its longest input (plan_pooling_vllm).
  Workload default_workload(const ModelSpec& model, const EngineArgs& /*args*/) const override {
    if (is_encoder(model.arch)) return {std::nullopt, encoder_max_input(model.arch)};
    return {};
  }

 private:
  std::string pad_mxfp4_moe(const PlanInput& in, const WeightRequest& wr, std::uint64_t tp, ResolvedWeights& rw) const;
  const compat::CompatRules& compat() const;
  EngineProfileData d_;
  // data/compat says which MXFP4 kernel path vLLM takes on a GPU. Read on first use: only MXFP4
  // checkpoints ask, and parsing the rule files costs as much as the rest of a `check` (callgrind).
  std::filesystem::path compat_dir_;
  mutable std::once_flag compat_once_;
  mutable std::optional<compat::CompatRules> compat_;
};

const compat::CompatRules& VllmEngine::compat() const {
  std::call_once(compat_once_, [this] { compat_.emplace(compat::CompatRules::load(compat_dir_)); });
  return *compat_;
}

// MXFP4 MoE checkpoints (gpt-oss): the kernel backend vLLM picks from the compute capability
// (quantization/mxfp4.py get_mxfp4_backend, default env: FlashInfer BF16 on SM100, the OpenAI
// Triton kernels on SM90, Marlin elsewhere) pads the experts (engine-mechanisms.md item 8).
// Where Marlin runs is the compatibility model's answer (data/compat rules vllm-mxfp4-marlin-*).
std::string VllmEngine::pad_mxfp4_moe(const PlanInput& in, const WeightRequest& wr, std::uint64_t tp,
                                      ResolvedWeights& rw) const {
  const auto cq = checkpoint_quantization(in.model, in.quant);
  const bool mxfp4 = cq && cq->scheme.engine_method == "mxfp4" && !wr.weights &&
                     (!wr.quantization || wr.quantization->empty() || *wr.quantization == "mxfp4");
  if (!mxfp4) return {};
  if (!d_.has("mxfp4_triton_intermediate_multiple")) {  // MXFP4 MoE kernels arrived with gpt-oss (vLLM 0.10.1)
    rw.notes.push_back("MXFP4 MoE padding not modelled: the vLLM " + d_.version() + " profile has no MXFP4 kernel path");
    return {};
  }
  const std::string& cc = in.gpu.compute_capability;
  const auto cap = in.gpu.capability();
  if (!cap) {
    rw.notes.push_back("MXFP4 MoE padding not modelled: the GPU's compute capability is unknown");
    return {};
  }
  compat::Query q;
  q.engine = "vllm";
  q.engine_version = d_.version();
  q.vendor = "nvidia";
  q.compute_capability = cap->major + cap->minor / 10.0;
  q.weight_families = {"mxfp4"};
  const compat::Verdict v = compat().evaluate(q);
  if (v.support == compat::Support::Unsupported) {
    rw.notes.push_back("MXFP4 MoE padding not modelled: vLLM does not run MXFP4 on compute capability " + cc + " (" +
                       v.findings.front().rule + ")");
    return {};
  }
  const bool marlin = std::any_of(v.findings.begin(), v.findings.end(),
                                  [](const compat::Finding& f) { return f.kernel == "marlin"; });
  const std::string backend = marlin ? "marlin" : cap->major == 10 ? "sm100" : "triton";
  const auto param = [&](const std::string& name) { return d_.u64("mxfp4_" + backend + "_" + name); };
  const MoePadding pad{backend,
                       param("intermediate_multiple"),
                       param("hidden_multiple"),
                       param("bias_bytes"),
                       param("value_n_multiple"),
                       param("value_k_multiple"),
                       param("scale_n_multiple"),
                       param("scale_k_multiple")};
  return pad_moe_experts(in.model, rw, tp, pad);
}

// --enable-expert-parallel: EP spans the `group` GPUs the MoE runs over, tp x dp
// (vllm/model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.make: ep_size = dp x tp,
// the MoE's own TP 1), each holding num_experts / ep whole experts (layer.py
// determine_expert_map). The same bytes as the TP slices when the experts divide; an uneven split
// (vLLM gives the first ranks one more) and the MXFP4 padding of whole experts are not modelled.
std::uint64_t vllm_ep_size(const EngineArgs& args, const ModelArch& arch, std::uint64_t group, bool mxfp4_padded) {
  if (!arg_switch(args, "enable-expert-parallel") || group == 1 || arch.num_experts == 0) return 1;
  if (arch.num_experts % group != 0)
    throw_usage("--enable-expert-parallel: " + std::to_string(arch.num_experts) + " routed experts over " +
                std::to_string(group) + " GPUs is an uneven split (vLLM gives the first ranks one more), not modelled");
  if (mxfp4_padded)
    throw_usage("--enable-expert-parallel: how vLLM pads whole MXFP4 experts on one GPU is not modelled (the TP "
                "slices' padding is: plan without it)");
  return group;
}

// "a, b, c": the values a refusal lists, from the table the check uses.
template <typename T, std::size_t N>
std::string listed(const std::array<T, N>& values) {
  std::string out;
  for (const auto& v : values) {
    if (!out.empty()) out += ", ";
    if constexpr (std::is_arithmetic_v<T>) out += std::to_string(v);
    else out += v;
  }
  return out;
}

// LoRAConfig's own checks (vllm/config/lora.py): max_lora_rank is one of MaxLoRARanks and
// max_loras is Field(ge=1). Without --enable-lora vLLM builds no LoRAConfig and ignores both flags;
// here that would be a plan without the slots the user asked for, so they are refused instead.
void check_lora_slots(std::uint64_t loras, std::uint64_t rank) {
  static constexpr std::array<std::uint64_t, 9> kMaxLoraRanks{1, 8, 16, 32, 64, 128, 256, 320, 512};
  if (std::find(kMaxLoraRanks.begin(), kMaxLoraRanks.end(), rank) == kMaxLoraRanks.end())
    throw_usage("--max-lora-rank " + std::to_string(rank) +
                ": vLLM takes one of " + listed(kMaxLoraRanks) + " (vllm/config/lora.py MaxLoRARanks)");
  if (loras == 0) throw_usage("--max-loras 0: vLLM needs at least 1 LoRA slot (vllm/config/lora.py)");
}

void refuse_lora_flags_without_lora(const EngineArgs& args) {
  if (arg_switch(args, "enable-lora")) return;
  for (const char* flag : {"max-loras", "max-lora-rank"})
    if (arg_string(args, flag))
      throw_usage(std::string("--") + flag + " sizes LoRA slots only with --enable-lora (vLLM ignores it without)");
}

MemoryPlan VllmEngine::plan(const PlanInput& in) const {
  // Encoders run on the pooling runner: no KV cache (memory/encoder_memory.cpp).
  if (is_encoder(in.model.arch)) return plan_pooling_vllm(*this, d_, in);
  check_workload(in.workload);
  check_known_args(in.args, options(), "vllm");
  refuse_lora_flags_without_lora(in.args);
  const auto& arch = in.model.arch;
  const auto& args = in.args;
  MemoryPlan p;
  p.engine = "vllm";
  p.engine_version = d_.version();
  p.engine_profile_note = d_.note();
  p.gpu_total = in.gpu.total;

  const std::uint64_t tp = arg_u64(args, "tensor-parallel-size").value_or(1);
  const std::uint64_t pp = arg_u64(args, "pipeline-parallel-size").value_or(1);
  if (tp == 0 || pp == 0) throw_usage("--tensor-parallel-size / --pipeline-parallel-size must be >= 1");
  const bool v0 = d_.string("engine_generation") == "v0";
  const bool eager = arg_switch(args, "enforce-eager");
  // Data parallelism (memory/vllm_data_parallel.hpp): D engines of tp x pp GPUs; every figure of
  // this plan is one engine's, per GPU.
  const VllmDataParallel dpi = vllm_data_parallel(args, arch, d_.release(), v0, tp, pp, eager);
  p.gpu_count = checked_mul(checked_mul(dpi.dp, tp), pp);
  // Resolved from the release asked for, not the profile's name: the 0.11 profile covers 0.11-0.16.
  const VllmAsyncScheduling async = vllm_async_scheduling(d_.release(), args, pp);
  const bool full_isl = vllm_full_isl_admission(d_.release(), args, v0);
  const double watermark = vllm_watermark(d_.release(), args, v0);
  const double util = arg_double(args, "gpu-memory-utilization").value_or(d_.number("gpu_memory_utilization"));
  if (!(util > 0 && util <= 1)) throw_usage("--gpu-memory-utilization must be in (0, 1]");

  const auto user_seqs = arg_u64(args, "max-num-seqs");
  const auto user_batched = arg_u64(args, "max-num-batched-tokens");
  const auto flag_len = arg_u64(args, "max-model-len");
  if (flag_len && (*flag_len == 0 || *flag_len > kMaxContextTokens))
    throw_usage("--max-model-len: must be in 1.." + std::to_string(kMaxContextTokens) + ", got " + std::to_string(*flag_len));
  std::uint64_t max_model_len = flag_len.value_or(in.workload.context.value_or(arch.max_position_embeddings));
  if (max_model_len == 0) throw_usage("--max-model-len must be >= 1 (the model gives no max_position_embeddings)");
  bool prefix_caching = arg_on_off(args, "enable-prefix-caching", d_.flag("enable_prefix_caching"));
  // Scheduler defaults per engine generation (memory/vllm_scheduler_defaults.hpp).
  const VllmSchedulerDefaults sched =
      v0 ? v0_scheduler_defaults(d_, arch, max_model_len, arg_switch(args, "enable-lora"), args)
         : v1_scheduler_defaults(d_, in.gpu, args);
  const bool chunked_prefill = sched.chunked_prefill;
  const VllmMultiStep multi_step = vllm_multi_step(d_.release(), v0, chunked_prefill, pp, args);
  std::uint64_t max_num_seqs = user_seqs.value_or(sched.max_num_seqs);
  std::uint64_t batched = user_batched.value_or(sched.max_num_batched_tokens);
  if (max_num_seqs == 0 || batched == 0) throw_usage("--max-num-seqs / --max-num-batched-tokens must be >= 1");
  // Defaults left unset follow the chunked-prefill setting and the length limit
  // (vllm/engine/arg_utils.py _set_default_max_num_seqs_and_batched_tokens_args): without chunked
  // prefill the token budget is raised to max_model_len; never above max_num_seqs x max_model_len;
  // max_num_seqs never above the token budget.
  if (!user_batched) {
    if (!chunked_prefill) batched = std::max(batched, max_model_len);
    batched = std::min(batched, checked_mul(max_num_seqs, max_model_len));
  }
  if (!user_seqs) max_num_seqs = std::min(max_num_seqs, batched);
  // vLLM derives the longest allowed length from max_position_embeddings (config/model.py
  // _get_and_verify_max_len; derived_context.hpp); yarn's is not known here (only a note then). A
  // longer --max-model-len is refused at start-up (llm-d-planner microsoft-phi-2 8192 .FAILED.log).
  const std::optional<std::uint64_t> derived = derived_context_length(arch);
  const bool derived_known = derived.has_value();
  const std::uint64_t derived_max = derived.value_or(arch.max_position_embeddings);
  const bool too_long = derived_max != 0 && max_model_len > derived_max;
  if (too_long && !derived_known)
    p.notes.push_back("max_model_len " + std::to_string(max_model_len) + " exceeds max_position_embeddings " +
                      std::to_string(arch.max_position_embeddings) +
                      ": vLLM refuses this unless yarn rope scaling extends the limit (original_max_position_embeddings x "
                      "factor, not modelled) or VLLM_ALLOW_LONG_MAX_MODEL_LEN=1");
  const auto user_block_size = arg_u64(args, "block-size");
  std::uint64_t block_size = user_block_size.value_or(d_.u64("block_size"));
  // DeepSeek sparse attention runs FlashMLA's sparse kernels on 64-token blocks: vLLM sets the
  // block size to 64 whatever was asked (vllm/platforms/cuda.py check_and_update_config, v0.11.0
  // and v0.16.0: `if use_sparse and cache_config.block_size != 64`, use_sparse = the config has
  // index_topk).
  if (arch.index_topk > 0) {
    if (user_block_size && *user_block_size != 64)
      p.notes.push_back("--block-size " + std::to_string(*user_block_size) +
                        " ignored: vLLM runs DeepSeek sparse attention on 64-token blocks");
    block_size = 64;
  }
  const VllmSpeculative spec = vllm_speculative(args, in.model, d_.release(), v0, pp);
  for (const auto& n : spec.notes) p.notes.push_back(n);
  // A step verifies k drafts after a request's last token: more than its context can ever hold.
  if (spec.on && spec.tokens >= max_model_len)
    throw_usage("--speculative-config: num_speculative_tokens " + std::to_string(spec.tokens) +
                " is not below max_model_len " + std::to_string(max_model_len) + ": no request could hold its drafts");
  const bool hybrid = !arg_switch(args, "disable-hybrid-kv-cache-manager");

  WeightRequest wr{arg_string(args, "dtype"), arg_string(args, "quantization"), in.weights, true};
  ResolvedWeights rw = resolve_weights(in.model, in.quant, wr);
  // The GPUs a routed expert's slices (or the whole experts) spread over: TP, times the DP engines.
  const std::uint64_t moe_group = dpi.dp > 1 ? dpi.expert_group : tp;
  const std::string moe_padding = pad_mxfp4_moe(in, wr, moe_group, rw);
  const std::uint64_t ep = vllm_ep_size(args, arch, moe_group, !moe_padding.empty());
  note_expert_parallel(p, "--enable-expert-parallel", arch, moe_group, ep);
  // vLLM reads enable_expert_parallel only where it builds FusedMoE layers
  // (model_executor/layers/fused_moe/layer.py, FusedMoEParallelConfig.make): a dense model starts
  // as without it, no error. Said, not silently accepted (SGLang refuses --ep-size there).
  if (arg_switch(args, "enable-expert-parallel") && arch.num_experts == 0) {
    p.flag_warnings.push_back("--enable-expert-parallel: " + arch.architecture +
                              " has no routed experts; vLLM applies it to FusedMoE layers only, so it has no effect here");
    p.notes.push_back(p.flag_warnings.back());
  }
  p.weights_precision = rw.weights_precision;
  p.compute_precision = rw.compute_precision;
  p.planned_weights = rw.planned;
  for (const auto& n : rw.notes) p.notes.push_back(n);
  // vllm/config/cache.py CacheDType, the union over the releases profiled (0.6 - 0.19): a
  // llama.cpp cache type such as q4_0 is no vLLM choice.
  static constexpr std::array<std::string_view, 9> kVllmCacheDtypes{
      "auto", "float16", "bfloat16", "int8", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla"};
  const std::string kv_flag = arg_string(args, "kv-cache-dtype").value_or("auto");
  if (std::find(kVllmCacheDtypes.begin(), kVllmCacheDtypes.end(), kv_flag) == kVllmCacheDtypes.end())
    throw_usage("--kv-cache-dtype " + excerpt(kv_flag) +
                ": not a vLLM cache dtype (" + listed(kVllmCacheDtypes) + ")");
  const KvDtype kvd = resolve_kv_dtype(kv_flag, rw.compute_precision, in.quant);

  // Attention + recurrent hybrids (Qwen3-Next, Mamba hybrids): block size and state pages as
  // vLLM aligns them (memory/vllm_kv_groups.hpp vllm_mamba_pages). With prefix caching the newer
  // releases keep the state in "align" mode, 2 pages per request per recurrent group; without it
  // (and in releases that switch prefix caching off for these models) "none", 1 page.
  // V0 kept Mamba state in a separate per-sequence cache: not modelled, only noted.
  const auto mamba = v0 ? std::nullopt : vllm_mamba_pages(kv_layout(arch, kvd, tp, 0, arch.num_layers), user_block_size);
  std::uint64_t mamba_blocks = 0;
  std::string mamba_mode;
  if (mamba) {
    block_size = mamba->block_size;
    const bool align = d_.has("mamba_align_with_prefix_caching") && d_.flag("mamba_align_with_prefix_caching");
    if (!align) prefix_caching = false;  // vllm/model_executor/models/config.py MambaModelConfig (0.11)
    mamba_mode = prefix_caching ? "align" : "none";
    mamba_blocks = prefix_caching ? 2 : 1;
  }

  VllmActivationCoefficients coef;
  coef.sampler_fp32_copies = d_.number("activation_sampler_fp32_copies");
  coef.sampler_model_copies = d_.number("activation_sampler_model_dtype_copies");
  coef.hidden_buffers = d_.number("activation_hidden_buffers");
  coef.constant_bytes = d_.number("activation_constant_gib") * static_cast<double>(kGiB);

  // A calibration's figures of this deployment (reconcile --update-calibration) replace the
  // modelled ones: what vLLM's own profile run logged for it (gpu_worker.py determine_available_memory).
  const auto& dep = in.deployment;
  // Engines in lockstep hold NCCL communicators for their DP and EP groups (distributed/
  // parallel_state.py) even at TP 1: the multi-GPU figure stands in for them.
  const bool multi_gpu = tp > 1 || (dpi.lockstep && dpi.dp > 1);
  const Bytes non_torch_bytes =
      dep && dep->non_torch ? *dep->non_torch
                            : Bytes::from_gib(multi_gpu ? d_.number("non_torch_gib_tp")
                                                        : pp > 1 ? d_.number("non_torch_gib_pp") : d_.number("non_torch_gib_tp1"));
  const std::string non_torch_src =
      dep && dep->non_torch ? "logged, " + dep->source
                            : multi_gpu ? d_.source("non_torch_gib_tp") + (tp > 1 ? "" : "; standing in for the DP / EP groups' NCCL communicators")
                                        : pp > 1 ? d_.source("non_torch_gib_pp") : d_.source("non_torch_gib_tp1");
  const VllmGraphCoefficients graph_coef{d_.number("cuda_graph_base_gib") * static_cast<double>(kGiB),
                                          d_.number("cuda_graph_per_piece_mib") * static_cast<double>(kMiB)};
  const bool graphs_in_budget = d_.flag("cuda_graph_in_kv_budget");
  // --kv-cache-memory replaces the utilization rule (0 = not given).
  const std::uint64_t fixed_kv =
      arg_string(args, "kv-cache-memory") ? parse_bytes(*arg_string(args, "kv-cache-memory"), "--kv-cache-memory").count() : 0;
  // More than the card is no pool vLLM can allocate (2^63 B had wrapped to a pool of 0 blocks).
  if (fixed_kv > in.gpu.total.count())
    throw_usage("--kv-cache-memory " + format_binary(Bytes(fixed_kv)) + " is more than the GPU's " + format_binary(in.gpu.total));

  // LoRA slots (vllm/lora/layers: stacked lora_a [max_loras, r, in] + lora_b [max_loras, out, r]
  // per wrapped linear, in the model dtype, TP-sharded like the base layer).
  std::uint64_t lora_per_layer = 0;
  std::string lora_explain;
  if (arg_switch(args, "enable-lora")) {
    const std::uint64_t loras = arg_u64(args, "max-loras").value_or(1), rank = arg_u64(args, "max-lora-rank").value_or(16);
    check_lora_slots(loras, rank);
    const std::uint64_t h = arch.hidden_size, q = arch.num_heads * arch.head_dim,
                        kv = arch.num_kv_heads * arch.head_dim, inter = arch.intermediate_size;
    // Column-parallel (qkv, gate_up): A full input, B output/TP; row-parallel (o, down): A input/TP, B full output.
    const std::uint64_t elems =
        checked_mul(rank, (h + (q + 2 * kv) / tp) + (q / tp + h) + (h + 2 * inter / tp) + (inter / tp + h));
    lora_per_layer = checked_mul(checked_mul(elems, loras), rw.compute_bytes);
    lora_explain = std::to_string(loras) + " slots x rank " + std::to_string(rank) +
                   " x (qkv, o, gate_up, down) A+B per layer";
  }

  // Per PP stage (engine-mechanisms.md item 6): its own layers, weights, activation, pool.
  std::vector<StageResult> stages;
  for (std::uint64_t s = 0; s < pp; ++s) {
    StageResult r;
    r.stage = s;
    ShardOptions so{tp, pp, s, d_.u64("vocab_pad"), d_.flag("rope_cache_in_weights")};
    so.k_eq_v_value_slot = true;  // gemma4.py Gemma4Attention: a full QKVParallelLinear, k_proj loaded into V too
    if (dpi.dp > 1) {
      so.expert_tp = moe_group;
      if (dpi.shared_experts_whole) so.shared_expert_tp = 1;
    }
    r.weights = shard_weights(in.model, rw, so);
    if (!moe_padding.empty()) r.weights.front().explain += "; " + moe_padding;
    // "Model loading took" is torch's allocated-bytes difference: allocator blocks, not tensor bytes.
    if (d_.flag("allocator_rounding")) r.weights.push_back(vllm_allocator_rounding(in.model, rw, so));
    const auto [first, end] = pp_layer_range(arch.num_layers, pp, s);
    if (lora_per_layer)
      r.weights.push_back({"weights.lora_slots", Bytes(lora_per_layer * (end - first)),
                           lora_explain + " x " + std::to_string(end - first) + " layers"});
    // The MTP draft loads with the model, before the profile run (memory/vllm_speculative.hpp).
    if (spec.on)
      r.weights.push_back({"weights.draft", Bytes(mtp_draft_weight_bytes(in.model, rw, tp)),
                           "the MTP layer as the draft (its decoder layer split over TP " + std::to_string(tp) +
                               ", eh_proj in the model dtype and norms whole; embedding and head shared with the target)"});
    r.weights_bytes = sum_bytes(r.weights).count();
    VllmStageShape shape{batched, max_num_seqs, tp, rw.compute_bytes, s == 0, s + 1 == pp, max_model_len};
    // The fused-MoE workspace: whole experts under EP, slices over the MoE's GPUs otherwise; with
    // engines in lockstep the profile run's MoE gathers every engine's tokens.
    shape.moe_split = ep > 1 ? 1 : moe_group;
    shape.moe_chunk_tokens = vllm_fused_moe_chunk_tokens(d_.release());
    if (dpi.lockstep && dpi.dp > 1 && arch.num_experts > 0) shape.dp = dpi.dp;
    r.activation = dep && dep->activation_peak
                       ? std::vector<Component>{{"activation.peak", *dep->activation_peak,
                                                 "torch peak memory increase of the profile run, logged (the first "
                                                 "stage's figure, for every stage), " + dep->source}}
                       : vllm_activation(vllm_activation_features(arch, shape), coef);
    r.activation_bytes = sum_bytes(r.activation).count();
    r.non_torch = non_torch_bytes.count();
    r.overhead.push_back({"overhead.non_torch", non_torch_bytes,
                          "non-torch memory (CUDA context growth, cuBLAS, NCCL/custom all-reduce) for TP " +
                              std::to_string(tp) + ", PP " + std::to_string(pp) + " = " + gib2(r.non_torch) +
                              " (" + non_torch_src + ")"});
    const bool graphs_modelled = graph_coef.base_bytes > 0 || graph_coef.per_piece_bytes > 0;
    r.overhead.push_back(eager ? Component{"overhead.cuda_graphs", Bytes(), "--enforce-eager: no CUDA graphs"}
                         : graphs_modelled
                             ? vllm_cuda_graphs(end - first, max_num_seqs, batched, graph_coef)
                             : Component{"overhead.cuda_graphs", Bytes(),
                                         "CUDA graph pool not modelled for the vLLM " + d_.version() + " profile (" +
                                             d_.source("cuda_graph_base_gib") + ")"});
    if (dep && dep->cuda_graphs && !eager)
      r.overhead.back() = {"overhead.cuda_graphs", *dep->cuda_graphs, "CUDA graph pool, logged, " + dep->source};
    r.overhead.back().outside_kv_budget = !graphs_in_budget;
    r.graphs = r.overhead.back().bytes.count();
    const double budget = static_cast<double>(in.gpu.total.count()) * util;
    const std::uint64_t non_kv = r.weights_bytes + r.activation_bytes + r.non_torch + (graphs_in_budget ? r.graphs : 0);
    r.pool = fixed_kv != 0 ? static_cast<std::int64_t>(fixed_kv)
                      : static_cast<std::int64_t>(std::floor(budget)) - static_cast<std::int64_t>(non_kv);
    r.kv = kv_layout(arch, kvd, tp, first, end);
    if (spec.on) {  // the draft's layer joins the target's KV cache group
      const LayerKv draft = mtp_draft_kv_layer(r.kv);
      r.kv.layers.push_back(draft);
      r.kv.bytes_per_token = checked_add(r.kv.bytes_per_token, draft.bytes_per_token, "KV bytes per token");
      r.kv.explain += " + 1 MTP draft layer x " + grouped(draft.bytes_per_token) + " B = " + grouped(r.kv.bytes_per_token) + " B";
    }
    r.groups = vllm_kv_groups(r.kv, block_size, max_model_len, batched, hybrid, mamba_blocks);
    r.blocks = r.pool > 0 && r.groups.block_bytes > 0 ? static_cast<std::uint64_t>(r.pool) / r.groups.block_bytes : 0;
    stages.push_back(std::move(r));
  }
  // vLLM takes the smallest block count over all workers (items 6, 7).
  std::uint64_t blocks = stages.front().blocks;
  for (const auto& r : stages) blocks = std::min(blocks, r.blocks);
  // Per GPU: the stage that uses the most memory.
  const StageResult* worst = &stages.front();
  for (const auto& r : stages)
    if (r.weights_bytes + r.activation_bytes + blocks * r.groups.block_bytes >
        worst->weights_bytes + worst->activation_bytes + blocks * worst->groups.block_bytes)
      worst = &r;
  const StageResult& first = stages.front();

  p.kv_fixed = fixed_kv != 0;  // --kv-cache-memory: the pool no longer absorbs other errors
  p.weights = worst->weights;
  p.activation = worst->activation;
  p.overhead = worst->overhead;
  p.kv_cache.push_back({"kv_cache", Bytes(blocks * worst->groups.block_bytes),
                        std::to_string(blocks) + " blocks x " + grouped(worst->groups.block_bytes) + " B (" +
                            worst->groups.explain + ")"});
  p.kv.bytes_per_token = worst->kv.bytes_per_token;
  p.kv.explain = worst->kv.explain;
  p.kv.state_bytes_per_sequence = worst->kv.state_bytes_per_seq;
  const std::uint64_t groups = std::max<std::uint64_t>(1, first.groups.num_groups);
  const std::uint64_t tokens = blocks / groups * block_size;
  p.kv.capacity_tokens = tokens;
  const double concurrency = first.groups.blocks_per_request
                                 ? static_cast<double>(blocks) / static_cast<double>(first.groups.blocks_per_request)
                                 : 0.0;
  p.kv.max_concurrency = concurrency;

  // Refusals, in vLLM's words (V1: kv_cache_utils.py check_enough_kv_cache_memory; V0: worker.py).
  const StageResult* smallest = &stages.front();
  for (const auto& r : stages) if (r.pool < smallest->pool) smallest = &r;
  if (smallest->pool <= 0) {
    p.fits = false;
    p.reason = "No available memory for the cache blocks (weights + activation peak + non-torch = " +
               gib2(smallest->weights_bytes + smallest->activation_bytes + smallest->non_torch) + " exceed " +
               format_gib(Bytes(static_cast<std::uint64_t>(static_cast<double>(in.gpu.total.count()) * util))) +
               " = total x gpu_memory_utilization). Try increasing `gpu_memory_utilization` when initializing the engine.";
  } else if (v0) {
    // V0 checks the block count it allocated (vllm/worker/worker.py raise_if_cache_size_invalid).
    if (blocks * block_size < max_model_len) {
      p.fits = false;
      p.reason = "The model's max seq len (" + std::to_string(max_model_len) +
                 ") is larger than the maximum number of tokens that can be stored in KV cache (" +
                 std::to_string(blocks * block_size) +
                 "). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
    }
  } else {
    for (const auto& r : stages) {
      if (r.groups.bytes_one_request <= static_cast<std::uint64_t>(r.pool)) continue;
      const std::uint64_t est_len = r.kv.bytes_per_token ? static_cast<std::uint64_t>(r.pool) / r.kv.bytes_per_token : 0;
      p.fits = false;
      p.reason = "To serve at least one request with the model's max seq len (" + std::to_string(max_model_len) + "), (" +
                 gib2(r.groups.bytes_one_request) + " KV cache is needed, which is larger than the available KV cache memory (" +
                 gib2(static_cast<std::uint64_t>(r.pool)) + "). Based on the available memory, the estimated maximum model length is " +
                 std::to_string(est_len / block_size * block_size) +
                 ". Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
      break;
    }
  }
  if (p.fits && in.workload.batch && concurrency < static_cast<double>(*in.workload.batch)) {
    p.fits = false;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", concurrency);
    p.reason = "the KV cache holds " + std::string(buf) + " sequences of " + std::to_string(max_model_len) +
               " tokens; --batch " + std::to_string(*in.workload.batch) + " needs more (vLLM would queue the rest)";
  }
  if (p.total_bytes() > p.gpu_total && p.fits) {
    p.fits = false;
    p.reason = "weights + KV pool + activation reserve + overheads exceed the GPU's memory";
  }
  // The refusals below are of the flags themselves, whatever the memory: no card or layout starts them.
  if (!chunked_prefill && batched < max_model_len) {  // vllm/config/scheduler.py verify_max_model_len
    p.fits = false;
    p.refuses_configuration = true;
    p.reason = "max_num_batched_tokens (" + std::to_string(batched) + ") is smaller than max_model_len (" +
               std::to_string(max_model_len) +
               "). This effectively limits the maximum sequence length to max_num_batched_tokens and makes vLLM "
               "reject longer sequences. Please increase max_num_batched_tokens or decrease max_model_len.";
  }
  if (batched < max_num_seqs) {  // vllm/config/scheduler.py verify_max_model_len (both flags given)
    p.fits = false;
    p.refuses_configuration = true;
    p.reason = "max_num_batched_tokens (" + std::to_string(batched) + ") must be greater than or equal to max_num_seqs (" +
               std::to_string(max_num_seqs) + ").";
  }
  // vLLM's argument parser takes --block-size from the BlockSize literal only: vllm/config.py
  // `BlockSize = Literal[1, 8, 16, 32, 64, 128]` (0.8 - 0.10), vllm/config/cache.py
  // `Literal[1, 8, 16, 32, 64, 128, 256]` (newer). A value in neither set is refused by every
  // release; 256 is accepted here for all of them (the release that added it is not established).
  static constexpr std::array<std::uint64_t, 7> kVllmBlockSizes{1, 8, 16, 32, 64, 128, 256};
  if (user_block_size &&
      std::find(kVllmBlockSizes.begin(), kVllmBlockSizes.end(), *user_block_size) == kVllmBlockSizes.end()) {
    p.fits = false;
    p.refuses_configuration = true;
    p.reason = "--block-size " + std::to_string(*user_block_size) +
               ": invalid choice; vLLM takes one of 1, 8, 16, 32, 64, 128 (and 256 in newer releases) "
               "(vllm/config/cache.py BlockSize)";
  }
  if (mamba && !hybrid) {  // kv_cache_utils.py unify_hybrid_kv_cache_specs: recurrent specs cannot be unified
    p.fits = false;
    p.refuses_configuration = true;
    p.reason = "Hybrid KV cache manager is disabled but failed to convert the KV cache specs to one unified type.";
  }
  if (too_long && derived_known) {  // refused before any memory is profiled, so this reason comes first
    p.fits = false;
    p.refuses_configuration = true;
    p.reason = "User-specified max_model_len (" + std::to_string(max_model_len) +
               ") is greater than the derived max_model_len (max_position_embeddings=" +
               std::to_string(derived_max) +
               " in model's config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1";
  }
  p.notes.push_back("KV pool = total x gpu_memory_utilization (" + std::to_string(util).substr(0, 4) +
                    ") - weights - activation peak - non-torch" +
                    (graphs_in_budget ? " - CUDA graphs" : "; CUDA graphs are captured afterwards, on top"));
  p.notes.push_back("defaults: max_num_seqs " + std::to_string(max_num_seqs) + ", max_num_batched_tokens " +
                    std::to_string(batched) + " (" + sched.explain + "), max_model_len " +
                    std::to_string(max_model_len) + ", block_size " + std::to_string(block_size));
  if (dep)
    p.notes.push_back("non-torch, activation peak and CUDA graphs where the deployment's log gave them: " + dep->source);
  p.notes.push_back(std::string("activation peak and non-torch memory are fitted/observed figures: expect about +-0.1 to 0.3 GiB; ") +
                    (graph_coef.base_bytes > 0 || graph_coef.per_piece_bytes > 0
                         ? "the CUDA graph pool is a fitted estimate (+-0.2 GiB on dense models, under by ~0.8 GiB for MLA/MoE)"
                         : "the CUDA graph pool is not modelled for this profile (captured after the KV budget)"));
  if (mamba) {
    const std::uint64_t padded = checked_mul(checked_mul(mamba->recurrent_layers, mamba_blocks), mamba->page_bytes);
    p.notes.push_back("hybrid model: " + mamba->explain + "; mamba_cache_mode " + mamba_mode + " (" +
                      std::to_string(mamba_blocks) + " page(s) per request per recurrent layer): recurrent state " +
                      grouped(mamba->state_bytes * mamba->recurrent_layers) + " B per request on this GPU, " +
                      grouped(padded) + " B as paged; one request of " + std::to_string(max_model_len) + " tokens takes " +
                      std::to_string(first.groups.blocks_per_request) + " blocks");
  } else if (first.kv.state_bytes_per_seq > 0) {
    p.notes.push_back("recurrent layers: " + grouped(first.kv.state_bytes_per_seq) +
                      " B of state per sequence are not in this block accounting (no attention layer to page them with)");
  }
  if (pp > 1) p.notes.push_back("PP: figures per stage in engine_view.stages; vLLM uses the smallest block count of all stages");
  if (v0 && tp > 1)
    p.notes.push_back("V0 with TP > 1: only the driver worker (rank 0) runs the sampler in the profile run, so the other "
                      "ranks log a smaller activation peak and a larger pool; the block count is the minimum over ranks "
                      "(the driver's), which this plan shows");

  // Engine view: what vLLM's log prints (the first rank's line; blocks/tokens after the min).
  nlohmann::json view = {
      {"ep_size", ep},
      {"weights_gib", round4(Bytes(first.weights_bytes).gib())},
      {"non_torch_gib", round4(Bytes(first.non_torch).gib())},
      {"activation_peak_gib", round4(Bytes(first.activation_bytes).gib())},
      {"kv_cache_gib", first.pool > 0 ? nlohmann::json(round4(static_cast<double>(first.pool) / static_cast<double>(kGiB))) : nlohmann::json(0.0)},
      {"kv_cache_tokens", vllm_printed_kv_tokens(d_.release(), blocks, first.groups, block_size, max_model_len)},
      {"gpu_blocks", blocks},
      {"block_size", block_size},
      {"max_concurrency", round4(concurrency)},
      {"cuda_graph_gib", round4(Bytes(first.graphs).gib())},
      {"max_model_len", max_model_len},
      {"max_num_seqs", max_num_seqs},
      {"max_num_batched_tokens", batched},
      {"gpu_memory_utilization", util},
      {"kv_cache_dtype", kvd.name},
      {"kv_cache_groups", first.groups.num_groups},
      {"kv_block_bytes", first.groups.block_bytes},
      {"enable_prefix_caching", prefix_caching},
      {"enable_chunked_prefill", chunked_prefill},
      {"async_scheduling", async.on},
      {"scheduler_reserve_full_isl", full_isl},
      {"watermark", watermark},
      // Which engine's scheduler runs: V0's (vllm/core/scheduler.py) or V1's (vllm/v1/core/sched).
      {"engine_generation", v0 ? "v0" : "v1"},
  };
  if (dpi.dp > 1) {
    view["data_parallel_size"] = dpi.dp;
    view["dp_lockstep"] = dpi.lockstep;
    view["dp_padding"] = std::string(vllm_dp_padding_name(dpi.padding));
    view["dp_combine"] = dpi.naive_combine ? "naive" : "allgather_reducescatter";
    view["dp_router"] = std::string(vllm_dp_router_name(dpi.router));
    view["dp_wave_sync_steps"] = dpi.wave_sync_steps;
    p.notes.push_back(dpi.explain + "; figures per GPU of one engine, KV pool and concurrency per engine (x " +
                      std::to_string(dpi.dp) + " engines)");
  }
  if (multi_step.steps > 1) {
    view["num_scheduler_steps"] = multi_step.steps;
    view["multi_step_stream_outputs"] = multi_step.streams_each_step;
    p.notes.push_back(multi_step.why);
  }
  if (spec.on) {
    view["speculative_method"] = spec.method;
    view["num_speculative_tokens"] = spec.tokens;
    p.notes.push_back("speculative decoding (mtp, " + std::to_string(spec.tokens) +
                      " draft tokens): the draft's weights and KV layer are counted; its profile-run forwards, its "
                      "CUDA graphs and the capture sizes spec decoding rounds to multiples of " +
                      std::to_string(spec.tokens + 1) + " are not; " + kMtpDraftStepsNote);
  }
  if (mamba) {
    std::uint64_t recurrent_in_first = 0;
    for (const auto& l : first.kv.layers) recurrent_in_first += l.state_bytes > 0 ? 1 : 0;
    view["hybrid"] = {
        {"attention_block_size", mamba->block_size},
        {"recurrent_layers", mamba->recurrent_layers},
        {"recurrent_state_bytes_per_layer", mamba->state_bytes},
        {"recurrent_page_bytes", mamba->page_bytes},
        {"recurrent_state_bytes_per_request", mamba->state_bytes * mamba->recurrent_layers},
        {"mamba_cache_mode", mamba_mode},
        {"recurrent_pages_per_request", mamba_blocks},
        {"recurrent_groups", first.groups.group_size ? ceil_div(recurrent_in_first, first.groups.group_size) : 0},
        {"blocks_per_request", first.groups.blocks_per_request},
        {"max_concurrent_requests", first.groups.blocks_per_request ? blocks / first.groups.blocks_per_request : 0},
    };
  }
  if (pp > 1) {
    nlohmann::json st = nlohmann::json::array();
    for (const auto& r : stages)
      st.push_back({{"stage", r.stage}, {"weights_gib", round4(Bytes(r.weights_bytes).gib())},
                    {"activation_peak_gib", round4(Bytes(r.activation_bytes).gib())},
                    {"kv_cache_gib", round4(static_cast<double>(r.pool) / static_cast<double>(kGiB))},
                    {"gpu_blocks", r.blocks}});
    view["stages"] = st;
  }
  p.engine_view = view;
  if (!async.on) p.notes.push_back(async.why);
  if (const auto pooling = pooling_view_mode(in.model); !pooling.empty()) {
    // A decoder embedder runs on the pooling runner, but its attention is causal (AttentionType.DECODER),
    // so GPUModelRunner.get_kv_cache_spec gives it a KV cache spec and the pool is sized as for
    // generation (only ENCODER_ONLY attention is skipped); the lm_head is gone (pooling adapter).
    p.engine_view["runner"] = "pooling";
    p.notes.push_back("pooling model (" + pooling + " pooling): vLLM's pooling runner keeps a KV cache for causal "
                      "attention (get_kv_cache_spec), so the pool is as for generation; decode figures do not apply");
  }
  return p;
}

}  // namespace

std::unique_ptr<Engine> make_vllm_engine(const std::filesystem::path& data_dir, std::string_view version) {
  return std::make_unique<VllmEngine>(EngineProfileData::load(data_dir, "vllm", version), data_dir / "compat");
}

}  // namespace vramplan::memory
