// AutoencoderKLWan (diffusers models/autoencoders/autoencoder_kl_wan.py, read at diffusers
// 58eb52c0), the Wan 2.1 layout (is_residual false, patch_size null):
//  * WanCausalConv3d = nn.Conv3d (k_t x k x k, bias); WanRMS_norm a gamma of C (bias=False);
//  * WanResidualBlock(in, out): norm1 (in), conv1 3x3x3 in -> out, norm2 (out), conv2 3x3x3,
//    conv_shortcut 1x1x1 when in != out;
//  * WanAttentionBlock(C): norm (C), to_qkv Conv2d(C, 3 C, 1), proj Conv2d(C, C, 1) (one head);
//  * WanResample: downsample2d = Conv2d(C, C, 3, stride 2); downsample3d adds time_conv
//    WanCausalConv3d(C, C, (3, 1, 1)); upsample2d = Conv2d(C, upsample_out_dim = C / 2, 3);
//    upsample3d adds time_conv WanCausalConv3d(C, 2 C, (3, 1, 1));
//  * WanEncoder3d: dims = base_dim x [1] + dim_mult; conv_in (3 -> dims[0]); per level
//    num_res_blocks resnets (+ attention at attn_scales) and a resample except after the last
//    (downsample3d where temperal_downsample); mid block (resnet, attention, resnet); norm_out,
//    conv_out -> 2 z_dim; quant_conv 1x1x1 2 z -> 2 z, post_quant_conv z -> z;
//  * WanDecoder3d: dims = decoder_base_dim x [dim_mult[-1]] + reversed(dim_mult); conv_in z ->
//    dims[0]; mid block; per level WanUpBlock(in_dim = dims[i] (halved for i > 0: the previous
//    upsample's C / 2), out_dim = dims[i + 1]) of num_res_blocks + 1 resnets and an upsample
//    except after the last (upsample3d where temperal_upsample = reversed temperal_downsample);
//    norm_out, conv_out -> 3.
//
// Decode (AutoencoderKLWan._decode, no tiling): post_quant_conv over all latent frames, then the
// decoder one latent frame at a time (for i in range(num_frame)) with feat_cache: every causal
// conv with a temporal kernel of 3 pads its input with the 2 frames cached from the previous
// chunk (CACHE_T = 2: cache_x = x[:, :, -CACHE_T:].clone()) and keeps the new 2 frames until the
// next chunk; upsample3d's time_conv doubles the frames except in the first chunk
// (first_chunk: feat_cache "Rep"), so chunk 0 gives 1 frame and each later chunk 4
// (1 + 4 x (21 - 1) = 81). Each chunk's frames are appended with torch.cat to `out`; the
// decoded video `out` is the caller's (the plan keeps the decoded frames).
// Live set of a later chunk (4 output frames), per frame x pixel of the stage, the caller holding
// the block's input: a resnet's conv1 holds the input, the shortcut (out, when in != out), the
// SiLU output, the padded copy (in x (F + 2) frames), the conv output and the cuDNN workspace
// (conv_live.hpp: in + out); conv2 the same with out channels; an upsample holds its input,
// F.interpolate's fp32 result (WanUpsample: x.float(), 2 elements of a 16-bit activation width)
// with its cast, or else the Conv2d's input, output and workspace, whichever is more. The conv caches: 2 frames of every
// temporal-3 conv's input at its resolution, all held across chunks.
#include <algorithm>
#include <vector>

#include "diffusion/config_read.hpp"
#include "diffusion/conv_live.hpp"
#include "diffusion/walkers.hpp"

namespace vramplan::diffusion {

namespace {

struct WanDecodeWalk {
  Tally t;
  double batch = 0;
  double cache = 0;  // elements of the conv caches (per sample), held across chunks
  double upcast_units = 3;  // WanUpsample's fp32 copy + cast, in activation elements (1 in fp32)

  void at(double elements, const char* where) { t.live(batch * (elements + cache), where); }
  void causal3(std::uint64_t in, std::uint64_t out, double frames, double px, double held, std::uint64_t k) {
    t.conv(in, out, k, static_cast<std::uint64_t>(batch * frames * px), 3);
    const double ci = static_cast<double>(in), co = static_cast<double>(out);
    at(held + ci * (frames + 2) * px + co * frames * px + static_cast<double>(conv_workspace(in, out)) * frames * px,
       "VAE decoder WanCausalConv3d");
  }
  void resnet(std::uint64_t in, std::uint64_t out, double f, double px) {
    const double fp = f * px, ci = static_cast<double>(in), co = static_cast<double>(out);
    const double sc = in != out ? co * fp : 0;
    if (in != out) t.conv(in, out, 1, static_cast<std::uint64_t>(batch * fp), 1);
    causal3(in, out, f, px, ci * fp + sc + ci * fp, 3);  // input, shortcut, SiLU output
    causal3(out, out, f, px, ci * fp + sc + co * fp, 3);
  }
  void upsample(std::uint64_t c, std::uint64_t out, bool temporal, double f_in, double f_out, double px) {
    const double ch = static_cast<double>(c);
    if (temporal && f_out > f_in)  // time_conv C -> 2 C, then the frames interleaved (f x 2)
      causal3(c, 2 * c, f_in, px, ch * f_in * px, 1);
    const double p_out = 4 * px, up = ch * f_out * p_out;
    t.conv(c, out, 3, static_cast<std::uint64_t>(batch * f_out * p_out));
    // WanUpsample: interpolate(x.float()).type_as(x): in a 16-bit VAE the fp32 result (2 units)
    // and its cast (1) are live together; in fp32 both are the one tensor. Then the Conv2d: the
    // upsampled input, its output and the workspace.
    const double conv = up + static_cast<double>(out + conv_workspace(c, out)) * f_out * p_out;
    at(ch * f_out * px + std::max(up * upcast_units, conv), "VAE decoder WanResample");
  }
};

}  // namespace

Tally walk_autoencoder_kl_wan(const nlohmann::json& config, const std::string& file, const Geometry* g) {
  const ConfigReader c(config, file);
  const std::uint64_t base = c.count("base_dim", 96), z = c.count("z_dim", 16);
  const std::uint64_t dec_base = std::max<std::uint64_t>(c.number("decoder_base_dim", base), 1);
  const auto mult = config.contains("dim_mult") ? c.counts("dim_mult", 0) : std::vector<std::uint64_t>{1, 2, 4, 4};
  const std::uint64_t nrb = c.count("num_res_blocks", 2);
  const std::uint64_t in_ch = c.count("in_channels", 3), out_ch = c.count("out_channels", 3);
  std::vector<bool> tdown{false, true, true};
  if (config.contains("temperal_downsample") && config.at("temperal_downsample").is_array()) {
    tdown.clear();
    for (const auto& e : config.at("temperal_downsample")) {
      if (!e.is_boolean()) c.fail("temperal_downsample", "expected a list of true / false");
      tdown.push_back(e.get<bool>());
    }
  }
  const std::size_t n = mult.size();
  if (n < 2 || tdown.size() + 1 < n) c.fail("temperal_downsample", "needs one entry per level but the last");
  if (c.flag("is_residual", false)) c.fail("is_residual", "the Wan 2.2 residual VAE is not built");
  if (config.contains("patch_size") && !config.at("patch_size").is_null()) c.fail("patch_size", "not built (Wan 2.2)");
  if (config.contains("attn_scales") && config.at("attn_scales").is_array() && !config.at("attn_scales").empty())
    c.fail("attn_scales", "attention in the down / up levels is not built");

  Tally t;
  auto resnet = [&](std::uint64_t in, std::uint64_t out) {
    t.other(in);              // norm1 gamma
    t.conv(in, out, 3, 0, 3); // conv1
    t.other(out);             // norm2 gamma
    t.conv(out, out, 3, 0, 3);
    if (in != out) t.conv(in, out, 1, 0, 1);  // conv_shortcut
  };
  auto attention = [&](std::uint64_t ch) {
    t.other(ch);             // norm gamma
    t.conv(ch, 3 * ch, 1);   // to_qkv
    t.conv(ch, ch, 1);       // proj
  };
  std::vector<std::uint64_t> dims{base};
  for (const auto m : mult) dims.push_back(base * m);
  t.conv(in_ch, dims[0], 3, 0, 3);  // encoder.conv_in
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t in = dims[i];
    for (std::uint64_t r = 0; r < nrb; ++r, in = dims[i + 1]) resnet(in, dims[i + 1]);
    if (i + 1 < n) {
      t.conv(dims[i + 1], dims[i + 1], 3);                          // resample Conv2d, stride 2
      if (tdown[i]) t.conv(dims[i + 1], dims[i + 1], 1, 0, 3);      // time_conv (3, 1, 1), stride 2
    }
  }
  const std::uint64_t top = dims[n];
  resnet(top, top);
  attention(top);
  resnet(top, top);             // encoder.mid_block
  t.other(top);                 // encoder.norm_out
  t.conv(top, 2 * z, 3, 0, 3);  // encoder.conv_out
  t.conv(2 * z, 2 * z, 1, 0, 1);  // quant_conv
  t.conv(z, z, 1, 0, 1);          // post_quant_conv

  std::vector<std::uint64_t> ddims{dec_base * mult[n - 1]};
  for (std::size_t i = n; i-- > 0;) ddims.push_back(dec_base * mult[i]);
  std::vector<bool> tup(tdown.rbegin(), tdown.rend());  // temperal_upsample
  const std::uint64_t decoder_start = t.elements();
  std::vector<std::uint64_t> up_blocks;  // WanDecoder3d.up_blocks (an nn.ModuleList), for group offloading
  t.conv(z, ddims[0], 3, 0, 3);  // decoder.conv_in
  resnet(ddims[0], ddims[0]);
  attention(ddims[0]);
  resnet(ddims[0], ddims[0]);    // decoder.mid_block
  std::vector<std::uint64_t> up_in(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t before = t.elements();
    up_in[i] = i > 0 ? ddims[i] / 2 : ddims[i];
    std::uint64_t in = up_in[i];
    for (std::uint64_t r = 0; r <= nrb; ++r, in = ddims[i + 1]) resnet(in, ddims[i + 1]);
    if (i + 1 < n) {
      t.conv(ddims[i + 1], ddims[i + 1] / 2, 3);                   // resample Conv2d -> C / 2
      if (tup[i]) t.conv(ddims[i + 1], 2 * ddims[i + 1], 1, 0, 3); // time_conv (3, 1, 1) C -> 2 C
    }
    up_blocks.push_back(t.elements() - before);
  }
  t.other(ddims[n]);                   // decoder.norm_out
  t.conv(ddims[n], out_ch, 3, 0, 3);   // decoder.conv_out
  // AutoencoderKLWan._group_offload_block_modules names the decoder: its up_blocks are the groups.
  for (const auto b : up_blocks) t.block("decoder.up_blocks", b, t.elements() - decoder_start);
  if (!g) return t;

  // Decode: chunk 0 (1 frame out) and a later chunk (4 frames out), each latent frame alone.
  const double p0 = static_cast<double>(g->latent_h() * g->latent_w());
  const std::uint64_t chunks = std::max<std::uint64_t>(g->frames, 1);
  WanDecodeWalk w;
  w.batch = static_cast<double>(g->batch);
  w.upcast_units = g->act_bytes >= 4 ? 1 : 3;
  for (std::uint64_t k = 0; k < std::min<std::uint64_t>(chunks, 2); ++k) {
    const bool first = k == 0;
    // The caches: 2 frames (1 in the first chunk) of each temporal-3 conv's input, kept.
    double cache = 0, px = p0;
    const double cf = first ? 1 : 2;
    cache += static_cast<double>(z) * cf * px;                         // conv_in
    cache += 4 * static_cast<double>(ddims[0]) * cf * px;              // mid resnets (2 convs each)
    for (std::size_t i = 0; i < n; ++i) {
      cache += static_cast<double>(up_in[i] + (2 * nrb + 1) * ddims[i + 1]) * cf * px;
      if (i + 1 < n) {
        if (tup[i]) cache += static_cast<double>(ddims[i + 1]) * cf * px;  // time_conv
        px *= 4;
      }
    }
    cache += static_cast<double>(ddims[n]) * cf * px;  // conv_out
    w.cache = first ? 0 : cache;  // chunk 0 fills them as it goes; a later chunk holds them all
    double f = 1;
    px = p0;
    w.causal3(z, ddims[0], f, px, 0, 3);  // conv_in
    w.resnet(ddims[0], ddims[0], f, px);
    {
      const double ch = static_cast<double>(ddims[0]);
      w.t.conv(ddims[0], 3 * ddims[0], 1, static_cast<std::uint64_t>(w.batch * f * px));
      w.t.conv(ddims[0], ddims[0], 1, static_cast<std::uint64_t>(w.batch * f * px));
      w.t.add_flops(4.0 * w.batch * f * px * px * ch);  // one-head SDPA per frame
      const double scores = g->eager_attention ? 2.0 * f * px * px : 0.0;
      w.at(ch * f * px * 6 + scores, "VAE decoder WanAttentionBlock");  // input, norm, qkv (3), out
    }
    w.resnet(ddims[0], ddims[0], f, px);
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t in = up_in[i];
      for (std::uint64_t r = 0; r <= nrb; ++r, in = ddims[i + 1]) w.resnet(in, ddims[i + 1], f, px);
      if (i + 1 < n) {
        const double fo = tup[i] && !first ? 2 * f : f;
        w.upsample(ddims[i + 1], ddims[i + 1] / 2, tup[i], f, fo, px);
        f = fo;
        px *= 4;
      }
    }
    const double ch = static_cast<double>(ddims[n]);
    w.causal3(ddims[n], out_ch, f, px, 2 * ch * f * px, 3);  // conv_out after norm_out + SiLU
    if (first) t.add_flops(w.t.flops);
  }
  // Every later chunk costs the same FLOPs as the second.
  if (chunks > 1) {
    const double later = w.t.flops - t.flops;
    t.add_flops(later * static_cast<double>(chunks - 1));
  }
  t.live(static_cast<double>(w.t.peak_elements), w.t.peak_where);
  return t;
}

}  // namespace vramplan::diffusion
