// Falcon-H1 (FalconH1ForCausalLM, model_type falcon_h1): the parallel hybrid — every decoder
// layer runs attention and a Mamba2 mixer side by side on the same normed input and sums them
// (vllm/model_executor/models/falcon_h1.py FalconH1ParallelHybrid; transformers
// modeling_falcon_h1.py FalconH1DecoderLayer), then a SwiGLU MLP.
//
// Per layer (checkpoint names, "model.layers.<i>."):
//   input_layernorm, pre_ff_layernorm {hidden};
//   self_attn.{q,k,v,o}_proj (no bias: FalconH1AttentionDecoderLayer passes bias=False);
//   mamba.* — MambaMixer2 with intermediate_size = mamba_d_ssm, else mamba_expand x hidden
//     (FalconH1SSMDecoderLayer.d_ssm), its gated RMSNorm only when mamba_rms_norm
//     (MambaMixer2 use_rms_norm; Mixer2RMSNormGated registers no weight otherwise);
//   feed_forward.{gate,up,down}_proj (FalconH1MLP, bias = mlp_bias).
// Globals: model.embed_tokens, model.final_layernorm, lm_head (untied in the releases).
// The muP multipliers (embedding / lm_head / key / attention_in / ssm_in / ssm_out /
// mlp_multipliers / ssm_multipliers, the non-persistent mup_vector buffer of hidden-sized
// width) scale activations only: no weights, no state.
//
// State: every layer holds KV *and* a Mamba2 state (ModelArch::recurrent_in_every_layer);
// vLLM shapes the state with MambaStateShapeCalculator.mamba2_state_shape (falcon_h1.py
// get_mamba_state_shape_from_config), dtype mamba_cache_dtype / mamba_ssm_cache_dtype
// "auto" = the model dtype (MambaStateDtypeCalculator.mamba2_state_dtype).
#include "model/family_mamba_hybrid.hpp"
#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"

namespace vramplan::hf {

void build_falcon_h1(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  read_common_dims(c, family, a);  // head_dim: the config's, else hidden / heads (as vLLM)
  a.intermediate_size = c.positive({"intermediate_size"});
  a.layer_attention.assign(a.num_layers, LayerAttention::Full);
  a.recurrent_in_every_layer = true;
  read_rope_tables(c, rotary_dim_of(c, a), a);  // get_rope(..., is_neox_style=True)

  Mamba2Dims d;
  d.heads = c.positive({"mamba_n_heads"});
  d.head_dim = c.positive({"mamba_d_head"});
  if (const auto ssm = c.positive_opt({"mamba_d_ssm"})) d.d_inner = *ssm;
  else d.d_inner = c.positive({"mamba_expand"}) * a.hidden_size;
  // MambaMixer2 splits x into heads of head_dim: the two must agree.
  if (d.d_inner != d.heads * d.head_dim) c.fail("mamba_d_ssm", "is not mamba_n_heads x mamba_d_head");
  d.groups = c.positive({"mamba_n_groups"});
  d.d_state = c.positive({"mamba_d_state"});
  d.kernel = c.positive({"mamba_d_conv"});
  d.conv_bias = c.flag("mamba_conv_bias", true);
  d.proj_bias = c.flag("mamba_proj_bias", false);
  d.gated_norm = c.flag("mamba_rms_norm", false);  // FalconH1Config default False
  if (d.heads % d.groups != 0) c.fail("mamba_n_groups", "does not divide the number of Mamba heads");
  set_mamba2_state(d, a);

  const bool mlp_bias = c.flag("mlp_bias", false);
  const auto h = a.hidden_size, V = a.vocab_size, hd = a.head_dim, I = a.intermediate_size;
  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor("model.embed_tokens.weight", R::TokenEmbedding, {V, h});
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    const std::string p = layer_prefix("model.", "layers", i);
    b.norm(p + "input_layernorm", R::AttnNorm, h);
    b.norm(p + "pre_ff_layernorm", R::FfnNorm, h);
    b.linear(p + "self_attn.q_proj", R::AttnQ, a.num_heads * hd, h);
    b.linear(p + "self_attn.k_proj", R::AttnK, a.num_kv_heads * hd, h);
    b.linear(p + "self_attn.v_proj", R::AttnV, a.num_kv_heads * hd, h);
    b.linear(p + "self_attn.o_proj", R::AttnOutput, h, a.num_heads * hd);
    mamba2_mixer(b, p + "mamba.", h, d);
    b.linear(p + "feed_forward.gate_proj", R::FfnGate, I, h, mlp_bias);
    b.linear(p + "feed_forward.up_proj", R::FfnUp, I, h, mlp_bias);
    b.linear(p + "feed_forward.down_proj", R::FfnDown, h, I, mlp_bias);
  }
  b.set_layer(std::nullopt);
  b.norm("model.final_layernorm", R::OutputNorm, h);
  if (!a.tied_embeddings) b.linear(std::string(family.layout.lm_head), R::Output, V, h);
}

}  // namespace vramplan::hf
