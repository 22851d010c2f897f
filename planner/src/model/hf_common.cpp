// Reads shared by every family handler: dimensions, layer attention types, rope tables, dtype.
#include <cmath>

#include "model/hf_family.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/limits.hpp"

namespace vramplan::hf {

void read_common_dims(const ConfigView& c, const Family& family, ModelArch& a) {
  a.hidden_size = c.positive({"hidden_size", "n_embd", "d_model"});
  a.num_layers = c.positive({"num_hidden_layers", "n_layer", "num_layers"});
  a.num_heads = c.positive({"num_attention_heads", "n_head", "num_heads"});
  a.num_kv_heads =
      c.positive_opt({"num_key_value_heads", "n_head_kv", "num_kv_heads"}).value_or(a.num_heads);
  if (a.num_heads % a.num_kv_heads != 0)
    c.fail("num_key_value_heads", std::to_string(a.num_kv_heads) +
                                      " does not divide num_attention_heads " +
                                      std::to_string(a.num_heads));
  if (auto d = c.positive_opt({"head_dim"})) {
    a.head_dim = *d;
  } else {
    if (a.hidden_size % a.num_heads != 0)
      c.fail("num_attention_heads", std::to_string(a.num_heads) + " does not divide hidden_size " +
                                        std::to_string(a.hidden_size) +
                                        " and the config has no head_dim");
    a.head_dim = a.hidden_size / a.num_heads;
  }
  a.v_head_dim = a.head_dim;
  a.vocab_size = c.positive({"vocab_size"});
  // 0 positions is no model (vLLM derives max_model_len from it and refuses every request): the
  // file's field is named, as a layer count of 0 is, not a --max-model-len never given.
  a.max_position_embeddings =
      c.positive_opt({"max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"})
          .value_or(0);
  a.tied_embeddings = c.boolean({"tie_word_embeddings"}).value_or(family.tied_default);
  a.torch_dtype = c.string({"torch_dtype", "dtype"}).value_or("");
}

void read_routed_experts(const ConfigView& c, std::string_view experts_key, std::string_view top_k_key,
                         std::string_view width_key, ModelArch& a) {
  a.num_experts = c.positive({experts_key});
  a.experts_per_token = c.positive({top_k_key});
  if (a.experts_per_token > a.num_experts) c.fail(top_k_key, "is larger than " + std::string(experts_key));
  a.moe_intermediate_size = c.positive({width_key});
}

namespace {

struct LayerTypeName {
  std::string_view name;
  LayerAttention kind;
};
// transformers' `layer_types` vocabulary (configuration_utils.ALLOWED_LAYER_TYPES).
constexpr LayerTypeName kLayerTypes[] = {
    {"full_attention", LayerAttention::Full},
    {"sliding_attention", LayerAttention::Sliding},
    {"chunked_attention", LayerAttention::Chunked},
    {"linear_attention", LayerAttention::Recurrent},
    {"mamba", LayerAttention::Recurrent},
};

}  // namespace

void read_layer_attention(const ConfigView& c, Pattern pattern, ModelArch& a) {
  const auto L = a.num_layers;
  a.layer_attention.assign(L, LayerAttention::Full);
  if (auto types = c.find({"layer_types"})) {
    const auto items = types->items();
    if (items.size() != L)
      types->fail("has " + std::to_string(items.size()) + " entries, num_hidden_layers is " +
                  std::to_string(L));
    for (std::size_t i = 0; i < L; ++i) {
      const auto name = items[i].as_string();
      bool known = false;
      for (const auto& t : kLayerTypes)
        if (t.name == name) a.layer_attention[i] = t.kind, known = true;
      if (!known) items[i].fail("unknown layer type '" + name + "'");
    }
  } else if (pattern == Pattern::SlidingIfConfigured) {
    // Mistral-7B-v0.1 / Phi-3: sliding_window on every layer; Qwen2 sets a window but disables
    // it with use_sliding_window=false.
    const auto window = c.u64({"sliding_window"});
    if (window && *window > 0 && c.flag("use_sliding_window", true))
      a.layer_attention.assign(L, LayerAttention::Sliding);
  } else if (pattern == Pattern::Gemma2Alternate) {
    // HF Gemma2DecoderLayer: is_sliding = not bool(layer_idx % 2).
    for (std::size_t i = 0; i < L; ++i)
      if (i % 2 == 0) a.layer_attention[i] = LayerAttention::Sliding;
  } else if (pattern == Pattern::Gemma3Interleave) {
    // HF Gemma3TextConfig: sliding unless (i + 1) % sliding_window_pattern == 0 (default 6).
    const auto p = c.positive_opt({"sliding_window_pattern"}).value_or(6);
    for (std::size_t i = 0; i < L; ++i)
      if ((i + 1) % p != 0) a.layer_attention[i] = LayerAttention::Sliding;
  }
  for (auto kind : a.layer_attention)
    if (kind == LayerAttention::Sliding) {
      a.sliding_window = c.positive({"sliding_window"});
      break;
    }
}

std::uint64_t rotary_dim_of(const ConfigView& c, const ModelArch& a) {
  // MiniMax-M2's config states the rotated width itself (rotary_dim 64 of head_dim 128;
  // vLLM / SGLang minimax_m2.py pass config.rotary_dim to get_rope).
  if (!c.find({"partial_rotary_factor"}))
    if (auto rd = c.positive_opt({"rotary_dim"})) {
      if (*rd > a.head_dim) c.fail("rotary_dim", "is larger than head_dim");
      return *rd;
    }
  const double factor = c.number({"partial_rotary_factor"}).value_or(1.0);
  if (!(factor > 0.0 && factor <= 1.0))
    c.fail("partial_rotary_factor", "must be in (0, 1]");
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(a.head_dim) * factor));
}

void read_rope_tables(const ConfigView& c, std::uint64_t rotary_dim, ModelArch& a) {
  if (a.max_position_embeddings == 0 || rotary_dim == 0) return;
  RopeTable t;
  t.rotary_dim = rotary_dim;
  t.max_positions = a.max_position_embeddings;
  const auto scaling = c.find({"rope_scaling", "rope_parameters"});
  // transformers' rope_config_validation reads it as a dict (rope_scaling.get("rope_type")).
  if (scaling && !scaling->is_object()) scaling->fail("must be an object such as {\"rope_type\": \"yarn\", \"factor\": 4}");
  if (scaling) {
    t.scaling_type = scaling->opt_string("rope_type").value_or(scaling->opt_string("type").value_or(""));
    t.scaling_factor = scaling->opt_number("factor").value_or(1.0);
    if (!(t.scaling_factor > 0.0 && t.scaling_factor <= kMaxRopeScalingFactor))
      scaling->fail_at("factor", "must be in (0, " + std::to_string(static_cast<int>(kMaxRopeScalingFactor)) +
                                     "] (real configs stretch the context 2 to 40 times)");
    if (t.scaling_type == "default") t.scaling_type.clear();
    // Rows of vLLM's cos/sin cache (vllm/model_executor/layers/rotary_embedding/):
    // linear scaling stretches the table by the factor; YaRN builds original_max x factor rows;
    // Phi-3 LongRoPE keeps a short (original) and a long (max) cache side by side.
    const auto inner = scaling->get("original_max_position_embeddings");
    const auto original = inner ? checked_dimension(*inner, "original_max_position_embeddings")
                                : c.u64({"original_max_position_embeddings"}).value_or(0);
    if (t.scaling_type == "linear") {
      t.max_positions = static_cast<std::uint64_t>(
          std::llround(static_cast<double>(a.max_position_embeddings) * t.scaling_factor));
    } else if (t.scaling_type == "yarn" && original > 0) {
      t.max_positions =
          static_cast<std::uint64_t>(std::llround(static_cast<double>(original) * t.scaling_factor));
    } else if ((t.scaling_type == "longrope" || t.scaling_type == "su") && original > 0) {
      t.max_positions = a.max_position_embeddings + original;
    }
  }
  a.rope_tables.push_back(t);
}

bool bias_enabled(const ConfigView& c, Bias rule) {
  switch (rule) {
    case Bias::No: return false;
    case Bias::Yes: return true;
    case Bias::AttentionBiasKey: return c.flag("attention_bias", false);
    case Bias::MlpBiasKey: return c.flag("mlp_bias", false);
    case Bias::BiasKey: return c.flag("bias", false);
    case Bias::UseBiasKey: return c.flag("use_bias", false);  // ERNIE-4.5
  }
  return false;
}

std::string stored_format_of(const ConfigView& c) {
  // torch dtype names -> data/quant_formats.json names.
  static const std::pair<std::string_view, std::string_view> kDtypes[] = {
      {"bfloat16", "bf16"}, {"float16", "fp16"}, {"half", "fp16"},
      {"float32", "fp32"},  {"float", "fp32"},
  };
  const auto dtype = c.string({"torch_dtype", "dtype"});
  if (!dtype) return "";
  for (const auto& [torch, name] : kDtypes)
    if (*dtype == torch) return std::string(name);
  return "";
}

}  // namespace vramplan::hf
