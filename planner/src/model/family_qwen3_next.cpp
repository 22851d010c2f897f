// Qwen3-Next (Qwen3NextForCausalLM, model_type qwen3_next; Qwen3-Next-80B-A3B, Qwen3-Coder-Next):
// gated-DeltaNet linear-attention layers with a full gated-attention layer every
// full_attention_interval layers, 512-expert MoE with a gated shared expert on every layer, and
// one multi-token-prediction layer stored under "mtp." (reported separately).
// Layout: vLLM vllm/model_executor/models/qwen3_next.py (Qwen3NextAttention: q_proj carries the
// output gate, num_heads x (1 + attn_output_gate) x head_dim rows; q_norm / k_norm of head_dim;
// Qwen3NextSparseMoeBlock: gate, experts, shared_expert, shared_expert_gate {1, hidden}),
// the gated-DeltaNet layer as transformers' Qwen3NextGatedDeltaNet stores it
// (https://github.com/huggingface/transformers/blob/main/src/transformers/models/qwen3_next/modeling_qwen3_next.py:
// in_proj_qkvz {2 key_dim + 2 value_dim, hidden}, in_proj_ba {2 v_heads, hidden}, depthwise
// conv1d {conv_dim, 1, kernel} with conv_dim = 2 key_dim + value_dim, dt_bias / A_log {v_heads},
// norm {v_head_dim}, out_proj {hidden, value_dim}), and vllm/model_executor/models/qwen3_next_mtp.py
// (mtp.fc {hidden, 2 hidden}, pre_fc_norm_hidden / pre_fc_norm_embedding, one full-attention
// decoder layer, mtp.norm; the embedding and lm_head are shared with the main model).
// Qwen3.5 (Qwen3_5MoeForConditionalGeneration / Qwen3_5ForConditionalGeneration; transformers
// modular_qwen3_5_moe.py) is this layer under "model.language_model." with its text_config: the
// gated-DeltaNet checkpoint splits the two input projections (in_proj_qkv, in_proj_z, in_proj_b,
// in_proj_a: the same rows, which vLLM's Qwen3_5GatedDeltaNet merges back on load), the dense
// variant has a gated MLP of intermediate_size instead of the MoE block, the MTP count is
// mtp_num_hidden_layers, and a Qwen3-VL vision tower sits under "model.visual." (vision_qwen.cpp).
#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"
#include "vramplan/model/recurrent_state.hpp"

namespace vramplan::hf {
namespace {

struct GatedDeltaNetDims {
  std::uint64_t k_heads = 0, v_heads = 0, k_dim = 0, v_dim = 0, kernel = 0;
  std::uint64_t key_dim() const { return k_heads * k_dim; }
  std::uint64_t value_dim() const { return v_heads * v_dim; }
  std::uint64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
};

// How a family stores the hybrid model (Qwen3-Next or Qwen3.5).
struct HybridNaming {
  bool split_projections = false;  // in_proj_qkv / _z / _b / _a instead of in_proj_qkvz / _ba
  const char* mtp_count_key = "num_nextn_predict_layers";
};

HybridNaming naming_of(const Family& family) {
  if (family.name == "qwen3_5") return {true, "mtp_num_hidden_layers"};
  return {};
}

void qwen3_next_delta_net(InventoryBuilder& b, const std::string& p, std::uint64_t h,
                     const GatedDeltaNetDims& d, bool split) {
  if (split) {
    b.linear(p + "in_proj_qkv", R::Recurrent, 2 * d.key_dim() + d.value_dim(), h);
    b.linear(p + "in_proj_z", R::Recurrent, d.value_dim(), h);
    b.linear(p + "in_proj_b", R::Recurrent, d.v_heads, h);
    b.linear(p + "in_proj_a", R::Recurrent, d.v_heads, h);
  } else {
    b.linear(p + "in_proj_qkvz", R::Recurrent, 2 * d.key_dim() + 2 * d.value_dim(), h);
    b.linear(p + "in_proj_ba", R::Recurrent, 2 * d.v_heads, h);
  }
  b.tensor(p + "conv1d.weight", R::Recurrent, {d.conv_dim(), 1, d.kernel});
  b.tensor(p + "dt_bias", R::Recurrent, {d.v_heads}, /*is_bias=*/true);  // added to dt, never quantized
  b.tensor(p + "A_log", R::Recurrent, {d.v_heads});
  b.norm(p + "norm", R::Recurrent, d.v_dim);
  b.linear(p + "out_proj", R::AttnOutput, h, d.value_dim());  // RowParallelLinear in vLLM
}

void qwen3_next_attention(InventoryBuilder& b, const std::string& p, const ModelArch& a, bool gate) {
  const auto h = a.hidden_size, hd = a.head_dim;
  b.linear(p + "q_proj", R::AttnQ, a.num_heads * hd * (gate ? 2 : 1), h);
  b.linear(p + "k_proj", R::AttnK, a.num_kv_heads * hd, h);
  b.linear(p + "v_proj", R::AttnV, a.num_kv_heads * hd, h);
  b.linear(p + "o_proj", R::AttnOutput, h, a.num_heads * hd);
  b.norm(p + "q_norm", R::AttnQNorm, hd);
  b.norm(p + "k_norm", R::AttnKNorm, hd);
}

void qwen3_next_layer(InventoryBuilder& b, const std::string& p, const ModelArch& a,
                      LayerAttention kind, const GatedDeltaNetDims& d, bool gate, bool split) {
  b.norm(p + "input_layernorm", R::AttnNorm, a.hidden_size);
  b.norm(p + "post_attention_layernorm", R::FfnNorm, a.hidden_size);
  if (kind == LayerAttention::Recurrent)
    qwen3_next_delta_net(b, p + "linear_attn.", a.hidden_size, d, split);
  else
    qwen3_next_attention(b, p + "self_attn.", a, gate);
  if (a.num_experts > 0)
    qwen_moe_mlp(b, p + "mlp.", a);
  else  // dense Qwen3.5: Qwen3_5MLP
    gated_mlp(b, p + "mlp.", a.intermediate_size, a.hidden_size, R::FfnGate, R::FfnUp, R::FfnDown);
}

}  // namespace

void build_qwen3_next(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  const HybridNaming naming = naming_of(family);
  read_common_dims(c, family, a);
  a.intermediate_size = c.u64({"intermediate_size"}).value_or(0);  // the dense variant's MLP
  if (c.find({"num_experts"})) {
    read_routed_experts(c, "num_experts", "num_experts_per_tok", "moe_intermediate_size", a);
    a.shared_expert_intermediate_size = c.u64({"shared_expert_intermediate_size"}).value_or(0);
    a.num_shared_experts = a.shared_expert_intermediate_size > 0 ? 1 : 0;
    a.layer_is_moe.assign(a.num_layers, true);
  } else if (a.intermediate_size == 0) {
    c.fail("num_experts", "is missing and so is intermediate_size (neither a MoE nor a dense MLP)");
  }
  // vLLM qwen3_next_mtp.py: num_nextn_predict_layers, 1 when the config omits it; Qwen3.5 states
  // mtp_num_hidden_layers.
  a.mtp_layers = c.u64({naming.mtp_count_key}).value_or(1);

  // transformers Qwen3NextConfig: layer_types default "linear_attention" unless
  // (i + 1) % full_attention_interval == 0 (interval default 4).
  if (c.find({"layer_types"})) {
    read_layer_attention(c, Pattern::SlidingIfConfigured, a);
  } else {
    const auto interval = c.positive_opt({"full_attention_interval"}).value_or(4);
    a.layer_attention.assign(a.num_layers, LayerAttention::Full);
    for (std::uint64_t i = 0; i < a.num_layers; ++i)
      if ((i + 1) % interval != 0) a.layer_attention[i] = LayerAttention::Recurrent;
  }
  read_rope_tables(c, rotary_dim_of(c, a), a);

  GatedDeltaNetDims d;
  d.k_heads = c.positive({"linear_num_key_heads"});
  d.v_heads = c.positive({"linear_num_value_heads"});
  d.k_dim = c.positive({"linear_key_head_dim"});
  d.v_dim = c.positive({"linear_value_head_dim"});
  d.kernel = c.positive({"linear_conv_kernel_dim"});
  if (d.v_heads % d.k_heads != 0)
    c.fail("linear_num_value_heads", "is not a multiple of linear_num_key_heads");
  // Per-request state of one linear layer (vLLM mamba_utils.py
  // MambaStateShapeCalculator.gated_delta_net_state_shape, TP 1): conv state
  // {kernel - 1, conv_dim} + recurrent (SSM) state {v_heads, k_head_dim, v_head_dim}.
  // Both parts in the model dtype (mamba_cache_dtype "auto",
  // MambaStateDtypeCalculator.gated_delta_net_state_dtype).
  a.recurrent_conv_state_elems = (d.kernel - 1) * d.conv_dim();
  a.recurrent_ssm_state_elems = d.v_heads * d.k_dim * d.v_dim;
  a.recurrent_shape = {d.kernel - 1, d.conv_dim(), 0, 0, d.v_heads, d.k_dim * d.v_dim};
  a.recurrent_state_bytes_per_layer = recurrent_state_bytes(a, 1);

  const bool gate = c.flag("attn_output_gate", true);  // Qwen3NextAttention default True
  const auto h = a.hidden_size, V = a.vocab_size;
  const std::string mp(family.layout.model_prefix);
  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor(mp + "embed_tokens.weight", R::TokenEmbedding, {V, h});
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    qwen3_next_layer(b, layer_prefix(mp, "layers", i), a, a.layer_attention[i], d, gate,
                     naming.split_projections);
  }
  b.override_role(R::Mtp);
  b.set_layer(std::nullopt);
  if (a.mtp_layers > 0) {
    b.linear("mtp.fc", R::Mtp, h, 2 * h);
    b.norm("mtp.pre_fc_norm_hidden", R::Mtp, h);
    b.norm("mtp.pre_fc_norm_embedding", R::Mtp, h);
    b.norm("mtp.norm", R::Mtp, h);
  }
  for (std::uint64_t m = 0; m < a.mtp_layers; ++m) {
    b.set_layer(static_cast<int>(a.num_layers + m));
    qwen3_next_layer(b, layer_prefix("mtp.", "layers", m), a, LayerAttention::Full, d, gate,
                     naming.split_projections);
  }
  b.override_role(std::nullopt);
  b.set_layer(std::nullopt);
  b.norm(mp + "norm", R::OutputNorm, h);
  if (!a.tied_embeddings) b.linear(std::string(family.layout.lm_head), R::Output, V, h);
}

}  // namespace vramplan::hf
