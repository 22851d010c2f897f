// The generic decoder builder: Llama, Mistral, Mixtral, Qwen2/3(-MoE), Gemma 1/2/3, Phi-2/3/4,
// Granite, Cohere, GLM, GLM-4.5 MoE, MiniMax-M2 — every family that is a row of DecoderLayout in hf_families.cpp.
#include <algorithm>

#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"

namespace vramplan::hf {
namespace {

void read_moe(const ConfigView& c, const DecoderLayout& lay, ModelArch& a) {
  a.num_experts = c.positive({"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"});
  a.experts_per_token = c.positive({"num_experts_per_tok", "experts_per_token", "moe_k"});  // moe_k: ERNIE
  if (a.experts_per_token > a.num_experts)
    c.fail("num_experts_per_tok", "is larger than the number of experts");
  a.layer_is_moe.assign(a.num_layers, true);
  // llama.cpp's router hparams (ModelArch::moe_routing) as convert_hf_to_gguf.py writes them
  // (TextModel.set_gguf_parameters: the gating from scoring_func).
  auto& r = a.moe_routing;
  r.sigmoid = c.string({"scoring_func"}).value_or("") == "sigmoid";
  if (lay.moe == Moe::Ernie) {
    // Its experts and lm_head would carry biases with use_bias, which no released checkpoint sets.
    if (c.flag("use_bias", false)) c.fail("use_bias", "ERNIE-4.5 MoE with biases is not modelled");
    // HF Ernie4_5_MoeDecoderLayer: sparse when (i + 1) % moe_layer_interval == 0 and
    // moe_layer_start_index <= i <= moe_layer_end_index (-1: the last layer); the shared experts
    // are one Ernie4_5_MoeMLP of moe_intermediate_size x moe_num_shared_experts.
    a.moe_intermediate_size = c.positive({"moe_intermediate_size"});
    a.num_shared_experts = c.u64({"moe_num_shared_experts"}).value_or(0);
    a.shared_expert_intermediate_size = a.moe_intermediate_size * a.num_shared_experts;
    const auto interval = c.positive_opt({"moe_layer_interval"}).value_or(1);
    const auto start = c.u64({"moe_layer_start_index"}).value_or(0);
    const auto end_raw = c.number({"moe_layer_end_index"}).value_or(-1.0);
    const auto end = end_raw < 0 ? a.num_layers - 1 : static_cast<std::uint64_t>(end_raw);
    for (std::uint64_t i = 0; i < a.num_layers; ++i)
      a.layer_is_moe[i] = (i + 1) % interval == 0 && i >= start && i <= end;
    return;
  }
  if (lay.moe == Moe::Mixtral) {
    a.moe_intermediate_size = a.intermediate_size;  // HF MixtralBlockSparseTop2MLP: ffn_dim
    return;
  }
  if (lay.moe == Moe::Glm4) {
    // HF / vLLM Glm4MoeDecoderLayer: sparse from layer first_k_dense_replace on; the shared experts
    // are one MLP of moe_intermediate_size x n_shared_experts. The checkpoint's MTP layers
    // (num_nextn_predict_layers) load only for speculative decoding and are not counted.
    a.moe_intermediate_size = c.positive({"moe_intermediate_size"});
    a.num_shared_experts = c.u64({"n_shared_experts"}).value_or(0);
    a.shared_expert_intermediate_size = a.moe_intermediate_size * a.num_shared_experts;
    const auto first_dense = c.u64({"first_k_dense_replace"}).value_or(0);
    for (std::uint64_t i = 0; i < a.num_layers; ++i) a.layer_is_moe[i] = i >= first_dense;
    // llama.cpp's router (ModelArch::moe_routing) as convert_hf_to_gguf.py (Glm4MoeModel) writes
    // it: always sigmoid.
    r.sigmoid = true;
    r.norm_topk = c.boolean({"norm_topk_prob"}).value_or(false);
    r.scale = c.number({"routed_scaling_factor"}).value_or(0.0);
    r.groups = c.u64({"n_group"}).value_or(0);
    r.groups_used = c.u64({"topk_group"}).value_or(0);
    return;
  }
  // Qwen2-MoE / Qwen3-MoE (HF Qwen2MoeDecoderLayer): a layer is sparse when it is not in
  // mlp_only_layers and (i + 1) % decoder_sparse_step == 0.
  a.moe_intermediate_size = c.positive({"moe_intermediate_size"});
  a.shared_expert_intermediate_size = c.u64({"shared_expert_intermediate_size"}).value_or(0);
  a.num_shared_experts = a.shared_expert_intermediate_size > 0 ? 1 : 0;
  const auto step = c.positive_opt({"decoder_sparse_step"}).value_or(1);
  std::vector<std::uint64_t> dense_only;
  if (auto v = c.find({"mlp_only_layers"}))
    for (const auto& item : v->items()) dense_only.push_back(item.as_u64());
  for (std::uint64_t i = 0; i < a.num_layers; ++i)
    a.layer_is_moe[i] = (i + 1) % step == 0 &&
                        std::find(dense_only.begin(), dense_only.end(), i) == dense_only.end();
}

void dense_mlp(InventoryBuilder& b, const DecoderLayout& lay, const std::string& p,
               std::uint64_t h, std::uint64_t I, bool bias) {
  switch (lay.mlp) {
    case Mlp::Gated:
      b.linear(p + "gate_proj", R::FfnGate, I, h, bias);
      b.linear(p + "up_proj", R::FfnUp, I, h, bias);
      b.linear(p + "down_proj", R::FfnDown, h, I, bias);
      break;
    case Mlp::GatedFused:
      b.linear(p + "gate_up_proj", R::FfnGateUp, 2 * I, h, bias);
      b.linear(p + "down_proj", R::FfnDown, h, I, bias);
      break;
    case Mlp::Plain:
      b.linear(p + "fc1", R::FfnUp, I, h, bias);
      b.linear(p + "fc2", R::FfnDown, h, I, bias);
      break;
  }
}

void moe_block(InventoryBuilder& b, const DecoderLayout& lay, const std::string& layer,
               const ModelArch& a) {
  const auto h = a.hidden_size, E = a.num_experts, Ie = a.moe_intermediate_size;
  if (lay.moe == Moe::Mixtral) {
    const auto p = layer + "block_sparse_moe.";
    b.linear(p + "gate", R::FfnGateInp, E, h);
    b.experts(p + "experts.*.w1.weight", R::FfnGateExps, E, Ie, h);
    b.experts(p + "experts.*.w3.weight", R::FfnUpExps, E, Ie, h);
    b.experts(p + "experts.*.w2.weight", R::FfnDownExps, E, h, Ie);
    if (lay.moe_routing_bias) b.tensor(p + "e_score_correction_bias", R::FfnExpProbsBias, {E});
    return;
  }
  if (lay.moe == Moe::Glm4) {
    // vLLM glm4_moe.py Glm4MoE: gate {E, h} and its e_score_correction_bias {E} (fp32 in the
    // checkpoint), experts.*, shared_experts.
    deepseek_moe_mlp(b, layer + "mlp.", a, /*score_bias=*/true);
    return;
  }
  if (lay.moe == Moe::Ernie) {
    // HF Ernie4_5_MoeSparseMoeBlock: fp32 gate, moe_statics.e_score_correction_bias [1, E],
    // routed experts, then shared_experts (no gate on them).
    const auto p = layer + "mlp.";
    b.linear(p + "gate", R::FfnGateInp, E, h);
    b.tensor(p + "moe_statics.e_score_correction_bias", R::FfnExpProbsBias, {1, E});
    routed_experts(b, p, E, Ie, h);
    if (const auto Is = a.shared_expert_intermediate_size; Is > 0)
      gated_mlp(b, p + "shared_experts.", Is, h, R::FfnGateShexp, R::FfnUpShexp, R::FfnDownShexp);
    return;
  }
  qwen_moe_mlp(b, layer + "mlp.", a);
}

}  // namespace

void build_decoder(const ConfigView& c, const Family& family, ModelSpec& spec) {
  const auto& lay = family.layout;
  auto& a = spec.arch;
  read_common_dims(c, family, a);
  a.intermediate_size = c.positive({"intermediate_size", "ffn_hidden_size", "n_inner"});
  read_layer_attention(c, lay.pattern, a);
  const auto rotary = rotary_dim_of(c, a);
  read_rope_tables(c, rotary, a);
  if (lay.pattern == Pattern::Gemma3Interleave && a.max_position_embeddings > 0)
    // Gemma-3's sliding layers use a second, unscaled rope (rope_local_base_freq).
    a.rope_tables.push_back({rotary, a.max_position_embeddings, "", 1.0});
  if (lay.moe != Moe::None) read_moe(c, lay, a);
  // convert_hf_to_gguf.py (Ministral3Model) writes rope_parameters.llama_4_scaling_beta of a
  // ministral3 text model as attention.temperature_scale.
  if (a.model_type == "ministral3")
    if (const auto rope = c.find({"rope_parameters"}); rope && rope->is_object())
      a.attn_temperature_scale = rope->opt_number("llama_4_scaling_beta").value_or(0.0);

  const bool qkv_bias = bias_enabled(c, lay.qkv_bias);
  const bool o_bias = bias_enabled(c, lay.o_bias);
  const bool mlp_bias = bias_enabled(c, lay.mlp_bias);
  const bool norm_bias = lay.norm == Norm::LayerNorm;
  const bool per_head_qk_norm = lay.qk_norm == QkNorm::ConfigUseQkNormPerHead && c.flag("use_qk_norm", false);
  const bool whole_qk_norm = lay.qk_norm == QkNorm::WholeProjection && c.flag("use_qk_norm", true);
  const bool head_dim_qk_norm = lay.qk_norm == QkNorm::ConfigUseQkNormHeadDim && c.flag("use_qk_norm", false);
  const bool qk_norm = lay.qk_norm == QkNorm::PerHeadDim || per_head_qk_norm || whole_qk_norm || head_dim_qk_norm;

  const auto h = a.hidden_size, d = a.head_dim, V = a.vocab_size;
  const auto q_out = a.num_heads * d, kv_out = a.num_kv_heads * d;
  const std::string mp(lay.model_prefix);
  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor(mp + "embed_tokens.weight", R::TokenEmbedding, {V, h});
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    const auto p = layer_prefix(mp, "layers", i);
    for (const auto& slot : lay.norms) b.norm(p + std::string(slot.name), slot.role, h, norm_bias);
    const auto at = p + std::string(lay.attn) + ".";
    if (lay.fused_qkv) {
      b.linear(at + "qkv_proj", R::AttnQKV, q_out + 2 * kv_out, h, qkv_bias);
    } else {
      b.linear(at + "q_proj", R::AttnQ, q_out, h, qkv_bias);
      b.linear(at + "k_proj", R::AttnK, kv_out, h, qkv_bias);
      b.linear(at + "v_proj", R::AttnV, kv_out, h, qkv_bias);
    }
    b.linear(at + std::string(lay.o_proj), R::AttnOutput, h, q_out, o_bias);
    if (whole_qk_norm) {
      // MiniMax-M2 (FlexOlmoAttention): one RMSNorm over the whole q and k projections.
      b.tensor(at + "q_norm.weight", R::AttnQNorm, {q_out});
      b.tensor(at + "k_norm.weight", R::AttnKNorm, {kv_out});
    } else if (qk_norm) {
      // Qwen3 / Gemma-3 normalise over head_dim; Cohere keeps one weight row per head.
      b.tensor(at + "q_norm.weight", R::AttnQNorm,
               per_head_qk_norm ? std::vector<std::uint64_t>{a.num_heads, d} : std::vector<std::uint64_t>{d});
      b.tensor(at + "k_norm.weight", R::AttnKNorm,
               per_head_qk_norm ? std::vector<std::uint64_t>{a.num_kv_heads, d} : std::vector<std::uint64_t>{d});
    }
    if (!a.layer_is_moe.empty() && a.layer_is_moe[i]) moe_block(b, lay, p, a);
    else dense_mlp(b, lay, p + "mlp.", h, a.intermediate_size, mlp_bias);
  }
  b.set_layer(std::nullopt);
  b.norm(mp + std::string(lay.final_norm), R::OutputNorm, h, norm_bias);
  if (!a.tied_embeddings) b.linear(std::string(lay.lm_head), R::Output, V, h, lay.lm_head_bias);
}

}  // namespace vramplan::hf
