// GPT-NeoX (Pythia, GPT-NeoX-20B, GPTNeoXForCausalLM): fused attention.query_key_value (3 x hidden,
// bias), attention.dense, mlp dense_h_to_4h / dense_4h_to_h (all with bias), two LayerNorms with bias
// per layer, rotary on rotary_pct of each head, untied embed_out.
// https://github.com/huggingface/transformers/blob/main/src/transformers/models/gpt_neox/modeling_gpt_neox.py
#include <cmath>

#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"

namespace vramplan::hf {

void build_gpt_neox(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  read_common_dims(c, family, a);
  a.intermediate_size = c.positive({"intermediate_size"});
  a.layer_attention.assign(a.num_layers, LayerAttention::Full);
  a.sequential_residual = !c.flag("use_parallel_residual", true);  // GPTNeoXConfig default: parallel
  // GPTNeoXConfig.rotary_pct (default 0.25): rotary_ndims = int(head_dim * rotary_pct).
  const double pct = c.number({"rotary_pct", "partial_rotary_factor"}).value_or(0.25);
  if (!(pct > 0.0 && pct <= 1.0)) c.fail("rotary_pct", "expected a fraction in (0, 1]");
  read_rope_tables(c, static_cast<std::uint64_t>(std::floor(static_cast<double>(a.head_dim) * pct)), a);

  const auto h = a.hidden_size, V = a.vocab_size, I = a.intermediate_size;
  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor("gpt_neox.embed_in.weight", R::TokenEmbedding, {V, h});
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    const auto p = layer_prefix("gpt_neox.", "layers", i);
    b.norm(p + "input_layernorm", R::AttnNorm, h, true);
    b.norm(p + "post_attention_layernorm", R::FfnNorm, h, true);
    b.linear(p + "attention.query_key_value", R::AttnQKV, 3 * a.num_heads * a.head_dim, h, true);
    b.linear(p + "attention.dense", R::AttnOutput, h, a.num_heads * a.head_dim, true);
    b.linear(p + "mlp.dense_h_to_4h", R::FfnUp, I, h, true);
    b.linear(p + "mlp.dense_4h_to_h", R::FfnDown, h, I, true);
  }
  b.set_layer(std::nullopt);
  b.norm("gpt_neox.final_layer_norm", R::OutputNorm, h, true);
  if (!a.tied_embeddings) b.linear("embed_out", R::Output, V, h);
}

}  // namespace vramplan::hf
