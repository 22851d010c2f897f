// Port of llama.cpp src/llama-quant.cpp type selection (commit 3f545bec, Aug 2026). The branch
// structure and order follow llama_tensor_get_type_impl so the two can be diffed side by side;
// each branch keeps the upstream condition. Names (not roles) drive it because llama.cpp matches
// tensor names.
#include "vramplan/quant/gguf_mixture.hpp"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <optional>
#include <string_view>

#include "vramplan/core/error.hpp"

namespace vramplan {
namespace {

enum class Category { TokenEmbd, AttnQ, AttnV, AttnK, AttnQkv, AttnKvB, AttnOutput, FfnUp, FfnGate, FfnDown, Output, Other };

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// tensor_get_category
Category category_of(std::string_view name) {
  if (name == "output.weight") return Category::Output;
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return Category::TokenEmbd;
  if (contains(name, "attn_qkv.weight")) return Category::AttnQkv;
  if (contains(name, "attn_kv_b.weight")) return Category::AttnKvB;
  if (contains(name, "attn_v.weight")) return Category::AttnV;
  if (contains(name, "attn_k.weight")) return Category::AttnK;
  if (contains(name, "attn_q.weight")) return Category::AttnQ;
  if (contains(name, "attn_output.weight")) return Category::AttnOutput;
  if (contains(name, "ffn_up")) return Category::FfnUp;
  if (contains(name, "ffn_gate")) return Category::FfnGate;
  if (contains(name, "ffn_down")) return Category::FfnDown;
  return Category::Other;
}

bool is_attn_v(Category c) { return c == Category::AttnV || c == Category::AttnQkv || c == Category::AttnKvB; }

// ggml_n_dims: dimensions up to the last one > 1 in ne[] order (innermost first), at least 1.
std::size_t ggml_n_dims(const std::vector<std::uint64_t>& shape) {
  std::size_t leading_ones = 0;
  while (leading_ones + 1 < shape.size() && shape[leading_ones] == 1) ++leading_ones;
  return std::max<std::size_t>(1, shape.size() - leading_ones);
}

// tensor_allows_quantization (the name checks that can apply to a text decoder).
bool allows_quantization(std::string_view name, const std::vector<std::uint64_t>& shape) {
  if (ggml_n_dims(shape) < 2) return false;
  if (!name.ends_with("weight")) return false;
  for (std::string_view never : {"_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
                                 "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight",
                                 "indexer.k_proj.weight", "indexer.q_proj.weight", "attn_rel_b.weight"})
    if (contains(name, never)) return false;
  return name != "pos_embd.weight" && name != "token_types.weight";
}

bool is(std::string_view ft, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), ft) != names.end();
}

struct ModelFacts {
  std::string arch;  // "llama", "falcon", ...
  bool type_70b = false;
  std::uint64_t n_gqa = 1;
  std::uint64_t n_expert = 0;
  int n_layer = 0;
  bool tied = true;
};

struct Counters {
  int n_attention_wv = 0, i_attention_wv = 0;
  int i_ffn_down = 0, i_ffn_gate = 0, i_ffn_up = 0;
};

std::uint64_t block_of(const QuantCatalog& cat, const std::string& type) {
  return cat.get(type).block_elems;
}

bool is_quantized_type(const QuantCatalog& cat, const std::string& type) { return cat.get(type).quantized; }

// tensor_type_fallback
std::string fallback(const QuantCatalog& cat, const std::string& target, std::uint64_t ncols, std::string& reason) {
  if (ncols % block_of(cat, target) == 0) return target;
  std::string out;
  if (is(target, {"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ4_XS"})) out = "IQ4_NL";
  else if (is(target, {"Q2_0", "Q2_K", "Q3_K", "TQ1_0", "TQ2_0"})) out = "Q4_0";
  else if (target == "Q4_K") out = "Q5_0";
  else if (target == "Q5_K") out = "Q5_1";
  else if (target == "Q6_K") out = "Q8_0";
  // A type of 32-value blocks or smaller has no smaller block to demote to: it stays, and the check
  // below makes it F16, as a 256-block type whose fallback does not fit (llama.cpp 0c1e5709).
  else if (block_of(cat, target) <= 32) out = target;
  else throw_usage("llama.cpp defines no fallback for " + target + " (row of " + std::to_string(ncols) + ")");
  if (out != target)
    reason += "; row of " + std::to_string(ncols) + " is not a multiple of " + target + "'s block, falls back to " + out;
  if (ncols % block_of(cat, out) != 0) {
    reason += out == target ? "; row of " + std::to_string(ncols) + " is not a multiple of " + target + "'s block: F16"
                            : ", still incompatible: F16";
    out = "F16";
  }
  return out;
}

// llama_tensor_get_type_impl: `t` is the default type; returns the mixture's choice.
std::string choose(const ModelFacts& m, Counters& qs, const std::string& ft, std::string t, const GgufTensorChoice& tensor,
                   Category cat, int layer, const QuantCatalog& catalog, std::string& reason) {
  auto use_more_bits = gguf_use_more_bits;
  const std::uint64_t nx = tensor.shape.back();
  const std::uint64_t n_expert = std::max<std::uint64_t>(1, m.n_expert);
  // layer_info: MoE models read the layer from the name; dense ones count tensors.
  auto layer_info = [&](int counter) { return n_expert > 1 ? layer : counter; };
  const std::uint64_t n_gqa = m.n_gqa;
  if (cat == Category::Output || (m.tied && cat == Category::TokenEmbd)) {
    if (ft == "MXFP4_MOE") { reason = "output/tied embedding -> Q8_0 for MXFP4_MOE"; return "Q8_0"; }
    if (m.arch == "falcon" || nx % block_of(catalog, t) != 0) { reason = "output: Q8_0 (Falcon or row not a multiple of the base block)"; return "Q8_0"; }
    if (is(ft, {"IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"})) { reason = "output: Q5_K for IQ1/IQ2 mixes"; return "Q5_K"; }
    if (t != "Q8_0") { reason = m.tied && cat == Category::TokenEmbd ? "token_embd tied to the output: Q6_K" : "output: Q6_K"; return "Q6_K"; }
    reason = "output: kept at Q8_0";
    return t;
  }
  if (ft == "MXFP4_MOE") {
    if (tensor.shape.size() >= 3 && tensor.shape[tensor.shape.size() - 3] > 1) { reason = "MXFP4_MOE: 3-D expert tensor -> MXFP4"; return "MXFP4"; }
    reason = "MXFP4_MOE: non-expert tensor -> Q8_0";
    return "Q8_0";
  }
  if (cat == Category::TokenEmbd) {
    reason = "untied token_embd";
    if (is(ft, {"IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M"})) return "Q2_K";
    if (is(ft, {"IQ2_S", "IQ2_M", "IQ3_XXS"})) return "IQ3_S";
    if (is(ft, {"TQ1_0", "TQ2_0", "Q2_0"})) return "Q4_K";
    reason = "untied token_embd keeps the base type";
    return t;
  }
  if (is(ft, {"IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"})) {
    if (is_attn_v(cat)) {
      t = (n_gqa >= 4 || m.n_expert >= 4) ? "Q4_K" : (is(ft, {"IQ2_S", "IQ2_M"}) ? "IQ3_S" : "Q2_K");
      reason = "attn_v in an IQ1/IQ2 mix";
      ++qs.i_attention_wv;
    } else if (m.n_expert == 8 && cat == Category::AttnK) {
      t = "Q4_K";
      reason = "attn_k of an 8-expert model";
    } else if (cat == Category::FfnDown) {
      if (qs.i_ffn_down < m.n_layer / 8) { t = is(ft, {"IQ2_S", "IQ2_M"}) ? "IQ3_S" : "Q2_K"; reason = "ffn_down in the first n/8"; }
      ++qs.i_ffn_down;
    } else if (cat == Category::AttnOutput) {
      if (m.n_expert == 8) { t = "Q5_K"; reason = "attn_output of an 8-expert model"; }
      else if (is(ft, {"IQ1_S", "IQ1_M"})) t = "IQ2_XXS";
      else if (is(ft, {"IQ2_S", "IQ2_M"})) t = "IQ3_S";
    }
  } else if (is_attn_v(cat)) {
    if (ft == "Q2_K") { t = n_gqa >= 4 ? "Q4_K" : "Q3_K"; reason = "attn_v for Q2_K (Q4_K when n_head/n_head_kv >= 4)"; }
    else if (ft == "Q2_K_S" && n_gqa >= 4) t = "Q4_K";
    else if (ft == "IQ3_XXS") t = n_gqa >= 4 ? "Q4_K" : "IQ3_S";  // no imatrix assumed
    else if (is(ft, {"IQ3_XS", "IQ3_S"}) && n_gqa >= 4) t = "Q4_K";
    else if (ft == "IQ3_M") t = "Q4_K";
    else if (ft == "Q3_K_M") { t = qs.i_attention_wv < 2 ? "Q5_K" : "Q4_K"; reason = "attn_v for Q3_K_M (Q5_K for the first 2)"; }
    else if (ft == "Q3_K_L") { t = "Q5_K"; reason = "attn_v for Q3_K_L"; }
    else if (is(ft, {"IQ4_NL", "IQ4_XS"}) && n_gqa >= 4) { t = "Q5_K"; reason = "attn_v for IQ4 with n_head/n_head_kv >= 4"; }
    else if (is(ft, {"Q4_K_M", "Q5_K_M"}) && use_more_bits(qs.i_attention_wv, qs.n_attention_wv)) { t = "Q6_K"; reason = "attn_v on a use_more_bits layer"; }
    else if (ft == "Q4_K_S" && qs.i_attention_wv < 4) { t = "Q5_K"; reason = "attn_v for Q4_K_S (first 4)"; }
    if (m.type_70b && (t == "Q3_K" || t == "Q4_K")) { t = "Q5_K"; reason = "attn_v of a 70B-class model"; }
    if (m.n_expert == 8) { t = "Q8_0"; reason = "attn_v of an 8-expert model"; }
    ++qs.i_attention_wv;
  } else if (cat == Category::AttnK) {
    if (m.n_expert == 8) { t = "Q8_0"; reason = "attn_k of an 8-expert model"; }
    else if (ft == "IQ3_XS") t = "IQ3_XXS";
    else if (ft == "IQ3_XXS") t = "IQ2_S";
  } else if (cat == Category::AttnQ) {
    if (ft == "IQ3_XS") t = "IQ3_XXS";
    else if (ft == "IQ3_XXS") t = "IQ2_S";
  } else if (cat == Category::FfnDown) {
    const int i_layer = layer_info(qs.i_ffn_down), n_layer = m.n_layer;
    if (ft == "Q2_K") { t = "Q3_K"; reason = "ffn_down for Q2_K"; }
    else if (ft == "Q2_K_S") { if (i_layer < n_layer / 8) t = "Q4_K"; }
    else if (ft == "IQ3_XXS") t = i_layer < n_layer / 8 ? "Q4_K" : "Q3_K";
    else if (ft == "Q3_K_M") {
      t = i_layer < n_layer / 16 ? "Q5_K" : (m.arch != "falcon" || use_more_bits(i_layer, n_layer)) ? "Q4_K" : "Q3_K";
      reason = "ffn_down for Q3_K_M (Q5_K in the first n/16 layers)";
    } else if (ft == "IQ3_M" && (i_layer < n_layer / 8 || (m.n_expert == 8 && use_more_bits(i_layer, n_layer)))) t = "Q4_K";
    else if (ft == "Q3_K_L") { t = m.arch == "falcon" ? "Q4_K" : "Q5_K"; reason = "ffn_down for Q3_K_L"; }
    else if (ft == "Q4_K_M") {
      if (m.arch == "falcon") t = i_layer < n_layer / 16 ? "Q6_K" : use_more_bits(i_layer, n_layer) ? "Q5_K" : "Q4_K";
      else if (use_more_bits(i_layer, n_layer)) { t = "Q6_K"; reason = "ffn_down on a use_more_bits layer"; }
    } else if (i_layer < n_layer / 8 && is(ft, {"IQ4_NL", "IQ4_XS"})) { t = "Q5_K"; reason = "ffn_down in the first n/8 layers (IQ4, no imatrix)"; }
    else if (ft == "Q5_K_M" && use_more_bits(i_layer, n_layer)) { t = "Q6_K"; reason = "ffn_down on a use_more_bits layer"; }
    else if (ft == "Q4_K_S" && m.arch != "falcon" && i_layer < n_layer / 8) { t = "Q5_K"; reason = "ffn_down for Q4_K_S (first n/8)"; }
    ++qs.i_ffn_down;
  } else if (cat == Category::AttnOutput) {
    if (m.arch != "falcon") {
      if (m.n_expert == 8) {
        if (is(ft, {"Q2_K", "IQ3_XS", "IQ3_XXS", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M", "IQ3_S", "IQ3_M", "IQ4_XS"})) { t = "Q5_K"; reason = "attn_output of an 8-expert model"; }
      } else {
        if (ft == "Q2_K") { t = "Q3_K"; reason = "attn_output for Q2_K"; }
        else if (ft == "IQ3_XXS") t = "IQ3_S";
        else if (ft == "Q3_K_M") { t = "Q4_K"; reason = "attn_output for Q3_K_M"; }
        else if (ft == "Q3_K_L") { t = "Q5_K"; reason = "attn_output for Q3_K_L"; }
        else if (ft == "IQ3_M") t = "Q4_K";
      }
    } else if (ft == "Q3_K_L") t = "Q4_K";
  } else if (cat == Category::AttnQkv) {
    if (is(ft, {"Q3_K_M", "Q3_K_L", "IQ3_M"})) t = "Q4_K";
    else if (ft == "Q4_K_M") t = "Q5_K";
    else if (ft == "Q5_K_M") t = "Q6_K";
  } else if (cat == Category::FfnGate) {
    const int i_layer = layer_info(qs.i_ffn_gate);
    if (ft == "IQ3_XS" && i_layer >= m.n_layer / 8 && i_layer < 7 * m.n_layer / 8) t = "IQ3_XXS";
    ++qs.i_ffn_gate;
  } else if (cat == Category::FfnUp) {
    const int i_layer = layer_info(qs.i_ffn_up);
    if (ft == "IQ3_XS" && i_layer >= m.n_layer / 8 && i_layer < 7 * m.n_layer / 8) t = "IQ3_XXS";
    ++qs.i_ffn_up;
  }
  return t;
}

// GGUF names of a Mamba / Mamba-2 layer's tensors (convert_hf_to_gguf.py's tensor map, llama-arch.cpp
// LLM_TENSOR_SSM_*), by the end of the checkpoint name. They decide what llama-quantize keeps:
// ssm_conv1d (the 4-wide kernel) is never quantized, and ssm_a / ssm_d have no ".weight".
std::optional<std::string> recurrent_gguf_name(std::string_view hf_name) {
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {".conv1d.weight", "ssm_conv1d.weight"}, {".conv1d.bias", "ssm_conv1d.bias"},
      {".A_log", "ssm_a"},                     {".D", "ssm_d"},
      {".dt_bias", "ssm_dt.bias"},             {".in_proj.weight", "ssm_in.weight"},
      {".x_proj.weight", "ssm_x.weight"},      {".dt_proj.weight", "ssm_dt.weight"},
      {".dt_proj.bias", "ssm_dt.bias"},        {".out_proj.weight", "ssm_out.weight"},
      {".norm.weight", "ssm_norm.weight"},  // Mamba-2's gated RMS norm (mixer.norm)
      // Jamba's Mamba-1 RMS norms of dt, B and C (gguf-py tensor_mapping.py SSM_DT_NORM / _B_ / _C_NORM)
      {".dt_layernorm.weight", "ssm_dt_norm.weight"}, {".b_layernorm.weight", "ssm_b_norm.weight"},
      {".c_layernorm.weight", "ssm_c_norm.weight"},
      // Qwen3.5's gated DeltaNet (conversion/qwen.py Qwen3NextModel: in_proj_qkv / _z / _b / _a)
      {".in_proj_qkv.weight", "attn_qkv.weight"}, {".in_proj_z.weight", "attn_gate.weight"},
      {".in_proj_b.weight", "ssm_beta.weight"},   {".in_proj_a.weight", "ssm_alpha.weight"},
      {".in_proj_ba.weight", "ssm_ba.weight"},  // Qwen3-Next's joint beta / alpha projection
  };
  for (const auto& [ending, gguf] : kNames)
    if (hf_name.ends_with(ending)) return std::string(gguf);
  return std::nullopt;
}

// The Qwen3-Next family (Qwen3-Next, Qwen3.5 dense and MoE), by HF model type and GGUF architecture.
// conversion/qwen.py Qwen3NextModel writes it differently from other hybrids: one head_count_kv
// for every layer, and post_attention_layernorm as ATTN_POST_NORM ("post_attention_norm",
// gguf-py tensor_mapping.py) rather than FFN_NORM.
bool qwen3_next_family(std::string_view arch) {
  static constexpr std::string_view kArchs[] = {"qwen3_next", "qwen3next", "qwen3_5_text", "qwen35",
                                                "qwen3_5_moe_text", "qwen35moe"};
  return std::find(std::begin(kArchs), std::end(kArchs), arch) != std::end(kArchs);
}

// Gemma 4 (HF model types gemma4 / gemma4_text; GGUF gemma4).
bool gemma4_family(std::string_view arch) { return arch == "gemma4" || arch == "gemma4_text"; }

// Fused gate + up projections the converters split (the names order a block's tensors in the
// quantized file, which llama-quantize writes by layer, then name, and so where the mapped span
// ends; the counters of llama-quant.cpp see two tensors). Routed experts' gate_up (gpt-oss
// conversion/gpt_oss.py, Llama-4 conversion/llama.py: "split the gate_up into gate and up"; Granite's
// block_sparse_moe.input_linear, conversion/granite.py GraniteMoeModel.modify_tensors) become
// ffn_gate_exps / ffn_up_exps, weight and bias alike; Granite's shared MLP becomes ffn_gate_shexp /
// ffn_up_shexp (ffn_gate / ffn_up without experts) and its output ffn_down_shexp beside experts.
// Gemma 4's experts.gate_up_proj stays one tensor: gguf-py maps it to FFN_GATE_UP_EXP
// (ffn_gate_up_exps, "# gemma4"), which gemma4.cpp loads before the split pair.
std::optional<std::vector<GgufTensorChoice>> split_fused(const TensorInfo& t, bool has_experts, std::string_view arch) {
  if (!t.layer || t.name.starts_with("blk.") || t.shape.size() < 2) return std::nullopt;
  if (gemma4_family(arch)) return std::nullopt;
  const std::string blk = "blk." + std::to_string(*t.layer) + ".";
  const std::string suffix = t.is_bias ? ".bias" : ".weight";
  const auto halves = [&](const std::string& gate, const std::string& up) {
    auto half = t.shape;  // {[E,] 2 I, hidden} or a bias {E, 2 I}: the gate_up axis
    half[t.is_bias ? half.size() - 1 : half.size() - 2] /= 2;
    return std::vector<GgufTensorChoice>{{blk + gate + suffix, half, "", 0, ""}, {blk + up + suffix, half, "", 0, ""}};
  };
  if (t.role == TensorRole::FfnGateUpExps) return halves("ffn_gate_exps", "ffn_up_exps");
  if (t.name.ends_with("shared_mlp.input_linear.weight"))
    return has_experts ? halves("ffn_gate_shexp", "ffn_up_shexp") : halves("ffn_gate", "ffn_up");
  if (t.name.ends_with("shared_mlp.output_linear.weight") && has_experts)
    return std::vector<GgufTensorChoice>{{blk + "ffn_down_shexp.weight", t.shape, "", 0, ""}};
  return std::nullopt;
}

// Gemma 4's tensors that have no role of their own, by the end of the checkpoint name, as
// conversion/gemma.py Gemma4Model writes them: filter_tensors names layer_scalar ".weight" (gguf-py
// LAYER_OUT_SCALE: layer_output_scale), modify_tensors writes router.scale as ffn_gate_inp.scale and
// router.per_expert_scale as ffn_down_exps.scale ("convert per-expert scale to FFN down scale"), and
// tensor_mapping.py maps the MoE block's norms to FFN_PRE_NORM_2 / FFN_POST_NORM_1 / _2.
std::optional<std::string_view> gemma4_gguf_name(std::string_view hf_name) {
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {".layer_scalar", "layer_output_scale.weight"},
      {".router.scale", "ffn_gate_inp.scale"},
      {".router.per_expert_scale", "ffn_down_exps.scale"},
      {".pre_feedforward_layernorm_2.weight", "pre_ffw_norm_2.weight"},
      {".post_feedforward_layernorm_1.weight", "post_ffw_norm_1.weight"},
      {".post_feedforward_layernorm_2.weight", "post_ffw_norm_2.weight"},
  };
  for (const auto& [ending, gguf] : kNames)
    if (hf_name.ends_with(ending)) return gguf;
  return std::nullopt;
}

// The FFN's pre-norm where the converter does not name it ffn_norm.weight. It is ATTN_POST_NORM in
// gguf-py's maps of the Qwen3-Next family and of gpt-oss (conversion/gpt_oss.py):
// "post_attention_norm". Falcon-H1's pre_ff_layernorm.weight matches gguf-py's FFN_PRE_NORM entry
// whole, so convert names it without a suffix, and falcon-h1.cpp loads tn(LLM_TENSOR_FFN_NORM, i).
std::optional<std::string_view> ffn_norm_gguf_name(std::string_view arch) {
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"gpt_oss", "post_attention_norm.weight"}, {"gpt-oss", "post_attention_norm.weight"},
      {"falcon_h1", "ffn_norm"},                 {"falcon-h1", "ffn_norm"},
  };
  if (qwen3_next_family(arch)) return "post_attention_norm.weight";
  for (const auto& [a, name] : kNames)
    if (a == arch) return name;
  return std::nullopt;
}

// The GGUF tensor name llama.cpp uses for an inventory tensor.
std::string gguf_name(const TensorInfo& t, std::string_view arch) {
  // The name orders the block's tensors in the file, and so where the mapped span ends.
  if (t.role == TensorRole::FfnNorm && t.layer && !t.name.starts_with("blk."))
    if (const auto name = ffn_norm_gguf_name(arch)) return "blk." + std::to_string(*t.layer) + "." + std::string(*name);
  // A Mamba mixer's tensors, its out_proj included (an AttnOutput for tensor parallelism, ssm_out in
  // the GGUF: llama-quantize must not take it for attn_output).
  const bool mixer = t.role == TensorRole::Recurrent ||
                     (t.role == TensorRole::AttnOutput && (t.name.find(".mixer.") != std::string::npos ||
                                                           t.name.find(".mamba.") != std::string::npos ||
                                                           t.name.find(".linear_attn.") != std::string::npos));
  if (mixer && t.layer && !t.name.starts_with("blk."))
    if (const auto name = recurrent_gguf_name(t.name))
      return "blk." + std::to_string(*t.layer) + "." + *name;
  if (gemma4_family(arch) && t.layer && !t.name.starts_with("blk."))
    if (const auto name = gemma4_gguf_name(t.name)) return "blk." + std::to_string(*t.layer) + "." + std::string(*name);
  // A fused dense gate + up projection (Phi-3 gate_up_proj, GLM-4) is written as ffn_up of 2 n_ff
  // rows: llama.cpp's phi3 / glm4 loaders create LLM_TENSOR_FFN_UP {n_embd, 2 n_ff}.
  const std::string role(t.role == TensorRole::FfnGateUp ? "ffn_up" : tensor_role_name(t.role));
  const std::string suffix = t.is_bias ? ".bias" : ".weight";
  if (t.name.starts_with("blk.") || (!t.layer && t.name == role + suffix))
    return t.name;  // already GGUF naming (an inventory read from a GGUF file)
  if (!t.layer) return role + suffix;
  return "blk." + std::to_string(*t.layer) + "." + role + suffix;
}

// What convert_hf_to_gguf.py writes before quantization (ModelBase.prepare_tensors): 1-D tensors,
// norms, anything not named .weight (gpt-oss's 2-D stacked expert biases) and the types it always
// keeps in float32 (the router, position embeddings, a Mamba / short conv kernel) stay F32.
std::string conversion_type_of(const GgufTensorChoice& c, TensorRole role, const std::string& conversion) {
  if (ggml_n_dims(c.shape) <= 1 || c.gguf_name.ends_with("_norm.weight") || !c.gguf_name.ends_with(".weight"))
    return "F32";
  if (contains(c.gguf_name, "ssm_conv1d") || contains(c.gguf_name, "shortconv.conv")) return "F32";
  if (role == TensorRole::FfnGateInp || role == TensorRole::FfnGateInpShexp || role == TensorRole::PositionEmbedding)
    return "F32";
  return conversion;
}

ModelFacts facts_of(const ModelSpec& model) {
  ModelFacts m;
  m.arch = model.arch.model_type;
  m.n_gqa = model.arch.num_kv_heads == 0 ? 1 : model.arch.num_heads / model.arch.num_kv_heads;
  // llama-quant.cpp reads hparams.n_gqa() of layer 0, which is 0 when that layer has no KV heads (a
  // hybrid's leading Mamba or MLP layer: Nemotron-H).
  // The Qwen3-Next family writes one head_count_kv for every layer, so its recurrent layer 0 keeps
  // the attention layers' ratio.
  const auto& kinds = model.arch.layer_attention;
  if (!kinds.empty() && (kinds[0] == LayerAttention::Recurrent || kinds[0] == LayerAttention::None) &&
      !model.arch.recurrent_in_every_layer && !qwen3_next_family(m.arch))
    m.n_gqa = 0;
  m.n_expert = model.arch.num_experts;
  m.n_layer = static_cast<int>(model.arch.num_layers);
  // llama-model.cpp load_hparams: 80-layer Llama with GQA and 80-layer Qwen2 are LLM_TYPE_70B.
  m.type_70b = model.arch.num_layers == 80 &&
               ((m.arch == "llama" && model.arch.num_heads != model.arch.num_kv_heads) || m.arch == "qwen2");
  m.tied = std::none_of(model.tensors.begin(), model.tensors.end(),
                        [](const TensorInfo& t) { return t.role == TensorRole::Output; });
  return m;
}

}  // namespace

bool gguf_use_more_bits(int i_layer, int n_layers) {
  return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

std::vector<GgufTensorPlan> plan_gguf_file_type(const ModelSpec& model, const GgufFileType& file_type,
                                                const QuantCatalog& catalog, const std::string& conversion_type) {
  const ModelFacts facts = facts_of(model);
  std::vector<GgufTensorPlan> plans;
  struct Ref {
    std::size_t plan, part;
    int layer;
    TensorRole role;
  };
  std::vector<Ref> order;
  for (std::size_t i = 0; i < model.tensors.size(); ++i) {
    const TensorInfo& t = model.tensors[i];
    GgufTensorPlan p;
    p.tensor_index = i;
    const bool mla_kv_b = t.role == TensorRole::AttnKVB && !t.name.starts_with("blk.") && model.arch.kv_lora_rank > 0;
    if (mla_kv_b) {
      // convert_hf_to_gguf.py (DeepseekV2Model.modify_tensors) splits kv_b_proj into k_b
      // (transposed per head) and v_b.
      const auto& a = model.arch;
      const std::string blk = "blk." + std::to_string(t.layer.value_or(0)) + ".";
      p.parts.push_back({blk + "attn_k_b.weight", {a.num_heads, a.kv_lora_rank, a.qk_nope_head_dim}, "", 0, ""});
      p.parts.push_back({blk + "attn_v_b.weight", {a.num_heads, a.v_head_dim, a.kv_lora_rank}, "", 0, ""});
    } else if (t.name.ends_with(".in_proj_qkvz.weight") && t.layer && t.shape.size() == 2 &&
               model.arch.recurrent_shape.conv_channels < t.shape[0]) {
      // conversion/qwen.py Qwen3NextModel.modify_tensors splits Qwen3-Next's joint projection into
      // attn_qkv (the conv's channels, q | k | v) and attn_gate (z).
      const std::string blk = "blk." + std::to_string(*t.layer) + ".";
      const std::uint64_t qkv = model.arch.recurrent_shape.conv_channels;
      p.parts.push_back({blk + "attn_qkv.weight", {qkv, t.shape[1]}, "", 0, ""});
      p.parts.push_back({blk + "attn_gate.weight", {t.shape[0] - qkv, t.shape[1]}, "", 0, ""});
    } else if (auto split = split_fused(t, model.arch.num_experts > 0, facts.arch)) {
      p.parts = std::move(*split);
    } else {
      p.parts.push_back({gguf_name(t, facts.arch), t.shape, "", 0, ""});
    }
    if (is_mmproj_role(t.role)) {
      // A multimodal tower goes to the projector file (convert_hf_to_gguf.py --mmproj, f16 by
      // default, 1-D tensors f32), which llama-quantize never sees: not in its counters.
      for (auto& part : p.parts) {
        part.type = ggml_n_dims(part.shape) <= 1 ? "F32" : "F16";
        part.reason = "multimodal projector file (--mmproj), not the text model's mixture: stays " + part.type;
        part.bytes = tensor_bytes(catalog.get(part.type), part.shape, part.gguf_name);
      }
      plans.push_back(std::move(p));
      continue;
    }
    for (std::size_t k = 0; k < p.parts.size(); ++k)
      order.push_back({plans.size(), k, t.layer.value_or(-1), t.role});
    plans.push_back(std::move(p));
  }
  // llama_model_loader::weights_map order: by layer (non-layer tensors first), then name. The
  // attn_v / ffn counters advance in this order.
  std::stable_sort(order.begin(), order.end(), [&](const Ref& a, const Ref& b) {
    if (a.layer != b.layer) return a.layer < b.layer;
    return plans[a.plan].parts[a.part].gguf_name < plans[b.plan].parts[b.part].gguf_name;
  });
  Counters qs;
  for (const auto& r : order)
    if (is_attn_v(category_of(plans[r.plan].parts[r.part].gguf_name))) ++qs.n_attention_wv;

  const std::string& base = file_type.base;
  const bool base_quantized = is_quantized_type(catalog, base);
  for (const auto& r : order) {
    GgufTensorChoice& c = plans[r.plan].parts[r.part];
    const std::string source = conversion_type_of(c, r.role, conversion_type);
    std::string reason;
    std::string type;
    if (!allows_quantization(c.gguf_name, c.shape)) {
      type = source;
      reason = "never quantized (1-D, norm, router or position embedding): stays " + source;
    } else if (!base_quantized) {
      type = base;
      reason = "file type " + file_type.name;
    } else {
      reason = "base type of " + file_type.name;
      type = choose(facts, qs, file_type.name, base, c, category_of(c.gguf_name), r.layer, catalog, reason);
      type = fallback(catalog, type, c.shape.back(), reason);
    }
    c.type = type;
    c.reason = reason;
    c.bytes = tensor_bytes(catalog.get(type), c.shape, c.gguf_name);
  }
  return plans;
}

}  // namespace vramplan
