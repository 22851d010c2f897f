// HF tensor name -> role. Matching is on the module path inside a decoder layer after two
// normalisations: container aliases are folded (block_sparse_moe./feed_forward. -> mlp.,
// self_attention. / Mllama's cross_attn. -> self_attn.) and an expert index becomes '*'; quantization companions
// (qweight, scales, weight_scale_inv, MXFP4 _blocks, ...) map to the role of their weight.
#include "vramplan/model/hf_names.hpp"

#include <array>
#include <charconv>

#include "model/hf_family.hpp"

namespace vramplan {
namespace {

using R = TensorRole;

struct NameRole {
  std::string_view name;
  TensorRole role;
};

constexpr std::array<NameRole, 25> kGlobal{{
    {"model.embed_tokens", R::TokenEmbedding},
    {"transformer.word_embeddings", R::TokenEmbedding},
    {"transformer.wte", R::TokenEmbedding},
    {"model.embed_positions", R::PositionEmbedding},
    {"transformer.wpe", R::PositionEmbedding},
    {"model.norm", R::OutputNorm},
    {"backbone.embeddings", R::TokenEmbedding},  // Nemotron-H
    {"backbone.norm_f", R::OutputNorm},
    {"model.final_layernorm", R::OutputNorm},
    {"transformer.ln_f", R::OutputNorm},
    {"lm_head", R::Output},
    // GPT-NeoX (family_gpt_neox.cpp).
    {"gpt_neox.embed_in", R::TokenEmbedding},
    {"gpt_neox.final_layer_norm", R::OutputNorm},
    {"embed_out", R::Output},
    {"model.rotary_emb.inv_freq", R::RopeFreqs},
    {"rope_freqs", R::RopeFreqs},
    // Encoders (family_encoder.cpp); embedding LayerNorms, token types, poolers are Other.
    {"embeddings.word_embeddings", R::TokenEmbedding},
    {"embeddings.position_embeddings", R::PositionEmbedding},
    {"embeddings.tok_embeddings", R::TokenEmbedding},
    {"model.embeddings.tok_embeddings", R::TokenEmbedding},
    {"encoder.rel_embeddings", R::PositionEmbedding},
    {"final_norm", R::OutputNorm},
    {"model.final_norm", R::OutputNorm},
    {"cls.predictions", R::Output},
    {"decoder", R::Output},
}};

// Module paths inside one decoder layer (after normalisation).
constexpr std::array<NameRole, 170> kLayer{{
    {"self_attn.q_proj", R::AttnQ},
    {"self_attn.k_proj", R::AttnK},
    {"self_attn.v_proj", R::AttnV},
    {"self_attn.o_proj", R::AttnOutput},
    {"self_attn.dense", R::AttnOutput},
    {"self_attn.qkv_proj", R::AttnQKV},
    {"self_attn.query_key_value", R::AttnQKV},
    {"self_attn.q_norm", R::AttnQNorm},
    {"self_attn.k_norm", R::AttnKNorm},
    {"self_attn.q_layernorm", R::AttnQNorm},
    {"self_attn.k_layernorm", R::AttnKNorm},
    {"self_attn.sinks", R::AttnSinks},
    {"self_attn.q_a_proj", R::AttnQA},
    {"self_attn.q_a_layernorm", R::AttnQANorm},
    {"self_attn.q_b_proj", R::AttnQB},
    {"self_attn.kv_a_proj_with_mqa", R::AttnKVAMqa},
    {"self_attn.kv_a_layernorm", R::AttnKVANorm},
    {"self_attn.kv_b_proj", R::AttnKVB},
    {"self_attn.indexer.wq_b", R::IndexerQB},  // DeepSeek sparse attention (V3.2, GLM-5)
    {"self_attn.indexer.wk", R::IndexerK},
    {"self_attn.indexer.k_norm", R::IndexerKNorm},
    {"self_attn.indexer.weights_proj", R::IndexerProj},
    {"input_layernorm", R::AttnNorm},
    {"ln_attn", R::AttnNorm},
    {"ln_mlp", R::FfnNorm},
    {"post_attention_layernorm", R::FfnNorm},  // Gemma-2/3: the family table says AttnPostNorm
    {"pre_feedforward_layernorm", R::FfnNorm},
    {"post_feedforward_layernorm", R::FfnPostNorm},
    {"post_self_attn_layernorm", R::AttnPostNorm},
    {"post_mlp_layernorm", R::FfnPostNorm},
    {"mlp.gate_proj", R::FfnGate},
    {"mlp.up_proj", R::FfnUp},
    {"mlp.down_proj", R::FfnDown},
    {"mlp.gate_up_proj", R::FfnGateUp},
    {"mlp.fc1", R::FfnUp},
    {"mlp.fc2", R::FfnDown},
    {"mlp.dense_h_to_4h", R::FfnUp},
    {"mlp.dense_4h_to_h", R::FfnDown},
    {"mlp.gate", R::FfnGateInp},
    {"mlp.router", R::FfnGateInp},
    {"mlp.gate.e_score_correction_bias", R::FfnExpProbsBias},
    {"mlp.e_score_correction_bias", R::FfnExpProbsBias},  // MiniMax-M2: block_sparse_moe.
    {"mlp.moe_statics.e_score_correction_bias", R::FfnExpProbsBias},  // ERNIE-4.5 MoE
    {"mlp.experts.*.gate_proj", R::FfnGateExps},
    {"mlp.experts.*.up_proj", R::FfnUpExps},
    {"mlp.experts.*.down_proj", R::FfnDownExps},
    {"mlp.experts.*.w1", R::FfnGateExps},
    {"mlp.experts.*.w3", R::FfnUpExps},
    {"mlp.experts.*.w2", R::FfnDownExps},
    {"mlp.experts.gate_up_proj", R::FfnGateUpExps},
    {"mlp.experts.down_proj", R::FfnDownExps},
    {"mlp.experts.gate_proj", R::FfnGateExps},
    {"mlp.experts.up_proj", R::FfnUpExps},
    {"mlp.shared_expert.gate_proj", R::FfnGateShexp},
    {"mlp.shared_expert.up_proj", R::FfnUpShexp},
    {"mlp.shared_expert.down_proj", R::FfnDownShexp},
    {"mlp.shared_experts.gate_proj", R::FfnGateShexp},
    {"mlp.shared_experts.up_proj", R::FfnUpShexp},
    {"mlp.shared_experts.down_proj", R::FfnDownShexp},
    {"mlp.shared_expert_gate", R::FfnGateInpShexp},
    // GPT-NeoX (family_gpt_neox.cpp).
    {"attention.query_key_value", R::AttnQKV},
    {"attention.dense", R::AttnOutput},
    // GPT-2-style blocks (family_gpt_bigcode.cpp).
    {"ln_1", R::AttnNorm},
    {"ln_2", R::FfnNorm},
    {"attn.c_attn", R::AttnQKV},
    {"attn.c_proj", R::AttnOutput},
    {"mlp.c_fc", R::FfnUp},
    {"mlp.c_proj", R::FfnDown},
    // Mllama cross-attention layers: the scalar tanh gates (family_mllama.cpp); their
    // cross_attn.* projections fold onto self_attn.* below.
    {"cross_attn_attn_gate", R::AttnNorm},
    {"cross_attn_mlp_gate", R::FfnNorm},
    // Encoders: BERT / RoBERTa / DeBERTa-v2 post-norm layers, ModernBERT, NomicBERT.
    {"attention.self.query", R::AttnQ},
    {"attention.self.key", R::AttnK},
    {"attention.self.value", R::AttnV},
    {"attention.self.query_proj", R::AttnQ},
    {"attention.self.key_proj", R::AttnK},
    {"attention.self.value_proj", R::AttnV},
    {"attention.output.dense", R::AttnOutput},
    {"attention.output.LayerNorm", R::AttnPostNorm},
    {"intermediate.dense", R::FfnUp},
    {"output.dense", R::FfnDown},
    {"output.LayerNorm", R::FfnPostNorm},
    {"attn_norm", R::AttnNorm},
    {"attn.Wqkv", R::AttnQKV},
    {"attn.Wo", R::AttnOutput},
    {"attn.out_proj", R::AttnOutput},
    {"mlp_norm", R::FfnNorm},
    {"mlp.Wi", R::FfnGateUp},
    {"mlp.Wo", R::FfnDown},
    {"mlp.fc11", R::FfnUp},
    {"mlp.fc12", R::FfnGate},
    {"norm1", R::AttnPostNorm},
    {"norm2", R::FfnPostNorm},
    // Qwen3-Next gated-DeltaNet layers (family_qwen3_next.cpp); dt_bias folds to "dt" + bias.
    {"linear_attn.in_proj_qkvz", R::Recurrent},
    {"linear_attn.in_proj_ba", R::Recurrent},
    // Qwen3.5 stores the two projections split (vLLM merges them back on load).
    {"linear_attn.in_proj_qkv", R::Recurrent},
    {"linear_attn.in_proj_z", R::Recurrent},
    {"linear_attn.in_proj_b", R::Recurrent},
    {"linear_attn.in_proj_a", R::Recurrent},
    {"linear_attn.conv1d", R::Recurrent},
    {"linear_attn.dt", R::Recurrent},
    {"linear_attn.A_log", R::Recurrent},
    {"linear_attn.norm", R::Recurrent},
    {"linear_attn.out_proj", R::AttnOutput},
    // Step-3.5-Flash (family_step3p5.cpp): the head-wise gate, stacked experts under "moe.", the
    // router's selection bias and the shared expert.
    {"self_attn.g_proj", R::AttnQ},
    {"moe.gate", R::FfnGateInp},
    {"moe.router_bias", R::FfnExpProbsBias},
    {"moe.gate_proj", R::FfnGateExps},
    {"moe.up_proj", R::FfnUpExps},
    {"moe.down_proj", R::FfnDownExps},
    {"share_expert.gate_proj", R::FfnGateShexp},
    {"share_expert.up_proj", R::FfnUpShexp},
    {"share_expert.down_proj", R::FfnDownShexp},
    // Kimi-Linear's KDA layers keep q/k/v/o_proj under self_attn. (family_kimi_linear.cpp); dt_bias
    // folds to "dt" + bias.
    {"self_attn.f_a_proj", R::Recurrent},
    {"self_attn.f_b_proj", R::Recurrent},
    {"self_attn.g_a_proj", R::Recurrent},
    {"self_attn.g_b_proj", R::Recurrent},
    {"self_attn.b_proj", R::Recurrent},
    {"self_attn.q_conv1d", R::Recurrent},
    {"self_attn.k_conv1d", R::Recurrent},
    {"self_attn.v_conv1d", R::Recurrent},
    {"self_attn.dt", R::Recurrent},
    {"self_attn.A_log", R::Recurrent},
    {"self_attn.o_norm", R::Recurrent},
    // Mamba2 mixers (family_mamba_hybrid.cpp): Nemotron-H under "mixer.", Granite-4.0-H and
    // Falcon-H1 under "mamba."; dt_bias folds to "dt" + bias.
    {"mixer.in_proj", R::Recurrent},
    {"mixer.conv1d", R::Recurrent},
    {"mixer.dt", R::Recurrent},
    {"mixer.A_log", R::Recurrent},
    {"mixer.D", R::Recurrent},
    {"mixer.norm", R::Recurrent},
    {"mixer.out_proj", R::AttnOutput},
    {"mamba.in_proj", R::Recurrent},
    {"mamba.conv1d", R::Recurrent},
    {"mamba.dt", R::Recurrent},
    {"mamba.A_log", R::Recurrent},
    {"mamba.D", R::Recurrent},
    {"mamba.norm", R::Recurrent},
    {"mamba.out_proj", R::AttnOutput},
    // Jamba's Mamba-1 mixer (family_jamba.cpp); Jamba and Falcon-H1 name the FFN pre-norm
    // pre_ff_layernorm.
    {"mamba.x_proj", R::Recurrent},
    {"mamba.dt_proj", R::Recurrent},
    {"mamba.dt_layernorm", R::Recurrent},
    {"mamba.b_layernorm", R::Recurrent},
    {"mamba.c_layernorm", R::Recurrent},
    {"pre_ff_layernorm", R::FfnNorm},
    // Nemotron-H's other mixers and its one pre-norm per layer.
    {"norm", R::AttnNorm},
    {"mixer.q_proj", R::AttnQ},
    {"mixer.k_proj", R::AttnK},
    {"mixer.v_proj", R::AttnV},
    {"mixer.o_proj", R::AttnOutput},
    {"mixer.up_proj", R::FfnUp},
    {"mixer.down_proj", R::FfnDown},
    {"mixer.gate", R::FfnGateInp},
    {"mixer.gate.e_score_correction_bias", R::FfnExpProbsBias},
    {"mixer.experts.*.up_proj", R::FfnUpExps},
    {"mixer.experts.*.down_proj", R::FfnDownExps},
    {"mixer.shared_experts.up_proj", R::FfnUpShexp},
    {"mixer.shared_experts.down_proj", R::FfnDownShexp},
    {"mixer.fc1_latent_proj", R::FfnLatentDown},  // Nemotron-3 Super's latent MoE
    {"mixer.fc2_latent_proj", R::FfnLatentUp},
    // Granite-4.0-H's MoE (block_sparse_moe. folds to mlp.) and shared MLP.
    {"mlp.router.layer", R::FfnGateInp},
    {"mlp.input_linear", R::FfnGateUpExps},
    {"mlp.output_linear", R::FfnDownExps},
    {"shared_mlp.input_linear", R::FfnGateUp},
    {"shared_mlp.output_linear", R::FfnDown},
    // Gemma 4's MoE block sits beside the layer's MLP, not in it (family_gemma4.cpp).
    {"router.proj", R::FfnGateInp},
    {"experts.gate_up_proj", R::FfnGateUpExps},
    {"experts.down_proj", R::FfnDownExps},
    // DeepSeek MTP module pieces (only ever in layers >= num_hidden_layers).
    {"enorm", R::Mtp},
    {"hnorm", R::Mtp},
    {"eh_proj", R::Mtp},
    {"shared_head.head", R::Mtp},
}};

constexpr std::string_view kTowerPrefixes[] = {
    "vision_tower.", "vision_model.", "visual.", "multi_modal_projector.", "vision_encoder.",
    "model.vision_tower.", "model.visual.", "model.multi_modal_projector.", "mm_projector.",
    "model.embed_vision.",  // Gemma 4's projector
};
constexpr std::string_view kAudioPrefixes[] = {"audio_tower.", "audio_encoder.", "model.audio_tower."};

// Final name components that are not the module itself: weights, biases and the companion
// tensors of quantized checkpoints (GPTQ/AWQ, FP8 scales, compressed-tensors, bitsandbytes).
constexpr std::string_view kLeafSuffixes[] = {
    ".weight", ".bias", ".qweight", ".qzeros", ".scales", ".g_idx", ".weight_scale_inv",
    ".weight_scale", ".input_scale", ".weight_packed", ".weight_shape", ".weight_zero_point",
    ".weight_g_idx", ".k_scale", ".v_scale", ".SCB", ".weight_format", ".absmax", ".quant_map",
    "_blocks", "_scales", "_bias",
};

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

//! "language_model.model.layers..." and "model.language_model.layers..." -> "model.layers...".
std::string strip_language_model(std::string_view name) {
  if (starts_with(name, "language_model.model.")) return "model." + std::string(name.substr(21));
  if (starts_with(name, "model.language_model.")) return "model." + std::string(name.substr(21));
  if (starts_with(name, "language_model.")) return std::string(name.substr(15));
  // Encoder heads keep the base model under its type name (BertForSequenceClassification:
  // "bert.", XLMRobertaFor...: "roberta.", DebertaV2For...: "deberta."); a bare *Model has none.
  for (std::string_view base : {"bert.", "roberta.", "deberta."})
    if (starts_with(name, base)) return std::string(name.substr(base.size()));
  return std::string(name);
}

//! Position just after "<layers>.<digits>." and the index; npos when the name has none.
std::pair<std::size_t, std::optional<int>> find_layer(std::string_view name) {
  // ".layer." is BERT's encoder.layer.<i>; a leading "layers." is a bare ModernBertModel.
  for (std::string_view marker : {".layers.", ".h.", ".blocks.", ".layer.", "layers."}) {
    auto at = name.find(marker);
    if (marker == "layers." && at != 0) continue;
    if (at == std::string_view::npos) continue;
    const auto start = at + marker.size();
    const auto dot = name.find('.', start);
    if (dot == std::string_view::npos || dot == start) continue;
    int value = 0;
    const auto* first = name.data() + start;
    const auto* last = name.data() + dot;
    const auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || ptr != last || value < 0) continue;
    return {dot + 1, value};
  }
  return {std::string_view::npos, std::nullopt};
}

std::string normalise_module(std::string_view rel) {
  std::string s(rel);
  for (auto [from, to] : {std::pair<std::string_view, std::string_view>{"block_sparse_moe.", "mlp."},
                          {"feed_forward.", "mlp."},
                          {"self_attention.", "self_attn."},
                          {"cross_attn.", "self_attn."}})
    if (starts_with(s, from)) s = std::string(to) + s.substr(from.size());
  // experts.<n>. -> experts.*.
  if (const auto at = s.find("experts."); at != std::string::npos) {
    auto i = at + 8;
    auto j = i;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    if (j > i && j < s.size() && s[j] == '.') s.replace(i, j - i, "*");
  }
  return s;
}

// The routers' expert-selection biases (DeepSeek-style e_score_correction_bias, Step-3.5's
// moe.router_bias): tensors of their own, named in full in kLayer, not a layer's bias.
bool expert_selection_bias(std::string_view s) {
  return ends_with(s, "e_score_correction_bias") || ends_with(s, "moe.router_bias");
}

std::string_view strip_leaf(std::string_view s) {
  if (expert_selection_bias(s)) return s;
  for (auto suffix : kLeafSuffixes)
    if (ends_with(s, suffix)) return s.substr(0, s.size() - suffix.size());
  return s;
}

TensorRole family_norm_role(std::string_view module, TensorRole fallback, const ModelArch& arch) {
  if (const auto* fam = hf::find_family_by_name(arch.family))
    for (const auto& slot : fam->layout.norms)
      if (slot.name == module) return slot.role;
  return fallback;
}

}  // namespace

std::optional<int> hf_layer_index(std::string_view name) {
  return find_layer(strip_language_model(name)).second;
}

HfTensorClass role_from_hf_tensor_name(std::string_view raw, const ModelArch& arch) {
  HfTensorClass out;
  const std::string name = strip_language_model(raw);
  out.is_bias = ends_with(name, ".bias") ||
                (ends_with(name, "_bias") && !expert_selection_bias(name));
  for (auto p : kTowerPrefixes)
    if (starts_with(name, p)) return out.role = R::Vision, out;
  for (auto p : kAudioPrefixes)
    if (starts_with(name, p)) return out.role = R::Audio, out;

  // Qwen3-Next keeps its MTP module apart, "mtp.fc", "mtp.layers.<m>.*" (qwen3_next_mtp.py):
  // all of it role Mtp, its layers numbered after the main model's as the builder numbers them.
  if (starts_with(name, "mtp.")) {
    out.role = R::Mtp;
    if (const auto m = find_layer(name).second) out.layer = static_cast<int>(arch.num_layers) + *m;
    return out;
  }
  const auto [rel_at, layer] = find_layer(name);
  if (!layer) {
    const auto module = strip_leaf(name);
    for (const auto& g : kGlobal)
      if (g.name == module) out.role = g.role;
    return out;
  }
  out.layer = layer;
  const auto module = normalise_module(strip_leaf(std::string_view(name).substr(rel_at)));
  if (arch.mtp_layers > 0 && static_cast<std::uint64_t>(*layer) >= arch.num_layers) {
    out.role = R::Mtp;  // DeepSeek-V3 model.layers.61.*: the whole MTP module
    return out;
  }
  for (const auto& l : kLayer)
    if (l.name == module) {
      out.role = module == "post_attention_layernorm" ? family_norm_role(module, l.role, arch) : l.role;
      return out;
    }
  return out;
}

}  // namespace vramplan

namespace vramplan {

std::string hf_inventory_key(std::string_view raw, bool* is_companion) {
  // Companions whose bytes belong to "<module>.weight" / to the stacked "<module>" (gpt-oss).
  // bitsandbytes serialises a 4-bit weight's quant state beside it as "<module>.weight.absmax",
  // ".weight.quant_map", ".weight.nested_absmax", ".weight.nested_quant_map" and
  // ".weight.quant_state.bitsandbytes__nf4" / "__fp4" (bitsandbytes/functional.py
  // QuantState.as_dict(packed=True); transformers Bnb4BitHfQuantizer): all of them belong to
  // "<module>.weight", so they come first, before the shorter ".absmax" / ".quant_map".
  static constexpr std::pair<std::string_view, std::string_view> kCompanions[] = {
      {".weight.absmax", ".weight"}, {".weight.quant_map", ".weight"}, {".weight.nested_absmax", ".weight"},
      {".weight.nested_quant_map", ".weight"}, {".weight.quant_state.bitsandbytes__nf4", ".weight"},
      {".weight.quant_state.bitsandbytes__fp4", ".weight"},
      // ModelOpt's KV-cache scales (self_attn.k_scale / v_scale, one fp32 scalar each): vLLM loads
      // them into the attention layer (BaseKVCacheMethod, quantization/kv_cache.py); not parameters
      // of the model's count, their bytes go with the K / V projection.
      {".self_attn.k_scale", ".self_attn.k_proj.weight"}, {".self_attn.v_scale", ".self_attn.v_proj.weight"},
      {".weight_scale_inv", ".weight"}, {".weight_scale", ".weight"}, {".input_scale", ".weight"},
      {".weight_zero_point", ".weight"}, {".weight_g_idx", ".weight"}, {".weight_packed", ".weight"},
      {".weight_shape", ".weight"},     {".qweight", ".weight"},      {".qzeros", ".weight"},
      {".scales", ".weight"},           {".g_idx", ".weight"},        {".SCB", ".weight"},
      {".absmax", ".weight"},           {".quant_map", ".weight"},    {"_blocks", ""},
      {"_scales", ""},
  };
  std::string name = strip_language_model(raw);
  bool companion = false;
  for (const auto& [suffix, replacement] : kCompanions)
    if (ends_with(name, suffix)) {
      name = name.substr(0, name.size() - suffix.size()) + std::string(replacement);
      companion = true;
      break;
    }
  if (is_companion) *is_companion = companion;
  const auto [rel_at, layer] = find_layer(name);
  if (!layer) return name;
  return name.substr(0, rel_at) + normalise_module(std::string_view(name).substr(rel_at));
}

}  // namespace vramplan
