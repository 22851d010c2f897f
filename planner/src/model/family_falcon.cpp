// Falcon (HF FalconForCausalLM and the original RWForCausalLM configs): fused query_key_value,
// parallel attention + MLP, LayerNorm with bias, tied embeddings. Falcon-7B is multi-query with
// one input_layernorm; the "new decoder architecture" (Falcon-40B/180B, model_type RefinedWeb)
// has n_head_kv KV heads and two norms (ln_attn, ln_mlp).
// https://github.com/huggingface/transformers/blob/main/src/transformers/models/falcon/modeling_falcon.py
#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"

namespace vramplan::hf {

void build_falcon(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  read_common_dims(c, family, a);
  const bool new_arch = c.flag("new_decoder_architecture", false) ||
                        c.string({"model_type"}).value_or("") == "RefinedWeb";
  if (!new_arch) {
    // FalconConfig: num_kv_heads applies only to the new architecture; otherwise MQA or MHA.
    a.num_kv_heads = c.flag("multi_query", true) ? 1 : a.num_heads;
  }
  a.intermediate_size = c.positive_opt({"ffn_hidden_size"}).value_or(4 * a.hidden_size);
  a.layer_attention.assign(a.num_layers, LayerAttention::Full);
  if (!c.flag("alibi", false)) read_rope_tables(c, a.head_dim, a);

  const bool bias = c.flag("bias", false);
  const bool parallel = c.flag("parallel_attn", true);
  const auto h = a.hidden_size, d = a.head_dim, V = a.vocab_size, I = a.intermediate_size;
  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor("transformer.word_embeddings.weight", R::TokenEmbedding, {V, h});
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    const auto p = layer_prefix("transformer.", "h", i);
    if (new_arch) {
      b.norm(p + "ln_attn", R::AttnNorm, h, true);
      b.norm(p + "ln_mlp", R::FfnNorm, h, true);
    } else {
      b.norm(p + "input_layernorm", R::AttnNorm, h, true);
      if (!parallel) b.norm(p + "post_attention_layernorm", R::FfnNorm, h, true);
    }
    b.linear(p + "self_attention.query_key_value", R::AttnQKV,
             (a.num_heads + 2 * a.num_kv_heads) * d, h, bias);
    b.linear(p + "self_attention.dense", R::AttnOutput, h, a.num_heads * d, bias);
    b.linear(p + "mlp.dense_h_to_4h", R::FfnUp, I, h, bias);
    b.linear(p + "mlp.dense_4h_to_h", R::FfnDown, h, I, bias);
  }
  b.set_layer(std::nullopt);
  b.norm("transformer.ln_f", R::OutputNorm, h, true);
  if (!a.tied_embeddings) b.linear("lm_head", R::Output, V, h);
}

}  // namespace vramplan::hf
