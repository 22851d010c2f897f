// CogVideoXTransformer3DModel (diffusers models/transformers/cogvideox_transformer_3d.py, read at
// diffusers 58eb52c0): CogVideoXPatchEmbed (models/embeddings.py: proj = Conv2d(in, d, p x p,
// stride p) per latent frame, text_proj = Linear(text_embed_dim, d); without RoPE a sin-cos
// pos_embedding buffer of (max_text_seq_length + 3-D patches of the sample size) x d, registered
// non-persistent: not in the checkpoint, moved to the GPU with the module), time_embedding
// (TimestepEmbedding(d, time_embed_dim): linear_1, linear_2), num_layers x CogVideoXBlock
// (norm1 / norm2 = CogVideoXLayerNormZero: Linear(time_embed_dim, 6 d) + LayerNorm(d); attn1 =
// Attention with q / k / v / to_out (bias = attention_bias) and qk_norm "layer_norm" over a head;
// ff = FeedForward(d, 4 d, gelu-approximate)), norm_final (LayerNorm), norm_out (AdaLayerNorm:
// Linear(time_embed_dim, 2 d) + LayerNorm(d)), proj_out Linear(d, p^2 x out_channels).
//
// Tokens: the text tokens and every latent frame's (h / p) x (w / p) patches in one sequence
// (CogVideoXAttnProcessor2_0 concatenates encoder and hidden states: full attention over S =
// text + frames x patches). FLOPs: each linear over the S tokens it sees, attention 4 S^2 d.
// Live set per sample at the feed-forward of CogVideoXBlock.forward, in units of S x d: the
// hidden / encoder states (1), norm2's output (1), their concatenation (1), ff proj (4) and its
// GELU (4), ff output (1) and the gated product (1): 13; the attention step holds fewer (inputs,
// norm, concat, q, k, v, the SDPA output, its transpose copy and to_out: 9). Eager attention adds
// heads x S^2 twice.
#include "diffusion/config_read.hpp"
#include "vramplan/core/bytes.hpp"
#include "diffusion/walkers.hpp"

namespace vramplan::diffusion {

namespace {
constexpr std::uint64_t kCogVideoXBlockLive = 13;  // S x d units (file comment)
}  // namespace

Tally walk_cogvideox_transformer(const nlohmann::json& config, const std::string& file, const Geometry* g) {
  const ConfigReader c(config, file);
  const std::uint64_t heads = c.count("num_attention_heads", 30), hd = c.count("attention_head_dim", 64);
  const std::uint64_t d = heads * hd;
  const std::uint64_t in = c.count("in_channels", 16), out_ch = c.count("out_channels", 16);
  const std::uint64_t ted = c.count("time_embed_dim", 512), text = c.count("text_embed_dim", 4096);
  const std::uint64_t layers = c.count("num_layers", 30), patch = c.count("patch_size", 2);
  const bool attn_bias = c.flag("attention_bias", true);
  const bool rope = c.flag("use_rotary_positional_embeddings", false);
  if (c.number("patch_size_t", 0)) c.fail("patch_size_t", "CogVideoX 1.5 (temporal patches) is not built");
  if (c.number("ofs_embed_dim", 0)) c.fail("ofs_embed_dim", "the CogVideoX 1.5 image-to-video embedding is not built");
  if (c.flag("use_learned_positional_embeddings", false)) c.fail("use_learned_positional_embeddings", "not built");
  const std::uint64_t max_text = c.count("max_text_seq_length", 226);
  const std::uint64_t s_h = c.count("sample_height", 60), s_w = c.count("sample_width", 90);
  const std::uint64_t s_f = c.count("sample_frames", 49), tcr = c.count("temporal_compression_ratio", 4);
  const std::uint64_t b = g ? g->batch : 0, txt = g ? g->text_tokens : 0;
  const std::uint64_t img = g ? g->frames * (g->latent_h() / patch) * (g->latent_w() / patch) : 0;
  const std::uint64_t seq = img + txt;
  Tally t;
  t.conv(in, d, patch, b * img);        // patch_embed.proj
  t.linear(text, d, true, b * txt);     // patch_embed.text_proj
  if (!rope)  // patch_embed.pos_embedding (a buffer; recomputed per call at other sizes)
    t.buffer(checked_mul(max_text + ((s_f - 1) / tcr + 1) * (s_h / patch) * (s_w / patch), d, "pos_embedding"));
  t.linear(d, ted, true, b);    // time_embedding.linear_1
  t.linear(ted, ted, true, b);  // time_embedding.linear_2
  for (std::uint64_t l = 0; l < layers; ++l) {
    const std::uint64_t before = t.elements();
    for (int n = 0; n < 2; ++n) {
      t.linear(ted, 6 * d, true, b);  // norm1 / norm2 .linear
      t.other(2 * d);                 // norm1 / norm2 .norm
    }
    for (int p = 0; p < 3; ++p) t.linear(d, d, attn_bias, b * seq);  // to_q, to_k, to_v
    t.other(4 * hd);                                                 // norm_q, norm_k (LayerNorm over a head)
    t.linear(d, d, true, b * seq);                                   // to_out.0
    t.linear(d, 4 * d, true, b * seq);                               // ff.net.0.proj
    t.linear(4 * d, d, true, b * seq);                               // ff.net.2
    if (g) {
      t.add_flops(4.0 * static_cast<double>(b) * static_cast<double>(seq) * static_cast<double>(seq) *
                  static_cast<double>(d));
      const double s = static_cast<double>(seq);
      const double scores = g->eager_attention ? 2.0 * static_cast<double>(heads) * s * s : 0.0;
      t.live(static_cast<double>(b) * (s * static_cast<double>(d * kCogVideoXBlockLive) + scores), "CogVideoXBlock");
    }
    t.block("transformer_blocks", t.elements() - before);
  }
  t.other(2 * d);                                     // norm_final
  t.linear(ted, 2 * d, true, b);                      // norm_out.linear
  t.other(2 * d);                                     // norm_out.norm
  t.linear(d, patch * patch * out_ch, true, b * img); // proj_out
  return t;
}

}  // namespace vramplan::diffusion
