// Kimi-Linear (KimiLinearForCausalLM, model_type kimi_linear; Kimi-Linear-48B-A3B): Kimi Delta
// Attention (KDA) linear-attention layers with a multi-head latent attention layer every few,
// DeepSeek-V3-style MoE (sigmoid router with a score bias, one shared expert) after a dense
// first layer. docs/research/kimi-linear.md has every source; in short:
//  - linear_attn_config.kda_layers / full_attn_layers are 1-based (SGLang configs/kimi_linear.py
//    KimiLinearConfig.is_kda_layer: (layer_idx + 1) in kda_layers);
//  - a KDA layer (vLLM 0.26.0 kimi_gdn_linear_attn.py KimiGatedDeltaNetAttention; SGLang 0.5.7
//    models/kimi_linear.py KimiDeltaAttention): q/k/v_proj {H D, h}, the decay gate
//    f_a_proj {D, h} -> f_b_proj {H D, D}, the output gate g_a_proj {D, h} -> g_b_proj {H D, D},
//    b_proj {H, h}, one depthwise conv per q / k / v {H D, 1, K}, A_log {1, 1, H, 1},
//    dt_bias {H D}, o_norm {D}, o_proj {h, H D} (H, D, K = linear_attn_config num_heads,
//    head_dim, short_conv_kernel_size);
//  - its per-request state: three conv states of K - 1 tokens x H D channels and a recurrent
//    state {H, D, D} (mamba_utils.py kda_state_shape / KimiLinearStateShape), the recurrent
//    part in float32 in both engines (vLLM MambaStateDtypeCalculator.kda_state_dtype);
//  - the MLA layers use no rotary embedding (mla_use_nope) but keep the DeepSeek shapes:
//    q_proj {n (nope + rope), h} (q_lora_rank null), kv_a_proj_with_mqa {kv_lora_rank + rope, h},
//    kv_b_proj, o_proj, and the 576-value latent per token in the KV cache;
//  - the context is model_max_length (no max_position_embeddings; SGLang CONTEXT_LENGTH_KEYS);
//  - experts are stored Mixtral-style as block_sparse_moe.experts.E.w1 / w3 / w2.
#include <algorithm>

#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"
#include "vramplan/model/recurrent_state.hpp"

namespace vramplan::hf {
namespace {

struct KdaDims {
  std::uint64_t heads = 0, head_dim = 0, kernel = 0;
  std::uint64_t projection() const { return heads * head_dim; }
};

void kda_attention(InventoryBuilder& b, const std::string& p, std::uint64_t h, const KdaDims& d) {
  const auto P = d.projection(), D = d.head_dim;
  b.linear(p + "q_proj", R::AttnQ, P, h);
  b.linear(p + "k_proj", R::AttnK, P, h);
  b.linear(p + "v_proj", R::AttnV, P, h);
  b.linear(p + "f_a_proj", R::Recurrent, D, h);
  b.linear(p + "f_b_proj", R::Recurrent, P, D);
  b.linear(p + "g_a_proj", R::Recurrent, D, h);
  b.linear(p + "g_b_proj", R::Recurrent, P, D);
  b.linear(p + "b_proj", R::Recurrent, d.heads, h);
  for (const char* conv : {"q_conv1d", "k_conv1d", "v_conv1d"})
    b.tensor(p + conv + ".weight", R::Recurrent, {P, 1, d.kernel});
  b.tensor(p + "A_log", R::Recurrent, {1, 1, d.heads, 1});
  b.tensor(p + "dt_bias", R::Recurrent, {P}, /*is_bias=*/true);
  b.norm(p + "o_norm", R::Recurrent, D);
  b.linear(p + "o_proj", R::AttnOutput, h, P);
}

void kimi_mla_attention(InventoryBuilder& b, const std::string& p, const ModelArch& a) {
  const auto h = a.hidden_size, n = a.num_heads;
  b.linear(p + "q_proj", R::AttnQ, n * (a.qk_nope_head_dim + a.qk_rope_head_dim), h);
  b.linear(p + "kv_a_proj_with_mqa", R::AttnKVAMqa, a.kv_lora_rank + a.qk_rope_head_dim, h);
  b.norm(p + "kv_a_layernorm", R::AttnKVANorm, a.kv_lora_rank);
  b.linear(p + "kv_b_proj", R::AttnKVB, n * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank);
  b.linear(p + "o_proj", R::AttnOutput, h, n * a.v_head_dim);
}

// Stored Mixtral-style: block_sparse_moe.experts.E.w1 (gate) / w3 (up) / w2 (down).
constexpr BiasedMoeNames kKimiMoe{"gate", "gate.e_score_correction_bias", "experts.*.w1.weight",
                                  "experts.*.w3.weight", "experts.*.w2.weight", "shared_experts."};

// 1-based layer numbers of `key` under linear_attn_config, each checked against the layer count.
std::vector<std::uint64_t> kimi_layer_numbers(const JsonView& lin, const char* key, std::uint64_t layers) {
  std::vector<std::uint64_t> out;
  for (const auto& item : lin.at(key).items()) {
    const auto n = item.as_u64();
    if (n == 0 || n > layers) item.fail("is not a layer number from 1 to " + std::to_string(layers));
    out.push_back(n - 1);
  }
  return out;
}

std::uint64_t kimi_positive(const JsonView& lin, const char* key) {
  const auto v = checked_dimension(lin.at(key), key);
  if (v == 0) lin.at(key).fail("must be > 0");
  return v;
}

}  // namespace

void build_kimi_linear(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  read_common_dims(c, family, a);
  a.max_position_embeddings = c.u64({"max_position_embeddings", "model_max_length"}).value_or(0);
  a.intermediate_size = c.positive({"intermediate_size"});
  a.kv_lora_rank = c.positive({"kv_lora_rank"});
  a.q_lora_rank = c.u64({"q_lora_rank"}).value_or(0);
  if (a.q_lora_rank != 0) c.fail("q_lora_rank", "must be null: Kimi-Linear's MLA layers have a plain q_proj");
  a.qk_rope_head_dim = c.positive({"qk_rope_head_dim"});
  a.qk_nope_head_dim = c.positive({"qk_nope_head_dim"});
  a.head_dim = a.qk_nope_head_dim + a.qk_rope_head_dim;  // the top-level head_dim is read by no layer
  a.v_head_dim = c.positive({"v_head_dim"});
  read_routed_experts(c, "num_experts", "num_experts_per_token", "moe_intermediate_size", a);
  a.num_shared_experts = c.u64({"num_shared_experts"}).value_or(0);
  a.shared_expert_intermediate_size = a.moe_intermediate_size * a.num_shared_experts;
  const auto first_dense = c.u64({"first_k_dense_replace"}).value_or(0);
  const auto freq = c.positive_opt({"moe_layer_freq"}).value_or(1);
  a.layer_is_moe.resize(a.num_layers);
  for (std::uint64_t i = 0; i < a.num_layers; ++i) a.layer_is_moe[i] = i >= first_dense && i % freq == 0;

  const auto lin = c.find({"linear_attn_config"});
  if (!lin || !lin->is_object()) c.fail("linear_attn_config", "is missing or not an object");
  KdaDims d;
  d.heads = kimi_positive(*lin, "num_heads");
  d.head_dim = kimi_positive(*lin, "head_dim");
  d.kernel = kimi_positive(*lin, "short_conv_kernel_size");
  if (d.kernel < 2) lin->at("short_conv_kernel_size").fail("must be at least 2 (the conv state holds kernel - 1 tokens)");
  a.layer_attention.assign(a.num_layers, LayerAttention::None);
  for (auto i : kimi_layer_numbers(*lin, "kda_layers", a.num_layers)) a.layer_attention[i] = LayerAttention::Recurrent;
  for (auto i : kimi_layer_numbers(*lin, "full_attn_layers", a.num_layers)) {
    if (a.layer_attention[i] != LayerAttention::None)
      lin->at("full_attn_layers").fail("names layer " + std::to_string(i + 1) + ", a KDA layer too");
    a.layer_attention[i] = LayerAttention::Mla;
  }
  if (std::find(a.layer_attention.begin(), a.layer_attention.end(), LayerAttention::None) != a.layer_attention.end())
    lin->at("kda_layers").fail("and full_attn_layers leave a layer with no attention");
  // mla_use_nope: the MLA layers run no rotary embedding (SGLang DeepseekV2AttentionMLA skip_rope,
  // vLLM KimiMLAAttention rotary_emb=None), so no engine builds a cos/sin cache.
  if (!c.flag("mla_use_nope", false)) read_rope_tables(c, a.qk_rope_head_dim, a);

  // Three conv states of kernel - 1 tokens over the q, k and v channels, and {H, D, D} recurrent
  // values in float32 (kda_state_dtype: whatever the model dtype).
  a.recurrent_conv_state_elems = (d.kernel - 1) * 3 * d.projection();
  a.recurrent_ssm_state_elems = d.heads * d.head_dim * d.head_dim;
  a.recurrent_shape = {d.kernel - 1, 3 * d.projection(), 0, 0, d.heads, d.head_dim * d.head_dim};
  a.recurrent_ssm_dtype = "float32";
  a.recurrent_state_bytes_per_layer = recurrent_state_bytes(a, 1);

  const auto h = a.hidden_size, V = a.vocab_size;
  const std::string mp(family.layout.model_prefix);
  InventoryBuilder b(spec, stored_format_of(c));
  pre_norm_decoder_layers(b, mp, a, [&](const std::string& p, std::uint64_t i) {
    if (a.layer_attention[i] == LayerAttention::Recurrent) kda_attention(b, p + "self_attn.", h, d);
    else kimi_mla_attention(b, p + "self_attn.", a);
    if (a.layer_is_moe[i]) biased_moe_mlp(b, p + "block_sparse_moe.", a, kKimiMoe);
    else gated_mlp(b, p + "mlp.", a.intermediate_size, h, R::FfnGate, R::FfnUp, R::FfnDown);
  });
  b.norm(mp + "norm", R::OutputNorm, h);
  if (!a.tied_embeddings) b.linear(std::string(family.layout.lm_head), R::Output, V, h);
}

}  // namespace vramplan::hf
