// Llama-4 (Scout / Maverick): MoE with one shared expert on every interleave_moe_layer_step-th
// layer, dense layers of width intermediate_size_mlp, chunked local attention with rope on three
// of four layers and global NoPE attention on every fourth.
// Layout: HF Llama4TextDecoderLayer / Llama4TextMoe / Llama4TextExperts and Llama4TextConfig
// (https://github.com/huggingface/transformers/blob/main/src/transformers/models/llama4/).
#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"

namespace vramplan::hf {

void build_llama4(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  read_common_dims(c, family, a);
  a.moe_intermediate_size = c.positive({"intermediate_size"});
  a.intermediate_size = c.positive({"intermediate_size_mlp"});
  a.num_experts = c.positive({"num_local_experts"});
  a.experts_per_token = c.positive({"num_experts_per_tok"});
  if (a.experts_per_token > a.num_experts)
    c.fail("num_experts_per_tok", "is larger than num_local_experts");
  a.num_shared_experts = 1;  // Llama4TextMoe.shared_expert, width intermediate_size
  a.shared_expert_intermediate_size = a.moe_intermediate_size;

  const auto L = a.num_layers;
  // Llama4TextConfig: moe_layers defaults to range(step - 1, L, step).
  a.layer_is_moe.assign(L, false);
  if (auto moe_layers = c.find({"moe_layers"})) {
    for (const auto& item : moe_layers->items()) {
      const auto i = item.as_u64();
      if (i >= L) item.fail("layer index out of range");
      a.layer_is_moe[i] = true;
    }
  } else {
    const auto step = c.positive_opt({"interleave_moe_layer_step"}).value_or(1);
    for (auto i = step - 1; i < L; i += step) a.layer_is_moe[i] = true;
  }
  // no_rope_layers[i] == 1 means layer i uses rope (and chunked attention); an empty list means
  // the default: every no_rope_layer_interval-th layer (4) is a global NoPE layer.
  std::vector<bool> uses_rope(L);
  const auto interval = c.positive_opt({"no_rope_layer_interval"}).value_or(4);
  const auto listed = c.find({"no_rope_layers"});
  const auto items = listed ? listed->items() : std::vector<JsonView>{};
  if (!items.empty() && items.size() != L)
    listed->fail("has " + std::to_string(items.size()) + " entries, num_hidden_layers is " +
                 std::to_string(L));
  for (std::uint64_t i = 0; i < L; ++i)
    uses_rope[i] = items.empty() ? (i + 1) % interval != 0 : items[i].as_u64() != 0;
  a.attention_chunk_size = c.u64({"attention_chunk_size"}).value_or(0);
  a.layer_attention.assign(L, LayerAttention::Full);
  if (a.attention_chunk_size > 0)
    for (std::uint64_t i = 0; i < L; ++i)
      if (uses_rope[i]) a.layer_attention[i] = LayerAttention::Chunked;
  read_rope_tables(c, a.head_dim, a);

  const bool multimodal = a.architecture == "Llama4ForConditionalGeneration";
  const std::string mp = multimodal ? "language_model.model." : "model.";
  const bool attn_bias = c.flag("attention_bias", false);
  const auto h = a.hidden_size, d = a.head_dim, V = a.vocab_size, E = a.num_experts;
  const auto Ie = a.moe_intermediate_size, I = a.intermediate_size;
  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor(mp + "embed_tokens.weight", R::TokenEmbedding, {V, h});
  for (std::uint64_t i = 0; i < L; ++i) {
    b.set_layer(static_cast<int>(i));
    const auto p = layer_prefix(mp, "layers", i);
    b.norm(p + "input_layernorm", R::AttnNorm, h);
    b.norm(p + "post_attention_layernorm", R::FfnNorm, h);
    b.linear(p + "self_attn.q_proj", R::AttnQ, a.num_heads * d, h, attn_bias);
    b.linear(p + "self_attn.k_proj", R::AttnK, a.num_kv_heads * d, h, attn_bias);
    b.linear(p + "self_attn.v_proj", R::AttnV, a.num_kv_heads * d, h, attn_bias);
    b.linear(p + "self_attn.o_proj", R::AttnOutput, h, a.num_heads * d, attn_bias);
    // use_qk_norm is a weightless L2 norm (Llama4TextL2Norm): no tensors.
    const auto f = p + "feed_forward.";
    if (a.layer_is_moe[i]) {
      b.linear(f + "router", R::FfnGateInp, E, h);
      b.experts(f + "experts.gate_up_proj", R::FfnGateUpExps, E, 2 * Ie, h);
      b.experts(f + "experts.down_proj", R::FfnDownExps, E, h, Ie);
      b.linear(f + "shared_expert.gate_proj", R::FfnGateShexp, Ie, h);
      b.linear(f + "shared_expert.up_proj", R::FfnUpShexp, Ie, h);
      b.linear(f + "shared_expert.down_proj", R::FfnDownShexp, h, Ie);
    } else {
      b.linear(f + "gate_proj", R::FfnGate, I, h);
      b.linear(f + "up_proj", R::FfnUp, I, h);
      b.linear(f + "down_proj", R::FfnDown, h, I);
    }
  }
  b.set_layer(std::nullopt);
  b.norm(mp + "norm", R::OutputNorm, h);
  if (!a.tied_embeddings)
    b.linear(multimodal ? "language_model.lm_head" : "lm_head", R::Output, V, h);
}

}  // namespace vramplan::hf
