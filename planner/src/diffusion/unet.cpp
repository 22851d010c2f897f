// UNet2DConditionModel (SD 1.x / 2.x / SDXL), from diffusers models/unets/unet_2d_condition.py
// (__init__: conv_in, time_embedding, add_embedding for addition_embed_type "text_time", down /
// mid / up blocks, conv_norm_out, conv_out), models/unets/unet_2d_blocks.py (DownBlock2D,
// CrossAttnDownBlock2D, UNetMidBlock2DCrossAttn, UpBlock2D, CrossAttnUpBlock2D and their skip
// channels), models/resnet.py (ResnetBlock2D), models/transformers/transformer_2d.py
// (Transformer2DModel: GroupNorm, proj_in / proj_out) and models/attention.py
// (BasicTransformerBlock: self-attention without q/k/v bias, cross-attention, GEGLU FeedForward).
//
// Live activations of one forward, per sample, at a level of C channels over P latent pixels:
//  * ResnetBlock2D.forward: conv_live.hpp resnet_live_per_pixel (norm1 / SiLU, each convolution
//    with its cuDNN workspace, the residual sum and division);
//  * BasicTransformerBlock: residual, norm, q, k, v, attention output (6 C) or in the GEGLU
//    feed-forward residual, norm, proj (8 C), gelu(gate) (4 C) and the product (4 C): 18 C per
//    token; eager attention adds heads x P^2 twice (scores, softmax) for self-attention;
//  * every down-block output is kept for the up path (the skip connections), so their sum is
//    added to each live set.
#include <algorithm>

#include "diffusion/config_read.hpp"
#include "diffusion/conv_live.hpp"
#include "diffusion/walkers.hpp"

namespace vramplan::diffusion {

namespace {

struct UnetWalk {
  Tally t;
  std::uint64_t temb = 0;      // time_embed_dim
  std::uint64_t cross = 0;     // cross_attention_dim
  std::uint64_t text = 0;      // conditioning tokens
  std::uint64_t batch = 0;     // 0: parameters only
  bool eager = false;
  double stash = 0;            // skip-connection elements per sample kept for the up path

  void resnet(std::uint64_t in, std::uint64_t out, std::uint64_t pixels) {
    t.other(2 * in);  // norm1
    t.conv(in, out, 3, batch * pixels);
    t.linear(temb, out, true, batch);  // time_emb_proj
    t.other(2 * out);  // norm2
    t.conv(out, out, 3, batch * pixels);
    if (in != out) t.conv(in, out, 1, batch * pixels);  // conv_shortcut
    if (batch)
      t.live(static_cast<double>(batch) * (static_cast<double>(pixels) * static_cast<double>(resnet_live_per_pixel(in, out)) + stash),
             "UNet ResnetBlock2D");
  }

  void transformer(std::uint64_t c, std::uint64_t heads, std::uint64_t layers, std::uint64_t pixels) {
    const std::uint64_t rows = batch * pixels;
    t.other(2 * c);           // norm (GroupNorm)
    t.linear(c, c, true, rows);  // proj_in (Linear, or Conv2d 1x1: the same count)
    for (std::uint64_t l = 0; l < layers; ++l) {
      t.other(2 * c);  // norm1
      t.linear(c, c, false, rows);  // attn1.to_q
      t.linear(c, c, false, rows);  // attn1.to_k
      t.linear(c, c, false, rows);  // attn1.to_v
      t.linear(c, c, true, rows);   // attn1.to_out.0
      t.other(2 * c);  // norm2
      t.linear(c, c, false, rows);  // attn2.to_q
      t.linear(cross, c, false, batch * text);  // attn2.to_k
      t.linear(cross, c, false, batch * text);  // attn2.to_v
      t.linear(c, c, true, rows);   // attn2.to_out.0
      t.other(2 * c);  // norm3
      t.linear(c, 8 * c, true, rows);  // ff.net.0.proj (GEGLU: 2 x 4C)
      t.linear(4 * c, c, true, rows);  // ff.net.2
      if (batch) {
        t.add_flops(4.0 * static_cast<double>(batch) * static_cast<double>(pixels) *
                    static_cast<double>(pixels + text) * static_cast<double>(c));
        const double p = static_cast<double>(pixels), b = static_cast<double>(batch);
        const double scores = eager ? 2.0 * static_cast<double>(heads) * p * (p + static_cast<double>(text)) : 0.0;
        t.live(b * (p * static_cast<double>(6 * c) + scores + stash), "UNet self-attention");
        t.live(b * (p * static_cast<double>(18 * c) + stash), "UNet GEGLU feed-forward");
      }
    }
    t.linear(c, c, true, rows);  // proj_out
  }
};

}  // namespace

Tally walk_unet_2d_condition(const nlohmann::json& config, const std::string& file, const Geometry* g) {
  const ConfigReader c(config, file);
  const auto channels = c.counts("block_out_channels", 0);
  const std::size_t n = channels.size();
  const auto down = c.strings("down_block_types");
  const auto up = c.strings("up_block_types");
  if (down.size() != n) c.fail("down_block_types", "expected one block per block_out_channels entry");
  if (up.size() != n) c.fail("up_block_types", "expected one block per block_out_channels entry");
  // ResnetBlock2D, Transformer2DModel.norm and conv_norm_out: nn.GroupNorm(norm_num_groups, C) on
  // block_out_channels entries (and sums of them at the up blocks' skip concatenations).
  c.group_norm("norm_num_groups", channels, 32);
  if (config.contains("sample_size") && config.at("sample_size").is_number() && c.number("sample_size", 0) == 0)
    c.fail("sample_size", "must be greater than zero (the pipeline's default height and width are sample_size x "
                          "vae_scale_factor)");
  const std::string mid = c.text("mid_block_type").value_or("UNetMidBlock2DCrossAttn");
  if (mid != "UNetMidBlock2DCrossAttn") c.fail("mid_block_type", "'" + mid + "' is not built (UNetMidBlock2DCrossAttn is)");
  for (const char* unsupported : {"class_embed_type", "encoder_hid_dim", "time_cond_proj_dim", "num_class_embeds"})
    if (config.contains(unsupported) && !config.at(unsupported).is_null())
      c.fail(unsupported, "is set: vramplan builds UNets without it (SD 1.x / 2.x / SDXL layouts)");
  const auto layers_per_block = c.counts("layers_per_block", n);
  const auto tlayers = config.contains("transformer_layers_per_block") ? c.counts("transformer_layers_per_block", n)
                                                                      : std::vector<std::uint64_t>(n, 1);
  // diffusers' naming quirk (unet_2d_condition.py __init__): num_attention_heads defaults to
  // attention_head_dim, which SD / SDXL configs use as the head count.
  const auto heads = config.contains("num_attention_heads") && !config.at("num_attention_heads").is_null()
                         ? c.counts("num_attention_heads", n)
                         : c.counts("attention_head_dim", n);

  UnetWalk w;
  w.temb = channels[0] * 4;
  w.cross = c.count("cross_attention_dim");
  if (g) {
    w.batch = g->batch;
    w.text = g->text_tokens;
    w.eager = g->eager_attention;
  }
  const std::uint64_t lh = g ? g->latent_h() : 0, lw = g ? g->latent_w() : 0;
  auto pixels_at = [&](std::size_t level) { return (lh >> level) * (lw >> level); };

  // Skip connections kept from conv_in and every down-block resnet / downsampler.
  if (g) {
    auto el = [](std::uint64_t a, std::uint64_t b) { return static_cast<double>(a) * static_cast<double>(b); };
    w.stash = el(channels[0], pixels_at(0));
    for (std::size_t i = 0; i < n; ++i) {
      w.stash += el(layers_per_block[i] * channels[i], pixels_at(i));
      if (i + 1 < n) w.stash += el(channels[i], pixels_at(i + 1));
    }
  }

  const std::uint64_t in_ch = c.count("in_channels", 4), out_ch = c.count("out_channels", 4);
  w.t.conv(in_ch, channels[0], 3, w.batch * pixels_at(0));  // conv_in
  w.t.linear(channels[0], w.temb, true, w.batch);           // time_embedding.linear_1
  w.t.linear(w.temb, w.temb, true, w.batch);                // time_embedding.linear_2
  const std::string add = c.text("addition_embed_type").value_or("");
  if (add == "text_time") {
    const std::uint64_t add_in = c.count("projection_class_embeddings_input_dim");
    w.t.linear(add_in, w.temb, true, w.batch);  // add_embedding.linear_1
    w.t.linear(w.temb, w.temb, true, w.batch);  // add_embedding.linear_2
  } else if (!add.empty()) {
    c.fail("addition_embed_type", "'" + add + "' is not built (\"text_time\" and none are)");
  }

  std::uint64_t out = channels[0];
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t before = w.t.elements();
    const std::uint64_t in = out;
    out = channels[i];
    const bool cross = down[i] == "CrossAttnDownBlock2D";
    if (!cross && down[i] != "DownBlock2D")
      c.fail("down_block_types", "'" + down[i] + "' is not built (DownBlock2D, CrossAttnDownBlock2D are)");
    for (std::uint64_t l = 0; l < layers_per_block[i]; ++l) {
      w.resnet(l == 0 ? in : out, out, pixels_at(i));
      if (cross) w.transformer(out, heads[i], tlayers[i], pixels_at(i));
    }
    if (i + 1 < n) w.t.conv(out, out, 3, w.batch * pixels_at(i + 1));  // Downsample2D
    w.t.block("down_blocks", w.t.elements() - before);
  }
  const std::uint64_t top = channels[n - 1];
  w.resnet(top, top, pixels_at(n - 1));
  w.transformer(top, heads[n - 1], tlayers[n - 1], pixels_at(n - 1));
  w.resnet(top, top, pixels_at(n - 1));

  out = channels[n - 1];
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t before = w.t.elements();
    const std::size_t level = n - 1 - i;
    const std::uint64_t prev = out;
    out = channels[level];
    const std::uint64_t skip_in = channels[level == 0 ? 0 : level - 1];
    const bool cross = up[i] == "CrossAttnUpBlock2D";
    if (!cross && up[i] != "UpBlock2D")
      c.fail("up_block_types", "'" + up[i] + "' is not built (UpBlock2D, CrossAttnUpBlock2D are)");
    const std::uint64_t resnets = layers_per_block[level] + 1;
    for (std::uint64_t l = 0; l < resnets; ++l) {
      const std::uint64_t skip = l + 1 == resnets ? skip_in : out;
      w.resnet((l == 0 ? prev : out) + skip, out, pixels_at(level));
      if (cross) w.transformer(out, heads[level], tlayers[level], pixels_at(level));
    }
    if (level > 0) w.t.conv(out, out, 3, w.batch * pixels_at(level - 1));  // Upsample2D
    w.t.block("up_blocks", w.t.elements() - before);
  }
  w.t.other(2 * channels[0]);                                 // conv_norm_out
  w.t.conv(channels[0], out_ch, 3, w.batch * pixels_at(0));  // conv_out
  return w.t;
}

}  // namespace vramplan::diffusion
