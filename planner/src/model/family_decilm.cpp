// DeciLM / Nemotron-NAS (DeciLMForCausalLM, model_type "nemotron-nas": Llama-3.3-Nemotron-Super-49B,
// Llama-3.1-Nemotron-51B / Ultra-253B): Llama layers whose parts a neural-architecture search chose
// per layer, stated in `block_configs` (one per layer). A block's attention is Llama's with
// num_attention_heads / n_heads_in_group KV heads, or absent (`no_op`: no input_layernorm, no KV
// cache); its FFN is Llama's gated MLP of _ffn_mult_to_intermediate_size(ffn_mult, hidden) =
// round_up(int(2 * ffn_mult * hidden / 3), 256), or absent (no post_attention_layernorm).
// Layout: vLLM model_executor/models/nemotron_nas.py DeciLMDecoderLayer and
// _ffn_mult_to_intermediate_size (the same in SGLang's and TensorRT-LLM's nemotron_nas and
// llama.cpp's convert_hf_to_gguf.py DeciModel); HF modeling_decilm.py in the checkpoints.
// Blocks that replace a part with one linear layer, sparsify it, window it or carry a Mamba /
// parallel block are refused (no catalogued checkpoint has them).
#include <algorithm>
#include <set>
#include <string>

#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"

namespace vramplan::hf {
namespace {

struct DecilmBlock {
  bool attention = false;
  std::uint64_t kv_heads = 0;
  std::uint64_t ffn = 0;  // intermediate size; 0: no FFN
};

std::uint64_t decilm_ffn_width(double mult, std::uint64_t hidden) {
  const auto n = static_cast<std::uint64_t>(2.0 * mult * static_cast<double>(hidden) / 3.0);
  return n % 256 == 0 ? n : n + 256 - n % 256;
}

// Features of a block part this builder does not lay out: present and not false / null.
void refuse_unmodelled_decilm(const JsonView& part, std::initializer_list<std::string_view> keys) {
  for (auto key : keys)
    if (const auto v = part.get(key); v && !(v->raw().is_boolean() && !v->as_bool()))
      v->fail("is not supported for DeciLM blocks (only plain or no_op attention / FFN are laid out)");
}

DecilmBlock read_decilm_block(const JsonView& block, std::uint64_t heads, std::uint64_t hidden) {
  DecilmBlock out;
  if (block.has("parallel_blocks")) block.at("parallel_blocks").fail("is not supported for DeciLM blocks");
  const auto attn = block.at("attention");
  refuse_unmodelled_decilm(attn, {"replace_with_linear", "sparsify", "window_length", "num_sink_tokens", "mamba"});
  out.attention = !attn.opt_bool("no_op").value_or(false);
  if (out.attention) {
    const auto group = attn.req_count("n_heads_in_group");
    if (heads % group != 0)
      attn.at("n_heads_in_group").fail(std::to_string(group) + " does not divide num_attention_heads " +
                                       std::to_string(heads));
    out.kv_heads = heads / group;
  }
  const auto ffn = block.at("ffn");
  refuse_unmodelled_decilm(ffn, {"replace_with_linear", "sparsify"});
  if (!ffn.opt_bool("no_op").value_or(false)) {
    out.ffn = ffn.has("intermediate_size") ? checked_dimension(ffn.at("intermediate_size"), "intermediate_size")
                                           : decilm_ffn_width(ffn.req_positive("ffn_mult"), hidden);
  }
  return out;
}

}  // namespace

void build_decilm(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  read_common_dims(c, family, a);  // num_key_value_heads is null: every block states its own
  const auto blocks_view = c.find({"block_configs"});
  if (!blocks_view) c.fail("block_configs", "is missing (DeciLM states each layer's attention and FFN there)");
  const auto items = blocks_view->items();
  if (items.size() != a.num_layers)
    blocks_view->fail("has " + std::to_string(items.size()) + " entries, num_hidden_layers is " +
                      std::to_string(a.num_layers));
  std::vector<DecilmBlock> blocks;
  for (const auto& item : items) blocks.push_back(read_decilm_block(item, a.num_heads, a.hidden_size));

  // The KV-cache model holds one KV head count for every attention layer (ModelArch::num_kv_heads).
  std::set<std::uint64_t> kv_heads;
  a.layer_attention.assign(a.num_layers, LayerAttention::None);
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].attention) kv_heads.insert(blocks[i].kv_heads), a.layer_attention[i] = LayerAttention::Full;
  if (kv_heads.size() > 1)
    blocks_view->fail("attention blocks with different n_heads_in_group are not supported (one KV head count "
                      "per model)");
  a.num_kv_heads = kv_heads.empty() ? 0 : *kv_heads.begin();
  // The widest FFN sets the activation peak the engines' memory models size.
  for (const auto& b : blocks) a.intermediate_size = std::max(a.intermediate_size, b.ffn);
  read_rope_tables(c, rotary_dim_of(c, a), a);

  const auto h = a.hidden_size, V = a.vocab_size, d = a.head_dim;
  const bool attn_bias = c.flag("attention_bias", false), mlp_bias = c.flag("mlp_bias", false);
  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor("model.embed_tokens.weight", R::TokenEmbedding, {V, h});
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    const auto p = layer_prefix("model.", "layers", i);
    const DecilmBlock& blk = blocks[i];
    if (blk.attention) {
      b.norm(p + "input_layernorm", R::AttnNorm, h);
      b.linear(p + "self_attn.q_proj", R::AttnQ, a.num_heads * d, h, attn_bias);
      b.linear(p + "self_attn.k_proj", R::AttnK, blk.kv_heads * d, h, attn_bias);
      b.linear(p + "self_attn.v_proj", R::AttnV, blk.kv_heads * d, h, attn_bias);
      b.linear(p + "self_attn.o_proj", R::AttnOutput, h, a.num_heads * d, attn_bias);
    }
    if (blk.ffn > 0) {
      b.norm(p + "post_attention_layernorm", R::FfnNorm, h);
      b.linear(p + "mlp.gate_proj", R::FfnGate, blk.ffn, h, mlp_bias);
      b.linear(p + "mlp.up_proj", R::FfnUp, blk.ffn, h, mlp_bias);
      b.linear(p + "mlp.down_proj", R::FfnDown, h, blk.ffn, mlp_bias);
    }
  }
  b.set_layer(std::nullopt);
  b.norm("model.norm", R::OutputNorm, h);
  if (!a.tied_embeddings) b.linear("lm_head", R::Output, V, h);
}

}  // namespace vramplan::hf
