// The table of HF architectures vramplan builds. Module layouts are read off the transformers
// modeling files (https://github.com/huggingface/transformers/tree/main/src/transformers/models/
// <model_type>/modeling_<model_type>.py): which projections exist, which carry bias=True, how many
// norms a layer has and what they are called.
#include <stdexcept>

#include "model/hf_family.hpp"

namespace vramplan::hf {
namespace {

DecoderLayout llama_layout() {
  DecoderLayout l;  // LlamaAttention / LlamaMLP: biases follow attention_bias / mlp_bias
  l.qkv_bias = Bias::AttentionBiasKey;
  l.o_bias = Bias::AttentionBiasKey;
  l.mlp_bias = Bias::MlpBiasKey;
  return l;
}

DecoderLayout qwen2_layout(Moe moe) {
  DecoderLayout l;  // Qwen2Attention: q/k/v bias=True, o_proj bias=False
  l.qkv_bias = Bias::Yes;
  l.moe = moe;
  return l;
}

DecoderLayout qwen3_layout(Moe moe) {
  DecoderLayout l;  // Qwen3Attention: bias=attention_bias, q_norm/k_norm over head_dim
  l.qkv_bias = Bias::AttentionBiasKey;
  l.o_bias = Bias::AttentionBiasKey;
  l.qk_norm = QkNorm::PerHeadDim;
  l.moe = moe;
  return l;
}

// Gemma-2/3 sandwich norms: pre- and post-norm around both attention and MLP.
const std::vector<NormSlot> kSandwichNorms = {
    {"input_layernorm", R::AttnNorm},
    {"post_attention_layernorm", R::AttnPostNorm},
    {"pre_feedforward_layernorm", R::FfnNorm},
    {"post_feedforward_layernorm", R::FfnPostNorm},
};

DecoderLayout gemma_layout(Pattern pattern, bool qk_norm, std::string_view prefix,
                           std::string_view lm_head) {
  DecoderLayout l;
  if (pattern != Pattern::SlidingIfConfigured) l.norms = kSandwichNorms;
  l.pattern = pattern;
  l.qk_norm = qk_norm ? QkNorm::PerHeadDim : QkNorm::No;
  l.model_prefix = prefix;
  l.lm_head = lm_head;
  return l;
}

DecoderLayout phi2_layout() {
  DecoderLayout l;  // PhiAttention: q/k/v/dense with bias; PhiMLP fc1/fc2 with bias; one LayerNorm
  l.qkv_bias = Bias::Yes;
  l.o_proj = "dense";
  l.o_bias = Bias::Yes;
  l.mlp = Mlp::Plain;
  l.mlp_bias = Bias::Yes;
  l.norm = Norm::LayerNorm;
  l.norms = {{"input_layernorm", R::AttnNorm}};  // attention and MLP run in parallel
  l.final_norm = "final_layernorm";
  l.lm_head_bias = true;
  return l;
}

DecoderLayout phi3_layout() {
  DecoderLayout l;  // Phi3Attention qkv_proj, Phi3MLP gate_up_proj, no biases
  l.fused_qkv = true;
  l.mlp = Mlp::GatedFused;
  return l;
}

DecoderLayout cohere_layout() {
  DecoderLayout l;  // CohereLayerNorm has no bias; attention and MLP in parallel off one norm
  l.qkv_bias = Bias::AttentionBiasKey;
  l.o_bias = Bias::AttentionBiasKey;
  l.norm = Norm::LayerNormNoBias;
  l.norms = {{"input_layernorm", R::AttnNorm}};
  l.qk_norm = QkNorm::ConfigUseQkNormPerHead;
  return l;
}

DecoderLayout glm_layout(bool four_norms) {
  DecoderLayout l;  // GlmAttention: q/k/v bias=attention_bias, o_proj bias=False; gate_up_proj
  l.qkv_bias = Bias::AttentionBiasKey;
  l.mlp = Mlp::GatedFused;
  if (four_norms)  // Glm4DecoderLayer adds post-attention and post-MLP norms
    l.norms = {{"input_layernorm", R::AttnNorm},
               {"post_self_attn_layernorm", R::AttnPostNorm},
               {"post_attention_layernorm", R::FfnNorm},
               {"post_mlp_layernorm", R::FfnPostNorm}};
  return l;
}

DecoderLayout multimodal_text(DecoderLayout l) {
  // *ForConditionalGeneration checkpoints keep the language model under "language_model.".
  l.model_prefix = "language_model.model.";
  l.lm_head = "language_model.lm_head";
  return l;
}

// transformers Gemma3TextConfig defaults for keys the released Gemma-3 configs omit
// (gemma-3-4b-it/27b-it carry no vocab_size; 4b no head counts):
// https://github.com/huggingface/transformers/blob/main/src/transformers/models/gemma3/configuration_gemma3.py
nlohmann::json gemma3_text_defaults() {
  return {{"vocab_size", 262208},          {"num_attention_heads", 8},
          {"num_key_value_heads", 4},      {"head_dim", 256},
          {"max_position_embeddings", 131072}, {"sliding_window_pattern", 6}};
}

// transformers FalconConfig defaults: the original RefinedWeb/RefinedWebModel configs (Falcon-7B,
// Falcon-40B) carry no max_position_embeddings; transformers (and vLLM, which loads them as
// FalconConfig) fill it from the class default, 2048:
// https://github.com/huggingface/transformers/blob/main/src/transformers/models/falcon/configuration_falcon.py
// transformers class defaults for the keys mistral-community/pixtral-12b's config.json omits:
// MistralConfig / LlamaConfig num_attention_heads 32 (models/mistral/configuration_mistral.py) and
// PixtralVisionConfig (models/pixtral/configuration_pixtral.py): hidden_size 1024,
// intermediate_size 4096, num_hidden_layers 24, num_channels 3, image_size 1024, patch_size 16.
nlohmann::json llava_defaults() {
  return {{"num_attention_heads", 32},
          {"vision_config",
           {{"hidden_size", 1024}, {"intermediate_size", 4096}, {"num_hidden_layers", 24},
            {"num_channels", 3}, {"image_size", 1024}, {"patch_size", 16}}}};
}

nlohmann::json falcon_defaults() { return {{"max_position_embeddings", 2048}}; }

std::vector<Family> make_families() {
  std::vector<Family> f;
  constexpr std::size_t kRows = 64;
  f.reserve(kRows);  // `add` hands out pointers into f: they stay valid while f does not grow
  auto add = [&](std::string_view name, std::vector<std::string_view> archs, bool tied,
                 DecoderLayout layout, BuildFn build = nullptr) {
    Family fam;
    fam.name = name;
    fam.architectures = std::move(archs);
    fam.tied_default = tied;
    fam.layout = std::move(layout);
    fam.build = build;
    f.push_back(std::move(fam));
    return &f.back();
  };
  add("llama", {"LlamaForCausalLM"}, false, llama_layout());
  add("granite", {"GraniteForCausalLM"}, false, llama_layout());
  add("mistral", {"MistralForCausalLM"}, false, DecoderLayout{});
  add("mistral3", {"Mistral3ForConditionalGeneration"}, false, multimodal_text(DecoderLayout{}))
      ->vision_tower = add_mistral3_vision_tower;
  // Pixtral-12B in HF format (mistral-community/pixtral-12b); other LLaVA towers are listed as
  // exclusions by the tower builder.
  auto* llava = add("llava", {"LlavaForConditionalGeneration"}, false, multimodal_text(llama_layout()));
  llava->vision_tower = add_llava_pixtral_vision_tower;
  llava->class_defaults = llava_defaults();
  add("mllama", {"MllamaForConditionalGeneration"}, false, DecoderLayout{}, build_mllama)
      ->vision_tower = add_mllama_vision_tower;
  add("mixtral", {"MixtralForCausalLM"}, false, [] {
    DecoderLayout l;
    l.moe = Moe::Mixtral;
    return l;
  }());
  // MiniMax-M2 / M2.5 (transformers models/minimax_m2/modular_minimax_m2.py): Mixtral's sparse
  // block (block_sparse_moe.gate, experts.*.w1/w2/w3 of intermediate_size) with a sigmoid router
  // and its e_score_correction_bias; FlexOlmo attention, q_norm / k_norm over the whole
  // projection; no shared expert, every layer sparse. The checkpoint's MTP modules are not
  // loaded without speculative decoding (not counted).
  add("minimax_m2", {"MiniMaxM2ForCausalLM"}, false, [] {
    DecoderLayout l;
    l.moe = Moe::Mixtral;
    l.moe_routing_bias = true;
    l.qk_norm = QkNorm::WholeProjection;
    return l;
  }());
  // ERNIE-4.5 MoE (transformers models/ernie4_5_moe/modular_ernie4_5_moe.py): Llama attention
  // (biases follow use_bias), a dense first layer, then routed + shared experts
  // (family_decoder.cpp read_moe). Ernie4_5_MoeConfig ties the embeddings by default.
  add("ernie4_5_moe", {"Ernie4_5_MoeForCausalLM"}, true, [] {
    DecoderLayout l;
    l.qkv_bias = Bias::UseBiasKey;
    l.o_bias = Bias::UseBiasKey;
    l.mlp_bias = Bias::UseBiasKey;
    l.moe = Moe::Ernie;
    return l;
  }());
  // GLM-4.5 / 4.6 / 4.7 MoE (vLLM / SGLang glm4_moe.py): attention with q/k/v bias from
  // attention_bias, no o_proj bias, q/k RMSNorm of head_dim when use_qk_norm, partial rotary;
  // first_k_dense_replace dense layers, then DeepSeek-V3's sparse block (family_decoder.cpp).
  // partial_rotary_factor defaults to 0.5, which the published configs omit (transformers
  // Glm4MoeConfig: kwargs.setdefault("partial_rotary_factor", 0.5); SGLang glm4_moe.py:
  // getattr(config, "partial_rotary_factor", 0.5)).
  add("glm4_moe", {"Glm4MoeForCausalLM"}, false, [] {
    DecoderLayout l;
    l.qkv_bias = Bias::AttentionBiasKey;
    l.qk_norm = QkNorm::ConfigUseQkNormHeadDim;
    l.moe = Moe::Glm4;
    return l;
  }())->class_defaults = {{"partial_rotary_factor", 0.5}};
  add("qwen2", {"Qwen2ForCausalLM"}, false, qwen2_layout(Moe::None));
  add("qwen2_moe", {"Qwen2MoeForCausalLM"}, false, qwen2_layout(Moe::QwenMoe));
  add("qwen3", {"Qwen3ForCausalLM"}, false, qwen3_layout(Moe::None));
  add("qwen3_moe", {"Qwen3MoeForCausalLM"}, false, qwen3_layout(Moe::QwenMoe));
  // Qwen2.5-VL checkpoints keep the text model at the top ("model.", "lm_head"); Qwen3-VL under
  // "model.language_model." (its text_config), the vision tower under "visual." / "model.visual.".
  add("qwen2_5_vl", {"Qwen2_5_VLForConditionalGeneration"}, false, qwen2_layout(Moe::None))
      ->vision_tower = add_qwen2_5_vision_tower;
  add("qwen3_vl", {"Qwen3VLForConditionalGeneration"}, false, [] {
    DecoderLayout l = qwen3_layout(Moe::None);
    l.model_prefix = "model.language_model.";
    return l;
  }())->vision_tower = add_qwen3_vision_tower;
  // Qwen3-VL MoE (transformers models/qwen3_vl_moe, vLLM / SGLang qwen3_vl_moe.py): Qwen3-MoE's
  // layer (a softmax router, routed experts, no shared expert, decoder_sparse_step / mlp_only_layers)
  // under the same prefix and vision tower. The checkpoint stores each layer's experts fused
  // (mlp.experts.gate_up_proj {E, h, 2 I}, mlp.experts.down_proj {E, I, h}): the same bytes as the
  // per-expert tensors counted here, and convert_hf_to_gguf.py splits them into ffn_gate_exps /
  // ffn_up_exps as for Qwen3-MoE.
  add("qwen3_vl_moe", {"Qwen3VLMoeForConditionalGeneration"}, false, [] {
    DecoderLayout l = qwen3_layout(Moe::QwenMoe);
    l.model_prefix = "model.language_model.";
    return l;
  }())->vision_tower = add_qwen3_vision_tower;
  add("gemma", {"GemmaForCausalLM"}, true, gemma_layout(Pattern::SlidingIfConfigured, false, "model.", "lm_head"));
  add("gemma2", {"Gemma2ForCausalLM"}, true, gemma_layout(Pattern::Gemma2Alternate, false, "model.", "lm_head"));
  add("gemma3", {"Gemma3ForCausalLM"}, true,
      gemma_layout(Pattern::Gemma3Interleave, true, "model.", "lm_head"))
      ->class_defaults = gemma3_text_defaults();
  auto* gemma3_mm = add("gemma3", {"Gemma3ForConditionalGeneration"}, true,
                        gemma_layout(Pattern::Gemma3Interleave, true, "language_model.model.",
                                     "language_model.lm_head"));
  gemma3_mm->class_defaults = gemma3_text_defaults();
  gemma3_mm->vision_tower = add_siglip_vision_tower;
  // Gemma 4: two attention geometries, MoE beside the dense MLP, its own vision tower
  // (family_gemma4.cpp). Gemma4TextConfig ties the embeddings by default.
  add("gemma4", {"Gemma4ForConditionalGeneration", "Gemma4ForCausalLM"}, true,
      gemma_layout(Pattern::Gemma3Interleave, true, "model.language_model.", "lm_head"), build_gemma4)
      ->vision_tower = add_gemma4_vision_tower;
  add("phi", {"PhiForCausalLM"}, false, phi2_layout());
  add("phi3", {"Phi3ForCausalLM"}, false, phi3_layout());
  add("cohere", {"CohereForCausalLM"}, true, cohere_layout());
  add("glm", {"GlmForCausalLM"}, false, glm_layout(false));
  add("glm4", {"Glm4ForCausalLM"}, false, glm_layout(true));
  add("deepseek", {"DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM"}, false, DecoderLayout{},
      build_deepseek);
  // GLM-4.7-Flash: DeepSeek-V3's layer (MLA with q_lora, noaux_tc router, shared expert, dense
  // first layer) under its own name (transformers modular_glm4_moe_lite.py builds it from the
  // DeepseekV3 classes; lmdeploy's Glm4MoeLiteReader reads the DeepSeek-V2 tensor layout).
  add("deepseek", {"Glm4MoeLiteForCausalLM"}, false, DecoderLayout{}, build_deepseek);
  // DeepSeek sparse attention: DeepSeek-V3.2(-Exp) and GLM-5 / 5.1 (transformers GlmMoeDsa is
  // DeepseekV3's layer with the V3.2 indexer; vLLM registers both on deepseek_v2.py).
  add("deepseek", {"DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"}, false, DecoderLayout{},
      build_deepseek)->sparse_attention = true;
  // Kimi-K2.5: its text_config is DeepseekV3 (family_deepseek.cpp) under "language_model.";
  // MoonViT is not counted. Same family name, as the two Gemma-3 rows share theirs.
  add("deepseek", {"KimiK25ForConditionalGeneration"}, false, multimodal_text(DecoderLayout{}),
      build_deepseek);
  add("llama4", {"Llama4ForConditionalGeneration", "Llama4ForCausalLM"}, false,
      multimodal_text(DecoderLayout{}), build_llama4)
      ->vision_tower = add_llama4_vision_tower;
  add("gpt_oss", {"GptOssForCausalLM"}, false, llama_layout(), build_gpt_oss);
  // Hybrid: gated-DeltaNet linear attention + gated full attention (family_qwen3_next.cpp).
  add("qwen3_next", {"Qwen3NextForCausalLM"}, false, DecoderLayout{}, build_qwen3_next);
  // Sliding / full GQA with head-wise gates, 288-expert MoE (family_step3p5.cpp).
  add("step3p5", {"Step3p5ForCausalLM"}, false, DecoderLayout{}, build_step3p5);
  // Hybrid: Kimi Delta Attention + MLA layers, DeepSeek-style MoE (family_kimi_linear.cpp).
  add("kimi_linear", {"KimiLinearForCausalLM"}, false, DecoderLayout{}, build_kimi_linear);
  // Qwen3.5 (MoE and dense): the same hybrid under "model.language_model." with a Qwen3-VL vision
  // tower; Qwen3_5MoeTextConfig inherits Qwen3NextConfig's partial_rotary_factor 0.25.
  auto* qwen3_5 = add("qwen3_5", {"Qwen3_5MoeForConditionalGeneration", "Qwen3_5ForConditionalGeneration"},
                      false, [] {
                        DecoderLayout l;
                        l.model_prefix = "model.language_model.";
                        return l;
                      }(),
                      build_qwen3_next);
  qwen3_5->class_defaults = {{"partial_rotary_factor", 0.25}};
  qwen3_5->vision_tower = add_qwen3_vision_tower;
  // Mamba2 + attention hybrids (family_mamba_hybrid.cpp).
  add("nemotron_h", {"NemotronHForCausalLM"}, false, DecoderLayout{}, build_nemotron_h);
  add("granitemoehybrid", {"GraniteMoeHybridForCausalLM"}, true, DecoderLayout{}, build_granite_moe_hybrid);
  // Falcon-H1: attention and Mamba2 in parallel in every layer (family_falcon_h1.cpp);
  // FalconH1Config ties no embeddings by default.
  add("falcon_h1", {"FalconH1ForCausalLM"}, false, DecoderLayout{}, build_falcon_h1);
  // Jamba: Mamba-1 + attention every 8th layer, MoE every other layer (family_jamba.cpp).
  add("jamba", {"JambaForCausalLM"}, false, DecoderLayout{}, build_jamba);
  add("falcon", {"FalconForCausalLM", "RWForCausalLM"}, true, DecoderLayout{}, build_falcon)
      ->class_defaults = falcon_defaults();
  add("gpt_bigcode", {"GPTBigCodeForCausalLM"}, true, DecoderLayout{}, build_gpt_bigcode);
  add("gpt_neox", {"GPTNeoXForCausalLM"}, false, DecoderLayout{}, build_gpt_neox);
  // Nemotron-NAS: Llama layers with per-layer attention / FFN from block_configs (family_decilm.cpp).
  add("decilm", {"DeciLMForCausalLM"}, false, DecoderLayout{}, build_decilm);
  // Encoders (family_encoder.cpp): planned as pooling models, no KV cache.
  add("bert", {"BertModel", "BertForSequenceClassification", "BertForMaskedLM"}, true,
      DecoderLayout{}, build_bert);
  add("roberta",
      {"RobertaModel", "XLMRobertaModel", "RobertaForSequenceClassification",
       "XLMRobertaForSequenceClassification", "RobertaForMaskedLM", "XLMRobertaForMaskedLM"},
      true, DecoderLayout{}, build_bert);
  add("deberta_v2", {"DebertaV2Model", "DebertaV2ForSequenceClassification"}, true,
      DecoderLayout{}, build_deberta_v2);
  add("modernbert", {"ModernBertModel", "ModernBertForMaskedLM"}, true, DecoderLayout{},
      build_modernbert);
  add("nomic_bert", {"NomicBertModel"}, true, DecoderLayout{}, build_nomic_bert);
  if (f.size() > kRows) throw std::logic_error("hf_families.cpp: more family rows than kRows, raise it");
  return f;
}

}  // namespace

const std::vector<Family>& families() {
  static const std::vector<Family> table = make_families();
  return table;
}

const Family* find_family_by_architecture(std::string_view architecture) {
  for (const auto& fam : families())
    for (auto a : fam.architectures)
      if (a == architecture) return &fam;
  return nullptr;
}

const Family* find_family_by_name(std::string_view name) {
  for (const auto& fam : families())
    if (fam.name == name) return &fam;
  return nullptr;
}

}  // namespace vramplan::hf
