// WanTransformer3DModel (diffusers models/transformers/transformer_wan.py, read at diffusers
// 58eb52c0), Wan2.1 text-to-video (no image_dim, no added_kv_proj_dim):
//  * patch_embedding: nn.Conv3d(in_channels, d, kernel = stride = patch_size (1, 2, 2));
//  * condition_embedder (WanTimeTextImageEmbedding): time_embedder = TimestepEmbedding(freq_dim, d)
//    (linear_1, linear_2), time_proj = Linear(d, 6 d), text_embedder = PixArtAlphaTextProjection
//    (text_dim, d): linear_1 Linear(text_dim, d), linear_2 Linear(d, d);
//  * rope (WanRotaryPosEmbed): freqs_cos / freqs_sin registered persistent=False, float64 (rope is
//    in _keep_in_fp32_modules, its buffers are not cast): rope_max_seq_len x head_dim / 2 x 2
//    (use_real, repeat_interleave_real: each of the t / h / w parts is dim wide) -> 2 x 1024 x
//    head_dim float64 elements; counted as buffers (their bytes are the planner's dtype, an
//    understatement of 2 x 1024 x 128 x 4 extra bytes: ~1 MiB);
//  * num_layers x WanTransformerBlock: norm1 / norm3 FP32LayerNorm without affine, attn1 and attn2
//    = WanAttention (to_q / to_k / to_v / to_out.0 Linear(d, d) with bias, norm_q / norm_k
//    RMSNorm(d) with weight: qk_norm "rms_norm_across_heads"), norm2 FP32LayerNorm(d) with affine
//    when cross_attn_norm, ffn = FeedForward(d, inner_dim = ffn_dim, gelu-approximate): proj
//    Linear(d, ffn_dim), Linear(ffn_dim, d); scale_shift_table Parameter(1, 6, d);
//  * norm_out FP32LayerNorm without affine, proj_out Linear(d, out_channels x prod(patch_size)),
//    scale_shift_table Parameter(1, 2, d).
//
// Tokens: the latent (frames / p_t) x (h / p_h) x (w / p_w) patches; attn1 is self-attention over
// them (S tokens), attn2 cross-attention to the T text tokens (the UMT5 output after
// text_embedder). The text goes into every call of the transformer once: WanPipeline.__call__
// runs the conditional and unconditional passes one after the other (cache_context("cond") /
// ("uncond")), never a doubled batch.
// FLOPs: each linear over the tokens it sees, self-attention 4 S^2 d, cross-attention 4 S T d.
// Live set per sample at the feed-forward of WanTransformerBlock.forward, in units of S elements:
// hidden_states (d), norm3's fp32 output and the modulated copy (taken as 2 d, counted at the
// activation width), FeedForward's proj output and its GELU (2 ffn_dim: nn.Sequential keeps the
// input of GELU until GELU returns), then Linear out (d): 4 d + 2 ffn_dim. The attention step
// holds fewer for Wan's ffn_dim / d ~ 5.8 (hidden, norm, q, k, v, normed q / k, rotated q / k,
// the SDPA output and to_out: 11 d). Eager attention adds heads x S^2 twice.
#include <vector>

#include "diffusion/config_read.hpp"
#include "diffusion/walkers.hpp"
#include "vramplan/core/bytes.hpp"

namespace vramplan::diffusion {

namespace {
constexpr std::uint64_t kWanAttentionLive = 11;  // S x d units at attn1 (file comment)
}  // namespace

Tally walk_wan_transformer(const nlohmann::json& config, const std::string& file, const Geometry* g) {
  const ConfigReader c(config, file);
  const std::uint64_t heads = c.count("num_attention_heads", 40), hd = c.count("attention_head_dim", 128);
  const std::uint64_t d = heads * hd;
  const std::uint64_t in = c.count("in_channels", 16), out_ch = c.count("out_channels", 16);
  const std::uint64_t text = c.count("text_dim", 4096), freq = c.count("freq_dim", 256);
  const std::uint64_t ffn = c.count("ffn_dim", 13824), layers = c.count("num_layers", 40);
  const std::uint64_t rope_len = c.count("rope_max_seq_len", 1024);
  const bool cross_norm = c.flag("cross_attn_norm", true);
  const auto patch = config.contains("patch_size") ? c.counts("patch_size", 3) : std::vector<std::uint64_t>{1, 2, 2};
  const std::uint64_t pt = patch[0], ph = patch[1], pw = patch[2];
  if (c.text("qk_norm").value_or("rms_norm_across_heads") != "rms_norm_across_heads")
    c.fail("qk_norm", "only rms_norm_across_heads is built");
  if (c.number("image_dim", 0)) c.fail("image_dim", "the Wan image-to-video embedding is not built");
  if (c.number("added_kv_proj_dim", 0)) c.fail("added_kv_proj_dim", "the Wan image-to-video projections are not built");
  if (c.number("pos_embed_seq_len", 0)) c.fail("pos_embed_seq_len", "not built");

  const std::uint64_t b = g ? g->batch : 0, txt = g ? g->text_tokens : 0;
  const std::uint64_t img = g ? (g->frames / pt) * (g->latent_h() / ph) * (g->latent_w() / pw) : 0;
  Tally t;
  t.buffer(checked_mul(2 * rope_len, hd, "rope buffers"));  // rope.freqs_cos / freqs_sin
  {
    // patch_embedding: a pt x ph x pw kernel (Tally::conv takes a square k; the weight is the same
    // count as in x d x pt x ph x pw).
    Tally pe;
    pe.linear(in * pt * ph * pw, d, true, b * img);
    t.other(pe.params);  // a Conv3d, not an nn.Linear weight for the quantisation schemes
    t.add_flops(pe.flops);
  }
  t.linear(freq, d, true, b);       // condition_embedder.time_embedder.linear_1
  t.linear(d, d, true, b);          // condition_embedder.time_embedder.linear_2
  t.linear(d, 6 * d, true, b);      // condition_embedder.time_proj
  t.linear(text, d, true, b * txt); // condition_embedder.text_embedder.linear_1
  t.linear(d, d, true, b * txt);    // condition_embedder.text_embedder.linear_2
  for (std::uint64_t l = 0; l < layers; ++l) {
    const std::uint64_t before = t.elements();
    t.linear(d, d, true, b * img);  // attn1.to_q
    t.linear(d, d, true, b * img);  // attn1.to_k
    t.linear(d, d, true, b * img);  // attn1.to_v
    t.linear(d, d, true, b * img);  // attn1.to_out.0
    t.other(2 * d);                 // attn1.norm_q, norm_k
    t.linear(d, d, true, b * img);  // attn2.to_q
    t.linear(d, d, true, b * txt);  // attn2.to_k (over the text)
    t.linear(d, d, true, b * txt);  // attn2.to_v
    t.linear(d, d, true, b * img);  // attn2.to_out.0
    t.other(2 * d);                 // attn2.norm_q, norm_k
    if (cross_norm) t.other(2 * d); // norm2
    t.linear(d, ffn, true, b * img);  // ffn.net.0.proj
    t.linear(ffn, d, true, b * img);  // ffn.net.2
    t.other(6 * d);                   // scale_shift_table
    if (g) {
      const double s = static_cast<double>(img), tt = static_cast<double>(txt), dd = static_cast<double>(d);
      const double db = static_cast<double>(b);
      t.add_flops(4.0 * db * s * s * dd + 4.0 * db * s * tt * dd);
      const double scores = g->eager_attention ? 2.0 * static_cast<double>(heads) * s * s : 0.0;
      t.live(db * (s * static_cast<double>(kWanAttentionLive * d) + scores), "WanTransformerBlock attn1");
      t.live(db * s * static_cast<double>(4 * d + 2 * ffn), "WanTransformerBlock ffn");
    }
    t.block("blocks", t.elements() - before);
  }
  t.linear(d, out_ch * pt * ph * pw, true, b * img);  // proj_out
  t.other(2 * d);                                     // scale_shift_table
  return t;
}

}  // namespace vramplan::diffusion
