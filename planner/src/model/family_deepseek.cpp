// DeepSeek-V2 / V3: multi-head latent attention, dense-then-MoE layers, shared experts, and the
// multi-token-prediction module stored as extra layers (V3: model.layers.61).
// Layout: HF DeepseekV3Attention / DeepseekV3MoE / DeepseekV3DecoderLayer
// (https://github.com/huggingface/transformers/blob/main/src/transformers/models/deepseek_v3/modeling_deepseek_v3.py)
// and DeepSeek's inference/model.py (https://github.com/deepseek-ai/DeepSeek-V3/blob/main/inference/model.py).
// Kimi-K2 is this architecture (DeepseekV3ForCausalLM, 384 experts); Kimi-K2.5 wraps it as
// KimiK25ForConditionalGeneration: SGLang python/sglang/srt/models/kimi_k25.py,
// KimiK25ForConditionalGeneration.__init__ builds vision_tower (MoonViT), mm_projector and
// language_model = DeepseekV3ForCausalLM(config.text_config); the checkpoint keeps the text model
// under "language_model." (the family row's model_prefix / lm_head).
//
// DeepSeek sparse attention (DeepseekV32ForCausalLM: DeepSeek-V3.2 / V3.2-Exp; GlmMoeDsaForCausalLM:
// GLM-5 / 5.1) is this layer plus a lightning indexer in the attention of every layer that runs
// its own (DeepSeek-V3.2-Exp inference/model.py Indexer.__init__ @6d8cb70d; transformers
// models/glm_moe_dsa GlmMoeDsaIndexer; vLLM v0.11.0 deepseek_v2.py Indexer).
#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"

namespace vramplan::hf {
namespace {

void mla_attention(InventoryBuilder& b, const std::string& p, const ModelArch& a) {
  const auto h = a.hidden_size, n = a.num_heads;
  const auto qk_head = a.qk_nope_head_dim + a.qk_rope_head_dim;
  if (a.q_lora_rank > 0) {
    b.linear(p + "q_a_proj", R::AttnQA, a.q_lora_rank, h);
    b.norm(p + "q_a_layernorm", R::AttnQANorm, a.q_lora_rank);
    b.linear(p + "q_b_proj", R::AttnQB, n * qk_head, a.q_lora_rank);
  } else {
    b.linear(p + "q_proj", R::AttnQ, n * qk_head, h);
  }
  b.linear(p + "kv_a_proj_with_mqa", R::AttnKVAMqa, a.kv_lora_rank + a.qk_rope_head_dim, h);
  b.norm(p + "kv_a_layernorm", R::AttnKVANorm, a.kv_lora_rank);
  b.linear(p + "kv_b_proj", R::AttnKVB, n * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank);
  b.linear(p + "o_proj", R::AttnOutput, h, n * a.v_head_dim);
}

// The indexer: wq_b from the q latent, one key head wk from the hidden state with a LayerNorm
// (weight and bias), and weights_proj giving each head's weight in the score; weights_proj is
// built unquantized (vLLM Indexer: quant_config=None; the reference builds it in the default dtype).
void dsa_indexer(InventoryBuilder& b, const std::string& p, const ModelArch& a) {
  b.linear(p + "wq_b", R::IndexerQB, a.index_n_heads * a.index_head_dim, a.q_lora_rank);
  b.linear(p + "wk", R::IndexerK, a.index_head_dim, a.hidden_size);
  b.norm(p + "k_norm", R::IndexerKNorm, a.index_head_dim, true);
  b.linear(p + "weights_proj", R::IndexerProj, a.index_n_heads, a.hidden_size);
}

void decoder_layer(InventoryBuilder& b, const std::string& p, const ModelArch& a, bool moe,
                   bool score_bias, bool indexer) {
  const auto h = a.hidden_size;
  b.norm(p + "input_layernorm", R::AttnNorm, h);
  b.norm(p + "post_attention_layernorm", R::FfnNorm, h);
  mla_attention(b, p + "self_attn.", a);
  if (indexer) dsa_indexer(b, p + "self_attn.indexer.", a);
  const auto m = p + "mlp.";
  // V3's noaux_tc routing adds a per-expert bias to the scores (a checkpoint tensor).
  if (moe) deepseek_moe_mlp(b, m, a, score_bias);
  else gated_mlp(b, m, a.intermediate_size, h, R::FfnGate, R::FfnUp, R::FfnDown);
}

// Which layers run their own indexer: transformers GlmMoeDsaConfig.__post_init__ (and vLLM
// models/utils.py compute_skip_topk_layers, SGLang model_config.py dsa_layer_skips_topk, which
// agree): `indexer_types` ("full" / "shared") when given, else `index_topk_pattern` (F / S per
// layer), else layer i is full when max(i - index_skip_topk_offset + 1, 0) % index_topk_freq == 0
// (defaults 2 and 1: every layer). DeepSeek-V3.2 and GLM-5 / 5.1 state none of these.
void read_dsa_indexer(const ConfigView& c, ModelArch& a) {
  a.index_topk = c.positive({"index_topk"});
  a.index_n_heads = c.positive({"index_n_heads"});
  a.index_head_dim = c.positive({"index_head_dim"});
  if (a.q_lora_rank == 0) c.fail("q_lora_rank", "must be set: the sparse-attention indexer reads the q latent");
  const auto L = a.num_layers;
  a.layer_has_indexer.assign(L, true);
  std::string_view rule = "index_topk_freq";
  if (auto types = c.find({"indexer_types"})) {
    rule = "indexer_types";
    const auto items = types->items();
    if (items.size() != L)
      types->fail("has " + std::to_string(items.size()) + " entries, num_hidden_layers is " + std::to_string(L));
    for (std::size_t i = 0; i < L; ++i) {
      const auto t = items[i].as_string();
      if (t != "full" && t != "shared") items[i].fail("must be \"full\" or \"shared\", not '" + t + "'");
      a.layer_has_indexer[i] = t == "full";
    }
  } else if (auto pattern = c.string({"index_topk_pattern"})) {
    rule = "index_topk_pattern";
    if (pattern->size() != L) c.fail("index_topk_pattern", "has " + std::to_string(pattern->size()) +
                                                            " letters, num_hidden_layers is " + std::to_string(L));
    for (std::size_t i = 0; i < L; ++i) {
      const char ch = (*pattern)[i];
      if (ch != 'F' && ch != 'S') c.fail("index_topk_pattern", "letters must be F (full) or S (shared)");
      a.layer_has_indexer[i] = ch == 'F';
    }
  } else {
    const auto freq = c.positive_opt({"index_topk_freq"}).value_or(1);
    const auto offset = c.u64({"index_skip_topk_offset"}).value_or(2);
    for (std::uint64_t i = 0; i < L; ++i)
      a.layer_has_indexer[i] = (i + 1 > offset ? i + 1 - offset : 0) % freq == 0;
  }
  if (!a.layer_has_indexer.empty() && !a.layer_has_indexer[0])
    c.fail(rule, "makes the first layer share an indexer (a shared layer reuses an earlier one's choice)");
}

// The router hparams convert_hf_to_gguf.py writes (ModelBase / DeepseekV2Model
// set_gguf_parameters) as llama.cpp's deepseek2 loader reads them back: no scoring_func means
// softmax, except GLM-4.7-Flash's 47 / 48 layers with a 154,880-token vocabulary (sigmoid).
void read_llamacpp_routing(const ConfigView& c, ModelArch& a) {
  auto& r = a.moe_routing;
  const auto scoring = c.string({"scoring_func"});
  r.sigmoid = scoring ? *scoring == "sigmoid" : ModelArch::MoeRouting::deepseek2_default_sigmoid(a.num_layers, a.vocab_size);
  r.norm_topk = c.boolean({"norm_topk_prob"}).value_or(false);
  r.scale = c.number({"routed_scaling_factor"}).value_or(0.0);
  r.groups = c.u64({"n_group"}).value_or(0);
  r.groups_used = c.u64({"topk_group"}).value_or(0);
  if (r.groups > 1 && a.num_experts % r.groups != 0)
    c.fail("n_group", std::to_string(r.groups) + " does not divide n_routed_experts " + std::to_string(a.num_experts));
  if (r.groups > 1 && (r.groups_used == 0 || r.groups_used > r.groups))
    c.fail("topk_group", "must be from 1 to n_group");
}

}  // namespace

void build_deepseek(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  read_common_dims(c, family, a);
  a.intermediate_size = c.positive({"intermediate_size"});
  a.kv_lora_rank = c.positive({"kv_lora_rank"});
  a.q_lora_rank = c.u64({"q_lora_rank"}).value_or(0);  // null in V2-Lite: plain q_proj
  a.qk_rope_head_dim = c.positive({"qk_rope_head_dim"});
  a.qk_nope_head_dim = c.positive({"qk_nope_head_dim"});
  a.head_dim = a.qk_nope_head_dim + a.qk_rope_head_dim;
  a.v_head_dim = c.positive({"v_head_dim"});
  read_routed_experts(c, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", a);
  a.num_shared_experts = c.u64({"n_shared_experts"}).value_or(0);
  a.shared_expert_intermediate_size = a.moe_intermediate_size * a.num_shared_experts;
  a.mtp_layers = c.u64({"num_nextn_predict_layers"}).value_or(0);
  // HF: layer i is MoE when i >= first_k_dense_replace and i % moe_layer_freq == 0.
  const auto first_dense = c.u64({"first_k_dense_replace"}).value_or(0);
  const auto freq = c.positive_opt({"moe_layer_freq"}).value_or(1);
  a.layer_is_moe.resize(a.num_layers);
  for (std::uint64_t i = 0; i < a.num_layers; ++i)
    a.layer_is_moe[i] = i >= first_dense && i % freq == 0;
  a.layer_attention.assign(a.num_layers, LayerAttention::Mla);
  read_rope_tables(c, a.qk_rope_head_dim, a);
  const bool score_bias = c.string({"topk_method"}).value_or("") == "noaux_tc";
  read_llamacpp_routing(c, a);
  if (family.sparse_attention) read_dsa_indexer(c, a);
  const auto indexer_at = [&](std::uint64_t i) { return i < a.layer_has_indexer.size() && a.layer_has_indexer[i]; };

  const auto h = a.hidden_size, V = a.vocab_size;
  // "model." for DeepseekV2/V3ForCausalLM; "language_model.model." for Kimi-K2.5's wrapper.
  const std::string prefix(family.layout.model_prefix);
  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor(prefix + "embed_tokens.weight", R::TokenEmbedding, {V, h});
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    decoder_layer(b, layer_prefix(prefix, "layers", i), a, a.layer_is_moe[i], score_bias, indexer_at(i));
  }
  // MTP module (DeepSeek-V3 README_WEIGHTS.md): a full MoE decoder layer plus enorm, hnorm,
  // eh_proj and its own copies of the embedding and output head, as layers L .. L+mtp-1.
  b.override_role(R::Mtp);
  for (std::uint64_t m = 0; m < a.mtp_layers; ++m) {
    const auto i = a.num_layers + m;
    b.set_layer(static_cast<int>(i));
    const auto p = layer_prefix(prefix, "layers", i);
    b.tensor(p + "embed_tokens.weight", R::Mtp, {V, h});
    b.norm(p + "enorm", R::Mtp, h);
    b.norm(p + "hnorm", R::Mtp, h);
    b.linear(p + "eh_proj", R::Mtp, h, 2 * h);
    // The MTP layer keeps an indexer of its own (vLLM v0.34 DeepseekV32Attention: `not skip_topk
    // or is_mtp_layer`).
    decoder_layer(b, p, a, true, score_bias, family.sparse_attention);
    b.norm(p + "shared_head.norm", R::Mtp, h);
    b.linear(p + "shared_head.head", R::Mtp, V, h);
  }
  b.override_role(std::nullopt);
  b.set_layer(std::nullopt);
  b.norm(prefix + "norm", R::OutputNorm, h);
  if (!a.tied_embeddings) b.linear(std::string(family.layout.lm_head), R::Output, V, h);
}

}  // namespace vramplan::hf
