// Diffusion memory (diffusion/diffusion_plan.cpp): stage totals against hand-computed bytes.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/diffusion/diffusion_plan.hpp"
#include "diffusion/conv_live.hpp"

namespace vramplan::diffusion {
namespace {

DiffusionPlan plan(DiffusionRequest r) { return plan_diffusion(r, test::source_root()); }

DiffusionRequest request(const std::string& model, std::uint64_t batch = 1) {
  DiffusionRequest r;
  r.model = model;
  r.gpu = "h100-sxm-80";
  r.batch = batch;
  return r;
}

// FLUX.1-dev parameters: T5 4,762,310,656 + CLIP-L 123,060,480 + transformer 11,901,408,320 +
// VAE 83,819,683 = 16,870,599,139, bf16 -> 33,741,198,278 bytes.
constexpr std::uint64_t kFluxWeights = 16'870'599'139ull * 2;
// Carried between stages at 1024x1024, one image: prompt embeddings 512 x 4096 x 2 B = 4,194,304;
// latents 16 x 128 x 128 x 4 B = 1,048,576.
constexpr std::uint64_t kFluxCarried = 4'194'304ull + 1'048'576;
// VAE decode of one 1024x1024 image: the last Upsample2D (256 channels, 512^2 -> 1024^2) holds
// the caller's input 256 x 512^2 + the interpolated copy and the conv output 2 x 256 x 1024^2 +
// the conv's workspace (NHWC copies of input and output) 2 x 256 x 1024^2 = 67,108,864 +
// 1,073,741,824 = 1,140,850,688 elements (1,088 channels at full resolution; the next resnet's
// conv1 holds 256 + 256 + 128 + 384 = 1,024), bf16 -> 2,281,701,376 B; the decoded image
// 3 x 1024^2 x 2 B = 6,291,456 B is kept.
constexpr std::uint64_t kFluxDecodePerImage = 1'140'850'688ull * 2;
constexpr std::uint64_t kImage = 3ull * 1024 * 1024 * 2;

TEST(DiffusionPlan, FluxDevAllOnGpuPeaksInTheVaeDecode) {
  const auto p = plan(request("flux.1-dev"));
  EXPECT_EQ(p.height, 1024u);
  EXPECT_EQ(p.steps, 28u);
  EXPECT_EQ(p.denoiser_batch, 1u);  // guidance distilled: no doubling
  EXPECT_EQ(p.context_tokens, 512u);
  ASSERT_EQ(p.stages.size(), 4u);  // two encoders, denoise, decode
  EXPECT_EQ(p.stages[p.peak_stage].name, "decode (vae)");
  EXPECT_EQ(p.allocated_peak.count(), kFluxWeights + kFluxDecodePerImage + kImage + kFluxCarried);
  // Denoise: FluxSingleTransformerBlock 15 x S x d, S = 64^2 image tokens + 512 text, d = 3072:
  // 15 x 4608 x 3072 = 212,336,640 elements x 2 B.
  EXPECT_EQ(p.stages[2].activations.count(), 212'336'640ull * 2 + kFluxCarried);
  // Batch 4 decodes four images at once; VAE slicing decodes one at a time.
  auto r = request("flux.1-dev", 4);
  const auto b4 = plan(r);
  EXPECT_EQ(b4.allocated_peak.count(), kFluxWeights + 4 * (kFluxDecodePerImage + kImage + kFluxCarried));
  r.vae_slicing = true;
  const auto sliced = plan(r);
  EXPECT_EQ(sliced.stages[3].total.count(), kFluxWeights + kFluxDecodePerImage + 4 * (kImage + kFluxCarried));
  // ... which still holds the peak: one image's 2,281,701,376 B against the denoiser's forward over
  // 4 latents, 4 x 212,336,640 x 2 B = 1,698,693,120 B.
  EXPECT_EQ(sliced.stages[sliced.peak_stage].name, "decode (vae)");
  EXPECT_EQ(sliced.stages[2].total.count(), kFluxWeights + 4 * (212'336'640ull * 2 + kFluxCarried));
}

TEST(DiffusionPlan, ModelOffloadHoldsOneComponent) {
  auto r = request("flux.1-dev");
  r.offload = Offload::Model;
  const auto p = plan(r);
  // The transformer alone, 11,901,408,320 x 2 B, with its forward's activations.
  EXPECT_EQ(p.stages[p.peak_stage].name, "denoise (transformer)");
  EXPECT_EQ(p.allocated_peak.count(), 11'901'408'320ull * 2 + 212'336'640ull * 2 + kFluxCarried);
}

TEST(DiffusionPlan, SequentialOffloadHoldsTheLargestLeaf) {
  auto r = request("sdxl-base-1.0");
  r.offload = Offload::Sequential;
  const auto p = plan(r);
  // The largest UNet leaf: the first up block's conv1, (1280 + 1280) x 1280 x 3 x 3 + 1280 =
  // 29,492,480 parameters, fp16.
  EXPECT_EQ(p.stages[2].weights.count(), 29'492'480ull * 2);
}

TEST(DiffusionPlan, ClassifierFreeGuidanceDoublesTheSdxlBatch) {
  auto r = request("sdxl-base-1.0", 3);
  EXPECT_EQ(plan(r).denoiser_batch, 6u);  // guidance_scale 5.0 > 1
  r.guidance = 1.0;
  const auto off = plan(r);
  EXPECT_EQ(off.denoiser_batch, 3u);
  // At or below 1 diffusers runs no guidance (do_classifier_free_guidance = guidance_scale > 1):
  // the plan names none, not the pipeline's CFG.
  EXPECT_EQ(off.guidance_mode, Guidance::None);
  ASSERT_FALSE(off.notes.empty());
  EXPECT_EQ(off.notes.front(), "guidance_scale 1 <= 1: classifier-free guidance is off (diffusers do_classifier_free_guidance = "
                               "guidance_scale > 1)");
  // FLUX.1-schnell has no guidance at all.
  EXPECT_EQ(plan(request("flux.1-schnell", 3)).denoiser_batch, 3u);
  EXPECT_EQ(plan(request("flux.1-schnell")).steps, 4u);  // its model card's 4 steps
}

TEST(DiffusionPlan, SdxlDecodesAnFp16VaeInFp32) {
  const auto p = plan(request("sdxl-base-1.0"));
  EXPECT_EQ(p.dtype, "fp16");
  EXPECT_EQ(p.vae_dtype, "fp32");
  // Decode weights: everything else in fp16 plus the VAE's 83,653,863 parameters in fp32.
  const std::uint64_t others = (2'567'463'684ull + 123'060'480 + 694'659'840) * 2;
  EXPECT_EQ(p.stages[3].weights.count(), others + 83'653'863ull * 4);
  auto bf16 = request("sdxl-base-1.0");
  bf16.dtype = "bf16";
  EXPECT_EQ(plan(bf16).vae_dtype, "bf16");
}

TEST(DiffusionPlan, QuantizedDenoiserWeights) {
  auto r = request("flux.1-dev");
  r.weights = "nf4";
  const auto p = plan(r);
  const auto& t = p.pipeline.denoiser().inventory;
  // NF4: half a byte per linear weight + a fp32 absmax per 64; the rest stays bf16.
  const std::uint64_t expected = t.linear_weights / 2 + (t.linear_weights + 63) / 64 * 4 + (t.params - t.linear_weights) * 2;
  EXPECT_EQ(p.weights[2].bytes.count(), expected);
  EXPECT_LT(p.weights[2].bytes.gib(), 7.0);
  r.weights = "int4";
  EXPECT_THROW(plan(r), Error);
}

TEST(DiffusionPlan, VaeTilingOnlyAboveTheTileSize) {
  auto r = request("sdxl-base-1.0");
  r.vae_tiling = true;
  const auto at1024 = plan(r);
  EXPECT_FALSE(at1024.notes.empty());
  r.height = r.width = 2048;
  const auto tiled = plan(r);
  r.vae_tiling = false;
  const auto untiled = plan(r);
  EXPECT_LT(tiled.stages[3].activations, untiled.stages[3].activations);
}

TEST(DiffusionPlan, StepTimeIsComputeBound) {
  const auto p = plan(request("flux.1-dev"));
  ASSERT_TRUE(p.step_s.has_value());
  // FLOPs per step, 2 x per-token weights x tokens + attention (the AdaLN modulation acts once
  // per sample): single blocks 38 x 113.2e6 weights x 4608 tokens x 2 = 3.97e13; joint blocks
  // 19 x 113.2e6 per stream x (4096 + 512) tokens x 2 = 1.98e13; attention 57 x 4 x 4608^2 x 3072
  // = 1.49e13 -> ~7.4e13.
  EXPECT_GT(p.flops_per_step, 7.0e13);
  EXPECT_LT(p.flops_per_step, 7.8e13);
  EXPECT_GT(*p.images_per_s, 0.0);
  EXPECT_LE(*p.step_s_low, *p.step_s);
  EXPECT_LE(*p.step_s, *p.step_s_high);
}

TEST(DiffusionPlan, ResnetLiveSetCountsEachConvolutionsWorkspace) {
  // ResnetBlock2D 256 -> 128 per pixel: 3 x 256 = 768 (norm1 / SiLU); conv1 256 + 256 + 128 +
  // (256 + 128) workspace = 1,024; conv2 256 + 2 x 128 + 2 x 128 = 768; conv_shortcut
  // 256 + 2 x 128 + (256 + 128) = 896; the residual 256 + 4 x 128 = 768 -> 1,024.
  EXPECT_EQ(resnet_live_per_pixel(256, 128), 1024u);
  // c -> c: conv1 2c + c + 2c = 5c, conv2 c + 2c + 2c = 5c, the residual 5c.
  EXPECT_EQ(resnet_live_per_pixel(128, 128), 640u);
  // UNet up block with its skip concatenated, 960 -> 320: conv1 3 x 960 + 2 x 320 = 3,520.
  EXPECT_EQ(resnet_live_per_pixel(960, 320), 3520u);
}

TEST(DiffusionPlan, SdxlDecodesFourImagesInFp32) {
  const auto p = plan(request("sdxl-base-1.0", 4));
  ASSERT_EQ(p.stages[p.peak_stage].name, "decode (vae)");
  // Four 1024^2 images through the fp32 VAE: the last Upsample2D's 1,140,850,688 elements each
  // (FluxDevAllOnGpuPeaksInTheVaeDecode) x 4 B = 18,253,611,008 B; the decoded images 4 x 3 x
  // 1024^2 x 4 B = 50,331,648; carried: prompt embeddings 8 (CFG) x 77 x 2048 x 2 B = 2,523,136 and
  // latents 4 x 4 x 128^2 x 4 B = 1,048,576.
  EXPECT_EQ(p.stages[p.peak_stage].activations.count(), 18'253'611'008ull + 50'331'648 + 2'523'136 + 1'048'576);
}

TEST(DiffusionPlan, ResolutionMustFitTheLatentGrid) {
  // FluxPipeline.check_inputs only warns; prepare_latents floors: 2 * (1000 // 16) = 124 latent
  // pixels = 992 px.
  auto r = request("flux.1-dev");
  r.height = 1000;  // not a multiple of 16
  EXPECT_EQ(plan(r).height, 992u);
  // StableDiffusion3Pipeline.check_inputs raises for it.
  auto sd3 = request("sd-3.5-medium");
  sd3.height = 1000;
  EXPECT_THROW(plan(sd3), Error);
}

}  // namespace
}  // namespace vramplan::diffusion

namespace vramplan::diffusion {
namespace {

TEST(DiffusionPlan, HostileSizesAreRefusedNotWrapped) {
  auto r = request("sdxl-base-1.0");
  r.height = r.width = 1u << 20;  // past the 65,536-pixel side limit
  EXPECT_THROW(plan(r), Error);
  r = request("sdxl-base-1.0", 1u << 20);
  EXPECT_THROW(plan(r), Error);
  // The largest accepted request still computes (eager attention at 65,536 px: ~10^15 elements).
  r = request("sdxl-base-1.0", 1u << 16);
  r.height = r.width = 1u << 16;
  r.eager_attention = true;
  EXPECT_THROW(plan(r), Error);  // beyond 2^62 activation elements: refused with a Usage error
  r.eager_attention = false;
  r.batch = 1;
  const auto big = plan(r);
  EXPECT_FALSE(big.fits);
}

}  // namespace
}  // namespace vramplan::diffusion

namespace vramplan::diffusion {
namespace {

TEST(DiffusionPlan, CogVideoXAttendsOverEveryLatentFrame) {
  auto r = request("cogvideox-2b");
  r.offload = Offload::Model;
  const auto p = plan(r);
  EXPECT_EQ(p.frames, 49u);
  EXPECT_EQ(p.latent_frames, 13u);     // (49 - 1) / 4 + 1
  EXPECT_EQ(p.denoiser_batch, 2u);     // guidance 6 > 1: CFG
  EXPECT_EQ(p.context_tokens, 226u);   // T5 max_sequence_length
  EXPECT_EQ(p.dtype, "fp16");
  // Denoise: S = 226 + 13 x (60 / 2) x (90 / 2) = 17,776 tokens; 13 S x d x 2 samples =
  // 13 x 17,776 x 1,920 x 2 = 887,377,920 elements x 2 B = 1,774,755,840 B; carried: prompt
  // embeddings 2 x 226 x 4096 x 2 B = 3,702,784 + latents 16 x 13 x 60 x 90 x 4 B = 4,492,800.
  EXPECT_EQ(p.stages[1].activations.count(), 1'774'755'840ull + 3'702'784 + 4'492'800);
  // Model offload: the transformer alone, parameters + pos_embedding (226 + 17,550) x 1,920, fp16.
  EXPECT_EQ(p.stages[1].weights.count(), (1'693'783'872ull + 17'776ull * 1'920) * 2);
  // Decode: at least the first chunk's spatial norm of the last up block, (6 x 256 + 16) channels
  // x 9 frames x 720 x 480 = 4,926,873,600 elements x 2 B, plus the kept video 3 x 49 x 720 x 480.
  EXPECT_EQ(p.peak_stage, 2u);
  EXPECT_GT(p.stages[2].activations.count(), 4'926'873'600ull * 2 + 3ull * 49 * 720 * 480 * 2);
  EXPECT_NE(p.stages[2].detail.find("CogVideoXSpatialNorm3D"), std::string::npos);
}

TEST(DiffusionPlan, CogVideoX5bRunsInBf16WithoutPositionBuffer) {
  auto r = request("cogvideox-5b");
  r.offload = Offload::Model;
  const auto p = plan(r);
  EXPECT_EQ(p.dtype, "bf16");  // source.json _defaults.torch_dtype (the 5B's recommended BF16)
  // Model offload: the transformer's 5,570,283,072 parameters alone (RoPE: no pos_embedding), bf16.
  EXPECT_EQ(p.stages[1].weights.count(), 5'570'283'072ull * 2);
  // S = 17,776 tokens (as for the 2B), d = 3,072: 13 S x d x 2 samples = 1,419,804,672 elements x 2 B
  // = 2,839,609,344 B, + prompt embeddings 2 x 226 x 4096 x 2 B and fp32 latents 16 x 13 x 60 x 90 x 4 B.
  EXPECT_EQ(p.stages[1].activations.count(), 2'839'609'344ull + 3'702'784 + 4'492'800);
  r.dtype = "fp16";  // an explicit --dtype still wins
  EXPECT_EQ(plan(r).dtype, "fp16");
}

TEST(DiffusionPlan, CogVideoXTilesAndFrames) {
  auto r = request("cogvideox-2b");
  r.vae_tiling = true;
  const auto tiled = plan(r);
  // Latent 60 x 90, tiles of 30 x 45 every 25 x 36: ceil(60 / 25) x ceil(90 / 36) = 3 x 3.
  EXPECT_NE(tiled.stages[2].detail.find("9 tiles of 360x240"), std::string::npos);
  r.vae_tiling = false;
  EXPECT_LT(tiled.stages[2].activations, plan(r).stages[2].activations);
  r.frames = 50;  // not 1 + a multiple of 4
  EXPECT_THROW(plan(r), Error);
  r.frames = 25;
  EXPECT_EQ(plan(r).latent_frames, 7u);
  auto flux = request("flux.1-dev");
  flux.frames = 9;
  EXPECT_THROW(plan(flux), Error);
}

}  // namespace
}  // namespace vramplan::diffusion

namespace vramplan::diffusion {
namespace {

// WanPipeline (wan2.1-t2v-1.3b) at its __call__ defaults: 81 frames of 832 x 480, 50 steps,
// guidance 5.0 (two sequential transformer passes), 512 UMT5 tokens, bf16 with the VAE in fp32.
// Weights: transformer (1,418,996,800 + 262,144 rope) x 2 B = 2,838,517,888; UMT5 5,680,910,336 x
// 2 B = 11,361,820,672; VAE 126,892,531 x 4 B = 507,570,124 -> 14,707,908,684 B.
constexpr std::uint64_t kWanTransformer = (1'418'996'800ull + 262'144) * 2;
constexpr std::uint64_t kWanVae = 126'892'531ull * 4;
constexpr std::uint64_t kWanWeights = kWanTransformer + 5'680'910'336ull * 2 + kWanVae;
// Latents 16 x 21 x 60 x 104 = 2,096,640 elements. Carried: prompt + negative prompt embeddings
// 2 x 512 x 4096 x 2 B = 8,388,608; latents and `mask`, both fp32: 2 x 2,096,640 x 4 B =
// 16,773,120.
constexpr std::uint64_t kWanLatent = 16ull * 21 * 60 * 104;
constexpr std::uint64_t kWanCarried = 2ull * 512 * 4096 * 2 + 2 * kWanLatent * 4;
// The decoded video 3 x 81 x 480 x 832 = 97,044,480 elements, fp32.
constexpr std::uint64_t kWanVideo = 3ull * 81 * 480 * 832 * 4;

TEST(DiffusionPlan, WanRunsGuidanceAsTwoPassesAndDecodesInFp32) {
  const auto p = plan(request("wan2.1-t2v-1.3b"));
  EXPECT_EQ(p.pipeline.class_name, "WanPipeline");
  EXPECT_EQ(p.height, 480u);
  EXPECT_EQ(p.width, 832u);
  EXPECT_EQ(p.frames, 81u);
  EXPECT_EQ(p.latent_frames, 21u);  // (81 - 1) / scale_factor_temporal 4 + 1
  EXPECT_EQ(p.steps, 50u);
  EXPECT_DOUBLE_EQ(p.guidance, 5.0);
  EXPECT_EQ(p.guidance_mode, Guidance::CfgSequential);
  EXPECT_EQ(p.denoiser_batch, 1u);   // not doubled
  EXPECT_EQ(p.denoiser_passes, 2u);  // cond, then uncond
  EXPECT_EQ(p.context_tokens, 512u);
  EXPECT_EQ(p.dtype, "bf16");
  EXPECT_EQ(p.vae_dtype, "fp32");
  ASSERT_EQ(p.stages.size(), 3u);
  EXPECT_EQ(p.stages[0].weights.count(), kWanWeights);
  // Denoise, one pass: S = 21 x (60 / 2) x (104 / 2) = 32,760 tokens; the FFN live set S x (4 x
  // 1,536 + 2 x 8,960) = 788,336,640 elements x 2 B; plus the bf16 latent input and the cond
  // noise_pred held through the uncond pass, 2 x 2,096,640 x 2 B.
  EXPECT_EQ(p.stages[1].activations.count(), 788'336'640ull * 2 + kWanCarried + 2 * kWanLatent * 2);
  // Decode in fp32: the peak of a later latent frame, 996,802,560 elements at up 2's upsample +
  // 944,286,720 of causal caches (wan_params_test.cpp) = 1,941,089,280 x 4 B, plus the video.
  EXPECT_EQ(p.stages[2].activations.count(), 1'941'089'280ull * 4 + kWanVideo + kWanCarried);
  EXPECT_EQ(p.stages[2].weights.count(), kWanWeights);
  EXPECT_EQ(p.peak_stage, 2u);
  EXPECT_EQ(p.allocated_peak.count(), kWanWeights + 1'941'089'280ull * 4 + kWanVideo + kWanCarried);
  // FLOPs per step are two passes' of one latent batch.
  auto one = request("wan2.1-t2v-1.3b");
  one.guidance = 1.0;  // no CFG: one pass
  const auto single = plan(one);
  EXPECT_EQ(single.denoiser_passes, 1u);
  EXPECT_DOUBLE_EQ(p.flops_per_step, 2 * single.flops_per_step);
  EXPECT_EQ(single.stages[1].activations.count(), 788'336'640ull * 2 + 2ull * 512 * 4096 + 2 * kWanLatent * 4);
}

TEST(DiffusionPlan, WanModelOffloadAndTiledDecode) {
  auto r = request("wan2.1-t2v-1.3b");
  r.offload = Offload::Model;
  const auto p = plan(r);
  // Model offload: the UMT5 stage holds its 11,361,820,672 B of weights, the largest stage.
  EXPECT_EQ(p.stages[0].weights.count(), 5'680'910'336ull * 2);
  EXPECT_EQ(p.stages[1].weights.count(), kWanTransformer);
  EXPECT_EQ(p.stages[2].weights.count(), kWanVae);
  EXPECT_EQ(p.peak_stage, 0u);
  r.vae_tiling = true;
  const auto tiled = plan(r);
  // Latent 60 x 104, tiles of 32 every 24: rows start 0, 24, 48 (256 + 256 + 96 = 608 px), columns
  // 0, 24, 48, 72, 96 (4 x 256 + 64 = 1,088 px): 15 tiles, every decoded tile kept:
  // 3 x 81 x 608 x 1,088 = 160,745,472 elements x 4 B = 642,981,888.
  EXPECT_NE(tiled.stages[2].detail.find("15 tiles of at most 256x256"), std::string::npos) << tiled.stages[2].detail;
  // A 256 x 256 tile (32 x 32 = 1,024 latent pixels): the peak 159,744 + caches 151,328 elements
  // per latent pixel (wan_params_test.cpp) x 1,024 = 318,537,728 x 4 B = 1,274,150,912, above the
  // blend's end (the tiles + result rows, dec and the clamp: 642,981,888 + 3 x 388,177,920).
  EXPECT_EQ(tiled.stages[2].activations.count(), 318'537'728ull * 4 + 642'981'888 + kWanCarried);
  EXPECT_EQ(tiled.stages[2].total.count(), kWanVae + 318'537'728ull * 4 + 642'981'888 + kWanCarried);
  // Below 256 px a side nothing is tiled, and a note says so.
  r.height = 240;
  r.width = 224;
  const auto small = plan(r);
  EXPECT_EQ(small.stages[2].detail.find("tiles"), std::string::npos);
  // Frames: 1 + a multiple of 4.
  r.frames = 80;
  EXPECT_THROW(plan(r), Error);
  r.frames = 33;
  EXPECT_EQ(plan(r).latent_frames, 9u);
}

}  // namespace
}  // namespace vramplan::diffusion
