// Gemma 4 (26B-A4B, 31B): Gemma-3's sandwich-normed layers with two attention geometries, an
// optional MoE block beside the dense MLP, and its own vision tower.
// Layout: transformers models/gemma4 (Gemma4TextConfig.__post_init__, Gemma4TextAttention,
// Gemma4TextDecoderLayer, Gemma4TextRouter / Gemma4TextExperts, Gemma4VisionModel,
// Gemma4MultimodalEmbedder); the counts reproduce the published safetensors totals exactly
// (docs/research/gemma4.md §5, tests/unit/model/gemma4_test.cpp).
//  - Full-attention layers use global_head_dim (default 512) and, with attention_k_eq_v,
//    num_global_key_value_heads KV heads and no v_proj (V is k_proj's output); sliding layers keep
//    head_dim / num_key_value_heads. The last layer is always full.
//  - enable_moe_block: every layer runs its dense MLP (intermediate_size) and the routed experts
//    (num_experts x moe_intermediate_size, top_k_experts) side by side on the same input.
//  - E2B / E4B's per-layer embeddings (hidden_size_per_layer_input) and KV-shared layers
//    (num_kv_shared_layers) are refused by name, not guessed at.
#include "model/hf_family.hpp"
#include "model/inventory_builder.hpp"
#include "vramplan/core/bytes.hpp"

namespace vramplan::hf {

namespace {

// Gemma4TextConfig: global layers every sliding_window_pattern-th layer when layer_types is
// absent (default 6), and layer_types[-1] forced to full_attention either way.
void read_gemma4_layers(const ConfigView& c, ModelArch& a) {
  read_layer_attention(c, Pattern::Gemma3Interleave, a);
  if (!a.layer_attention.empty()) a.layer_attention.back() = LayerAttention::Full;
}

}  // namespace

// Gemma4VisionModel under model.vision_tower. and Gemma4MultimodalEmbedder under
// model.embed_vision.: a ViT on 16 x 16 patches with a learned 2-D position table, Gemma-style
// per-head q / k norms and gated MLPs, average-pooled by pooling_kernel_size^2 into soft tokens.
void add_gemma4_vision_tower(const ConfigView& c, ModelSpec& spec) {
  const auto vision = c.root().at("vision_config");
  const auto H = vision_count(vision, "hidden_size"), I = vision_count(vision, "intermediate_size");
  const auto L = vision_count(vision, "num_hidden_layers"), heads = vision_count(vision, "num_attention_heads");
  const auto kv_heads = vision.get("num_key_value_heads") ? vision_count(vision, "num_key_value_heads") : heads;
  const auto d = vision.get("head_dim") ? vision_count(vision, "head_dim") : H / heads;
  const auto patch = vision_count(vision, "patch_size");
  const auto positions = vision_count(vision, "position_embedding_size");
  const auto pool = vision.get("pooling_kernel_size") ? vision_count(vision, "pooling_kernel_size") : 3;

  InventoryBuilder b(spec, stored_format_of(c));
  b.override_role(R::Vision);
  const std::string v = "model.vision_tower.";
  b.tensor(v + "patch_embedder.input_proj.weight", R::Vision, {H, 3 * patch * patch});
  b.tensor(v + "patch_embedder.position_embedding_table", R::Vision, {2, positions, H});
  // Gemma4ClippableLinear keeps four scalar clip bounds per linear when use_clipped_linears.
  const bool clipped = vision.opt_bool("use_clipped_linears").value_or(false);
  auto linear = [&](const std::string& prefix, std::uint64_t out, std::uint64_t in) {
    b.linear(prefix + ".linear", R::Vision, out, in);
    if (clipped)
      for (const char* bound : {"input_min", "input_max", "output_min", "output_max"})
        b.tensor(prefix + "." + bound, R::Vision, {});
  };
  for (std::uint64_t i = 0; i < L; ++i) {
    const auto p = v + "encoder.layers." + std::to_string(i) + ".";
    linear(p + "self_attn.q_proj", heads * d, H);
    linear(p + "self_attn.k_proj", kv_heads * d, H);
    linear(p + "self_attn.v_proj", kv_heads * d, H);
    linear(p + "self_attn.o_proj", H, heads * d);
    b.norm(p + "self_attn.q_norm", R::Vision, d);
    b.norm(p + "self_attn.k_norm", R::Vision, d);  // v_norm has no scale
    linear(p + "mlp.gate_proj", I, H);
    linear(p + "mlp.up_proj", I, H);
    linear(p + "mlp.down_proj", H, I);
    for (const char* n : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                          "post_feedforward_layernorm"})
      b.norm(p + n, R::Vision, H);
  }
  if (vision.opt_bool("standardize").value_or(false)) {  // persistent buffers, in the checkpoint
    b.tensor(v + "std_bias", R::Vision, {H});
    b.tensor(v + "std_scale", R::Vision, {H});
  }
  b.linear("model.embed_vision.embedding_projection", R::Vision, spec.arch.hidden_size, H);

  // The item vLLM's encoder profiling feeds the tower: the modality with the most tokens, a video
  // of 32 frames at 70 soft tokens each, 2 + 6 special tokens a frame: 32 x 78 = 2,496 tokens
  // (gemma4_mm.py Gemma4ProcessingInfo.get_mm_max_tokens_per_item, _VIDEO_MAX_FRAMES /
  // _VIDEO_MAX_SOFT_TOKENS; an image is default_output_length = 280). Each frame's patches are
  // padded to 70 x pool^2, each of 3 x patch^2 values.
  constexpr std::uint64_t kVideoFrames = 32, kFrameSoftTokens = 70, kFrameSpecialTokens = 8;
  spec.arch.mm_tokens_per_item = kVideoFrames * (kFrameSoftTokens + kFrameSpecialTokens);
  spec.arch.mm_pixel_values_per_item =
      checked_mul(checked_mul(kVideoFrames * kFrameSoftTokens, pool * pool), 3 * patch * patch);
}

void build_gemma4(const ConfigView& c, const Family& family, ModelSpec& spec) {
  auto& a = spec.arch;
  read_common_dims(c, family, a);
  if (c.u64({"hidden_size_per_layer_input"}).value_or(0) > 0)
    c.fail("hidden_size_per_layer_input", "per-layer input embeddings (Gemma 4 E2B / E4B) are not modelled yet");
  if (c.u64({"num_kv_shared_layers"}).value_or(0) > 0)
    c.fail("num_kv_shared_layers", "KV-shared layers (Gemma 4 E2B / E4B) are not modelled yet");
  read_gemma4_layers(c, a);
  a.global_head_dim = c.positive_opt({"global_head_dim"}).value_or(512);
  a.attention_k_eq_v = c.flag("attention_k_eq_v", false);
  if (a.attention_k_eq_v) {
    a.global_kv_heads = c.positive_opt({"num_global_key_value_heads"}).value_or(a.num_kv_heads);
    if (a.num_heads % a.global_kv_heads != 0)
      c.fail("num_global_key_value_heads", std::to_string(a.global_kv_heads) +
                                               " does not divide num_attention_heads " + std::to_string(a.num_heads));
  }
  a.intermediate_size = c.positive({"intermediate_size"});
  const bool moe = c.flag("enable_moe_block", false);
  if (moe) {
    read_routed_experts(c, "num_experts", "top_k_experts", "moe_intermediate_size", a);
    a.layer_is_moe.assign(a.num_layers, true);
    // The dense MLP beside the experts sees every token, as a shared expert would (llama.cpp's
    // gemma4.cpp: "we use normal FFN as shared expert"); what reads the count (training's saved
    // activations) then takes its width.
    a.num_shared_experts = 1;
    a.shared_expert_intermediate_size = a.intermediate_size;
  }
  // Sliding layers: default rope of head_dim; full layers: "proportional" rope, of which the
  // engines' cos/sin cache is global_head_dim wide (the unrotated part has zero frequencies).
  read_rope_tables(c, a.head_dim, a);
  if (!a.rope_tables.empty()) {
    RopeTable full = a.rope_tables.front();
    full.rotary_dim = a.global_head_dim;
    full.scaling_type = "proportional";
    a.rope_tables.front().scaling_type.clear();
    a.rope_tables.push_back(full);
  }

  const bool multimodal = a.architecture == "Gemma4ForConditionalGeneration";
  const std::string mp = multimodal ? "model.language_model." : "model.";
  const auto h = a.hidden_size, V = a.vocab_size, E = a.num_experts, Ie = a.moe_intermediate_size;
  InventoryBuilder b(spec, stored_format_of(c));
  b.tensor(mp + "embed_tokens.weight", R::TokenEmbedding, {V, h});
  for (std::uint64_t i = 0; i < a.num_layers; ++i) {
    b.set_layer(static_cast<int>(i));
    const auto p = layer_prefix(mp, "layers", i);
    const auto d = a.layer_head_dim(i), kv = a.layer_kv_heads(i);
    b.norm(p + "input_layernorm", R::AttnNorm, h);
    b.norm(p + "post_attention_layernorm", R::AttnPostNorm, h);
    b.norm(p + "pre_feedforward_layernorm", R::FfnNorm, h);
    b.norm(p + "post_feedforward_layernorm", R::FfnPostNorm, h);
    b.tensor(p + "layer_scalar", R::Other, {1});  // a persistent buffer, stored in the checkpoint
    b.linear(p + "self_attn.q_proj", R::AttnQ, a.num_heads * d, h);
    b.norm(p + "self_attn.q_norm", R::AttnQNorm, d);
    b.linear(p + "self_attn.k_proj", R::AttnK, kv * d, h);
    b.norm(p + "self_attn.k_norm", R::AttnKNorm, d);
    if (!(a.attention_k_eq_v && a.layer_has_global_geometry(i)))
      b.linear(p + "self_attn.v_proj", R::AttnV, kv * d, h);
    b.linear(p + "self_attn.o_proj", R::AttnOutput, h, a.num_heads * d);
    gated_mlp(b, p + "mlp.", a.intermediate_size, h, R::FfnGate, R::FfnUp, R::FfnDown);
    if (moe) {
      b.linear(p + "router.proj", R::FfnGateInp, E, h);
      b.tensor(p + "router.scale", R::Other, {h});
      b.tensor(p + "router.per_expert_scale", R::Other, {E});
      b.experts(p + "experts.gate_up_proj", R::FfnGateUpExps, E, 2 * Ie, h);
      b.experts(p + "experts.down_proj", R::FfnDownExps, E, h, Ie);
      for (const char* n : {"pre_feedforward_layernorm_2", "post_feedforward_layernorm_1", "post_feedforward_layernorm_2"})
        b.norm(p + n, R::Other, h);
    }
  }
  b.set_layer(std::nullopt);
  b.norm(mp + "norm", R::OutputNorm, h);
  if (!a.tied_embeddings) b.linear("lm_head", R::Output, V, h);
}

}  // namespace vramplan::hf
