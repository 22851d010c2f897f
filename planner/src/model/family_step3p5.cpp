// Step-3.5-Flash (Step3p5ForCausalLM, model_type step3p5): grouped-query attention with a sliding
// window on three of every four layers, a head-wise output gate, and a 288-expert MoE with an
// always-on shared expert; docs/research/step3.5-flash.md has every source. In short (SGLang
// 0.5.9 models/step3p5.py and vLLM 0.34 models/step3p5.py, Step3p5Attention / Step3p5DecoderLayer):
//  - layer_types lists 48 entries for 45 decoder layers (the last three are the MTP layers);
//    a full layer has num_attention_heads query heads, a sliding one
//    attention_other_setting.num_attention_heads, both num_attention_groups KV heads of head_dim;
//  - attention: q_proj {H d, h}, k_proj / v_proj {G d, h}, o_proj {h, H d}, per-head q_norm /
//    k_norm {d}, and g_proj {H, h}, a sigmoid gate per head on the attention output;
//  - the full layers rotate partial_rotary_factors[i] of head_dim with rope_theta[i] and the
//    rope_scaling (yarn_only_types), the sliding ones all of it with their own theta;
//  - moe_layers_enum names the MoE layers; the others run a dense MLP of intermediate_size. The
//    experts are stacked per layer (moe.gate_proj / up_proj {E, I, h}, down_proj {E, h, I}), with
//    the router moe.gate {E, h}, its selection bias moe.router_bias {E} and share_expert.*;
//  - num_nextn_predict_layers MTP layers follow (model.layers.45-47): a sliding-attention block
//    with a dense MLP, eh_proj {h, 2 h}, enorm / hnorm and their own head
//    (transformer.shared_head.norm / output). No engine loads them without speculative decoding.
#include <charconv>
#include <cmath>
#include <sstream>

#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"

namespace vramplan::hf {
namespace {

void step_attention(InventoryBuilder& b, const std::string& p, std::uint64_t h, std::uint64_t heads,
                    std::uint64_t kv_heads, std::uint64_t d) {
  b.linear(p + "q_proj", R::AttnQ, heads * d, h);
  b.linear(p + "k_proj", R::AttnK, kv_heads * d, h);
  b.linear(p + "v_proj", R::AttnV, kv_heads * d, h);
  b.linear(p + "o_proj", R::AttnOutput, h, heads * d);
  b.norm(p + "q_norm", R::AttnQNorm, d);
  b.norm(p + "k_norm", R::AttnKNorm, d);
  b.linear(p + "g_proj", R::AttnQ, heads, h);  // one gate per query head, split over TP like q_proj
}

// The experts stacked per layer, the router's selection bias and the shared expert.
constexpr BiasedMoeNames kStepMoe{"moe.gate", "moe.router_bias", "moe.gate_proj.weight", "moe.up_proj.weight",
                                  "moe.down_proj.weight", "share_expert."};

// moe_layers_enum: the MoE layers, a comma-separated list of 0-based indices (the engines read
// it as int(i) for each item of split(","), so blanks around an index are allowed).
std::vector<bool> step_moe_layers(const ConfigView& c, std::uint64_t layers) {
  std::vector<bool> moe(layers, false);
  const auto text = c.string({"moe_layers_enum"});
  if (!text) c.fail("moe_layers_enum", "is missing (the MoE layers' indices)");
  std::stringstream in(*text);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (item.size() > 20) item = item.substr(0, 20) + "...";  // the message names it, bounded
    std::uint64_t i = 0;
    const auto* first = item.data();
    const auto [end, ec] = std::from_chars(first, first + item.size(), i);
    if (ec != std::errc() || end != first + item.size()) c.fail("moe_layers_enum", "'" + item + "' is not a layer index");
    if (i >= layers) c.fail("moe_layers_enum", "names layer " + item + " of " + std::to_string(layers));
    moe[i] = true;
  }
  return moe;
}

}  // namespace

void build_step3p5(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  read_common_dims(c, family, a);
  a.num_kv_heads = c.positive({"num_attention_groups"});
  if (a.num_heads % a.num_kv_heads != 0) c.fail("num_attention_groups", "does not divide num_attention_heads");
  a.intermediate_size = c.positive({"intermediate_size"});
  read_routed_experts(c, "moe_num_experts", "moe_top_k", "moe_intermediate_size", a);
  a.shared_expert_intermediate_size = c.u64({"share_expert_dim"}).value_or(0);
  a.num_shared_experts = a.shared_expert_intermediate_size > 0 ? 1 : 0;
  a.layer_is_moe = step_moe_layers(c, a.num_layers);
  a.mtp_layers = c.u64({"num_nextn_predict_layers"}).value_or(0);

  // Sliding layers: their own query-head count (attention_other_setting), the same KV geometry.
  std::uint64_t sliding_heads = a.num_heads;
  if (const auto other = c.find({"attention_other_setting"}); other && other->is_object()) {
    if (const auto n = other->get("num_attention_heads")) sliding_heads = checked_dimension(*n, "num_attention_heads");
    if (const auto g = other->get("num_attention_groups"); g && checked_dimension(*g, "num_attention_groups") != a.num_kv_heads)
      g->fail("differs from num_attention_groups: per-layer KV heads are not modelled for this family");
    if (sliding_heads == 0 || sliding_heads % a.num_kv_heads != 0)
      other->fail_at("num_attention_heads", "must be a positive multiple of num_attention_groups");
  }
  // layer_types covers the MTP layers too: the first num_hidden_layers entries are the model's.
  const auto types = c.find({"layer_types"});
  if (!types) c.fail("layer_types", "is missing");
  const auto items = types->items();
  if (items.size() < a.num_layers)
    types->fail("has " + std::to_string(items.size()) + " entries for " + std::to_string(a.num_layers) + " layers");
  a.layer_attention.assign(a.num_layers, LayerAttention::Full);
  bool sliding = false;
  for (std::size_t i = 0; i < a.num_layers; ++i) {
    const auto t = items[i].as_string();
    if (t == "sliding_attention") a.layer_attention[i] = LayerAttention::Sliding, sliding = true;
    else if (t != "full_attention") items[i].fail("unknown layer type '" + t + "'");
  }
  if (sliding) a.sliding_window = c.positive({"sliding_window"});
  // Two cos/sin caches: the full layers' (partial rotary, rope_scaling) and the sliding layers'
  // (all of head_dim, no scaling; yarn_only_types). Read off layer 0 (full) and layer 1 (sliding).
  const auto factors = c.find({"partial_rotary_factors"});
  const double full_factor = factors && !factors->items().empty() ? factors->items()[0].as_number() : 1.0;
  if (!(full_factor > 0 && full_factor <= 1)) c.fail("partial_rotary_factors", "must be in (0, 1]");
  read_rope_tables(c, static_cast<std::uint64_t>(std::llround(static_cast<double>(a.head_dim) * full_factor)), a);
  if (sliding && a.max_position_embeddings > 0) a.rope_tables.push_back({a.head_dim, a.max_position_embeddings, "", 1.0});

  const auto h = a.hidden_size, V = a.vocab_size, d = a.head_dim;
  const std::string mp(family.layout.model_prefix);
  const auto heads_of = [&](LayerAttention kind) { return kind == LayerAttention::Sliding ? sliding_heads : a.num_heads; };
  InventoryBuilder b(spec, stored_format_of(c));
  pre_norm_decoder_layers(b, mp, a, [&](const std::string& p, std::uint64_t i) {
    step_attention(b, p + "self_attn.", h, heads_of(a.layer_attention[i]), a.num_kv_heads, d);
    if (a.layer_is_moe[i]) biased_moe_mlp(b, p, a, kStepMoe);
    else gated_mlp(b, p + "mlp.", a.intermediate_size, h, R::FfnGate, R::FfnUp, R::FfnDown);
  });
  // MTP layers (vLLM 0.34 step3p5_mtp.py): a sliding-attention block with a dense MLP, eh_proj,
  // enorm / hnorm and a head of their own.
  b.override_role(R::Mtp);
  for (std::uint64_t m = 0; m < a.mtp_layers; ++m) {
    const auto i = a.num_layers + m;
    b.set_layer(static_cast<int>(i));
    const auto p = layer_prefix(mp, "layers", i);
    b.norm(p + "input_layernorm", R::Mtp, h);
    b.norm(p + "post_attention_layernorm", R::Mtp, h);
    step_attention(b, p + "self_attn.", h, sliding_heads, a.num_kv_heads, d);
    gated_mlp(b, p + "mlp.", a.intermediate_size, h, R::Mtp, R::Mtp, R::Mtp);
    b.linear(p + "eh_proj", R::Mtp, h, 2 * h);
    b.norm(p + "enorm", R::Mtp, h);
    b.norm(p + "hnorm", R::Mtp, h);
    b.norm(p + "transformer.shared_head.norm", R::Mtp, h);
    b.linear(p + "transformer.shared_head.output", R::Mtp, V, h);
  }
  b.override_role(std::nullopt);
  b.set_layer(std::nullopt);
  b.norm(mp + "norm", R::OutputNorm, h);
  if (!a.tied_embeddings) b.linear(std::string(family.layout.lm_head), R::Output, V, h);
}

}  // namespace vramplan::hf
