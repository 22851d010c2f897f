// Jamba (JambaForCausalLM, model_type jamba: Jamba-v0.1, Jamba-1.5 / 1.6 / 1.7 Mini and Large):
// Mamba-1 layers with attention every attn_layer_period-th layer (from attn_layer_offset), a
// 16-expert top-2 MoE every expert_layer_period-th layer (from expert_layer_offset), dense SwiGLU
// elsewhere (transformers configuration_jamba.py layers_block_type / layers_num_experts; vLLM
// vllm/model_executor/models/jamba.py JambaMambaDecoderLayer / JambaAttentionDecoderLayer).
//
// The Mamba-1 mixer (vLLM layers/mamba/mamba_mixer.py MambaMixer, use_rms_norm=True for Jamba;
// transformers modeling_jamba.py JambaMambaMixer), d_inner = mamba_expand x hidden,
// dt_rank = mamba_dt_rank ("auto": ceil(hidden / 16)):
//   in_proj {2 d_inner, hidden} (+ bias when mamba_proj_bias); conv1d {d_inner, 1, d_conv}
//   (+ bias when mamba_conv_bias); x_proj {dt_rank + 2 d_state, d_inner}; dt_proj {d_inner,
//   dt_rank} + bias (always); A_log {d_inner, d_state}; D {d_inner}; dt_layernorm {dt_rank},
//   b_layernorm, c_layernorm {d_state}; out_proj {hidden, d_inner} (+ bias when mamba_proj_bias).
// Per-request state (mamba_utils.py MambaStateShapeCalculator.mamba1_state_shape):
//   conv {d_inner / tp, d_conv - 1}, temporal {d_inner / tp, d_state}, both in the model dtype
//   (MambaStateDtypeCalculator.mamba1_state_dtype with mamba_cache_dtype "auto").
// Attention applies no rotary embedding (JambaAttentionDecoderLayer): no rope table.
#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"
#include "vramplan/model/recurrent_state.hpp"

namespace vramplan::hf {

void build_jamba(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  read_common_dims(c, family, a);
  a.head_dim = a.v_head_dim = a.hidden_size / a.num_heads;  // JambaAttentionDecoderLayer
  a.intermediate_size = c.positive({"intermediate_size"});
  // JambaConfig defaults for the pattern keys.
  const auto attn_period = c.positive_opt({"attn_layer_period"}).value_or(8);
  const auto attn_offset = c.u64({"attn_layer_offset"}).value_or(4);
  const auto exp_period = c.positive_opt({"expert_layer_period"}).value_or(2);
  const auto exp_offset = c.u64({"expert_layer_offset"}).value_or(1);
  if (attn_offset >= attn_period) c.fail("attn_layer_offset", "must be below attn_layer_period");
  if (exp_offset >= exp_period) c.fail("expert_layer_offset", "must be below expert_layer_period");
  const auto E = c.positive_opt({"num_experts"}).value_or(16);
  a.layer_attention.assign(a.num_layers, LayerAttention::Recurrent);
  for (std::uint64_t i = 0; i < a.num_layers; ++i)
    if (i % attn_period == attn_offset) a.layer_attention[i] = LayerAttention::Full;
  if (E > 1) {
    a.num_experts = E;
    a.experts_per_token = c.positive_opt({"num_experts_per_tok"}).value_or(2);
    if (a.experts_per_token > E) c.fail("num_experts_per_tok", "is larger than num_experts");
    a.moe_intermediate_size = a.intermediate_size;  // JambaMoE: FusedMoE(..., intermediate_size)
    a.layer_is_moe.assign(a.num_layers, false);
    for (std::uint64_t i = 0; i < a.num_layers; ++i) a.layer_is_moe[i] = i % exp_period == exp_offset;
  }

  const auto h = a.hidden_size;
  const auto d_inner = c.positive_opt({"mamba_expand"}).value_or(2) * h;
  const auto d_state = c.positive_opt({"mamba_d_state"}).value_or(16);
  const auto kernel = c.positive_opt({"mamba_d_conv"}).value_or(4);
  std::uint64_t dt_rank = (h + 15) / 16;  // "auto": math.ceil(hidden_size / 16)
  if (const auto r = c.find({"mamba_dt_rank"}); r && !r->raw().is_string()) dt_rank = c.positive({"mamba_dt_rank"});
  const bool conv_bias = c.flag("mamba_conv_bias", true), proj_bias = c.flag("mamba_proj_bias", false);
  a.recurrent_conv_state_elems = (kernel - 1) * d_inner;
  a.recurrent_ssm_state_elems = d_inner * d_state;
  // mamba1_state_shape: conv channels and SSM rows both d_inner, no groups.
  a.recurrent_shape = {kernel - 1, d_inner, 0, 0, d_inner, d_state};
  a.recurrent_state_bytes_per_layer = recurrent_state_bytes(a, 1);

  const auto V = a.vocab_size, I = a.intermediate_size, hd = a.head_dim;
  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor("model.embed_tokens.weight", R::TokenEmbedding, {V, h});
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    const std::string p = layer_prefix("model.", "layers", i);
    b.norm(p + "input_layernorm", R::AttnNorm, h);
    b.norm(p + "pre_ff_layernorm", R::FfnNorm, h);
    if (a.layer_attention[i] == LayerAttention::Full) {
      b.linear(p + "self_attn.q_proj", R::AttnQ, a.num_heads * hd, h);
      b.linear(p + "self_attn.k_proj", R::AttnK, a.num_kv_heads * hd, h);
      b.linear(p + "self_attn.v_proj", R::AttnV, a.num_kv_heads * hd, h);
      b.linear(p + "self_attn.o_proj", R::AttnOutput, h, a.num_heads * hd);
    } else {
      const std::string m = p + "mamba.";
      b.linear(m + "in_proj", R::Recurrent, 2 * d_inner, h, proj_bias);
      b.tensor(m + "conv1d.weight", R::Recurrent, {d_inner, 1, kernel});
      if (conv_bias) b.tensor(m + "conv1d.bias", R::Recurrent, {d_inner}, /*is_bias=*/true);
      b.linear(m + "x_proj", R::Recurrent, dt_rank + 2 * d_state, d_inner);
      b.linear(m + "dt_proj", R::Recurrent, d_inner, dt_rank, /*bias=*/true);
      b.tensor(m + "A_log", R::Recurrent, {d_inner, d_state});
      b.tensor(m + "D", R::Recurrent, {d_inner});
      b.norm(m + "dt_layernorm", R::Recurrent, dt_rank);
      b.norm(m + "b_layernorm", R::Recurrent, d_state);
      b.norm(m + "c_layernorm", R::Recurrent, d_state);
      b.linear(m + "out_proj", R::AttnOutput, h, d_inner, proj_bias);  // RowParallelLinear
    }
    const std::string f = p + "feed_forward.";
    if (!a.layer_is_moe.empty() && a.layer_is_moe[i]) {
      b.linear(f + "router", R::FfnGateInp, E, h);  // ReplicatedLinear, no bias
      b.experts(f + "experts.*.gate_proj.weight", R::FfnGateExps, E, I, h);
      b.experts(f + "experts.*.up_proj.weight", R::FfnUpExps, E, I, h);
      b.experts(f + "experts.*.down_proj.weight", R::FfnDownExps, E, h, I);
    } else {
      b.linear(f + "gate_proj", R::FfnGate, I, h);
      b.linear(f + "up_proj", R::FfnUp, I, h);
      b.linear(f + "down_proj", R::FfnDown, h, I);
    }
  }
  b.set_layer(std::nullopt);
  b.norm("model.final_layernorm", R::OutputNorm, h);
  if (!a.tied_embeddings) b.linear(std::string(family.layout.lm_head), R::Output, V, h);
}

}  // namespace vramplan::hf
