// The MMDiT denoisers: SD3Transformer2DModel (diffusers models/transformers/transformer_sd3.py,
// JointTransformerBlock in models/attention.py, PatchEmbed / CombinedTimestepTextProjEmbeddings in
// models/embeddings.py, AdaLayerNormZero / AdaLayerNormContinuous / SD35AdaLayerNormZeroX in
// models/normalization.py) and FluxTransformer2DModel (models/transformers/transformer_flux.py:
// FluxTransformerBlock, FluxSingleTransformerBlock, CombinedTimestepGuidanceTextProjEmbeddings).
//
// FLOPs: every per-token projection over the tokens of its stream (image tokens for to_q/k/v,
// to_out, ff; text tokens for add_*_proj, to_add_out, ff_context), attention 4 x S^2 x d over the
// joint sequence S; the AdaLN modulation linears act once per sample.
// Live activations per sample, in units of S x d: FluxSingleTransformerBlock.forward holds at its
// proj_out product the block input (1), residual (1), norm (1), the MLP hidden (4), the attention
// output (1), their concatenation (5), proj_out's output and the gated product (2): 15 — the
// largest of the blocks (the joint block's feed-forward holds 14: input, norm, gated attention,
// new hidden, norm2, modulated, proj (4) and GELU (4)). Eager attention adds heads x S^2 twice.
#include <algorithm>

#include "diffusion/config_read.hpp"
#include "vramplan/core/bytes.hpp"
#include "diffusion/walkers.hpp"

namespace vramplan::diffusion {

namespace {

// Live S x d units of one block's peak (the counts in the file comment).
constexpr std::uint64_t kFluxBlockLive = 15;
constexpr std::uint64_t kJointBlockLive = 14;

void attention_cost(Tally& t, const Geometry* g, std::uint64_t seq, std::uint64_t d, std::uint64_t heads,
                    std::uint64_t live_units, std::string_view where) {
  if (!g) return;
  t.add_flops(4.0 * static_cast<double>(g->batch) * static_cast<double>(seq) * static_cast<double>(seq) *
              static_cast<double>(d));
  const double s = static_cast<double>(seq);
  const double scores = g->eager_attention ? 2.0 * static_cast<double>(heads) * s * s : 0.0;
  t.live(static_cast<double>(g->batch) * (s * static_cast<double>(d * live_units) + scores), where);
}

}  // namespace

Tally walk_flux_transformer(const nlohmann::json& config, const std::string& file, const Geometry* g) {
  const ConfigReader c(config, file);
  const std::uint64_t heads = c.count("num_attention_heads", 24), hd = c.count("attention_head_dim", 128);
  const std::uint64_t d = heads * hd;
  const std::uint64_t in = c.count("in_channels", 64), patch = c.count("patch_size", 1);
  const std::uint64_t out_ch = c.number("out_channels", 0) ? c.count("out_channels") : in;
  const std::uint64_t joint = c.count("joint_attention_dim", 4096), pooled = c.count("pooled_projection_dim", 768);
  const std::uint64_t doubles = c.number("num_layers", 19), singles = c.number("num_single_layers", 38);
  const bool guidance = c.flag("guidance_embeds", false);
  const std::uint64_t mlp = d * 4;  // mlp_ratio 4.0
  // FluxPipeline._pack_latents: 2 x 2 latent patches per token.
  const std::uint64_t img = g ? (g->latent_h() / 2) * (g->latent_w() / 2) : 0, txt = g ? g->text_tokens : 0;
  const std::uint64_t b = g ? g->batch : 0;
  const std::uint64_t seq = img + txt;
  Tally t;
  // time_text_embed: timestep_embedder (256 -> d -> d), guidance_embedder, text_embedder (pooled -> d -> d)
  for (int e = 0; e < (guidance ? 2 : 1); ++e) {
    t.linear(256, d, true, b);
    t.linear(d, d, true, b);
  }
  t.linear(pooled, d, true, b);
  t.linear(d, d, true, b);
  t.linear(joint, d, true, b * txt);  // context_embedder
  t.linear(in, d, true, b * img);     // x_embedder
  for (std::uint64_t l = 0; l < doubles; ++l) {
    const std::uint64_t before = t.elements();
    t.linear(d, 6 * d, true, b);  // norm1.linear (AdaLayerNormZero)
    t.linear(d, 6 * d, true, b);  // norm1_context.linear
    for (int p = 0; p < 3; ++p) t.linear(d, d, true, b * img);  // to_q, to_k, to_v
    for (int p = 0; p < 3; ++p) t.linear(d, d, true, b * txt);  // add_q_proj, add_k_proj, add_v_proj
    t.other(4 * hd);  // norm_q, norm_k, norm_added_q, norm_added_k (RMSNorm)
    t.linear(d, d, true, b * img);  // to_out.0
    t.linear(d, d, true, b * txt);  // to_add_out
    t.linear(d, mlp, true, b * img);  // ff.net.0.proj (GELU tanh)
    t.linear(mlp, d, true, b * img);  // ff.net.2
    t.linear(d, mlp, true, b * txt);  // ff_context
    t.linear(mlp, d, true, b * txt);
    attention_cost(t, g, seq, d, heads, kJointBlockLive, "FluxTransformerBlock");
    t.block("transformer_blocks", t.elements() - before);
  }
  for (std::uint64_t l = 0; l < singles; ++l) {
    const std::uint64_t before = t.elements();
    t.linear(d, 3 * d, true, b);  // norm.linear (AdaLayerNormZeroSingle)
    t.linear(d, mlp, true, b * seq);  // proj_mlp
    for (int p = 0; p < 3; ++p) t.linear(d, d, true, b * seq);  // to_q, to_k, to_v
    t.other(2 * hd);  // norm_q, norm_k
    t.linear(d + mlp, d, true, b * seq);  // proj_out
    attention_cost(t, g, seq, d, heads, kFluxBlockLive, "FluxSingleTransformerBlock");
    t.block("single_transformer_blocks", t.elements() - before);
  }
  t.linear(d, 2 * d, true, b);  // norm_out.linear (AdaLayerNormContinuous)
  t.linear(d, patch * patch * out_ch, true, b * img);  // proj_out
  return t;
}

Tally walk_sd3_transformer(const nlohmann::json& config, const std::string& file, const Geometry* g) {
  const ConfigReader c(config, file);
  const std::uint64_t heads = c.count("num_attention_heads", 18), hd = c.count("attention_head_dim", 64);
  const std::uint64_t d = heads * hd;
  const std::uint64_t in = c.count("in_channels", 16), patch = c.count("patch_size", 2);
  const std::uint64_t out_ch = c.number("out_channels", 0) ? c.count("out_channels") : in;
  const std::uint64_t joint = c.count("joint_attention_dim", 4096), pooled = c.count("pooled_projection_dim", 2048);
  const std::uint64_t caption = c.count("caption_projection_dim", d);
  const std::uint64_t layers = c.count("num_layers", 18);
  const std::uint64_t max_pos = c.number("pos_embed_max_size", 96);
  const bool qk_norm = c.text("qk_norm").has_value();
  if (qk_norm && *c.text("qk_norm") != "rms_norm") c.fail("qk_norm", "only \"rms_norm\" (SD 3.5) or none is built");
  std::vector<bool> dual(layers, false);
  if (config.contains("dual_attention_layers") && !config.at("dual_attention_layers").is_null()) {
    if (!config.at("dual_attention_layers").is_array()) c.fail("dual_attention_layers", "expected a list of layer indices");
    for (const auto& i : config.at("dual_attention_layers")) {
      if (!i.is_number_unsigned() || i.get<std::uint64_t>() >= layers) c.fail("dual_attention_layers", "expected layer indices below num_layers");
      dual[i.get<std::size_t>()] = true;
    }
  }
  if (caption != d) c.fail("caption_projection_dim", "differs from num_attention_heads x attention_head_dim: not built");
  const std::uint64_t img = g ? (g->latent_h() / patch) * (g->latent_w() / patch) : 0, txt = g ? g->text_tokens : 0;
  const std::uint64_t b = g ? g->batch : 0;
  const std::uint64_t seq = img + txt;
  Tally t;
  t.conv(in, d, patch, b * img);  // pos_embed.proj (PatchEmbed)
  t.buffer(checked_mul(checked_mul(max_pos, max_pos, "pos_embed"), d, "pos_embed"));  // pos_embed.pos_embed: a persistent buffer (embeddings.py PatchEmbed)
  t.linear(256, d, true, b);  // time_text_embed.timestep_embedder
  t.linear(d, d, true, b);
  t.linear(pooled, d, true, b);  // time_text_embed.text_embedder
  t.linear(d, d, true, b);
  t.linear(joint, caption, true, b * txt);  // context_embedder
  for (std::uint64_t l = 0; l < layers; ++l) {
    const std::uint64_t before = t.elements();
    const bool last = l + 1 == layers;  // context_pre_only
    t.linear(d, (dual[l] ? 9 : 6) * d, true, b);  // norm1.linear (AdaLayerNormZero / SD35AdaLayerNormZeroX)
    t.linear(d, (last ? 2 : 6) * d, true, b);     // norm1_context.linear
    for (int p = 0; p < 3; ++p) t.linear(d, d, true, b * img);  // to_q, to_k, to_v
    for (int p = 0; p < 3; ++p) t.linear(d, d, true, b * txt);  // add_q_proj, add_k_proj, add_v_proj
    if (qk_norm) t.other(4 * hd);  // norm_q, norm_k, norm_added_q, norm_added_k
    t.linear(d, d, true, b * img);  // to_out.0
    if (!last) t.linear(d, d, true, b * txt);  // to_add_out
    if (dual[l]) {  // attn2: self-attention over the image tokens
      for (int p = 0; p < 4; ++p) t.linear(d, d, true, b * img);
      if (qk_norm) t.other(2 * hd);
      attention_cost(t, g, img, d, heads, 0, "SD3 attn2");
    }
    t.linear(d, 4 * d, true, b * img);  // ff
    t.linear(4 * d, d, true, b * img);
    if (!last) {
      t.linear(d, 4 * d, true, b * txt);  // ff_context
      t.linear(4 * d, d, true, b * txt);
    }
    attention_cost(t, g, seq, d, heads, kJointBlockLive, "JointTransformerBlock");
    t.block("transformer_blocks", t.elements() - before);
  }
  t.linear(d, 2 * d, true, b);  // norm_out.linear
  t.linear(d, patch * patch * out_ch, true, b * img);  // proj_out
  return t;
}

}  // namespace vramplan::diffusion
