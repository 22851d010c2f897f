// diffusers group offloading (diffusion/group_offload.cpp, hooks/group_offloading.py at diffusers
// 58eb52c0): the --offload group:... spelling and the weights each stage holds, against hand counts.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/diffusion/diffusion_plan.hpp"

namespace vramplan::diffusion {
namespace {

DiffusionPlan plan_with(const std::string& model, const std::string& offload) {
  DiffusionRequest r;
  r.model = model;
  r.gpu = "h100-sxm-80";
  const OffloadMode m = parse_offload(offload);
  r.offload = m.kind;
  r.group = m.group;
  return plan_diffusion(r, test::source_root());
}

const Stage& stage(const DiffusionPlan& p, const std::string& name) {
  for (const auto& s : p.stages)
    if (s.name == name) return s;
  ADD_FAILURE() << name;
  return p.stages.front();
}

// FLUX.1-dev transformer (d = 24 x 128 = 3072, MLP 4d = 12288), parameters per block:
//  FluxTransformerBlock: norm1.linear and norm1_context.linear 2 x (3072 x 18432 + 18432) =
//  113,283,072; to_q/k/v and add_q/k/v_proj 6 x (3072^2 + 3072) = 56,641,536; four RMSNorms
//  4 x 128 = 512; to_out.0 and to_add_out 2 x 9,440,256 = 18,880,512; ff and ff_context
//  2 x (3072 x 12288 + 12288 + 12288 x 3072 + 3072) = 151,025,664: 339,831,296.
//  FluxSingleTransformerBlock: norm.linear 3072 x 9216 + 9216 = 28,320,768; proj_mlp 37,761,024;
//  to_q/k/v 28,320,768; norms 256; proj_out 15360 x 3072 + 3072 = 47,188,992: 141,591,808.
//  Unmatched (time_text_embed 20,459,520 + 11,802,624, context_embedder 12,585,984, x_embedder
//  199,680, norm_out 18,880,512, proj_out 196,672): 64,124,992 =
//  11,901,408,320 - 19 x 339,831,296 - 38 x 141,591,808.
constexpr std::uint64_t kFluxDouble = 339'831'296, kFluxUnmatched = 64'124'992;
// The denoiser's forward at 1024x1024 (diffusion_plan_test.cpp): 15 x 4608 x 3072 elements in bf16
// plus the prompt embeddings 512 x 4096 x 2 B and fp32 latents 16 x 128^2 x 4 B.
constexpr std::uint64_t kFluxDenoiseActs = 212'336'640ull * 2 + 4'194'304 + 1'048'576;

TEST(GroupOffload, BlockLevelHoldsTheUnmatchedGroupAndOneGroupOfBlocks) {
  const auto p = plan_with("flux.1-dev", "group:block:2");
  // Two FluxTransformerBlocks (the larger list's group) beside the unmatched group, bf16:
  // (64,124,992 + 2 x 339,831,296) x 2 B = 1,487,575,168 B.
  const Stage& den = stage(p, "denoise (transformer)");
  EXPECT_EQ(den.weights.count(), (kFluxUnmatched + 2 * kFluxDouble) * 2);
  EXPECT_EQ(den.total.count(), (kFluxUnmatched + 2 * kFluxDouble) * 2 + kFluxDenoiseActs);
  // T5EncoderModel's direct children are `shared` and the T5Stack `encoder`, no nn.ModuleList:
  // the whole encoder is one group, 4,762,310,656 x 2 B, and that stage holds the peak.
  EXPECT_EQ(stage(p, "encode (text_encoder_2)").weights.count(), 4'762'310'656ull * 2);
  EXPECT_EQ(p.stages[p.peak_stage].name, "encode (text_encoder_2)");
  // AutoencoderKL (_group_offload_block_modules: the decoder): the decoder's unmatched group
  // conv_in 16 x 512 x 9 + 512 = 74,240, mid block 2 x 4,721,664 + attention 1,051,648 =
  // 10,494,976, conv_norm_out 256, conv_out 128 x 3 x 9 + 3 = 3,459 (10,572,931) + the largest
  // up_blocks group of 2: up_blocks.0-1, 2 x (3 resnets 512 -> 512 of 4,721,664 + the upsampler
  // conv 2,359,808) = 33,049,600; bf16.
  EXPECT_EQ(stage(p, "decode (vae)").weights.count(), (10'572'931ull + 33'049'600) * 2);
}

TEST(GroupOffload, StreamPrefetchesTheNextBlock) {
  // use_stream: num_blocks_per_group 1 and the next block onloaded while one runs — two
  // FluxTransformerBlocks at most, the same bytes as block:2 without a stream; block:1 alone
  // holds one.
  const auto streamed = plan_with("flux.1-dev", "group:block:1+stream");
  EXPECT_EQ(stage(streamed, "denoise (transformer)").weights.count(), (kFluxUnmatched + 2 * kFluxDouble) * 2);
  const auto one = plan_with("flux.1-dev", "group:block:1");
  EXPECT_EQ(stage(one, "denoise (transformer)").weights.count(), (kFluxUnmatched + kFluxDouble) * 2);
  // block:4 with +stream is planned as diffusers runs it (num_blocks_per_group set to 1), with a note.
  const auto clamped = plan_with("flux.1-dev", "group:block:4+stream");
  EXPECT_EQ(stage(clamped, "denoise (transformer)").weights.count(), (kFluxUnmatched + 2 * kFluxDouble) * 2);
  bool noted = false;
  for (const auto& n : clamped.notes) noted = noted || n.find("num_blocks_per_group to 1") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(GroupOffload, LeafLevelHoldsTheLargestLeafTwiceWithAStream) {
  // SDXL's largest UNet leaf: the first up block's conv1, (1280 + 1280) x 1280 x 3 x 3 + 1280 =
  // 29,492,480 parameters, fp16 (as sequential offload holds it); +stream prefetches the next leaf.
  const auto leaf = plan_with("sdxl-base-1.0", "group:leaf");
  EXPECT_EQ(stage(leaf, "denoise (unet)").weights.count(), 29'492'480ull * 2);
  const auto streamed = plan_with("sdxl-base-1.0", "group:leaf+stream+record");
  EXPECT_EQ(stage(streamed, "denoise (unet)").weights.count(), 2 * 29'492'480ull * 2);
}

TEST(GroupOffload, ComponentSettingsAndComponentsKeptOnTheGpu) {
  // The transformer at leaf level with the VAE left on the GPU (exclude_modules): the denoise stage
  // holds the transformer's largest leaf and the VAE's 83,819,683 bf16 parameters.
  const auto p = plan_with("flux.1-dev", "group:leaf/vae=gpu");
  const auto sequential = plan_with("flux.1-dev", "sequential");
  EXPECT_EQ(stage(p, "denoise (transformer)").weights.count(),
            stage(sequential, "denoise (transformer)").weights.count() + 83'819'683ull * 2);
  EXPECT_EQ(stage(p, "decode (vae)").weights.count(), 83'819'683ull * 2);
  // A per-component block level on the transformer, leaf elsewhere.
  const auto mixed = plan_with("flux.1-dev", "group:leaf/transformer=block:1");
  EXPECT_EQ(stage(mixed, "denoise (transformer)").weights.count(), (kFluxUnmatched + kFluxDouble) * 2);
  EXPECT_EQ(stage(mixed, "encode (text_encoder_2)").weights.count(),
            stage(sequential, "encode (text_encoder_2)").weights.count());
  EXPECT_EQ(offload_text(mixed.request.offload, mixed.request.group), "group:leaf/transformer=block:1");
}

TEST(GroupOffload, BlockLevelOnTheCogVideoXVaeIsRefused) {
  // AutoencoderKLCogVideoX names no _group_offload_block_modules: decode() reaches no group hook.
  EXPECT_THROW(plan_with("cogvideox-2b", "group:block:1"), Error);
  EXPECT_NO_THROW(plan_with("cogvideox-2b", "group:block:1/vae=leaf"));
}

TEST(GroupOffload, BadSpellingsAreRefused) {
  for (const char* bad : {"group:", "group:block", "group:block:0", "group:block:x", "group:block:2x", "group:leaf+record",
                          "group:leaf+fast", "group:gpu", "group:leaf/vae", "group:leaf/=leaf",
                          "group:leaf/vae=leaf/vae=gpu", "group:leaf/vae=gpu+stream", "groups:leaf", "group:block:-1"}) {
    try {
      (void)parse_offload(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << bad;
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << bad;  // one line
    }
  }
  // A component the pipeline does not have.
  EXPECT_THROW(plan_with("flux.1-dev", "group:leaf/unet=block:1"), Error);
  // The canonical spelling round-trips.
  const auto m = parse_offload("group:block:2+stream+record/vae=leaf/text_encoder_2=gpu");
  EXPECT_EQ(m.kind, Offload::Group);
  EXPECT_EQ(offload_text(m.kind, m.group), "group:block:2+stream+record/vae=leaf/text_encoder_2=gpu");
}

}  // namespace
}  // namespace vramplan::diffusion
