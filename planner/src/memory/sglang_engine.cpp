// SGLang profile. How SGLang sizes its token pool (python/sglang/srt/model_executor/model_runner.py,
// profile_max_num_token / init_memory_pool; model_runner_kv_cache_mixin.py in 0.5.x):
//   total_gpu_memory     = memory free before loading (get_available_gpu_memory after torch
//                          distributed init: the card's total less the CUDA context, NCCL, ...)
//   available_gpu_memory = memory free after loading the weights (min over the TP ranks)
//   rest_memory          = available_gpu_memory - total_gpu_memory x (1 - mem_fraction_static)
//                        = total_gpu_memory x mem_fraction_static - weights
//   max_total_num_tokens = rest_memory // cell_size, rounded down to a multiple of page_size
// where cell_size is the KV bytes of one token on one rank (MLA: kv_lora_rank + qk_rope_head_dim
// per layer). The GiB in its log lines are 2^30 bytes (get_available_gpu_memory divides by 1 << 30).
// The (1 - mem_fraction_static) share of the free memory is left for activations and CUDA graphs;
// unset, mem_fraction_static follows the version's rule in data/engines/sglang.json
// (server_args.py). Hybrid linear-attention / Mamba models (Qwen3-Next) split rest_memory between
// a per-request state pool and the full-attention token pool (sglang_mamba_split below); hybrid
// SWA models (gpt-oss, Llama-4, Gemma 4) split the token pool between full and sliding layers
// (sglang_swa_split); multimodal checkpoints lower the default mem_fraction_static by their vision
// tower's size (sglang_vlm_fraction_factor). Speculative decoding with the checkpoint's MTP layer
// as the draft: memory/sglang_speculative.hpp; DP attention: memory/sglang_dp_attention.hpp. Not
// modelled: other drafts (EAGLE3, NGRAM, a separate checkpoint).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/derived_context.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/engine_data.hpp"
#include "vramplan/memory/engine_profiles.hpp"
#include "vramplan/memory/engine_setup.hpp"
#include "vramplan/memory/sglang_attention.hpp"
#include "vramplan/memory/sglang_dp_attention.hpp"
#include "vramplan/memory/sglang_dsa.hpp"
#include "vramplan/memory/mtp_draft.hpp"
#include "vramplan/memory/sglang_pipeline.hpp"
#include "vramplan/memory/sglang_speculative.hpp"
#include "vramplan/memory/sglang_weights.hpp"
#include "vramplan/model/recurrent_state.hpp"

namespace vramplan::memory {

namespace {

//! The defaults server_args.py picks for a GPU of `gpu_mib` and a TP size (size_defaults rows:
//! [below MiB or null, chunked_prefill_size, cuda_graph_max_bs at TP < 4, at TP >= 4]).
struct SizeDefaults {
  std::uint64_t chunked_prefill_size = 0;
  std::uint64_t cuda_graph_max_bs = 0;
};

//! The first row whose bound (column 0) exceeds gpu_mib; a null bound matches every size.
JsonView bucket(const JsonView& rows, double gpu_mib) {
  for (const auto& row : rows.items()) {
    const auto bound = row.at(0);
    if (bound.raw().is_null() || gpu_mib < bound.as_number()) return row;
  }
  rows.fail("no row covers a GPU of " + std::to_string(static_cast<std::uint64_t>(gpu_mib)) + " MiB (end with a null bound)");
}

SizeDefaults size_defaults(const EngineProfileData& d, double gpu_mib, std::uint64_t tp) {
  const JsonView row = bucket(d.table("size_defaults"), gpu_mib);
  return {row.at(1).as_u64(), row.at(tp < 4 ? 2 : 3).as_u64()};
}

double round3(double x) { return std::round(x * 1000.0) / 1000.0; }

//! Concurrent requests at most, by release. Unset, every release takes the request pool's size
//! clamp(tokens / context_len x 512, 2048, 4096) and never more than half the token pool. A user's
//! --max-running-requests:
//!  - 0.4 - 0.5.9: taken as it is. The request pool is sized at it (model_runner.py init_memory_pool
//!    max_num_reqs), and tp_worker.py (model_runner.py in 0.5.9) takes min(user, that pool);
//!  - 0.5.10 - 0.5.13: cut to the estimate (model_runner_kv_cache_mixin.py _resolve_max_num_reqs);
//!  - from 0.5.14: cut to half the token pool, with a warning.
//! Read in the 0.4.7, 0.5.3, 0.5.6.post1, 0.5.9-0.5.23 wheels (docs/research/sglang-0.5.10-0.5.23.md §5).
std::uint64_t request_pool_estimate(std::uint64_t tokens, std::uint64_t context_len) {
  const double per_context = context_len ? static_cast<double>(tokens) / static_cast<double>(context_len) * 512.0 : 4096.0;
  return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(per_context), 2048, 4096);
}

std::uint64_t max_running_requests(const SglangRelease& release, std::optional<std::uint64_t> user, std::uint64_t tokens,
                                   std::uint64_t context_len) {
  const std::uint64_t estimate = request_pool_estimate(tokens, context_len);
  if (!user) return std::min(estimate, tokens / 2);
  if (release.at_least({0, 5, 14})) return std::min(*user, tokens / 2);
  if (release.at_least({0, 5, 10})) return std::min(*user, estimate);
  return *user;
}

//! The state pool of hybrid linear-attention / Mamba models (python/sglang/srt/model_executor/
//! model_runner_kv_cache_mixin.py handle_max_mamba_cache, 0.5.x): unset, max_mamba_cache_size =
//! rest x r / (1 + r) // mamba_cache_per_req with r = --mamba-full-memory-ratio (server_args.py
//! default 0.9); the state slots come off rest_memory before the token pool is sized, and
//! max_running_requests <= max_mamba_cache_size // 3 with the radix cache on
//! (MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO), // 1 with --disable-radix-cache.
//! mamba_cache_per_req (configs/mamba_utils.py Mamba2CacheParams) = recurrent layers x (conv state
//! in bfloat16 + SSM state in mamba2_state_dtype, float32 unless SGLANG_MAMBA_SSM_DTYPE or the
//! config's mamba_ssm_dtype says otherwise), both split over TP.
struct SglangMambaSplit {
  std::uint64_t per_req = 0, slots = 0, ratio_divisor = 3;
  std::uint64_t pool_bytes = 0;    //!< allocated: MambaPool holds size + 1 rows (memory_pool.py, every 0.5.x)
  std::uint64_t budget_bytes = 0;  //!< taken off rest_memory before the token pool: the padding row only from 0.5.17
  std::string slots_rule = "rest x r / (1 + r)";  //!< how the slot count was set
};

// `name` is one of `list` (the architecture tables SGLang's rules test).
bool listed_in(std::string_view name, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

//! Hybrid SWA token pools (model_runner_kv_cache_mixin.py set_num_tokens_hybrid_swa, 0.5.x):
//! for the architectures model_config.py is_hybrid_swa_model lists (Llama4ForConditionalGeneration,
//! GptOssForCausalLM, Gemma 4 from 0.5.11; Gemma-2/3 are not in it: their sliding layers keep full-length pools) and
//! without --disable-hybrid-swa-memory, the profiled max_total_num_tokens M (rest // cell_size,
//! every layer counted) is re-split so that full_tokens x F + swa_tokens x S = M x (F + S) with
//! swa_tokens = full_tokens x r: full_tokens = int(M (F + S) / (F + r S)), swa_tokens =
//! int(full_tokens x r), both page-aligned, where F / S are the bytes per token of all full /
//! sliding (or Llama-4 chunked) layers and r = --swa-full-tokens-ratio (server_args.py default
//! 0.8). The scheduler's max_total_num_tokens is then full_tokens (SWAKVPool size). From 0.5.11
//! (model_executor/pool_configurator.py HybridSWAPoolConfigurator) full_tokens = rest // (F + r S)
//! and --max-total-tokens caps full_tokens after the split instead of M before it.
struct SglangSwaSplit {
  bool on = false;
  double ratio = 0.8;
  std::uint64_t full_tokens = 0, swa_tokens = 0, full_bytes_per_token = 0, swa_bytes_per_token = 0;
};

SglangSwaSplit sglang_swa_split(const ModelArch& arch, const KvLayout& kv, std::uint64_t profiled_tokens,
                                std::uint64_t pool_bytes, std::uint64_t page, const EngineArgs& a,
                                const SglangRelease& release) {
  SglangSwaSplit s;
  s.ratio = arg_double(a, "swa-full-tokens-ratio").value_or(0.8);
  // Above 1 the sliding-window pool would outgrow the full one it exists to be smaller than (and
  // 1e308 overflowed the token counts below).
  if (!(s.ratio > 0 && s.ratio <= 1)) throw_usage("--swa-full-tokens-ratio must be in (0, 1]");
  // configs/model_config.py is_hybrid_swa_model (Step-3.5 from 0.5.9 and Gemma 4 from 0.5.11,
  // their first releases).
  const bool listed = listed_in(arch.architecture, {"GptOssForCausalLM", "Llama4ForConditionalGeneration",
                                                    "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration",
                                                    "Step3p5ForCausalLM"});
  if (!listed || arg_switch(a, "disable-hybrid-swa-memory")) return s;
  for (const auto& l : kv.layers) {
    if (l.window > 0) s.swa_bytes_per_token += l.bytes_per_token;
    else s.full_bytes_per_token += l.bytes_per_token;
  }
  if (s.swa_bytes_per_token == 0) return s;  // get_hybrid_layer_ids found no SWA layer
  s.on = true;
  if (s.full_bytes_per_token == 0) {  // every layer sliding: one pool of M tokens
    s.swa_tokens = profiled_tokens / page * page;
    return s;
  }
  const double denominator = static_cast<double>(s.full_bytes_per_token) + s.ratio * static_cast<double>(s.swa_bytes_per_token);
  if (release.at_least({0, 5, 11})) {
    // model_executor/pool_configurator.py HybridSWAPoolConfigurator (0.5.11+): the pool divided by
    // F + r S gives the full tokens, and --max-total-tokens caps them after the split.
    s.full_tokens = static_cast<std::uint64_t>(std::floor(static_cast<double>(pool_bytes) / denominator));
    if (const auto cap = arg_u64(a, "max-total-tokens")) s.full_tokens = std::min(s.full_tokens, *cap);
  } else {
    const double total = static_cast<double>(profiled_tokens) *
                         static_cast<double>(s.full_bytes_per_token + s.swa_bytes_per_token);
    s.full_tokens = static_cast<std::uint64_t>(total / denominator);
  }
  s.swa_tokens = static_cast<std::uint64_t>(static_cast<double>(s.full_tokens) * s.ratio);
  s.full_tokens = s.full_tokens / page * page;
  s.swa_tokens = s.swa_tokens / page * page;
  return s;
}

//! SGLang's token pool of a model with no recurrent layer spans every layer the runner counts
//! (model_runner_kv_cache_mixin.py profile_max_num_token: num_layers = num_effective_layers, and
//! get_cell_size_per_token = kv heads x (head_dim + v_head_dim) x num_layers x element size), attention
//! or not: DeciLM's attention-free blocks (nemotron_nas.py no_op) cost the model's KV heads like the
//! others. Hybrid models (Mamba, gated DeltaNet: mambaish_config) count full_attention_layer_ids only.
void pool_every_layer(KvLayout& kv, MemoryPlan& p) {
  std::uint64_t empty = 0, per_layer = 0;
  for (const auto& l : kv.layers) {
    if (l.kind == LayerAttention::Recurrent || l.state_bytes > 0) return;
    if (l.kind == LayerAttention::None) ++empty;
    else per_layer = std::max(per_layer, l.bytes_per_token);
  }
  if (empty == 0 || per_layer == 0) return;
  kv.bytes_per_token = checked_add(kv.bytes_per_token, checked_mul(empty, per_layer), "KV bytes per token");
  kv.explain += " + " + std::to_string(empty) + " attention-free layers x " + grouped(per_layer) +
                " B (SGLang's pool spans every layer) = " + grouped(kv.bytes_per_token) + " B";
  p.kv.bytes_per_token = kv.bytes_per_token;
  p.kv.explain = kv.explain;
}

SglangMambaSplit sglang_mamba_split(const ModelArch& arch, std::uint64_t tp, double rest, const EngineArgs& a,
                                    const SglangRelease& release) {
  SglangMambaSplit m;
  std::uint64_t layers = 0;
  for (auto kind : arch.layer_attention)  // Falcon-H1: a Mamba mixer beside every attention
    layers += kind == LayerAttention::Recurrent || (arch.recurrent_in_every_layer && kind != LayerAttention::None) ? 1 : 0;
  if (layers == 0 || arch.recurrent_ssm_state_elems == 0) return m;
  constexpr std::uint64_t kConvBytes = 2;  // SGLANG_MAMBA_CONV_DTYPE default torch.bfloat16
  constexpr std::uint64_t kSsmBytes = 4;   // default "float32" (configs read mamba_ssm_dtype, not
                                           // the mamba_ssm_cache_dtype Nemotron configs carry)
  // Mamba2StateShape.create: the same TP split as vLLM's, n_groups replicated up to TP.
  const auto e = recurrent_state_elems(arch, tp);
  m.per_req = checked_mul(layers, e.conv * kConvBytes + e.ssm * kSsmBytes);
  const double r = arg_double(a, "mamba-full-memory-ratio").value_or(0.9);
  if (!(r > 0)) throw_usage("--mamba-full-memory-ratio must be > 0");
  // 0.5.17+ charges the pool's padding slot (mem_cache/kv_cache_configurator.py:
  // (K + 1) x per_req = budget, K = (budget - per_req) // per_req).
  const std::uint64_t padding = release.at_least({0, 5, 17}) ? 1 : 0;
  // A set size wins; with --disable-radix-cache a set --max-running-requests is the size, and
  // before 0.5.9 512 when neither is set (model_runner_kv_cache_mixin.py handle_max_mamba_cache,
  // read in 0.5.6.post1 - 0.5.9; kv_cache_configurator.py from 0.5.16 as 0.5.9).
  std::optional<std::uint64_t> fixed = arg_u64(a, "max-mamba-cache-size");
  if (fixed) m.slots_rule = "--max-mamba-cache-size";
  if (!fixed && arg_switch(a, "disable-radix-cache")) {
    fixed = arg_u64(a, "max-running-requests");
    m.slots_rule = "--max-running-requests without the radix cache";
    if (!fixed && !release.at_least({0, 5, 9})) {
      fixed = 512;
      m.slots_rule = "512 without the radix cache, up to 0.5.8";
    }
  }
  if (fixed) {
    m.slots = *fixed;
  } else {
    const double budget = std::max(0.0, rest) * r / (1.0 + r) - static_cast<double>(padding * m.per_req);
    m.slots = budget > 0 ? static_cast<std::uint64_t>(budget / static_cast<double>(m.per_req)) : 0;
  }
  m.pool_bytes = checked_mul(m.slots + 1, m.per_req, "mamba state pool");
  m.budget_bytes = checked_mul(m.slots + padding, m.per_req, "mamba state pool");
  // max_running_requests <= slots // ratio (_calculate_mamba_ratio): 3 with the radix cache, 1
  // without; from 0.5.14 the architectures _support_mamba_cache_extra_buffer lists keep the overlap
  // scheduler with an "extra_buffer" radix strategy (_handle_mamba_radix_cache, strategy "auto"),
  // whose ping-pong states add 2.
  const bool extra_buffer = release.at_least({0, 5, 14}) && !arg_switch(a, "disable-overlap-schedule") &&
                            listed_in(arch.architecture, {"Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
                                                          "Qwen3NextForCausalLM", "FalconH1ForCausalLM",
                                                          "GraniteMoeHybridForCausalLM", "NemotronHForCausalLM"});
  m.ratio_divisor = arg_switch(a, "disable-radix-cache") ? 1 : extra_buffer ? 5 : 3;
  return m;
}

//! The flags server_args.py sets whatever was asked (_handle_model_specific_adjustments):
//! KimiLinearForCausalLM runs without the radix cache up to 0.5.13 ("Disabling Radix Cache for
//! KimiLinearForCausalLM as it is not yet supported"; 0.5.14 gives it the mamba radix cache).
EngineArgs forced_args(const EngineArgs& given, const ModelArch& arch, const SglangRelease& release,
                       std::vector<std::string>& notes) {
  EngineArgs a = given;
  if (arch.architecture == "KimiLinearForCausalLM" && !release.at_least({0, 5, 14}) && !arg_switch(a, "disable-radix-cache")) {
    a["disable-radix-cache"] = "true";
    notes.push_back("radix cache off: SGLang up to 0.5.13 disables it for KimiLinearForCausalLM "
                    "(server_args.py _handle_model_specific_adjustments)");
  }
  return a;
}

//! configs/model_config.py is_multimodal (multimodal_model_archs, the ones vramplan plans) for a
//! checkpoint whose config has a vision_config.
bool sglang_multimodal(const ModelArch& arch) {
  return arch.multimodal &&
         listed_in(arch.architecture,
                   {"Gemma3ForConditionalGeneration", "Gemma4ForConditionalGeneration", "KimiK25ForConditionalGeneration",
                    "Llama4ForConditionalGeneration", "LlavaForConditionalGeneration", "Mistral3ForConditionalGeneration",
                    "MllamaForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration", "Qwen3VLForConditionalGeneration",
                    "Qwen3VLMoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"});
}

//! Multimodal checkpoints (configs/model_config.py multimodal_model_archs, with a vision_config):
//! server_args.py adjust_mem_fraction_for_vlm scales a default mem_fraction_static (never a given
//! one) by 0.95 x clamp(1 - 0.1 x (ratio - 1), 0.8, 1.05), ratio = the tower's layers x hidden^2
//! over ViT-L/14's 24 x 1024^2, each read from vision_config with those defaults (0.5.9 and 0.5.11
//! alike). Returns 1 for other models; `why` says how the factor came about.
double sglang_vlm_fraction_factor(const ModelArch& arch, std::string& why) {
  if (!sglang_multimodal(arch)) return 1.0;
  const double layers = arch.vision_config_layers ? static_cast<double>(arch.vision_config_layers) : 24.0;
  const double hidden = arch.vision_config_hidden ? static_cast<double>(arch.vision_config_hidden) : 1024.0;
  const double ratio = layers * hidden * hidden / (24.0 * 1024.0 * 1024.0);
  const double factor = 0.95 * std::clamp(1.0 - 0.1 * (ratio - 1.0), 0.8, 1.05);
  char buf[200];
  std::snprintf(buf, sizeof buf, "x %.4f for the vision tower (%.0f layers x %.0f^2 = %.3f x ViT-L/14; server_args.py adjust_mem_fraction_for_vlm)",
                factor, layers, hidden, ratio);
  why = buf;
  return factor;
}

//! The prefill ("piecewise") CUDA graphs a release captures by default, and what
//! _handle_gpu_memory_settings reserves for them before the 10 GiB floor (server_args.py, read in the
//! 0.5.9 - 0.5.23 wheels on 2026-12-06): none before 0.5.10; then len(tokens) x 8 MiB for an MHA model,
//! the tokens being _generate_piecewise_cuda_graph_tokens up to chunked_prefill_size, and 1.5 GiB for an
//! MLA one. Which models keep them on changes by release (_handle_piecewise_cuda_graph, from 0.5.16
//! _disable_breakable_cudagraph_if_incompatible). 0 MiB when off; `why` says which rule decided.
double sglang_piecewise_graph_reserve_mib(const ModelArch& arch, const SglangRelease& r, const EngineArgs& a,
                                          std::uint64_t chunked_prefill_size, bool speculative, std::string& why) {
  if (!r.at_least({0, 5, 10})) return 0;
  const bool mla = arch.kv_lora_rank > 0, dsa = arch.index_topk > 0;
  const std::string& name = arch.architecture;
  auto off = [&](std::string reason) {
    why = "no prefill CUDA graphs: " + std::move(reason);
    return 0.0;
  };
  if (arg_switch(a, "disable-piecewise-cuda-graph")) return off("--disable-piecewise-cuda-graph");
  if (arg_switch(a, "disable-cuda-graph")) return off("--disable-cuda-graph");
  if (speculative && !r.at_least({0, 5, 11})) return off("speculative decoding (0.5.10)");
  if (sglang_multimodal(arch)) {
    // Multimodal models: off, except those the release allow-lists (0.5.16 Qwen3.5, 0.5.18 Kimi-K2.5).
    const bool allowed = (r.at_least({0, 5, 16}) && listed_in(name, {"Qwen3_5ForConditionalGeneration",
                                                                      "Qwen3_5MoeForConditionalGeneration"})) ||
                         (r.at_least({0, 5, 18}) && name == "KimiK25ForConditionalGeneration");
    if (!allowed) return off("a multimodal model");
  }
  if (!r.at_least({0, 5, 16}) && name == "Qwen3NextForCausalLM") return off("Qwen3NextForCausalLM (0.5.10 - 0.5.15)");
  if (dsa && !r.at_least({0, 5, 13})) return off("DeepSeek sparse attention (0.5.10 - 0.5.12)");
  if (mla && r.at_least({0, 5, 16}) && !r.at_least({0, 5, 18}) && !(dsa && r.at_least({0, 5, 17})))
    return off("an MLA model (0.5.16 - 0.5.17)");
  if (mla) {
    why = "prefill CUDA graphs of an MLA model: 1.5 GiB";
    return 1536;
  }
  // range(4, 33, 4) + range(48, 257, 16) + range(288, 513, 32) + range(576, 1025, 64) +
  // range(1280, 4097, 256) + range(4608, max + 1, 512), the sizes up to max.
  struct Run {
    std::uint64_t first, last, step;
  };
  static constexpr Run kRuns[] = {{4, 32, 4}, {48, 256, 16}, {288, 512, 32}, {576, 1024, 64}, {1280, 4096, 256}, {4608, UINT64_MAX, 512}};
  std::uint64_t sizes = 0;
  for (const Run& run : kRuns)
    for (std::uint64_t t = run.first; t <= run.last && t <= chunked_prefill_size; t += run.step) ++sizes;
  why = "prefill CUDA graphs: " + std::to_string(sizes) + " sizes up to chunked_prefill_size " +
        std::to_string(chunked_prefill_size) + " x 8 MiB";
  return static_cast<double>(sizes) * 8.0;
}

//! mem_fraction_static when the user leaves it unset, by the profile's rule (see sglang.json);
//! `speculative_mib`: what the reserve_sum rule adds for a draft model, after its floor.
double default_fraction(const EngineProfileData& d, double gpu_mib, std::uint64_t tp, std::uint64_t pp, const SizeDefaults& s,
                        double speculative_mib, double piecewise_graph_mib = 0) {
  const JsonView rule = d.table("default_mem_fraction");
  const std::string kind = rule.req_string("rule");
  if (kind == "tp_table") {  // rows [min TP, fraction], largest TP first
    for (const auto& row : rule.at("rows").items())
      if (static_cast<double>(tp) >= row.at(0).as_number()) return row.at(1).as_number();
    rule.fail_at("rows", "no row for TP " + std::to_string(tp) + " (end with a row for TP 1)");
  }
  if (kind == "gpu_buckets") {  // rows [below MiB or null, reserve GiB, reserve GiB per rank]
    const JsonView row = bucket(rule.at("rows"), gpu_mib);
    // parallel_size = tp_size x pp_size (server_args.py, 0.4.7 - 0.5.2).
    const double reserved = (row.at(1).as_number() + static_cast<double>(tp * pp) * row.at(2).as_number()) * 1024.0;
    return round3((gpu_mib - reserved) / gpu_mib);
  }
  if (kind == "reserve_sum") {
    const double prefill = std::max(static_cast<double>(s.chunked_prefill_size), rule.req_number("min_prefill_tokens"));
    double reserved = rule.req_number("base_mib") + prefill * rule.req_number("mib_per_prefill_token") +
                      static_cast<double>(s.cuda_graph_max_bs) * rule.req_number("mib_per_graph_bs") +
                      static_cast<double>(tp * pp) * rule.req_number("mib_per_rank") + piecewise_graph_mib;
    if (gpu_mib > rule.req_number("floor_above_mib")) reserved = std::max(reserved, rule.req_number("floor_mib"));
    return round3((gpu_mib - reserved - speculative_mib) / gpu_mib);
  }
  rule.fail_at("rule", "unknown rule '" + kind + "' (known: tp_table, gpu_buckets, reserve_sum)");
}

// --ep-size: the routed experts split whole over ep of the TP ranks, each sliced over the other
// tp / ep (distributed/parallel_state.py initialize_model_parallel: moe_tp_size = tp // ep;
// layers/moe/fused_moe_triton/layer.py FusedMoE.__init__ asserts the experts divide by ep). A
// rank holds the same bytes as under plain TP when they divide; the step model times the busiest
// rank (perf::expected_busiest_rank_experts).
std::uint64_t sglang_ep_size(const EngineArgs& a, const ModelArch& arch, std::uint64_t tp) {
  const std::uint64_t ep = arg_u64(a, "ep-size").value_or(1);
  if (ep == 0) throw_usage("--ep-size must be >= 1");
  if (ep == 1) return 1;
  if (tp % ep != 0)
    throw_usage("--ep-size " + std::to_string(ep) + " must divide --tp-size " + std::to_string(tp) +
                " (SGLang splits each expert over tp / ep ranks: parallel_state.py initialize_model_parallel)");
  if (arch.num_experts == 0)
    throw_usage("--ep-size " + std::to_string(ep) + ": " + arch.architecture + " has no routed experts to split");
  if (arch.num_experts % ep != 0)
    throw_usage("--ep-size " + std::to_string(ep) + ": " + std::to_string(arch.num_experts) +
                " routed experts do not divide by it (SGLang FusedMoE.__init__ asserts num_experts % ep_size == 0)");
  return ep;
}

class SglangEngine final : public Engine {
 public:
  explicit SglangEngine(EngineProfileData d) : d_(std::move(d)) {}
  std::string_view name() const override { return "sglang"; }
  std::string_view version() const override { return d_.version(); }
  std::string_view release() const override { return d_.release(); }
  std::vector<EngineOption> options() const override {
    return {{"mem-fraction-static", "fraction of the memory free at start for weights + KV pool (default: the version's rule)", false, {}, OptionValue::number},
            {"max-running-requests", "max concurrent requests", false, {}, OptionValue::whole},
            {"max-total-tokens", "cap on the token pool", false, {}, OptionValue::whole},
            {"context-length", "max context length (default: the model's)", false, {}, OptionValue::whole},
            {"chunked-prefill-size", "tokens per prefill chunk (-1: no chunking)", false, {}},
            {"cuda-graph-max-bs", "largest CUDA-graph batch", false, {}, OptionValue::whole},
            {"page-size", "tokens per KV page (default 1; the trtllm, flashmla, cutlass_mla and fa4 backends set their own)", false, {}, OptionValue::whole},
            {"attention-backend", "the attention kernels (default: SGLang's choice by GPU and model; it decides the page size)", false, {}},
            {"decode-attention-backend", "the decode attention kernels (a trtllm backend here sets the page size)", false, {}},
            {"prefill-attention-backend", "the prefill attention kernels (trtllm_mha and, for MHA models, fa4 set the page size)", false, {}},
            {"kv-cache-dtype", "auto, fp8_e4m3, fp8_e5m2", false, {}},
            {"tp-size", "tensor parallel size", false, {"tp"}, OptionValue::whole},
            {"pp-size", "pipeline parallel stages, each --tp-size GPUs holding its own layers and token pool", false, {"pp", "pipeline-parallel-size"}, OptionValue::whole},
            {"nnodes", "nodes the server spans: each runs tp x pp / nnodes GPUs (the node size of collectives across hosts; memory/launch_nodes.hpp)", false, {}, OptionValue::whole},
            {"ep-size", "expert-parallel ranks within the TP group: each GPU holds experts / ep whole experts (default 1)", false, {"ep", "expert-parallel-size"}, OptionValue::whole},
            {"dp-size", "with --enable-dp-attention: attention data-parallel ranks within the TP group", false, {"dp", "data-parallel-size"}, OptionValue::whole},
            {"enable-dp-attention", "attention as --dp-size ranks of tp / dp GPUs, each with its own requests and token pool", true, {}},
            {"enable-dp-lm-head", "with DP attention: the lm_head split over a rank's GPUs instead of all", true, {}},
            {"dtype", "auto, bfloat16, float16, float32", false, {}},
            {"quantization", "fp8 (online) or the checkpoint's method", false, {}},
            {"disable-cuda-graph", "no CUDA graphs", true, {}},
            {"disable-piecewise-cuda-graph", "0.5.10+: no prefill (piecewise) CUDA graphs, nor their reserve", true, {}},
            {"max-prefill-tokens", "token budget of one prefill batch (default 16384)", false, {}, OptionValue::whole},
            {"disable-radix-cache", "no prefix reuse through the radix tree", true, {}},
            {"enable-mixed-chunk", "run a prefill chunk and the decode batch in one step", true, {}},
            {"disable-overlap-schedule", "form each batch after the previous one finishes (no CPU/GPU overlap)", true, {}},
            {"schedule-conservativeness", "scales the share of future output tokens reserved at admission (default 1.0)", false, {}, OptionValue::number},
            {"mamba-full-memory-ratio", "hybrid models: state pool / token pool memory ratio (default 0.9)", false, {}, OptionValue::number},
            {"max-mamba-cache-size", "hybrid models: request state slots (default: from the ratio)", false, {}, OptionValue::whole},
            {"swa-full-tokens-ratio", "gpt-oss / Llama-4 / Gemma 4: sliding-window pool tokens per full-pool token (default 0.8)", false, {}, OptionValue::number},
            {"disable-hybrid-swa-memory", "gpt-oss / Llama-4 / Gemma 4: size the sliding layers' pools like full ones", true, {}},
            {"speculative-algorithm", "EAGLE or NEXTN: the checkpoint's MTP layer drafts (DeepSeek-V3 / V3.2, GLM-5)", false, {}},
            {"speculative-num-steps", "draft steps (default: SGLang's choice, 3)", false, {}, OptionValue::whole},
            {"speculative-eagle-topk", "draft branches per step (default 1)", false, {}, OptionValue::whole},
            {"speculative-num-draft-tokens", "tokens verified per step (default 4; steps + 1 with top-k 1)", false, {}, OptionValue::whole},
            {"speculative-draft-model-path", "a separate draft checkpoint (not modelled)", false, {}}};
  }

  MemoryPlan plan(const PlanInput& in) const override {
    MemoryPlan p = start_plan(*this, d_, in);
    const auto& arch = in.model.arch;
    const SglangRelease release = SglangRelease::parse(d_.release(), d_.assumed());
    const EngineArgs a = forced_args(in.args, arch, release, p.notes);
    const std::uint64_t tp = place_tp_size(p, a);
    const std::uint64_t pp = arg_u64(a, "pp-size").value_or(1);
    if (pp == 0) throw_usage("--pp-size must be >= 1");
    p.gpu_count = checked_mul(tp, pp, "GPUs");
    const std::uint64_t ep = sglang_ep_size(a, arch, tp);
    note_expert_parallel(p, "--ep-size " + std::to_string(ep), arch, tp, ep);
    // server_args.py reads the card's size in MiB (nvidia-smi memory.total); the runtime total is
    // the closest figure a plan has (0.6 % lower on an H100: it moves the default by <= 0.001).
    const double total = static_cast<double>(in.gpu.total.count());
    const double gpu_mib = total / static_cast<double>(kMiB);
    const SizeDefaults sized = size_defaults(d_, gpu_mib, tp);
    // server_args.py: chunked_prefill_size -1 (or 0) turns chunked prefill off; 0 stands for it here.
    const bool unchunked = arg_string(a, "chunked-prefill-size") == std::optional<std::string>("-1");
    const std::uint64_t chunk = unchunked ? 0 : arg_u64(a, "chunked-prefill-size").value_or(sized.chunked_prefill_size);
    const std::uint64_t graph_bs =
        arg_switch(a, "disable-cuda-graph") ? 0 : arg_u64(a, "cuda-graph-max-bs").value_or(sized.cuda_graph_max_bs);
    // _handle_gpu_memory_settings (read in the 0.5.3, 0.5.6, 0.5.9 and 0.5.12 wheels; 0.5.20's
    // arg_groups/memory_hook.py alike): the activation reserve is max(chunked_prefill_size, 2048) x
    // 1.5 MiB, and with chunking off (chunked_prefill_size <= 0) max(max_prefill_tokens, 2048) x 1.5:
    // an unchunked prefill runs up to max_prefill_tokens at once.
    const std::uint64_t reserve_prefill =
        chunk > 0 ? chunk : arg_u64(a, "max-prefill-tokens").value_or(d_.u64("max_prefill_tokens"));
    const SizeDefaults used{reserve_prefill, graph_bs};
    const SglangDpAttention dpa = sglang_dp_attention(a, arch, release, tp, graph_bs);
    if (dpa.on) p.notes.push_back(dpa.explain);
    const SglangSpeculative spec = sglang_speculative(a, in.model, release);
    for (const auto& n : spec.notes) p.notes.push_back(n);
    if (pp > 1 && (dpa.on || spec.on))
      throw_usage(std::string("--pp-size ") + std::to_string(pp) + " with " +
                  (dpa.on ? "--enable-dp-attention" : "speculative decoding") +
                  ": the pair is not modelled (each stage's share of the ranks' pools or of the draft)");
    const std::uint64_t ctx_len = arg_u64(a, "context-length").value_or(in.workload.context.value_or(arch.max_position_embeddings));
    const std::optional<double> user_f = arg_double(a, "mem-fraction-static");
    std::string pcg_why;
    const double pcg_mib = sglang_piecewise_graph_reserve_mib(arch, release, a, chunk, spec.on, pcg_why);
    // DP attention's graph buffers join the reserve before its floor (server_args.py
    // _handle_gpu_memory_settings), as the piecewise graphs' do.
    double f = user_f.value_or(default_fraction(d_, gpu_mib, tp, pp, used,
                                                spec.on ? sglang_speculative_reserve_mib(release) : 0.0,
                                                pcg_mib + dpa.reserve_mib));
    if (!user_f && dpa.on) p.notes.push_back(dpa.reserve_explain);
    if (!user_f && !pcg_why.empty()) p.notes.push_back("mem_fraction_static reserve: " + pcg_why + " (server_args.py _handle_gpu_memory_settings, 0.5.10+)");
    if (!user_f) {
      std::string why;
      const double vlm = sglang_vlm_fraction_factor(arch, why);
      if (vlm != 1.0) {
        p.notes.push_back("mem_fraction_static " + std::to_string(f).substr(0, 5) + " " + why);
        f *= vlm;
      }
    }
    // A default rule whose reserves exceed the card gives f <= 0: SGLang takes it as it is, its
    // pool (total x f - weights) is empty and it stops with "Not enough memory" (model_runner.py
    // init_memory_pool): a plan that does not fit, not a usage error (the user gave no fraction).
    std::string default_f_refusal;
    if (!user_f && !(f > 0)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.3f", f);
      default_f_refusal =
          std::string("the default mem_fraction_static computed for this card is ") + buf +
          " (<= 0): SGLang's reserve for activations (" +
          (chunk > 0 ? "--chunked-prefill-size " + std::to_string(chunk)
                     : "chunking off: max_prefill_tokens " + std::to_string(reserve_prefill)) +
          " x 1.5 MiB), CUDA graphs and metadata exceeds the " + std::to_string(static_cast<std::uint64_t>(gpu_mib)) +
          " MiB of the GPU (server_args.py _handle_gpu_memory_settings), so its token pool is empty and it stops "
          "with \"Not enough memory. Please try to increase --mem-fraction-static\"; lower --chunked-prefill-size "
          "(or --max-prefill-tokens) or set --mem-fraction-static";
      f = 0;
    } else if (!(f > 0 && f < 1)) {
      throw_usage("--mem-fraction-static must be in (0, 1)");
    }
    // DeepSeek sparse attention: the release's page size, fp8 latent layout and pool sizing
    // (memory/sglang_dsa.hpp; 0.5.9 _handle_model_specific_adjustments; mem_cache/memory_pool.py
    // NSATokenToKVPool: assert page_size == 64).
    const bool dsa = arch.index_topk > 0;
    const auto cc = in.gpu.capability();
    const SglangDsaPool dsa_rules = sglang_dsa_pool(release, in.gpu.vendor, cc ? cc->major : 0);
    if (dsa && dsa_rules.forced_mem_fraction > 0) {
      f = dsa_rules.forced_mem_fraction;
      default_f_refusal.clear();  // the forced fraction replaces the default rule's
      p.notes.push_back("mem_fraction_static " + std::to_string(f).substr(0, 4) +
                        ": SGLang 0.5.3 sets it for DeepSeek sparse attention whatever was asked, and turns DP attention on "
                        "(server_args.py _handle_model_specific_adjustments; DP attention not modelled)");
    }
    const std::uint64_t dsa_page = dsa_rules.page_size;
    const auto user_page = arg_u64(a, "page-size");
    const SglangAttention attention = sglang_attention(arch, cc ? cc->major : 0, a, d_.u64("page_size"), release);
    const std::uint64_t page = dsa ? dsa_page : attention.page_size;
    if (page == 0) throw_usage("--page-size must be >= 1");
    if (!dsa && !attention.why.empty()) p.notes.push_back("attention backend " + attention.why);
    // aiter's workspace outside the static pool: above 8,192 tokens of context SGLang scales the
    // fraction, a given one too, by 0.85 on ROCm (server_args.py _handle_attention_backend_compatibility,
    // 0.5.5 - 0.5.18; arg_groups/attention_hook.py from 0.5.19).
    if (in.gpu.vendor == "amd" && release.at_least({0, 5, 5}) && ctx_len > 8192 && sglang_rocm_runs_aiter(arch, a, tp)) {
      p.notes.push_back("mem_fraction_static " + std::to_string(f).substr(0, 5) +
                        " x 0.85: the aiter attention backend above 8,192 tokens of context (server_args.py "
                        "_handle_attention_backend_compatibility, 0.5.5+)");
      f *= 0.85;
    }
    if (dsa && user_page && *user_page != dsa_page)
      p.notes.push_back("--page-size " + std::to_string(*user_page) + " ignored: SGLang runs DeepSeek sparse attention on " +
                        std::to_string(dsa_page) + "-token pages on " + (in.gpu.vendor == "amd" ? "ROCm" : "CUDA"));

    ShardOptions shard{tp, pp, 0, d_.u64("vocab_pad"), false};
    shard.pp_extra_layers_last = true;  // distributed/utils.py get_pp_indices
    shard.k_eq_v_value_slot = true;  // gemma4_causal.py Gemma4Attention.load_weights duplicates k_proj into V
    dpa.apply(shard);
    const ResolvedWeights rw =
        place_weights(p, in, {arg_string(a, "dtype"), arg_string(a, "quantization"), in.weights}, shard);
    const SglangLoadExtras load_extras{d_.u64("rope_cache_bytes"), Bytes::from_gib(d_.number("load_non_torch_gib")),
                                       "engine data load_non_torch_gib"};
    for (auto& c : sglang_load_extras(in.model, rw, shard, load_extras)) p.weights.push_back(std::move(c));
    Bytes weights = p.weights_bytes();
    // cell_size: every layer at full length; the hybrid SWA split below re-divides the pool.
    // DeepSeek sparse attention: "auto" means an fp8 cache on compute capability 10+ and bf16
    // below (0.5.9 server_args.py _set_default_nsa_kv_cache_dtype).
    const bool dsa_fp8 = dsa && cc && cc->major >= 10;
    KvDtype kv_dtype;
    // DP attention: a GPU keeps the KV heads of its attention group (get_num_kv_heads(attn_tp_size)).
    KvLayout kv = place_kv_layout(p, in, rw, dpa.on ? dpa.attn_tp : tp, dsa_fp8 ? "fp8_e4m3" : "", dsa_rules.fp8_latent,
                                  &kv_dtype);
    pool_every_layer(kv, p);
    // The bytes a token costs in the release's cell size (profile_max_num_token divides the pool
    // by it): what is allocated, except for DSA models before 0.5.17.
    std::string budget_note;
    std::uint64_t cell =
        dsa && kv_dtype.block_elems == 1
            ? sglang_dsa_budget_bytes(release, arch, kv, kv_dtype.block_bytes, budget_note)
            : kv.bytes_per_token;
    if (!budget_note.empty()) p.notes.push_back(budget_note);

    // A calibration's figures of this deployment (reconcile --update-calibration): the memory
    // SGLang's log found free before loading ("Load weight begin. avail mem", model_runner.py
    // load_model; the total_gpu_memory of profile_max_num_token) replaces total - context, and the
    // graphs it logged ("Capture cuda graph end ... mem usage", model_runner.py init_cuda_graphs)
    // replace the reserve rule.
    const auto& dep = in.deployment;
    const bool logged_free = dep && dep->free_before_load;
    if (logged_free && *dep->free_before_load > in.gpu.total)
      throw_usage("calibration: the deployment's free memory before loading (" + format_gib(*dep->free_before_load) +
                  ") exceeds the card's total (" + format_gib(in.gpu.total) + "): plan it on the card its log came from");
    const Bytes ctx = logged_free ? in.gpu.total - *dep->free_before_load
                                  : in.measured_context.value_or(Bytes::from_gib(d_.number("context_gib")));
    const std::string ctx_source = logged_free ? "total - the logged free memory before loading, " + dep->source
                                   : in.measured_context ? in.measured_context_source
                                                         : "engine data context_gib";
    const double free_before = total - static_cast<double>(ctx.count());
    // Pipeline parallelism: each stage's GPUs hold their own layers (the embedding on the first,
    // the final norm and lm_head on the last) and size their own pool; every rank then takes the
    // smallest token count (model_runner_kv_cache_mixin.py: an all_reduce MIN of
    // max_total_num_tokens over the world group). The plan shows the stage that holds the most.
    std::optional<std::uint64_t> stage_min_tokens;
    if (pp > 1) {
      const SglangPipeline pipe = sglang_pipeline(in.model, rw, shard, load_extras, kv, cell, free_before * f);
      stage_min_tokens = pipe.min_tokens;
      p.weights = pipe.shown_weights;
      weights = p.weights_bytes();
      kv.bytes_per_token = pipe.shown_kv_bytes;
      cell = pipe.shown_cell;
      p.kv.bytes_per_token = kv.bytes_per_token;
      p.kv.explain += "; stage " + std::to_string(pipe.shown) + " of " + std::to_string(pp) + " holds layers " +
                      pipe.shown_layers + ": " + grouped(kv.bytes_per_token) + " B a token";
      p.notes.push_back(pipe.explain);
    }
    const double rest_all = free_before * f - static_cast<double>(weights.count());
    const SglangMambaSplit mamba = sglang_mamba_split(arch, tp, rest_all, a, release);
    if (pp > 1 && mamba.per_req > 0)
      throw_usage("--pp-size " + std::to_string(pp) + ": " + arch.architecture +
                  "'s recurrent state pool split over pipeline stages is not modelled");
    const double rest = rest_all - static_cast<double>(mamba.budget_bytes);
    const std::uint64_t pool = rest > 0 ? static_cast<std::uint64_t>(rest) : 0;
    p.kv.state_bytes_per_sequence = mamba.per_req;
    if (mamba.per_req > 0)
      p.kv_cache.push_back({"kv_cache.recurrent_state", Bytes(mamba.pool_bytes),
                            grouped(mamba.slots) + " request state slots + 1 padding row x " + grouped(mamba.per_req) +
                                " B (conv bf16 + SSM fp32 over the recurrent layers; " + mamba.slots_rule + ")"});
    std::uint64_t tokens = cell ? pool / cell : 0;
    if (stage_min_tokens) tokens = std::min(tokens, *stage_min_tokens);
    if (const auto cap = arg_u64(a, "max-total-tokens")) tokens = std::min(tokens, *cap);
    tokens = tokens / page * page;
    // Speculative decoding: 48 running requests when unset (server_args.py
    // _handle_speculative_decoding); 0.5.3-0.5.6 grew the pool past its budget for the draft's and
    // the verify's slots (sglang_speculative.hpp).
    const std::optional<std::uint64_t> user_running =
        spec.on ? std::optional<std::uint64_t>(arg_u64(a, "max-running-requests").value_or(48)) : arg_u64(a, "max-running-requests");
    if (user_running && *user_running == 0) throw_usage("--max-running-requests must be >= 1");
    const std::uint64_t spec_extra = sglang_speculative_extra_tokens(spec, release, user_running.value_or(0));
    if (spec_extra > 0) {
      tokens = checked_add(tokens, spec_extra, "token pool");
      p.notes.push_back("token pool + " + grouped(spec_extra) + " tokens past its budget: SGLang before 0.5.7 adds max_running_requests x "
                        "(steps x top-k + draft tokens) + 100 for the draft and verify slots (model_runner.py init_memory_pool)");
    }
    const std::string pool_explain = "token pool = (total " + format_gib(in.gpu.total) + " - context " + format_gib(ctx) +
                                     ") x mem_fraction_static " + std::to_string(f).substr(0, 5) + " - weights " +
                                     format_gib(weights) + " = " + grouped(pool) + " B -> " + grouped(tokens) +
                                     " tokens x " + grouped(kv.bytes_per_token) + " B (page size " + std::to_string(page) + ")" +
                                     (spec_extra ? " (" + grouped(spec_extra) + " of them past the budget for speculative slots)" : "") +
                                     (cell != kv.bytes_per_token ? "; tokens counted at the release's " + grouped(cell) + " B a token" : "");
    const SglangSwaSplit swa = sglang_swa_split(arch, kv, tokens, pool, page, a, release);
    if (pp > 1 && swa.on)
      throw_usage("--pp-size " + std::to_string(pp) + ": " + arch.architecture +
                  "'s hybrid sliding-window pools split over pipeline stages are not modelled (--disable-hybrid-swa-memory "
                  "sizes every layer at full length, which is)");
    if (swa.on) {
      tokens = swa.full_tokens > 0 ? swa.full_tokens : swa.swa_tokens;
      const std::uint64_t bytes = checked_add(checked_mul(swa.full_tokens, swa.full_bytes_per_token),
                                              checked_mul(swa.swa_tokens, swa.swa_bytes_per_token), "SWA pools");
      p.kv_cache.push_back({"kv_cache", Bytes(bytes),
                            pool_explain + "; hybrid SWA pools (swa_full_tokens_ratio " + std::to_string(swa.ratio).substr(0, 4) +
                                "): " + grouped(swa.full_tokens) + " tokens x " + grouped(swa.full_bytes_per_token) +
                                " B (full layers) + " + grouped(swa.swa_tokens) + " tokens x " +
                                grouped(swa.swa_bytes_per_token) + " B (sliding layers)"});
    } else {
      p.kv_cache.push_back({"kv_cache", Bytes(checked_mul(tokens, kv.bytes_per_token)), pool_explain});
    }
    // What SGLang's own reserve heuristic sets aside for the (1 - f) share (server_args.py).
    // server_args.py counts its reserve in MiB (the card's memory.total from nvidia-smi).
    const std::uint64_t act_tokens = chunk > 0 ? chunk : reserve_prefill;  // unchunked: max_prefill_tokens
    const Bytes act_reserve(static_cast<std::uint64_t>(static_cast<double>(act_tokens) * 1.5 * static_cast<double>(kMiB)));
    const bool logged_graphs = dep && dep->cuda_graphs && graph_bs > 0;
    const Bytes graph_reserve = logged_graphs ? *dep->cuda_graphs : Bytes(graph_bs * 2 * kMiB);
    p.activation.push_back({"activation.reserve", act_reserve,
                            (chunk > 0 ? "chunked_prefill_size " + std::to_string(chunk)
                                       : "chunking off: max_prefill_tokens " + std::to_string(act_tokens)) +
                                " x 1.5 MiB (server_args.py reserve)"});
    p.overhead.push_back({"overhead.cuda_graphs", graph_reserve,
                          logged_graphs ? "CUDA graphs, logged, " + dep->source
                                        : "cuda_graph_max_bs " + std::to_string(graph_bs) + " x 2 MiB (server_args.py reserve)"});
    p.overhead.push_back({"overhead.context", ctx, "CUDA context + libraries before loading (" + ctx_source + ")"});
    // The draft loads after the target and takes its weights and its one-layer pool (as many tokens
    // as the target's) from the (1 - mem_fraction_static) headroom (eagle_worker.py EAGLEWorker).
    Bytes draft_bytes(0);
    if (spec.on) {
      const std::uint64_t draft_w = mtp_draft_weight_bytes(in.model, rw, tp);
      const std::uint64_t draft_cell = mtp_draft_kv_layer(kv).bytes_per_token;
      p.weights.push_back({"weights.draft", Bytes(draft_w),
                           "the MTP layer as the draft (its decoder layer split over TP " + std::to_string(tp) +
                               ", eh_proj and norms whole; embedding and head shared with the target), loaded after the "
                               "target from the (1 - mem_fraction_static) headroom"});
      p.kv_cache.push_back({"kv_cache.draft", Bytes(checked_mul(tokens, draft_cell, "draft KV pool")),
                            grouped(tokens) + " tokens (the target pool's count) x " + grouped(draft_cell) +
                                " B (one layer): the draft's own pool, from the headroom"});
      draft_bytes = Bytes(checked_add(draft_w, checked_mul(tokens, draft_cell), "draft memory"));
      if (dpa.on)
        p.notes.push_back("the draft's attention is planned split over TP " + std::to_string(tp) +
                          " like its experts; under DP attention SGLang splits it over the attention group (" +
                          std::to_string(dpa.attn_tp) + "): its share of the draft is understated");
      p.notes.push_back("speculative decoding (" + spec.algorithm + ", steps " + std::to_string(spec.steps) + ", top-k " +
                        std::to_string(spec.topk) + ", " + std::to_string(spec.draft_tokens) +
                        " draft tokens): the draft's CUDA graphs are not counted (SGLang only logs them); " +
                        kMtpDraftStepsNote);
    }
    p.kv.capacity_tokens = tokens;
    // tokenizer_manager.py _validate_one_request refuses prompt + max_new_tokens >= context_len:
    // below 2 not one request of one token in and one out is served.
    if (ctx_len < 2)
      throw_usage("--context-length: must be at least 2 (SGLang serves requests whose prompt + output tokens stay below it), got " +
                  std::to_string(ctx_len));
    const std::optional<std::uint64_t> derived_ctx = derived_context_length(arch);
    // DP attention: every rank has a pool of `tokens` (the server D of them), and each scheduler
    // runs the user's --max-running-requests / D (tp_worker.py / model_runner.py).
    p.kv.max_concurrency =
        ctx_len ? static_cast<double>(dpa.dp) * static_cast<double>(tokens) / static_cast<double>(ctx_len) : 0.0;
    std::uint64_t max_running = max_running_requests(
        release, user_running ? std::optional<std::uint64_t>(std::max<std::uint64_t>(*user_running / dpa.dp, 1)) : std::nullopt,
        tokens, ctx_len);
    if (mamba.per_req > 0) max_running = std::min(max_running, mamba.slots / mamba.ratio_divisor);
    // aiter's decode workspace for an MHA model on ROCm (layers/attention/aiter_backend.py
    // AiterAttnBackend.__init__, 0.4.7 - 0.5.23 alike): request pool x heads a rank x
    // ceil(context / 256) partitions x (head_dim fp32 partial outputs + two fp32 softmax terms),
    // allocated at start-up outside the static pool. The request pool is the request-slot table
    // (ReqToTokenPool): up to 0.5.9 the user's --max-running-requests or the clamp estimate, from
    // 0.5.10 max_running_requests itself. From 0.5.10 a hybrid-SWA pool runs Triton's unified
    // attention instead and allocates none.
    if (in.gpu.vendor == "amd" && arch.kv_lora_rank == 0 && !(swa.on && release.at_least({0, 5, 10})) &&
        sglang_rocm_runs_aiter(arch, a, tp)) {
      std::uint64_t slots = release.at_least({0, 5, 10}) ? max_running : user_running.value_or(request_pool_estimate(tokens, ctx_len));
      if (mamba.per_req > 0) slots = std::min(slots, mamba.slots / mamba.ratio_divisor);
      const std::uint64_t heads = arch.num_heads / std::max<std::uint64_t>(tp, 1);
      const std::uint64_t partitions = (ctx_len + 255) / 256;
      const std::uint64_t per_slot = checked_mul(checked_mul(heads, partitions, "aiter workspace"),
                                                 checked_add(checked_mul(arch.head_dim, 4), 8), "aiter workspace");
      p.overhead.push_back({"overhead.aiter_workspace", Bytes(checked_mul(slots, per_slot, "aiter workspace")),
                            "aiter decode workspace: " + grouped(slots) + " request slots x " + std::to_string(heads) +
                                " heads x " + grouped(partitions) + " partitions of 256 tokens (context " + grouped(ctx_len) +
                                ") x (" + std::to_string(arch.head_dim) +
                                " x 4 + 8) B (layers/attention/aiter_backend.py AiterAttnBackend.__init__)"});
    }
    const std::uint64_t max_prefill = arg_u64(a, "max-prefill-tokens").value_or(d_.u64("max_prefill_tokens"));
    if (max_prefill == 0) throw_usage("--max-prefill-tokens must be >= 1 (0 admits no prompt)");
    const double given_conservativeness = arg_double(a, "schedule-conservativeness").value_or(1.0);
    if (!(given_conservativeness > 0)) throw_usage("--schedule-conservativeness must be > 0");
    // server_args.py _handle_data_parallelism: DP attention reserves 0.3 x as many future tokens.
    const double conservativeness = given_conservativeness * (dpa.on ? 0.3 : 1.0);
    // scheduler.py Scheduler.__init__ (NewTokenRatioTracker in 0.5.x).
    const double init_ratio = std::min(d_.number("init_new_token_ratio") * conservativeness, 1.0);
    const double min_ratio = std::min(init_ratio * d_.number("min_new_token_ratio_factor"), 1.0);
    if (!default_f_refusal.empty()) {
      p.fits = false;
      p.reason = default_f_refusal;
    } else if (derived_ctx && ctx_len > *derived_ctx) {  // refused before the pool is sized: this reason comes first
      p.fits = false;
      p.refuses_configuration = true;
      p.reason = "User-specified context_length (" + std::to_string(ctx_len) + ") is greater than the derived context_length (" +
                 std::to_string(*derived_ctx) +
                 "). To allow overriding this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 "
                 "(configs/model_config.py _derive_context_length)";
    } else if (mamba.per_req > 0 && mamba.slots == 0) {
      p.fits = false;
      p.reason = "Not enough GPU memory for hybrid (mamba/linear-attention) state cache (mamba_cache_per_req " +
                 grouped(mamba.per_req) + " B)";
    } else if (tokens == 0) {
      p.fits = false;
      p.reason = "Not enough memory. Please try to increase --mem-fraction-static (weights need " + format_gib(weights) +
                 " of the " + format_gib(Bytes(static_cast<std::uint64_t>(std::max(0.0, free_before * f)))) +
                 " static budget)";
    } else if (in.workload.batch && *p.kv.max_concurrency < static_cast<double>(*in.workload.batch)) {
      p.fits = false;
      p.reason = dpa.on ? "the " + std::to_string(dpa.dp) + " DP ranks' token pools hold " + std::to_string(tokens) +
                              " tokens each, fewer than --batch x context over them"
                        : "the token pool holds " + std::to_string(tokens) + " tokens, fewer than --batch x context";
    }
    // The draft is what tips it over: without it the plan stays within the card.
    if (spec.on && p.fits && p.total_bytes() > in.gpu.total && p.total_bytes() - draft_bytes <= in.gpu.total) {
      p.fits = false;
      p.reason = "the draft (weights + its token pool) does not fit beside the target: the plan needs " +
                 format_gib(p.total_bytes()) + " of " + format_gib(in.gpu.total) +
                 " (SGLang loads the draft after sizing the target's pool and checks nothing: out of memory at start; "
                 "lower --mem-fraction-static)";
    }
    if (p.fits && p.total_bytes() > in.gpu.total)
      p.notes.push_back("over the card by " + format_gib(Bytes(p.total_bytes() - in.gpu.total)) +
                        ": SGLang starts (weights + token pool are mem_fraction_static of the memory), but what it leaves "
                        "free is less than its own activation and CUDA-graph reserves (server_args.py): a long prefill "
                        "or graph capture may run out of memory; lower --mem-fraction-static");
    if (logged_free || logged_graphs)
      p.notes.push_back("free memory before loading and CUDA graphs where the deployment's log gave them: " + dep->source);
    p.notes.push_back("SGLang pool from mem_fraction_static " + std::to_string(f).substr(0, 5) +
                      (user_f ? "" : " (the version's default rule)"));
    p.engine_view = {{"mem_fraction_static", f},
                     {"max_total_num_tokens", tokens},
                     // The longest request it runs: its context length, capped by the pool
                     // (managers/tp_worker.py: min(context_len - 1, max_total_num_tokens - 1)).
                     {"max_req_len", std::min(ctx_len, tokens) > 0 ? std::min(ctx_len, tokens) - 1 : 0},
                     // DP attention: a rank's chunk (server_args.py chunked_prefill_size // dp_size).
                     {"chunked_prefill_size", dpa.on && chunk > 0 ? std::max<std::uint64_t>(chunk / dpa.dp, 1) : chunk},
                     {"cuda_graph_max_bs", graph_bs},
                     {"free_before_load_gib", free_before / static_cast<double>(kGiB)},
                     {"cuda_graph_gib", graph_reserve.gib()},
                     {"kv_pool_gib", static_cast<double>(pool) / static_cast<double>(kGiB)},
                     {"weights_gib", weights.gib()},
                     {"page_size", page},
                     {"ep_size", ep},
                     {"dp_size", dpa.dp},
                     {"enable_dp_attention", dpa.on},
                     {"context_length", ctx_len},
                     {"max_running_requests", max_running},
                     {"max_prefill_tokens", max_prefill},
                     // Speculative decoding turns mixed chunks and the overlap scheduler off
                     // (server_args.py _handle_speculative_decoding; SGLANG_ENABLE_SPEC_V2 unset).
                     {"enable_mixed_chunk", arg_switch(a, "enable-mixed-chunk") && !spec.on},
                     // server_args.py disable_overlap_schedule (default False since 0.4): the
                     // scheduler runs event_loop_overlap (scheduler.py).
                     // Before 0.4 the overlap scheduler was an opt-in (--enable-overlap-schedule);
                     // sgl-project/sglang PR #2067 (2024-11-18) made it the default.
                     // and pipeline parallelism too (server_args.py _handle_pipeline_parallelism).
                     {"overlap_schedule", !arg_switch(a, "disable-overlap-schedule") && !spec.on && pp == 1 &&
                                              release.at_least({0, 4})},
                     {"pp_size", pp},
                     {"radix_cache", !arg_switch(a, "disable-radix-cache")},
                     {"init_new_token_ratio", init_ratio},
                     {"min_new_token_ratio", min_ratio},
                     {"new_token_ratio_decay", (init_ratio - min_ratio) / d_.number("new_token_ratio_decay_steps")},
                     {"clip_max_new_tokens", d_.u64("clip_max_new_tokens")},
                     {"retract_decode_steps", d_.u64("retract_decode_steps")}};
    if (spec.on) {
      p.engine_view["speculative_algorithm"] = spec.algorithm;
      p.engine_view["speculative_num_steps"] = spec.steps;
      p.engine_view["speculative_eagle_topk"] = spec.topk;
      p.engine_view["speculative_num_draft_tokens"] = spec.draft_tokens;
    }
    if (dpa.on) {
      const std::uint64_t server_tokens = checked_mul(tokens, dpa.dp, "DP token pools");
      p.notes.push_back("KV capacity is per DP rank: " + std::to_string(dpa.dp) + " x " + grouped(tokens) + " = " +
                        grouped(server_tokens) +
                        " tokens over the server; a request lives in one rank's pool (max concurrency counts all " +
                        std::to_string(dpa.dp) + ")");
      p.engine_view["attn_tp_size"] = dpa.attn_tp;
      p.engine_view["enable_dp_lm_head"] = dpa.dp_lm_head;
      p.engine_view["dp_total_num_tokens"] = server_tokens;
    }
    if (swa.on) {
      p.engine_view["swa_full_tokens_ratio"] = swa.ratio;
      p.engine_view["full_max_total_num_tokens"] = swa.full_tokens;
      p.engine_view["swa_max_total_num_tokens"] = swa.swa_tokens;
    }
    if (mamba.per_req > 0) {
      p.engine_view["max_mamba_cache_size"] = mamba.slots;
      p.engine_view["mamba_cache_per_req"] = mamba.per_req;
      p.engine_view["mamba_pool_gib"] = static_cast<double>(mamba.pool_bytes) / static_cast<double>(kGiB);
    }
    // server_args.py refuses the backend setting before anything is loaded: that reason comes first.
    if (!dsa && !attention.refusal.empty()) {
      p.fits = false;
      p.refuses_configuration = true;
      p.reason = attention.refusal;
    }
    return p;
  }

 private:
  EngineProfileData d_;
};

}  // namespace

std::unique_ptr<Engine> make_sglang_engine(const std::filesystem::path& data_dir, std::string_view version) {
  return std::make_unique<SglangEngine>(EngineProfileData::load(data_dir, "sglang", version));
}

}  // namespace vramplan::memory
