// Diffusion pipeline inventories (diffusion/*.cpp): exact parameter counts of every catalogue
// component from its config.json, with the arithmetic, against the published figures.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "support/safetensors_writer.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/diffusion/pipeline.hpp"

namespace vramplan::diffusion {
namespace {

Pipeline catalogue(const std::string& id) { return load_pipeline(id, test::source_root()); }

const Component& component(const Pipeline& p, const std::string& name) {
  for (const auto& c : p.components)
    if (c.name == name) return c;
  throw std::runtime_error("no component " + name);
}

// CLIP ViT-L/14 text tower: token 49408 x 768 = 37,945,344 + positions 77 x 768 = 59,136; per layer
// q, k, v, out 4 x (768^2 + 768) = 2,362,368, two LayerNorms 3,072, fc1 768 x 3072 + 3072 and fc2
// 3072 x 768 + 768 = 4,722,432 -> 7,087,872 x 12 = 85,054,464; final LayerNorm 1,536.
constexpr std::uint64_t kClipL = 37'945'344ull + 59'136 + 85'054'464 + 1'536;
// OpenCLIP ViT-bigG/14 text tower: token 49408 x 1280 = 63,242,240 + positions 98,560; per layer
// 4 x (1280^2 + 1280) = 6,558,720 + LayerNorms 5,120 + MLP 2 x 1280 x 5120 + 5120 + 1280 =
// 13,113,600 -> 19,677,440 x 32 = 629,678,080; final LayerNorm 2,560; text_projection 1280^2.
constexpr std::uint64_t kClipBigGProj = 63'242'240ull + 98'560 + 629'678'080 + 2'560 + 1'638'400;
// T5 v1.1 XXL encoder: shared 32128 x 4096 = 131,596,288; per layer q, k, v, o 4 x 4096 x 4096 =
// 67,108,864, gated FF wi_0 + wi_1 2 x 4096 x 10240 = 83,886,080, wo 41,943,040, two T5LayerNorms
// 8,192 -> 192,946,176 x 24 = 4,630,708,224; relative_attention_bias 32 x 64; final norm 4,096.
constexpr std::uint64_t kT5Xxl = 131'596'288ull + 4'630'708'224 + 2'048 + 4'096;

TEST(DiffusionParams, TextEncodersMatchThePublishedCounts) {
  EXPECT_EQ(kClipL, 123'060'480ull);          // CLIP-L text, 123 M (arXiv:2103.00020)
  EXPECT_EQ(kClipBigGProj, 694'659'840ull);   // OpenCLIP bigG text with projection
  EXPECT_EQ(kT5Xxl, 4'762'310'656ull);        // T5-XXL encoder, 4.76 B
  const auto sdxl = catalogue("sdxl-base-1.0");
  EXPECT_EQ(component(sdxl, "text_encoder").inventory.params, kClipL);
  EXPECT_EQ(component(sdxl, "text_encoder_2").inventory.params, kClipBigGProj);
  const auto flux = catalogue("flux.1-dev");
  EXPECT_EQ(component(flux, "text_encoder").inventory.params, kClipL);
  EXPECT_EQ(component(flux, "text_encoder_2").inventory.params, kT5Xxl);
  // SD3 loads CLIP-L as CLIPTextModelWithProjection: + text_projection 768 x 768 = 589,824.
  const auto sd35 = catalogue("sd-3.5-large");
  EXPECT_EQ(component(sd35, "text_encoder").inventory.params, kClipL + 589'824);
  EXPECT_EQ(component(sd35, "text_encoder_3").inventory.params, kT5Xxl);
}

TEST(DiffusionParams, SdxlUnetIs2567463684) {
  // The SDXL report (arXiv:2307.01952, Table 1) gives 2.6B; the exact sum of the module tree
  // (unet_2d_condition.py layout: 3 down levels 320/640/1280 with 0/2/10-deep transformers x 2,
  // mid 10, up 3 x 3 resnets) is 2,567,463,684, the count public repositories print from
  // sd_xl_base_1.0.safetensors (1680 tensors).
  EXPECT_EQ(component(catalogue("sdxl-base-1.0"), "unet").inventory.params, 2'567'463'684ull);
}

TEST(DiffusionParams, AutoencoderKlEncoderEndsOnItsWidestBlock) {
  // SDXL VAE (latent 4): decoder 49,490,179 + encoder 34,163,592 + quant_conv 8 x 8 + 8 +
  // post_quant_conv 4 x 4 + 4 = 83,653,863. The encoder's conv_norm_out / conv_out act on the last
  // block's 512 channels (vae.py Encoder), not the first's 128.
  EXPECT_EQ(49'490'179ull + 34'163'592 + 72 + 20, 83'653'863ull);
  EXPECT_EQ(component(catalogue("sdxl-base-1.0"), "vae").inventory.params, 83'653'863ull);
  // FLUX / SD3 VAE (latent 16, no quant convs): decoder conv_in 16 -> 512 adds 12 x 512 x 9 =
  // 55,296 and encoder conv_out 512 -> 32 adds 24 x 512 x 9 + 24 = 110,616 over latent 4, minus
  // the quant convs (92): 83,653,863 + 55,296 + 110,616 - 92 = 83,819,683.
  EXPECT_EQ(component(catalogue("flux.1-dev"), "vae").inventory.params, 83'653'863ull + 55'296 + 110'616 - 92);
}

TEST(DiffusionParams, FluxTransformerIs11901408320) {
  // d = 24 x 128 = 3072. Embedders: timestep + guidance 2 x (256 x 3072 + 3072 + 3072^2 + 3072) =
  // 20,459,520; text 768 x 3072 + 3072 + 3072^2 + 3072 = 11,802,624; context 4096 x 3072 + 3072 =
  // 12,585,984; x 64 x 3072 + 3072 = 199,680. Double block: two AdaLN 2 x (3072 x 18432 + 18432) =
  // 113,283,072, eight d x d projections with bias 75,522,048, four RMSNorms 512, two FFs
  // 2 x 75,512,832 -> 339,831,296 x 19. Single block: AdaLN 28,320,768, proj_mlp 37,761,024,
  // proj_out 15360 x 3072 + 3072 = 47,188,992, q/k/v 28,320,768, norms 256 -> 141,591,808 x 38.
  // norm_out 18,880,512, proj_out 196,672. Total 11,901,408,320 ("12 billion", model card).
  const std::uint64_t expected = 20'459'520ull + 11'802'624 + 12'585'984 + 199'680 + 19ull * 339'831'296 +
                                 38ull * 141'591'808 + 18'880'512 + 196'672;
  EXPECT_EQ(expected, 11'901'408'320ull);
  EXPECT_EQ(component(catalogue("flux.1-dev"), "transformer").inventory.params, expected);
  // schnell: no guidance_embedder (guidance_embeds false): - (256 x 3072 + 3072 + 3072^2 + 3072).
  EXPECT_EQ(component(catalogue("flux.1-schnell"), "transformer").inventory.params, expected - 10'229'760);
}

TEST(DiffusionParams, Sd35TransformersWithTheirPositionTables) {
  // SD3.5 Large: 8,056,627,520 parameters + the pos_embed buffer 192^2 x 2432 = 89,653,248
  // -> 8,146,280,768, the "8.1 billion" Stability AI publishes.
  const Pipeline large_pipeline = catalogue("sd-3.5-large");  // outlives the references below
  const auto& large = component(large_pipeline, "transformer").inventory;
  EXPECT_EQ(large.params, 8'056'627'520ull);
  EXPECT_EQ(large.buffers, 192ull * 192 * 2432);
  EXPECT_NEAR(static_cast<double>(large.params + large.buffers), 8.1e9, 0.05e9);
  // SD3.5 Medium (MMDiT-X, 13 dual-attention blocks): 2,243,171,520 + 384^2 x 1536 = 226,492,416
  // -> 2,469,663,936, the published "2.5 billion".
  // SD3 Medium (no qk_norm, no dual attention): 2,028,328,000 ("2 billion", model card).
  EXPECT_EQ(component(catalogue("sd-3-medium"), "transformer").inventory.params, 2'028'328'000ull);
  const Pipeline medium_pipeline = catalogue("sd-3.5-medium");
  const auto& medium = component(medium_pipeline, "transformer").inventory;
  EXPECT_EQ(medium.params, 2'243'171'520ull);
  EXPECT_EQ(medium.buffers, 384ull * 384 * 1536);
  EXPECT_NEAR(static_cast<double>(medium.params + medium.buffers), 2.5e9, 0.05e9);
}

TEST(DiffusionParams, CatalogueListsThePipelines) {
  const auto ids = pipeline_ids(test::source_root());
  for (const char* id : {"flux.1-dev", "flux.1-schnell", "sd-3.5-large", "sd-3.5-medium", "sdxl-base-1.0"})
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
  EXPECT_TRUE(is_pipeline("sdxl-base-1.0", test::source_root()));
  EXPECT_FALSE(is_pipeline("llama-3.1-8b", test::source_root()));
}

TEST(DiffusionParams, UnsupportedPipelineNamesTheSupportedOnes) {
  const auto dir = std::filesystem::temp_directory_path() / "vramplan_diffusion_unsupported";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "model_index.json") << R"({"_class_name": "KandinskyV22Pipeline"})";
  try {
    load_pipeline(dir.string(), test::source_root());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnknownName);
    EXPECT_NE(std::string(e.what()).find("StableDiffusionXLPipeline, StableDiffusion3Pipeline, FluxPipeline"),
              std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vramplan::diffusion

namespace vramplan::diffusion {
namespace {

TEST(DiffusionParams, SafetensorsHeadersAreCountedBesideTheConfig) {
  // A copy of the SDXL entry as a user's directory, its VAE with a one-file checkpoint of two
  // tensors: 4 x 4 + 10 = 26 elements (not the layout's 83,653,863: the plan notes it).
  const auto dir = std::filesystem::temp_directory_path() / "vramplan_diffusion_st";
  std::filesystem::remove_all(dir);
  std::filesystem::copy(test::source_dir() / "models" / "diffusion" / "sdxl-base-1.0", dir,
                        std::filesystem::copy_options::recursive);
  std::filesystem::remove(dir / "source.json");
  std::ofstream(dir / "vae" / "diffusion_pytorch_model.safetensors", std::ios::binary)
      << test::build_safetensors({{"a.weight", "F16", {4, 4}, 32}, {"a.bias", "F32", {10}, 40}});
  const auto p = load_pipeline(dir.string(), test::source_root());
  EXPECT_EQ(p.origin, "directory");
  EXPECT_EQ(component(p, "vae").checkpoint_elements, std::optional<std::uint64_t>(26));
  EXPECT_FALSE(component(p, "unet").checkpoint_elements.has_value());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vramplan::diffusion

namespace vramplan::diffusion {
namespace {

TEST(DiffusionParams, CogVideoX2bTransformerIs1693783872) {
  // CogVideoXTransformer3DModel, d = 30 heads x 64 = 1,920, time_embed_dim 512:
  //  patch_embed.proj Conv2d(16, 1920, 2x2) 16 x 1920 x 4 + 1920 = 124,800; text_proj 4096 x 1920
  //  + 1920 = 7,866,240; time_embedding 1920 x 512 + 512 = 983,552 and 512 x 512 + 512 = 262,656;
  //  per block: norm1 / norm2 (512 x 11,520 + 11,520 = 5,909,760, LayerNorm 3,840) x 2 =
  //  11,827,200, q / k / v / to_out 4 x (1920^2 + 1920) = 14,753,280, norm_q / norm_k 4 x 64 = 256,
  //  ff 1920 x 7680 + 7680 = 14,753,280 and 7680 x 1920 + 1920 = 14,747,520 -> 56,081,536 x 30 =
  //  1,682,446,080; norm_final 3,840; norm_out 512 x 3840 + 3840 = 1,969,920 + LayerNorm 3,840;
  //  proj_out 1920 x 64 + 64 = 122,944.
  const std::uint64_t expected = 124'800ull + 7'866'240 + 983'552 + 262'656 + 1'682'446'080 + 3'840 + 1'969'920 +
                                 3'840 + 122'944;
  EXPECT_EQ(expected, 1'693'783'872ull);  // the checkpoint's element sum as public repositories print it
  const auto p = catalogue("cogvideox-2b");
  EXPECT_EQ(p.class_name, "CogVideoXPipeline");
  EXPECT_EQ(component(p, "transformer").inventory.params, expected);
  // pos_embedding (non-persistent): (226 text + 13 latent frames x 30 x 45 patches) x 1920.
  EXPECT_EQ(component(p, "transformer").inventory.buffers, (226ull + 13 * 30 * 45) * 1920);
  EXPECT_EQ(component(p, "text_encoder").inventory.params, kT5Xxl);
  EXPECT_EQ(p.defaults.width, 720u);   // sample_width 90 x 8
  EXPECT_EQ(p.defaults.height, 480u);  // sample_height 60 x 8
  EXPECT_EQ(p.defaults.frames, 49u);   // sample_frames
  EXPECT_EQ(latent_frames(p, 49), 13u);  // (49 - 1) / 4 + 1
}

TEST(DiffusionParams, Wan21T2v13bCatalogueEntry) {
  // models/diffusion/wan2.1-t2v-1.3b: the exact counts of wan_params_test.cpp from the catalogue's
  // configs, and WanPipeline's scale fields and __call__ defaults.
  const auto p = catalogue("wan2.1-t2v-1.3b");
  EXPECT_EQ(p.class_name, "WanPipeline");
  EXPECT_EQ(component(p, "transformer").inventory.params, 1'418'996'800ull);
  EXPECT_EQ(component(p, "transformer").inventory.buffers, 2ull * 1024 * 128);  // rope freqs_cos / freqs_sin
  EXPECT_EQ(component(p, "text_encoder").inventory.params, 5'680'910'336ull);
  EXPECT_EQ(component(p, "vae").inventory.params, 126'892'531ull);
  EXPECT_EQ(vae_scale_factor(p), 8u);     // vae config scale_factor_spatial
  EXPECT_EQ(vae_temporal_factor(p), 4u);  // vae config scale_factor_temporal
  EXPECT_EQ(p.defaults.height, 480u);     // WanPipeline.__call__ defaults
  EXPECT_EQ(p.defaults.width, 832u);
  EXPECT_EQ(p.defaults.frames, 81u);
  EXPECT_EQ(p.defaults.steps, 50u);
  EXPECT_DOUBLE_EQ(p.defaults.guidance, 5.0);
  EXPECT_EQ(p.defaults.t5_tokens, 512u);
  EXPECT_EQ(latent_frames(p, 81), 21u);  // (81 - 1) // 4 + 1 (WanPipeline.prepare_latents)
  EXPECT_EQ(p.guidance(), Guidance::CfgSequential);
  ASSERT_EQ(p.published.size(), 3u);
  for (const auto& pub : p.published)
    EXPECT_DOUBLE_EQ(pub.params, static_cast<double>(component(p, pub.component).inventory.params)) << pub.component;
}

TEST(DiffusionParams, CogVideoXVaeIs215583907) {
  // AutoencoderKLCogVideoX, 128-256-256-512, 3 layers per block, latent 16; a CausalConv3d is
  // C_in x C_out x 27 + C_out, a resnet two GroupNorms (2 C each), conv1, conv2 and a 1x1x1
  // conv_shortcut when the channels change; the decoder's norms are spatial norms (GroupNorm +
  // conv_y / conv_b 1x1x1 from the 16 latent channels: + 2 x (16 C + C)); Down/Upsample a Conv2d
  // 3x3. Per part (each resnet summed as above):
  //  encoder: conv_in 10,496; down blocks 2,804,096 + 10,359,552 + 11,211,520 + 39,068,672; mid
  //  28,317,696; norm_out + conv_out (512 -> 32) 443,424 -> 92,215,456;
  //  decoder: conv_in (16 -> 512) 221,696; mid 28,387,328; up blocks 59,134,464 + 16,731,648 +
  //  14,821,632 + 4,056,704; norm_out + conv_out (128 -> 3) 14,979 -> 123,368,451;
  //  215,583,907 in all: the checkpoint's element sum as public repositories print it.
  EXPECT_EQ(10'496ull + 2'804'096 + 10'359'552 + 11'211'520 + 39'068'672 + 28'317'696 + 443'424, 92'215'456ull);
  EXPECT_EQ(221'696ull + 28'387'328 + 59'134'464 + 16'731'648 + 14'821'632 + 4'056'704 + 14'979, 123'368'451ull);
  const auto p = catalogue("cogvideox-2b");
  EXPECT_EQ(component(p, "vae").inventory.params, 215'583'907ull);
  // One hand-checked piece: a decoder resnet 512 -> 512 with spatial norms: two norms of
  // GroupNorm 1,024 + conv_y / conv_b 2 x (16 x 512 + 512) = 17,408 -> 18,432 each; two convs
  // 2 x (512^2 x 27 + 512) = 14,156,800 -> 14,193,664.
  EXPECT_EQ(2 * (1'024ull + 2 * (16 * 512 + 512)) + 2 * (512ull * 512 * 27 + 512), 14'193'664ull);
}

}  // namespace
}  // namespace vramplan::diffusion
