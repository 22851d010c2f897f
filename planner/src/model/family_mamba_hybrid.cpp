// Mamba2 + attention hybrids as vLLM serves them: Nemotron-H (NemotronHForCausalLM, model_type
// nemotron_h: Nemotron-H, Nemotron-Nano-v2, Nemotron-3 Nano) and Granite-4.0-H
// (GraniteMoeHybridForCausalLM, model_type granitemoehybrid).
//
// The Mamba2 mixer (vllm/model_executor/layers/mamba/mamba_mixer2.py MambaMixer2, the checkpoint
// layout of transformers' modeling_nemotron_h.py / modeling_granitemoehybrid.py):
//   in_proj {d_inner + conv_dim + heads, hidden} (z, xBC, dt), conv_dim = d_inner + 2 n_groups d_state;
//   conv1d {conv_dim, 1, kernel} (+ bias when use_conv_bias); dt_bias, A_log, D {heads};
//   norm {d_inner} (gated RMSNorm); out_proj {hidden, d_inner}.
// Per-request state (mamba_utils.py MambaStateShapeCalculator.mamba2_state_shape):
//   conv {kernel - 1, conv_dim}, SSM {heads, head_dim, d_state}; its TP split is
//   model/recurrent_state.hpp.
#include "model/family_mamba_hybrid.hpp"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"
#include "vramplan/model/recurrent_state.hpp"

namespace vramplan::hf {

void mamba2_mixer(InventoryBuilder& b, const std::string& p, std::uint64_t h, const Mamba2Dims& d) {
  b.linear(p + "in_proj", R::Recurrent, d.d_inner + d.conv_dim() + d.heads, h, d.proj_bias);
  b.tensor(p + "conv1d.weight", R::Recurrent, {d.conv_dim(), 1, d.kernel});
  if (d.conv_bias) b.tensor(p + "conv1d.bias", R::Recurrent, {d.conv_dim()}, /*is_bias=*/true);
  b.tensor(p + "dt_bias", R::Recurrent, {d.heads}, /*is_bias=*/true);  // added to dt, never quantized
  b.tensor(p + "A_log", R::Recurrent, {d.heads});
  b.tensor(p + "D", R::Recurrent, {d.heads});
  if (d.gated_norm) b.norm(p + "norm", R::Recurrent, d.d_inner);
  b.linear(p + "out_proj", R::AttnOutput, h, d.d_inner, d.proj_bias);  // RowParallelLinear
}

void set_mamba2_state(const Mamba2Dims& d, ModelArch& a) {
  a.recurrent_conv_state_elems = (d.kernel - 1) * d.conv_dim();
  a.recurrent_ssm_state_elems = d.heads * d.head_dim * d.d_state;
  a.recurrent_shape = {d.kernel - 1, d.d_inner, d.groups, d.d_state, d.heads, d.head_dim * d.d_state};
  a.recurrent_state_bytes_per_layer = recurrent_state_bytes(a, 1);
}

namespace {

void check_mamba2(const ConfigView& c, const Mamba2Dims& d) {
  if (d.heads % d.groups != 0) c.fail("n_groups", "does not divide the number of Mamba heads");
}

// --- Nemotron-H --------------------------------------------------------------------------

// vLLM nemotron_h.py ALL_DECODER_LAYER_TYPES: one mixer per layer, typed by
// hybrid_override_pattern: M Mamba2, * attention, - MLP, E MoE. Every layer has one pre-norm
// ("norm") and the mixer under "mixer."; the checkpoint's prefix is "backbone." (vLLM maps it
// to "model.").
void nemotron_attention(InventoryBuilder& b, const std::string& p, const ModelArch& a, bool bias) {
  const auto h = a.hidden_size, hd = a.head_dim;
  b.linear(p + "q_proj", R::AttnQ, a.num_heads * hd, h, bias);
  b.linear(p + "k_proj", R::AttnK, a.num_kv_heads * hd, h, bias);
  b.linear(p + "v_proj", R::AttnV, a.num_kv_heads * hd, h, bias);
  b.linear(p + "o_proj", R::AttnOutput, h, a.num_heads * hd, bias);
}

// NemotronHMoE: a sigmoid router with e_score_correction_bias, non-gated (squared-ReLU) routed
// experts of up_proj / down_proj, and n_shared_experts shared experts fused into one MLP of
// moe_shared_expert_intermediate_size x n_shared_experts. A latent MoE (Nemotron-3 Super,
// moe_latent_size) routes on the hidden state but runs the experts on fc1_latent_proj's
// projection of it and projects their sum back with fc2_latent_proj (both ReplicatedLinear,
// bias = mlp_bias: vLLM nemotron_h.py and SGLang models/nemotron_h.py NemotronHMoE); the shared
// experts keep the hidden state.
void nemotron_moe(InventoryBuilder& b, const std::string& p, const ModelArch& a, std::uint64_t shared, bool bias) {
  const auto h = a.hidden_size, E = a.num_experts, Ie = a.moe_intermediate_size, he = a.moe_hidden_size();
  b.linear(p + "gate", R::FfnGateInp, E, h);
  b.tensor(p + "gate.e_score_correction_bias", R::FfnExpProbsBias, {E});
  b.experts(p + "experts.*.up_proj.weight", R::FfnUpExps, E, Ie, he);
  b.experts(p + "experts.*.down_proj.weight", R::FfnDownExps, E, he, Ie);
  if (a.moe_latent_size > 0) {
    b.linear(p + "fc1_latent_proj", R::FfnLatentDown, he, h, bias);
    b.linear(p + "fc2_latent_proj", R::FfnLatentUp, h, he, bias);
  }
  if (shared > 0) {
    b.linear(p + "shared_experts.up_proj", R::FfnUpShexp, shared, h, bias);
    b.linear(p + "shared_experts.down_proj", R::FfnDownShexp, h, shared, bias);
  }
}

// transformers' in-tree NemotronHConfig (models/nemotron_h/configuration_nemotron_h.py) and the
// configs written for it (Nemotron-3 Ultra) list the layer types in layers_block_type instead of
// hybrid_override_pattern and num_hidden_layers; llama.cpp's conversion/nemotron.py reads either
// and also takes linear_attention / full_attention for mamba / attention.
constexpr std::pair<std::string_view, char> kBlockTypes[] = {
    {"mamba", 'M'}, {"linear_attention", 'M'}, {"attention", '*'}, {"full_attention", '*'}, {"mlp", '-'}, {"moe", 'E'}};

std::optional<nlohmann::json> with_pattern_from_block_types(const ConfigView& c) {
  if (c.find({"hybrid_override_pattern"})) return std::nullopt;
  const auto types = c.find({"layers_block_type"});
  if (!types) return std::nullopt;
  std::string pattern;
  for (const auto& item : types->items()) {
    const auto t = item.as_string();
    const auto* hit = std::find_if(std::begin(kBlockTypes), std::end(kBlockTypes), [&](const auto& e) { return e.first == t; });
    if (hit == std::end(kBlockTypes)) item.fail("unknown layer type '" + t + "' (mamba, attention, mlp or moe)");
    pattern += hit->second;
  }
  if (pattern.empty()) types->fail("is empty: no layers");
  // Errors about the list name the list, not the pattern it becomes.
  if (const auto n = c.u64({"num_hidden_layers"}); n && *n != pattern.size())
    types->fail("has " + std::to_string(pattern.size()) + " entries, num_hidden_layers is " + std::to_string(*n));
  nlohmann::json out = c.root().raw();
  out["hybrid_override_pattern"] = pattern;
  out["num_hidden_layers"] = pattern.size();
  return out;
}

void build_nemotron_h_pattern(const ConfigView& c, const Family& family, ModelSpec& spec);

}  // namespace

void build_nemotron_h(const ConfigView& c, const Family& family, ModelSpec& spec) {
  if (const auto expanded = with_pattern_from_block_types(c))
    return build_nemotron_h_pattern(ConfigView(*expanded, c.origin()), family, spec);
  build_nemotron_h_pattern(c, family, spec);
}

namespace {

void build_nemotron_h_pattern(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  read_common_dims(c, family, a);
  // Nemotron-H-8B names the head size attention_head_dim (NemotronHAttention: head_dim, else
  // hidden_size / heads).
  if (!c.find({"head_dim"}))
    if (const auto hd = c.positive_opt({"attention_head_dim"})) a.head_dim = a.v_head_dim = *hd;
  const std::string pattern = c.string({"hybrid_override_pattern"}).value_or("");
  if (pattern.size() != a.num_layers)
    c.fail("hybrid_override_pattern", "has " + std::to_string(pattern.size()) + " layers, num_hidden_layers is " +
                                           std::to_string(a.num_layers));

  Mamba2Dims d;
  d.heads = c.positive({"mamba_num_heads"});
  d.head_dim = c.positive({"mamba_head_dim"});
  d.d_inner = d.heads * d.head_dim;  // NemotronHMambaDecoderLayer: intermediate_size = heads x head_dim
  d.groups = c.positive({"n_groups"});
  d.d_state = c.positive({"ssm_state_size"});
  d.kernel = c.positive({"conv_kernel"});
  d.conv_bias = c.flag("use_conv_bias", true);
  d.proj_bias = c.flag("use_bias", false);
  check_mamba2(c, d);
  // vLLM NemotronHForCausalLMConfig.update_mamba_ssm_cache_dtype: the config's
  // mamba_ssm_cache_dtype, float32 when absent (older releases: float16).
  a.recurrent_ssm_dtype = c.string({"mamba_ssm_cache_dtype"}).value_or("float32");
  set_mamba2_state(d, a);

  // '-' layers: intermediate_size, or its mlp_index-th entry when a list (NemotronHMLPDecoderLayer).
  std::vector<std::uint64_t> mlp_sizes;
  if (auto is = c.find({"intermediate_size"}); is && is->is_array()) {
    for (const auto& v : is->items()) mlp_sizes.push_back(v.as_u64());
  } else if (pattern.find('-') != std::string::npos) {
    mlp_sizes.push_back(c.positive({"intermediate_size"}));
  }
  a.intermediate_size = !mlp_sizes.empty() ? mlp_sizes.front() : c.u64({"intermediate_size"}).value_or(0);
  std::uint64_t shared = 0;
  if (pattern.find('E') != std::string::npos) {
    read_routed_experts(c, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", a);
    // NemotronHMoE.use_latent_moe: moe_latent_size present and not null.
    if (const auto latent = c.positive_opt({"moe_latent_size"})) {
      if (*latent > a.hidden_size) c.fail("moe_latent_size", "is larger than hidden_size");
      a.moe_latent_size = *latent;
    }
    a.num_shared_experts = c.u64({"n_shared_experts"}).value_or(0);
    shared = a.num_shared_experts * c.u64({"moe_shared_expert_intermediate_size"}).value_or(0);
    a.shared_expert_intermediate_size = shared;
    a.layer_is_moe.assign(a.num_layers, false);
    // llama.cpp's router (ModelArch::moe_routing) as conversion/nemotron.py writes it: sigmoid scores
    // (nemotron-h.cpp passes LLAMA_EXPERT_GATING_FUNC_TYPE_SIGMOID), norm_topk_prob, routed_scaling_factor.
    a.moe_routing.sigmoid = true;
    a.moe_routing.norm_topk = c.flag("norm_topk_prob", false);
    a.moe_routing.scale = c.number({"routed_scaling_factor"}).value_or(0.0);
  }
  a.layer_attention.assign(a.num_layers, LayerAttention::None);
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    switch (pattern[i]) {
      case 'M': a.layer_attention[i] = LayerAttention::Recurrent; break;
      case '*': a.layer_attention[i] = LayerAttention::Full; break;
      case 'E': a.layer_is_moe[i] = true; break;
      case '-': break;
      default: c.fail("hybrid_override_pattern", std::string("has an unknown layer type '") + pattern[i] + "'");
    }
  }
  // NemotronHAttention applies no rotary embedding: no rope table.

  const bool attn_bias = c.flag("attention_bias", false), mlp_bias = c.flag("mlp_bias", false);
  const auto h = a.hidden_size, V = a.vocab_size;
  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor("backbone.embeddings.weight", R::TokenEmbedding, {V, h});
  std::uint64_t mlp_index = 0;
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    const std::string p = layer_prefix("backbone.", "layers", i);
    b.norm(p + "norm", R::AttnNorm, h);
    switch (pattern[i]) {
      case 'M': mamba2_mixer(b, p + "mixer.", h, d); break;
      case '*': nemotron_attention(b, p + "mixer.", a, attn_bias); break;
      case 'E': nemotron_moe(b, p + "mixer.", a, shared, mlp_bias); break;
      default: {
        const auto I = mlp_sizes.size() == 1 ? mlp_sizes[0] : mlp_sizes.at(mlp_index);
        ++mlp_index;
        b.linear(p + "mixer.up_proj", R::FfnUp, I, h, mlp_bias);  // squared-ReLU MLP, no gate
        b.linear(p + "mixer.down_proj", R::FfnDown, h, I, mlp_bias);
      }
    }
  }
  b.set_layer(std::nullopt);
  b.norm("backbone.norm_f", R::OutputNorm, h);
  if (!a.tied_embeddings) b.linear(std::string(family.layout.lm_head), R::Output, V, h);
}

}  // namespace

// --- Granite-4.0-H -------------------------------------------------------------------------

// vLLM granitemoehybrid.py: layer_types "mamba" (MambaMixer2 under "mamba.") or "attention"
// (q/k/v/o, rotary only when position_embedding_type is "rope"); every layer has
// input_layernorm + post_attention_layernorm, a GraniteMoeMoE when num_local_experts > 0
// (block_sparse_moe: router.layer {E, hidden}, input_linear {E, 2 I, hidden} (gate and up
// fused), output_linear {E, hidden, I}) and a shared MLP when shared_intermediate_size > 0
// (shared_mlp.input_linear {2 Is, hidden}, output_linear {hidden, Is}).
void build_granite_moe_hybrid(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  read_common_dims(c, family, a);
  a.head_dim = a.v_head_dim = a.hidden_size / a.num_heads;  // GraniteMoeHybridAttention
  a.layer_attention.assign(a.num_layers, LayerAttention::Full);
  const auto types = c.find({"layer_types"});
  if (!types) c.fail("layer_types", "is required (mamba / attention per layer)");
  const auto items = types->items();
  if (items.size() != a.num_layers)
    types->fail("has " + std::to_string(items.size()) + " entries, num_hidden_layers is " + std::to_string(a.num_layers));
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto t = items[i].as_string();
    if (t == "mamba") a.layer_attention[i] = LayerAttention::Recurrent;
    else if (t != "attention") items[i].fail("unknown layer type '" + t + "' (mamba or attention)");
  }
  if (c.string({"position_embedding_type"}).value_or("nope") == "rope") read_rope_tables(c, a.head_dim, a);

  Mamba2Dims d;
  d.heads = c.positive({"mamba_n_heads"});
  d.head_dim = c.positive({"mamba_d_head"});
  d.d_inner = c.positive({"mamba_expand"}) * a.hidden_size;  // MambaMixer2 intermediate_size
  if (d.d_inner != d.heads * d.head_dim) c.fail("mamba_d_head", "x mamba_n_heads is not mamba_expand x hidden_size");
  d.groups = c.positive({"mamba_n_groups"});
  d.d_state = c.positive({"mamba_d_state"});
  d.kernel = c.positive({"mamba_d_conv"});
  d.conv_bias = c.flag("mamba_conv_bias", true);
  d.proj_bias = c.flag("mamba_proj_bias", false);
  check_mamba2(c, d);
  set_mamba2_state(d, a);

  a.intermediate_size = c.u64({"intermediate_size"}).value_or(0);
  a.num_experts = c.u64({"num_local_experts"}).value_or(0);
  const auto Is = c.u64({"shared_intermediate_size"}).value_or(0);
  if (a.num_experts > 0) {
    a.experts_per_token = c.positive({"num_experts_per_tok"});
    a.moe_intermediate_size = a.intermediate_size;
    a.shared_expert_intermediate_size = Is;
    a.num_shared_experts = Is > 0 ? 1 : 0;
    a.layer_is_moe.assign(a.num_layers, true);
  }
  const bool attn_bias = c.flag("attention_bias", false);
  const auto h = a.hidden_size, V = a.vocab_size;
  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor("model.embed_tokens.weight", R::TokenEmbedding, {V, h});
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    const std::string p = layer_prefix("model.", "layers", i);
    b.norm(p + "input_layernorm", R::AttnNorm, h);
    b.norm(p + "post_attention_layernorm", R::FfnNorm, h);
    if (a.layer_attention[i] == LayerAttention::Recurrent) mamba2_mixer(b, p + "mamba.", h, d);
    else nemotron_attention(b, p + "self_attn.", a, attn_bias);
    if (a.num_experts > 0) {
      const auto E = a.num_experts, I = a.moe_intermediate_size;
      b.linear(p + "block_sparse_moe.router.layer", R::FfnGateInp, E, h);
      b.experts(p + "block_sparse_moe.input_linear.weight", R::FfnGateUpExps, E, 2 * I, h);
      b.experts(p + "block_sparse_moe.output_linear.weight", R::FfnDownExps, E, h, I);
    }
    if (Is > 0) {
      b.linear(p + "shared_mlp.input_linear", R::FfnGateUp, 2 * Is, h);
      b.linear(p + "shared_mlp.output_linear", R::FfnDown, h, Is);
    }
  }
  b.set_layer(std::nullopt);
  b.norm("model.norm", R::OutputNorm, h);
  if (!a.tied_embeddings) b.linear(std::string(family.layout.lm_head), R::Output, V, h);
}

}  // namespace vramplan::hf
