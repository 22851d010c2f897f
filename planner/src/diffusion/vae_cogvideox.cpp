// AutoencoderKLCogVideoX (diffusers models/autoencoders/autoencoder_kl_cogvideox.py, read at
// diffusers 58eb52c0): a 3-D causal VAE. Parameters: CogVideoXCausalConv3d = Conv3d k x k x k;
// CogVideoXResnetBlock3D = norm1, conv1, norm2, conv2 (+ a 1x1x1 conv_shortcut when the channels
// change), its norms GroupNorm in the encoder and CogVideoXSpatialNorm3D in the decoder
// (GroupNorm + conv_y + conv_b, 1x1x1 convs from the latent channels); temb_channels 0 (no
// temb_proj); CogVideoXDownsample3D / CogVideoXUpsample3D a Conv2d 3 x 3 (models/downsampling.py,
// upsampling.py); encoder: conv_in, down blocks of layers_per_block resnets, mid block (2 resnets),
// norm_out, conv_out to 2 x latent; decoder: conv_in, mid block, up blocks of layers_per_block + 1
// resnets, norm_out (spatial), conv_out; quant convs only with use_quant_conv / use_post_quant_conv.
//
// Decode (_decode): the latent frames go through the decoder num_latent_frames_batch_size = 2 at a
// time (the first chunk takes the odd remainder too), every causal conv keeping a conv_cache for
// the next chunk; the first log2(temporal_compression_ratio) up blocks double the frames
// (CogVideoXUpsample3D compress_time: an odd count keeps its first frame: 3 -> 5 -> 9, 2 -> 4 -> 8).
// Live set of one chunk (inference: a tensor goes with its last Python reference), per output
// frame x pixel of the stage:
//  * CogVideoXSpatialNorm3D.forward: the block's input, zq interpolated to the frame size (latent
//    channels), conv_y's and conv_b's outputs, GroupNorm's output, the product and the sum:
//    6 C + latent;
//  * the causal conv: the caller's input and SiLU output, the padded copy (torch.cat with the two
//    cached frames), its output and the cuDNN workspace taken as NHWC copies of input and output
//    (conv_live.hpp);
//  * CogVideoXUpsample3D: the caller's input, F.interpolate's copy (x4 pixels, x2 frames with
//    compress_time), the conv output and its workspace;
//  * conv caches: each k = 3 conv clones its padded input's last 2 frames; each k = 1 conv of a
//    spatial norm clones its whole input (inputs[:, :, 0:]: kernel 1 leaves -k + 1 = 0), the
//    interpolated zq; the new caches grow through the chunk while the previous chunk's stay
//    referenced by _decode until the decoder returns.
// The peak is the first resnet of the last up block (the first chunk's 9 frames at full size).
#include <algorithm>
#include <cmath>

#include "diffusion/config_read.hpp"
#include "diffusion/conv_live.hpp"
#include "diffusion/walkers.hpp"

namespace vramplan::diffusion {

namespace {

//! Frames after one compress_time upsample (CogVideoXUpsample3D.forward).
std::uint64_t frames_up(std::uint64_t f) { return f > 1 ? (f % 2 ? 1 + 2 * (f - 1) : 2 * f) : 1; }

struct ChunkWalk {
  Tally t;               // FLOPs and live sets (parameters are walked separately)
  double batch = 0;
  std::uint64_t zq = 16; // latent channels (the spatial norms' zq)
  double cache_old = 0;  // the previous chunk's conv caches (elements)
  double cache = 0;      // this chunk's so far
  bool live = false;

  void at(double elements, const char* where) {
    if (live) t.live(batch * elements + cache + cache_old, where);
  }
  void causal_conv(std::uint64_t in, std::uint64_t out, std::uint64_t k, double frames, double pixels,
                   double held) {
    t.conv(in, out, k, static_cast<std::uint64_t>(batch * frames * pixels), k);
    const double padded = static_cast<double>(in) * (frames + static_cast<double>(k - 1)) * pixels;
    at(held + padded + static_cast<double>(out) * frames * pixels +
           static_cast<double>(conv_workspace(in, out)) * frames * pixels,
       "VAE decoder causal conv");
    cache += batch * static_cast<double>(in) * (k == 1 ? frames : static_cast<double>(k - 1)) * pixels;
  }
  void spatial_norm(std::uint64_t c, double frames, double pixels, double held) {
    causal_conv(zq, c, 1, frames, pixels, held);  // conv_y
    causal_conv(zq, c, 1, frames, pixels, held);  // conv_b
    at(held + static_cast<double>(6 * c + zq) * frames * pixels, "VAE decoder CogVideoXSpatialNorm3D");
  }
  void resnet(std::uint64_t in, std::uint64_t out, double frames, double pixels) {
    const double fp = frames * pixels, ci = static_cast<double>(in), co = static_cast<double>(out);
    spatial_norm(in, frames, pixels, 0);                       // the input is counted in 6 C
    causal_conv(in, out, 3, frames, pixels, 2 * ci * fp);      // input + SiLU output
    spatial_norm(out, frames, pixels, ci * fp);                // input held
    causal_conv(out, out, 3, frames, pixels, (ci + co) * fp);  // input + SiLU output
    if (in != out) {                                           // conv_shortcut (1x1x1, not causal)
      t.conv(in, out, 1, static_cast<std::uint64_t>(batch * fp), 1);
      at((ci + co + co + static_cast<double>(conv_workspace(in, out))) * fp, "VAE decoder conv_shortcut");
    }
    at((ci + 3 * co) * fp, "VAE decoder residual sum");
  }
  void upsample(std::uint64_t c, double frames_in, double frames_out, double pixels_in) {
    const double p_out = 4 * pixels_in, ch = static_cast<double>(c);
    t.conv(c, c, 3, static_cast<std::uint64_t>(batch * frames_out * p_out));
    // The caller's input, the interpolated copy, the conv output and its workspace (2 c); the
    // extra torch.cat / reshape copies of a compress_time upsample sit at the lower resolutions
    // and are not counted.
    at(ch * frames_in * pixels_in + ch * frames_out * p_out * 4, "VAE decoder CogVideoXUpsample3D");
  }
};

}  // namespace

Tally walk_autoencoder_kl_cogvideox(const nlohmann::json& config, const std::string& file, const Geometry* g) {
  const ConfigReader c(config, file);
  const auto ch = c.counts("block_out_channels", 0);
  const std::size_t n = ch.size();
  const std::uint64_t lpb = c.count("layers_per_block", 3), in_ch = c.count("in_channels", 3);
  const std::uint64_t out_ch = c.count("out_channels", 3), latent = c.count("latent_channels", 16);
  const std::uint64_t tcr = c.count("temporal_compression_ratio", 4);
  const std::uint64_t levels = static_cast<std::uint64_t>(std::log2(static_cast<double>(tcr)));
  // CogVideoXResnetBlock3D / CogVideoXSpatialNorm3D / norm_out: nn.GroupNorm(norm_num_groups, C)
  // on block_out_channels entries (autoencoder_kl_cogvideox.py).
  c.group_norm("norm_num_groups", ch, 32);
  for (const auto& b : c.strings("down_block_types"))
    if (b != "CogVideoXDownBlock3D") c.fail("down_block_types", "'" + b + "' is not built");
  for (const auto& b : c.strings("up_block_types"))
    if (b != "CogVideoXUpBlock3D") c.fail("up_block_types", "'" + b + "' is not built");

  // Parameters.
  Tally t;
  auto resnet_params = [&](std::uint64_t in, std::uint64_t out, bool spatial) {
    auto norm = [&](std::uint64_t ch_) {
      t.other(2 * ch_);
      if (spatial) {
        t.conv(latent, ch_, 1, 0, 1);
        t.conv(latent, ch_, 1, 0, 1);
      }
    };
    norm(in);
    t.conv(in, out, 3, 0, 3);
    norm(out);
    t.conv(out, out, 3, 0, 3);
    if (in != out) t.conv(in, out, 1, 0, 1);
  };
  t.conv(in_ch, ch[0], 3, 0, 3);  // encoder.conv_in
  std::uint64_t out = ch[0];
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t prev = out;
    out = ch[i];
    for (std::uint64_t l = 0; l < lpb; ++l) resnet_params(l == 0 ? prev : out, out, false);
    if (i + 1 < n) t.conv(out, out, 3);  // CogVideoXDownsample3D
  }
  for (int r = 0; r < 2; ++r) resnet_params(ch[n - 1], ch[n - 1], false);
  t.other(2 * ch[n - 1]);                    // encoder.norm_out
  t.conv(ch[n - 1], 2 * latent, 3, 0, 3);    // encoder.conv_out
  if (c.flag("use_quant_conv", false)) t.conv(2 * out_ch, 2 * out_ch, 1, 0, 1);
  if (c.flag("use_post_quant_conv", false)) t.conv(out_ch, out_ch, 1, 0, 1);
  t.conv(latent, ch[n - 1], 3, 0, 3);  // decoder.conv_in
  for (int r = 0; r < 2; ++r) resnet_params(ch[n - 1], ch[n - 1], true);
  out = ch[n - 1];
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t prev = out;
    out = ch[n - 1 - i];
    for (std::uint64_t l = 0; l <= lpb; ++l) resnet_params(l == 0 ? prev : out, out, true);
    if (i + 1 < n) t.conv(out, out, 3);  // CogVideoXUpsample3D
  }
  t.other(2 * ch[0]);                    // decoder.norm_out (spatial)
  t.conv(latent, ch[0], 1, 0, 1);
  t.conv(latent, ch[0], 1, 0, 1);
  t.conv(ch[0], out_ch, 3, 0, 3);        // decoder.conv_out
  if (!g) return t;

  // Decode: the chunks of _decode, each through the decoder.
  const std::uint64_t frames = g->frames;
  const std::uint64_t num_batches = std::max<std::uint64_t>(frames / 2, 1), rem = frames % 2;
  const double p0 = static_cast<double>(g->latent_h() * g->latent_w());
  double cache_prev = 0;
  for (std::uint64_t k = 0; k < num_batches; ++k) {
    const std::uint64_t f = frames < 2 ? frames : (k == 0 ? 2 + rem : 2);
    ChunkWalk w;
    w.batch = static_cast<double>(g->batch);
    w.zq = latent;
    w.cache_old = cache_prev;
    w.live = k < 2;  // the first chunk is the largest; the second is the first to hold an old cache
    double fr = static_cast<double>(f), px = p0;
    w.causal_conv(latent, ch[n - 1], 3, fr, px, 0);  // conv_in
    for (int r = 0; r < 2; ++r) w.resnet(ch[n - 1], ch[n - 1], fr, px);
    out = ch[n - 1];
    std::uint64_t fi = f;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t prev = out;
      out = ch[n - 1 - i];
      for (std::uint64_t l = 0; l <= lpb; ++l) w.resnet(l == 0 ? prev : out, out, fr, px);
      if (i + 1 < n) {
        const std::uint64_t fo = i < levels ? frames_up(fi) : fi;
        w.upsample(out, fr, static_cast<double>(fo), px);
        fi = fo;
        fr = static_cast<double>(fo);
        px *= 4;
      }
    }
    w.spatial_norm(ch[0], fr, px, 0);
    w.causal_conv(ch[0], out_ch, 3, fr, px, 2 * static_cast<double>(ch[0]) * fr * px);
    t.add_flops(w.t.flops);
    t.live(static_cast<double>(w.t.peak_elements), w.t.peak_where);
    cache_prev = w.cache;
  }
  return t;
}

}  // namespace vramplan::diffusion
