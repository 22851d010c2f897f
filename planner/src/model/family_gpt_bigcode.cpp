// GPTBigCode (StarCoder / OctoCoder, GPTBigCodeForCausalLM): learned absolute position embeddings
// (wpe), a fused c_attn projecting to hidden + 2 x kv_dim (multi_query: one K/V head), LayerNorm
// with bias, every linear with bias, n_inner-wide GELU MLP (c_fc, c_proj), tied lm_head.
// https://github.com/huggingface/transformers/blob/main/src/transformers/models/gpt_bigcode/modeling_gpt_bigcode.py
#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"

namespace vramplan::hf {

void build_gpt_bigcode(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  read_common_dims(c, family, a);
  // GPTBigCodeConfig: multi_query (default True) gives one K/V head, else one per query head.
  a.num_kv_heads = c.flag("multi_query", true) ? 1 : a.num_heads;
  // n_inner: None means 4 x n_embd (GPTBigCodeMLP).
  a.intermediate_size = c.positive_opt({"n_inner"}).value_or(4 * a.hidden_size);
  a.layer_attention.assign(a.num_layers, LayerAttention::Full);
  if (a.max_position_embeddings == 0) c.fail("n_positions", "needed for the learned position table (wpe)");

  const auto h = a.hidden_size, d = a.head_dim, V = a.vocab_size, I = a.intermediate_size;
  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor("transformer.wte.weight", R::TokenEmbedding, {V, h});
  b.tensor("transformer.wpe.weight", R::PositionEmbedding, {a.max_position_embeddings, h});
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    const auto p = layer_prefix("transformer.", "h", i);
    b.norm(p + "ln_1", R::AttnNorm, h, true);
    b.linear(p + "attn.c_attn", R::AttnQKV, h + 2 * a.num_kv_heads * d, h, true);
    b.linear(p + "attn.c_proj", R::AttnOutput, h, h, true);
    b.norm(p + "ln_2", R::FfnNorm, h, true);
    b.linear(p + "mlp.c_fc", R::FfnUp, I, h, true);
    b.linear(p + "mlp.c_proj", R::FfnDown, h, I, true);
  }
  b.set_layer(std::nullopt);
  b.norm("transformer.ln_f", R::OutputNorm, h, true);
  if (!a.tied_embeddings) b.linear("lm_head", R::Output, V, h);
}

}  // namespace vramplan::hf
