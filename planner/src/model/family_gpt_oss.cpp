// gpt-oss: MoE on every layer with biased experts (stacked gate_up / down tensors), a biased
// router, per-head attention sink logits, alternating 128-token sliding / full layers.
// Layout: HF GptOssAttention / GptOssExperts / GptOssTopKRouter
// (https://github.com/huggingface/transformers/blob/main/src/transformers/models/gpt_oss/modeling_gpt_oss.py).
// The checkpoint stores the experts in MXFP4 (quantization_config); the precision plan reads it.
#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"

namespace vramplan::hf {

void build_gpt_oss(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  read_common_dims(c, family, a);
  a.intermediate_size = c.positive({"intermediate_size"});
  a.moe_intermediate_size = a.intermediate_size;
  a.num_experts = c.positive({"num_local_experts", "num_experts"});
  a.experts_per_token = c.positive({"num_experts_per_tok", "experts_per_token"});
  if (a.experts_per_token > a.num_experts)
    c.fail("num_experts_per_tok", "is larger than num_local_experts");
  a.layer_is_moe.assign(a.num_layers, true);
  // GptOssConfig default layer_types: sliding on even layers, as Gemma-2.
  read_layer_attention(c, Pattern::Gemma2Alternate, a);
  read_rope_tables(c, a.head_dim, a);

  const bool attn_bias = c.flag("attention_bias", false);
  const auto h = a.hidden_size, d = a.head_dim, V = a.vocab_size, E = a.num_experts;
  const auto I = a.intermediate_size;
  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor("model.embed_tokens.weight", R::TokenEmbedding, {V, h});
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    const auto p = layer_prefix("model.", "layers", i);
    b.norm(p + "input_layernorm", R::AttnNorm, h);
    b.norm(p + "post_attention_layernorm", R::FfnNorm, h);
    b.linear(p + "self_attn.q_proj", R::AttnQ, a.num_heads * d, h, attn_bias);
    b.linear(p + "self_attn.k_proj", R::AttnK, a.num_kv_heads * d, h, attn_bias);
    b.linear(p + "self_attn.v_proj", R::AttnV, a.num_kv_heads * d, h, attn_bias);
    b.linear(p + "self_attn.o_proj", R::AttnOutput, h, a.num_heads * d, attn_bias);
    b.tensor(p + "self_attn.sinks", R::AttnSinks, {a.num_heads});
    b.linear(p + "mlp.router", R::FfnGateInp, E, h, true);
    b.experts(p + "mlp.experts.gate_up_proj", R::FfnGateUpExps, E, 2 * I, h);
    b.tensor(p + "mlp.experts.gate_up_proj_bias", R::FfnGateUpExps, {E, 2 * I}, true);
    b.experts(p + "mlp.experts.down_proj", R::FfnDownExps, E, h, I);
    b.tensor(p + "mlp.experts.down_proj_bias", R::FfnDownExps, {E, h}, true);
  }
  b.set_layer(std::nullopt);
  b.norm("model.norm", R::OutputNorm, h);
  if (!a.tied_embeddings) b.linear("lm_head", R::Output, V, h);
}

}  // namespace vramplan::hf
