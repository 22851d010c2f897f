// Wan2.1-T2V-1.3B (diffusers WanPipeline) components: exact parameter counts from the module layout
// (hand arithmetic below) against the published checkpoint totals, and the token / decode
// geometry of the default 81 x 832 x 480 video.
// Configs: the transformer's is diffusers scripts/convert_wan_to_diffusers.py, model_type
// "Wan-T2V-1.3B" (diffusers 58eb52c0); the VAE is AutoencoderKLWan() with its __init__ defaults
// (convert_vae loads Wan2.1_VAE.pth into AutoencoderKLWan() strictly); the text encoder is
// google/umt5-xxl (convert_wan_to_diffusers.py: UMT5EncoderModel.from_pretrained("google/umt5-xxl"))
// with the fields of its config.json as published (d_model 4096, d_ff 10240, d_kv 64, num_heads
// 64, num_layers 24, vocab_size 256384, gated-gelu), not fetched here: the Hugging Face files are
// not reachable from this machine; the exact totals below confirm them.
// Published totals (the checkpoint element sums, task issue 19): transformer 1,418,996,800, UMT5
// encoder 5,680,910,336, VAE 126,892,531.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "vramplan/diffusion/component.hpp"

namespace vramplan::diffusion {
namespace {

Tally walk(const std::string& cls, const nlohmann::json& config, const Geometry* g = nullptr) {
  const ComponentClass* c = find_component_class(cls);
  EXPECT_NE(c, nullptr) << cls;
  return c->walk(config, cls + " config", g);
}

const nlohmann::json kTransformer = nlohmann::json::parse(R"({
  "_class_name": "WanTransformer3DModel", "added_kv_proj_dim": null, "attention_head_dim": 128,
  "cross_attn_norm": true, "eps": 1e-06, "ffn_dim": 8960, "freq_dim": 256, "in_channels": 16,
  "num_attention_heads": 12, "num_layers": 30, "out_channels": 16, "patch_size": [1, 2, 2],
  "qk_norm": "rms_norm_across_heads", "text_dim": 4096})");

const nlohmann::json kUmt5 = nlohmann::json::parse(R"({
  "architectures": ["UMT5EncoderModel"], "d_ff": 10240, "d_kv": 64, "d_model": 4096,
  "feed_forward_proj": "gated-gelu", "num_heads": 64, "num_layers": 24,
  "relative_attention_num_buckets": 32, "vocab_size": 256384})");

const nlohmann::json kVae = nlohmann::json::parse(R"({
  "_class_name": "AutoencoderKLWan", "attn_scales": [], "base_dim": 96, "dim_mult": [1, 2, 4, 4],
  "dropout": 0.0, "num_res_blocks": 2, "temperal_downsample": [false, true, true], "z_dim": 16})");

TEST(WanParams, TransformerIs1418996800) {
  // d = 12 x 128 = 1,536: patch_embedding Conv3d(16, 1536, 1x2x2) 16 x 4 x 1536 + 1536 = 99,840;
  // time_embedder 256 x 1536 + 1536 = 394,752 and 1536^2 + 1536 = 2,360,832; time_proj 1536 x
  // 9216 + 9216 = 14,164,992; text_embedder 4096 x 1536 + 1536 = 6,292,992 and 2,360,832;
  // per block: attn1 / attn2 2 x (4 x 2,360,832 + norm_q / norm_k 3,072) = 18,892,800, norm2
  // 3,072, ffn 1536 x 8960 + 8960 = 13,771,520 and 8960 x 1536 + 1536 = 13,764,096,
  // scale_shift_table 9,216 -> 46,440,704 x 30 = 1,393,221,120; proj_out 1536 x 64 + 64 = 98,368;
  // scale_shift_table 3,072.
  const std::uint64_t expected = 99'840ull + 394'752 + 2'360'832 + 14'164'992 + 6'292'992 + 2'360'832 +
                                 1'393'221'120 + 98'368 + 3'072;
  EXPECT_EQ(expected, 1'418'996'800ull);
  const Tally t = walk("WanTransformer3DModel", kTransformer);
  EXPECT_EQ(t.params, expected);
  EXPECT_EQ(t.buffers, 2ull * 1024 * 128);  // rope freqs_cos / freqs_sin, rope_max_seq_len x head_dim
  // nn.Linear weights (for the quantisation schemes): all but the Conv3d, norms and tables:
  // 256 x 1536 + 1536^2 + 1536 x 9216 + 4096 x 1536 + 1536^2 + 30 x (8 x 1536^2 + 2 x 1536 x
  // 8960) + 1536 x 64.
  EXPECT_EQ(t.linear_weights, 393'216ull + 2'359'296 + 14'155'776 + 6'291'456 + 2'359'296 +
                                  30ull * (8 * 2'359'296 + 2 * 13'762'560) + 98'304);
}

TEST(WanParams, Umt5XxlEncoderIs5680910336) {
  // UMT5EncoderModel: shared 256384 x 4096 = 1,050,148,864; per layer q / k / v / o 4 x 4096^2 =
  // 67,108,864, relative_attention_bias 32 x 64 = 2,048 (every layer: UMT5LayerSelfAttention),
  // gated FF 3 x 4096 x 10240 = 125,829,120, two norms 8,192 -> 192,948,224 x 24 =
  // 4,630,757,376; final_layer_norm 4,096.
  const std::uint64_t expected = 1'050'148'864ull + 4'630'757'376 + 4'096;
  EXPECT_EQ(expected, 5'680'910'336ull);
  EXPECT_EQ(walk("UMT5EncoderModel", kUmt5).params, expected);
  // The same config as a T5EncoderModel keeps one bias table: 23 x 2,048 fewer.
  EXPECT_EQ(walk("T5EncoderModel", kUmt5).params, expected - 23 * 2'048);
}

TEST(WanParams, VaeIs126892531) {
  // AutoencoderKLWan, base 96, dim_mult 1-2-4-4, a CausalConv3d k^3 x C_in x C_out + C_out, a
  // resnet norm1 (in) + conv1 + norm2 (out) + conv2 (+ 1x1x1 shortcut), a 384 resnet 7,964,160, a
  // 384 attention block 384 + 384 x 1152 + 1152 + 384^2 + 384 = 591,744.
  //  encoder: conv_in 3 -> 96 7,872; level 0 (2 resnets 96 + downsample2d 83,040) 1,079,136;
  //  level 1 (96 -> 192, downsample3d 331,968 + time_conv 110,784) 3,946,464; level 2 (192 ->
  //  384, downsample3d) 15,781,824; level 3 15,928,320; mid 2 x 7,964,160 + 591,744 = 16,520,064;
  //  norm_out + conv_out 384 -> 32 332,192 -> 53,595,872; quant_conv 1,056, post_quant_conv 272;
  //  decoder: conv_in 16 -> 384 166,272; mid 16,520,064; up 0 (3 x 384 resnets, upsample3d
  //  Conv2d 384 -> 192 663,744 + time_conv 384 -> 768 (3,1,1) 885,504) 25,441,728; up 1 (192 ->
  //  384) 23,524,992; up 2 (192, upsample2d -> 96) 6,140,256; up 3 (96) 1,494,144; norm_out +
  //  conv_out 96 -> 3 7,875 -> 73,295,331.
  EXPECT_EQ(7'872ull + 1'079'136 + 3'946'464 + 15'781'824 + 15'928'320 + 16'520'064 + 332'192, 53'595'872ull);
  EXPECT_EQ(166'272ull + 16'520'064 + 25'441'728 + 23'524'992 + 6'140'256 + 1'494'144 + 7'875, 73'295'331ull);
  EXPECT_EQ(53'595'872ull + 1'056 + 272 + 73'295'331, 126'892'531ull);
  EXPECT_EQ(walk("AutoencoderKLWan", kVae).params, 126'892'531ull);
  // The defaults alone (an empty config) are the same VAE.
  EXPECT_EQ(walk("AutoencoderKLWan", nlohmann::json::object()).params, 126'892'531ull);
  // One piece by hand: a decoder 384 resnet = 2 x 384 + 2 x (384^2 x 27 + 384) = 7,964,160.
  EXPECT_EQ(2 * 384ull + 2 * (384ull * 384 * 27 + 384), 7'964'160ull);
}

TEST(WanParams, DefaultVideoTokensAndTransformerLiveSet) {
  // WanPipeline defaults: 81 frames at 832 x 480 -> (81 - 1) / 4 + 1 = 21 latent frames of
  // 104 x 60; patch 1x2x2 -> 21 x 30 x 52 = 32,760 tokens.
  Geometry g;
  g.batch = 1;
  g.width = 832;
  g.height = 480;
  g.vae_scale = 8;
  g.frames = 21;
  g.text_tokens = 512;
  const Tally t = walk("WanTransformer3DModel", kTransformer, &g);
  // Feed-forward: S x (4 d + 2 ffn) = 32,760 x (6,144 + 17,920) = 788,336,640 elements, more than
  // attn1's 32,760 x 11 x 1,536 = 553,512,960.
  EXPECT_EQ(t.peak_elements, 788'336'640ull);
  EXPECT_EQ(t.peak_where, "WanTransformerBlock ffn");
}

TEST(WanParams, VaeDecodeHoldsTheCausalCaches) {
  // A later latent frame (4 output frames) at 832 x 480 in bf16, batch 1; p0 = 60 x 104 = 6,240.
  // Caches (2 frames of each temporal-3 conv's input), per p0: conv_in 16 x 2 = 32, mid 4 x 384 x
  // 2 = 3,072, up 0 (384 + 5 x 384) x 2 = 4,608 + time_conv 768 -> 8,480 at p0; up 1 ((192 + 5 x
  // 384) x 2 + 768) x 4 = 19,968; up 2 (192 + 5 x 192) x 2 x 16 = 36,864; up 3 (96 + 5 x 96) x 2
  // x 64 = 73,728; conv_out 96 x 2 x 64 = 12,288 -> 151,328 x 6,240 = 944,286,720.
  // Peak: up 2's upsample2d (192 -> 96, 4 frames): the input 192 x 4 x 99,840 = 76,677,120 and
  // the fp32 interpolation + its cast 3 x 192 x 4 x 399,360 = 920,125,440 -> 996,802,560 (the
  // last level's conv1, 2,496 x 399,360, ties with it).
  Geometry g;
  g.batch = 1;
  g.width = 832;
  g.height = 480;
  g.vae_scale = 8;
  g.frames = 21;
  g.act_bytes = 2;
  const Tally t = walk("AutoencoderKLWan", kVae, &g);
  EXPECT_EQ(t.peak_elements, 996'802'560ull + 944'286'720ull);
  EXPECT_EQ(t.peak_where, "VAE decoder WanResample");
}

TEST(WanParams, RejectsTheLayoutsNotBuilt) {
  nlohmann::json i2v = kTransformer;
  i2v["image_dim"] = 1280;
  EXPECT_ANY_THROW(walk("WanTransformer3DModel", i2v));
  nlohmann::json wan22 = kVae;
  wan22["is_residual"] = true;
  EXPECT_ANY_THROW(walk("AutoencoderKLWan", wan22));
}

}  // namespace
}  // namespace vramplan::diffusion
