// hf_family.hpp (private) — what vramplan knows about each HF architecture.
//
// Most decoder families differ only in a handful of switches (fused projections, which biases
// exist, norm kind and count, MoE block style, sliding-window pattern): they are rows of
// DecoderLayout in hf_families.cpp, built by the one generic builder (family_decoder.cpp).
// Families whose modules differ structurally (DeepSeek MLA, Llama-4, Falcon, gpt-oss) have a
// small builder file of their own (family_<name>.cpp) but still a row in the same table.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/hf_config_view.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::hf {

// The one short name for TensorRole in the family tables: declared here only, since a second
// alias in a file of the same unity batch shadows it (clang -Wshadow).
using R = TensorRole;

//! When a bias exists: never, always (the module constructor hard-codes bias=True) or as the
//! config key says (`attention_bias`, `mlp_bias`, `bias`, default false).
enum class Bias { No, Yes, AttentionBiasKey, MlpBiasKey, BiasKey, UseBiasKey };
enum class Mlp { Gated, GatedFused, Plain };  // gate/up/down; gate_up_proj + down; fc1 + fc2
enum class Norm { Rms, LayerNorm, LayerNormNoBias };
// q_norm/k_norm: of {head_dim} always (Qwen3, Gemma-3), or per head {heads, head_dim} when
// the config sets use_qk_norm (Cohere).
//! WholeProjection: one RMSNorm over all heads' q (num_heads x head_dim) and k (num_kv_heads x
//! head_dim), as FlexOlmoAttention / MiniMaxM2Attention keep it. ConfigUseQkNormHeadDim: of
//! {head_dim} when the config sets use_qk_norm (Glm4MoeAttention).
enum class QkNorm { No, PerHeadDim, ConfigUseQkNormPerHead, ConfigUseQkNormHeadDim, WholeProjection };
//! Glm4: DeepSeek-V3's sparse block (gate with e_score_correction_bias, routed experts, shared
//! experts of moe_intermediate_size x n_shared_experts) after first_k_dense_replace dense layers.
enum class Moe { None, Mixtral, QwenMoe, Ernie, Glm4 };
//! How layers are typed when the config has no `layer_types`.
enum class Pattern {
  SlidingIfConfigured,  //!< every layer sliding when `sliding_window` is set (and not disabled)
  Gemma2Alternate,      //!< even layers sliding, odd global (HF Gemma2: is_sliding = not i % 2)
  Gemma3Interleave,     //!< global when (i + 1) % sliding_window_pattern == 0, else sliding
};

struct NormSlot {
  std::string_view name;  //!< module name inside the layer ("input_layernorm")
  TensorRole role;
};

struct DecoderLayout {
  std::string_view model_prefix = "model.";
  std::string_view attn = "self_attn";
  bool fused_qkv = false;  //!< qkv_proj
  std::string_view o_proj = "o_proj";
  Bias qkv_bias = Bias::No;
  Bias o_bias = Bias::No;
  QkNorm qk_norm = QkNorm::No;
  Mlp mlp = Mlp::Gated;
  Bias mlp_bias = Bias::No;
  Norm norm = Norm::Rms;
  std::vector<NormSlot> norms = {{"input_layernorm", TensorRole::AttnNorm},
                                 {"post_attention_layernorm", TensorRole::FfnNorm}};
  std::string_view final_norm = "norm";
  std::string_view lm_head = "lm_head";
  bool lm_head_bias = false;
  Moe moe = Moe::None;
  //! The sparse block keeps an e_score_correction_bias buffer, one value per expert
  //! (MiniMaxM2SparseMoeBlock).
  bool moe_routing_bias = false;
  Pattern pattern = Pattern::SlidingIfConfigured;
};

struct Family;
using BuildFn = void (*)(const ConfigView& config, const Family& family, ModelSpec& spec);

struct Family {
  std::string_view name;                       //!< ModelArch::family
  std::vector<std::string_view> architectures;  //!< HF `architectures[0]` values
  //! transformers' config-class default for tie_word_embeddings (used when the key is absent).
  bool tied_default = false;
  DecoderLayout layout;
  BuildFn build = nullptr;  //!< nullptr: the generic decoder builder
  //! DeepSeek sparse attention: MLA layers with a lightning indexer (build_deepseek reads
  //! index_n_heads / index_head_dim / index_topk and which layers run their own indexer).
  bool sparse_attention = false;
  //! transformers config-class defaults for keys that published checkpoints omit (applied to
  //! the text config before reading); each family that has them cites the class.
  nlohmann::json class_defaults = nlohmann::json::object();
  //! Adds the vision tower this family's vision_config describes (multimodal classes);
  //! nullptr: not counted, listed as an exclusion.
  void (*vision_tower)(const ConfigView& config, ModelSpec& spec) = nullptr;
};

const std::vector<Family>& families();
const Family* find_family_by_architecture(std::string_view architecture);
const Family* find_family_by_name(std::string_view name);

// Builders (family_<name>.cpp).
void build_decoder(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_deepseek(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_llama4(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_gpt_oss(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_qwen3_next(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_kimi_linear(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_step3p5(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_nemotron_h(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_granite_moe_hybrid(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_falcon_h1(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_jamba(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_falcon(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_gpt_bigcode(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_gpt_neox(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_decilm(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_gemma4(const ConfigView& config, const Family& family, ModelSpec& spec);
// Bidirectional encoders (family_encoder.cpp): embedders, rerankers, masked-LM checkpoints.
void build_bert(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_deberta_v2(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_modernbert(const ConfigView& config, const Family& family, ModelSpec& spec);
void build_nomic_bert(const ConfigView& config, const Family& family, ModelSpec& spec);

// Shared pieces (hf_common.cpp).
//! Reads the dimensions every decoder has into spec.arch (hidden, layers, heads, head_dim, ...).
void read_common_dims(const ConfigView& config, const Family& family, ModelArch& arch);
//! A routed-expert block's size under the family's keys: num_experts, experts_per_token (failing,
//! named by `top_k_key`, when it exceeds the expert count) and moe_intermediate_size.
void read_routed_experts(const ConfigView& config, std::string_view experts_key, std::string_view top_k_key,
                         std::string_view width_key, ModelArch& arch);
//! Per-layer attention kind from `layer_types` or the family pattern; sets sliding_window.
void read_layer_attention(const ConfigView& config, Pattern pattern, ModelArch& arch);
//! The rope table(s) of the main rope config (+ Gemma-3's local table); rotary_dim given.
void read_rope_tables(const ConfigView& config, std::uint64_t rotary_dim, ModelArch& arch);
//! head_dim x partial_rotary_factor (Phi-2, GLM), else head_dim.
std::uint64_t rotary_dim_of(const ConfigView& config, const ModelArch& arch);
bool bias_enabled(const ConfigView& config, Bias rule);
//! The stored format name for the checkpoint's torch_dtype ("bf16", ...), "" when absent.
std::string stored_format_of(const ConfigView& config);
//! The ViT dimensions every vision_config gives (SigLIP, Llama-4), each > 0, image_size a
//! multiple of patch_size; errors name the field under /vision_config.
struct VisionDims {
  std::uint64_t hidden = 0, intermediate = 0, layers = 0, patch = 0, image = 0, channels = 3;
  std::uint64_t patches() const { return (image / patch) * (image / patch); }
};
VisionDims read_vision_dims(const JsonView& vision_config);
//! A required vision_config dimension: within its plausibility limit (checked_dimension) and > 0.
std::uint64_t vision_count(const JsonView& vision_config, std::string_view key);
//! Adds the Gemma-3 SigLIP vision tower + projector (the config describes every dimension).
void add_siglip_vision_tower(const ConfigView& config, ModelSpec& spec);
//! Adds the Gemma 4 vision tower + its embedding projection (family_gemma4.cpp).
void add_gemma4_vision_tower(const ConfigView& config, ModelSpec& spec);
//! Adds the Llama-4 vision encoder, pixel-shuffle adapter and projector (vision_llama4.cpp).
void add_llama4_vision_tower(const ConfigView& config, ModelSpec& spec);
//! Pixtral encoder + Mistral3 projector (patch merger) / LLaVA projector (vision_pixtral.cpp).
void add_mistral3_vision_tower(const ConfigView& config, ModelSpec& spec);
void add_llava_pixtral_vision_tower(const ConfigView& config, ModelSpec& spec);
//! Qwen2.5-VL / Qwen3-VL vision transformer + mergers (vision_qwen.cpp).
void add_qwen2_5_vision_tower(const ConfigView& config, ModelSpec& spec);
void add_qwen3_vision_tower(const ConfigView& config, ModelSpec& spec);
//! Llama-3.2-Vision: text with cross-attention layers, tiled ViT + projector (family_mllama.cpp).
void build_mllama(const ConfigView& config, const Family& family, ModelSpec& spec);
void add_mllama_vision_tower(const ConfigView& config, ModelSpec& spec);

}  // namespace vramplan::hf
