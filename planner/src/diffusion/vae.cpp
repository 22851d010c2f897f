// AutoencoderKL, from diffusers models/autoencoders/autoencoder_kl.py (__init__: encoder, decoder,
// quant_conv / post_quant_conv per use_quant_conv / use_post_quant_conv) and
// models/autoencoders/vae.py (Encoder: conv_in, DownEncoderBlock2D x n with a Downsample2D conv
// except the last, UNetMidBlock2D (resnet, single-head Attention with GroupNorm, resnet),
// conv_norm_out and conv_out on the LAST block's channels, 2 x latent out (double_z); Decoder:
// conv_in, the mid block, UpDecoderBlock2D x n of layers_per_block + 1 resnets with an
// Upsample2D conv except the last, conv_norm_out / conv_out on the first block's channels).
//
// A Geometry walks the decoder only (text-to-image decodes, never encodes). Live activations per
// image at a stage of P output pixels (inference: a tensor goes with its last Python reference):
//  * ResnetBlock2D.forward (models/resnet.py): conv_live.hpp resnet_live_per_pixel, each
//    convolution with its cuDNN workspace (NHWC copies of input and output);
//  * Upsample2D.forward (models/upsampling.py): the caller (UpDecoderBlock2D.forward) keeps the
//    input, F.interpolate's copy at 4x the pixels is the conv's input, then the conv output and its
//    workspace: C (P_in + 4 P_out). (The bf16 -> fp32 cast around the interpolation applies only
//    before torch 2.1.)
//  * the mid-block Attention (AttnProcessor2_0) residual, norm, q, k, v and the output (6 C) and,
//    eager, the P x P score matrix and its softmax;
//  * Decoder.forward's tail: conv_norm_out, conv_act (each frees its input on return), conv_out
//    with its workspace: 2 (C_0 + out_channels).
// With 128-256-512-512 channels the peak is the last up block's first resnet (256 -> 128, full
// resolution): conv1 holds 256 + 256 + 128 + (256 + 128) workspace = 1,024 channels per pixel; the
// 256-channel Upsample2D before it holds 64 + 4 x 256 = 1,088 at the same pixels.
#include <algorithm>
#include <vector>

#include "diffusion/config_read.hpp"
#include "diffusion/conv_live.hpp"
#include "diffusion/walkers.hpp"

namespace vramplan::diffusion {

namespace {

struct VaeWalk {
  Tally t;
  std::uint64_t batch = 0;
  bool eager = false;
  bool decoding = false;  // live sets / FLOPs only for the decoder

  void resnet(std::uint64_t in, std::uint64_t out, std::uint64_t pixels) {
    const std::uint64_t rows = decoding ? batch * pixels : 0;
    t.other(2 * in);
    t.conv(in, out, 3, rows);
    t.other(2 * out);
    t.conv(out, out, 3, rows);
    if (in != out) t.conv(in, out, 1, rows);
    if (decoding && batch)
      t.live(static_cast<double>(batch) * static_cast<double>(pixels) * static_cast<double>(resnet_live_per_pixel(in, out)),
             "VAE decoder ResnetBlock2D");
  }
  void attention(std::uint64_t c, std::uint64_t pixels) {
    const std::uint64_t rows = decoding ? batch * pixels : 0;
    t.other(2 * c);  // group_norm
    for (int p = 0; p < 4; ++p) t.linear(c, c, true, rows);  // to_q, to_k, to_v, to_out.0
    if (decoding && batch) {
      t.add_flops(4.0 * static_cast<double>(batch) * static_cast<double>(pixels) * static_cast<double>(pixels) *
                  static_cast<double>(c));
      const double p = static_cast<double>(pixels);
      t.live(static_cast<double>(batch) * (p * static_cast<double>(6 * c) + (eager ? 2.0 * p * p : 0.0)), "VAE mid-block attention");
    }
  }
  void mid(std::uint64_t c, std::uint64_t pixels, bool attn) {
    resnet(c, c, pixels);
    if (attn) attention(c, pixels);
    resnet(c, c, pixels);
  }
};

}  // namespace

Tally walk_autoencoder_kl(const nlohmann::json& config, const std::string& file, const Geometry* g) {
  const ConfigReader c(config, file);
  const auto ch = c.counts("block_out_channels", 0);
  const std::size_t n = ch.size();
  const std::uint64_t lpb = c.count("layers_per_block", 1);
  const std::uint64_t in_ch = c.count("in_channels", 3), out_ch = c.count("out_channels", 3);
  const std::uint64_t latent = c.count("latent_channels", 4);
  const bool quant = c.flag("use_quant_conv", true), post_quant = c.flag("use_post_quant_conv", true);
  const bool mid_attn = c.flag("mid_block_add_attention", true);
  const auto down_types = c.strings("down_block_types"), up_types = c.strings("up_block_types");
  for (const auto& b : down_types)
    if (b != "DownEncoderBlock2D") c.fail("down_block_types", "'" + b + "' is not built (DownEncoderBlock2D is)");
  for (const auto& b : up_types)
    if (b != "UpDecoderBlock2D") c.fail("up_block_types", "'" + b + "' is not built (UpDecoderBlock2D is)");
  // vae.py Encoder / Decoder build one block per *_block_types entry on block_out_channels[i] and
  // the mid block on block_out_channels[-1]: any other count leaves the channels unmatched.
  if (down_types.size() != n) c.fail("down_block_types", "expected one block per block_out_channels entry");
  if (up_types.size() != n) c.fail("up_block_types", "expected one block per block_out_channels entry");
  // ResnetBlock2D norm1 / norm2, the mid-block Attention's group_norm and conv_norm_out are
  // nn.GroupNorm(norm_num_groups, <a block_out_channels entry>) (vae.py, resnet.py).
  c.group_norm("norm_num_groups", ch, 32);
  // AutoencoderKL.__init__ reads sample_size as the tile size (an int or a [h, w] pair).
  if (config.contains("sample_size") && config.at("sample_size").is_number() && c.number("sample_size", 0) == 0)
    c.fail("sample_size", "must be greater than zero (AutoencoderKL's tile size in pixels)");

  VaeWalk w;
  // Encoder (parameters only).
  w.t.conv(in_ch, ch[0], 3);
  std::uint64_t out = ch[0];
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t in = out;
    out = ch[i];
    for (std::uint64_t l = 0; l < lpb; ++l) w.resnet(l == 0 ? in : out, out, 0);
    if (i + 1 < n) w.t.conv(out, out, 3);  // Downsample2D
  }
  w.mid(ch[n - 1], 0, mid_attn);
  w.t.other(2 * ch[n - 1]);                // conv_norm_out
  w.t.conv(ch[n - 1], 2 * latent, 3);      // conv_out (double_z)
  if (quant) w.t.conv(2 * latent, 2 * latent, 1);

  // Decoder.
  if (g) {
    w.batch = g->batch;
    w.eager = g->eager_attention;
    w.decoding = true;
  }
  const std::uint64_t lh = g ? g->latent_h() : 0, lw = g ? g->latent_w() : 0;
  auto pixels_up = [&](std::size_t doublings) { return (lh << doublings) * (lw << doublings); };
  if (post_quant) w.t.conv(latent, latent, 1, w.batch * pixels_up(0));
  const std::uint64_t decoder_start = w.t.elements();
  std::vector<std::uint64_t> up_blocks;  // Decoder.up_blocks (an nn.ModuleList), for group offloading
  w.t.conv(latent, ch[n - 1], 3, w.batch * pixels_up(0));
  w.mid(ch[n - 1], pixels_up(0), mid_attn);
  out = ch[n - 1];
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t before = w.t.elements();
    const std::uint64_t prev = out;
    out = ch[n - 1 - i];
    for (std::uint64_t l = 0; l <= lpb; ++l) w.resnet(l == 0 ? prev : out, out, pixels_up(i));
    if (i + 1 < n) {
      w.t.conv(out, out, 3, w.batch * pixels_up(i + 1));  // Upsample2D conv
      if (g) {
        // Caller's input, the interpolated copy, the conv output and the conv's workspace.
        const double p_in = static_cast<double>(pixels_up(i)), p_out = static_cast<double>(pixels_up(i + 1));
        const double chan = static_cast<double>(out);
        w.t.live(static_cast<double>(w.batch) *
                     (chan * p_in + 2 * chan * p_out + static_cast<double>(conv_workspace(out, out)) * p_out),
                 "VAE decoder Upsample2D");
      }
    }
    up_blocks.push_back(w.t.elements() - before);
  }
  const std::uint64_t full = pixels_up(n - 1);
  w.t.other(2 * ch[0]);                         // conv_norm_out
  w.t.conv(ch[0], out_ch, 3, w.batch * full);   // conv_out
  if (g)
    w.t.live(static_cast<double>(w.batch) * static_cast<double>(full) *
                 static_cast<double>(2 * ch[0] + out_ch + conv_workspace(ch[0], out_ch)),
             "VAE decoder conv_out");
  // AutoencoderKL._group_offload_block_modules names the decoder: its up_blocks are the groups.
  for (const auto b : up_blocks) w.t.block("decoder.up_blocks", b, w.t.elements() - decoder_start);
  return w.t;
}

}  // namespace vramplan::diffusion
