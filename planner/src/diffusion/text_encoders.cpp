// Text encoders of diffusion pipelines, from transformers' module layout:
//  * CLIPTextModel / CLIPTextModelWithProjection (models/clip/modeling_clip.py: CLIPTextEmbeddings,
//    CLIPEncoderLayer = LayerNorm, CLIPAttention q/k/v/out_proj with bias, LayerNorm, CLIPMLP fc1/fc2;
//    final_layer_norm; text_projection Linear(hidden, projection_dim, bias=False));
//  * T5EncoderModel (models/t5/modeling_t5.py: shared embedding (encoder.embed_tokens is the same
//    tensor), T5Attention q/k/v/o without bias over num_heads x d_kv, relative_attention_bias in
//    layer 0 only, T5LayerNorm (weight only), T5DenseGatedActDense wi_0/wi_1/wo for "gated-*"
//    feed_forward_proj, else T5DenseActDense wi/wo; final_layer_norm);
//  * UMT5EncoderModel (models/umt5/modeling_umt5.py: the T5 layout, but UMT5LayerSelfAttention
//    builds UMT5Attention(config, has_relative_attention_bias=True) in every layer, so each layer
//    owns a relative_attention_bias of num_buckets x heads and computes its own position bias).
// Live set of one forward over T tokens, per sample: the attention step holds the residual, the
// norm output, q, k, v and the attention output (6h; eager adds QK^T and its softmax, 2 x heads x
// T^2, which T5 always materialises: T5Attention computes `scores` with torch.matmul and keeps
// the position bias, heads x T^2, for every layer); the MLP step holds the residual, the norm
// output, fc1 and its activation (2h + 2I), gated: wi_0, act, wi_1 and the product (2h + 4I).
#include <algorithm>

#include "diffusion/config_read.hpp"
#include "diffusion/walkers.hpp"

namespace vramplan::diffusion {

namespace {

Tally clip_walk(const nlohmann::json& config, const std::string& file, const Geometry* g, bool projection) {
  const ConfigReader c(config, file);
  const std::uint64_t vocab = c.count("vocab_size"), h = c.count("hidden_size"), inter = c.count("intermediate_size");
  const std::uint64_t layers = c.count("num_hidden_layers"), heads = c.count("num_attention_heads");
  const std::uint64_t positions = c.count("max_position_embeddings");
  const std::uint64_t t = g ? g->text_tokens : 0, n = g ? g->batch : 0;
  Tally out;
  out.other(vocab * h);      // token_embedding
  out.other(positions * h);  // position_embedding
  for (std::uint64_t l = 0; l < layers; ++l) {
    out.other(2 * h);  // layer_norm1
    for (int p = 0; p < 4; ++p) out.linear(h, h, true, n * t);  // q, k, v, out_proj
    out.other(2 * h);  // layer_norm2
    out.linear(h, inter, true, n * t);
    out.linear(inter, h, true, n * t);
  }
  out.other(2 * h);  // final_layer_norm
  if (projection) out.linear(h, c.count("projection_dim"), false, n);  // pooled token only
  if (g) {
    const double dn = static_cast<double>(n), dt = static_cast<double>(t);
    out.add_flops(4.0 * dn * dt * dt * static_cast<double>(h * layers));  // QK^T and PV
    const double scores = g->eager_attention ? 2.0 * static_cast<double>(heads) * dt * dt : 0.0;
    out.live(dn * (dt * static_cast<double>(6 * h) + scores), "CLIP attention");
    out.live(dn * dt * static_cast<double>(2 * h + 2 * inter), "CLIP MLP");
  }
  return out;
}

}  // namespace

Tally walk_clip_text(const nlohmann::json& config, const std::string& file, const Geometry* g) {
  return clip_walk(config, file, g, false);
}

Tally walk_clip_text_projection(const nlohmann::json& config, const std::string& file, const Geometry* g) {
  return clip_walk(config, file, g, true);
}

namespace {

Tally t5_walk(const nlohmann::json& config, const std::string& file, const Geometry* g, bool bias_every_layer) {
  const ConfigReader c(config, file);
  const std::uint64_t vocab = c.count("vocab_size"), d = c.count("d_model"), dkv = c.count("d_kv");
  const std::uint64_t heads = c.count("num_heads"), dff = c.count("d_ff"), layers = c.count("num_layers");
  const std::uint64_t buckets = c.count("relative_attention_num_buckets", 32);
  const std::string proj = c.text("feed_forward_proj").value_or("relu");
  const bool gated = proj.rfind("gated-", 0) == 0;
  const std::uint64_t inner = heads * dkv;
  const std::uint64_t t = g ? g->text_tokens : 0, n = g ? g->batch : 0;
  Tally out;
  out.other(vocab * d);  // shared (= encoder.embed_tokens)
  for (std::uint64_t l = 0; l < layers; ++l) {
    out.linear(d, inner, false, n * t);  // q
    out.linear(d, inner, false, n * t);  // k
    out.linear(d, inner, false, n * t);  // v
    out.linear(inner, d, false, n * t);  // o
    if (l == 0 || bias_every_layer) out.other(buckets * heads);  // relative_attention_bias
    out.other(d);                            // layer[0].layer_norm
    out.linear(d, dff, false, n * t);        // wi / wi_0
    if (gated) out.linear(d, dff, false, n * t);  // wi_1
    out.linear(dff, d, false, n * t);        // wo
    out.other(d);                            // layer[1].layer_norm
  }
  out.other(d);  // final_layer_norm
  if (g) {
    const double dn = static_cast<double>(n), dt = static_cast<double>(t);
    out.add_flops(4.0 * dn * dt * dt * static_cast<double>(inner * layers));
    const double bias = static_cast<double>(heads) * dt * dt;  // position_bias, kept across layers
    out.live(dn * (dt * static_cast<double>(2 * d + 3 * inner + inner) + 3 * bias), "T5 attention");
    out.live(dn * (dt * static_cast<double>(2 * d + (gated ? 4 : 2) * dff) + bias), "T5 feed-forward");
  }
  return out;
}

}  // namespace

Tally walk_t5_encoder(const nlohmann::json& config, const std::string& file, const Geometry* g) {
  return t5_walk(config, file, g, false);
}

Tally walk_umt5_encoder(const nlohmann::json& config, const std::string& file, const Geometry* g) {
  return t5_walk(config, file, g, true);
}

}  // namespace vramplan::diffusion
