// vllm_encoder_profile: the dummy images vLLM's profile_run encodes and keeps under the text peak.
#include "vramplan/memory/vllm_encoder_profile.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/model/catalogue.hpp"

namespace vramplan::memory {
namespace {

ModelArch arch(const std::string& id) { return load_catalogue_model(test::source_root(), id).arch; }

TEST(VllmEncoderProfile, Gemma3FillsTheEncoderBudgetWithFullImages) {
  const auto a = arch("gemma-3-12b");
  EXPECT_EQ(a.mm_tokens_per_item, 256u);                 // config.json mm_tokens_per_image
  EXPECT_EQ(a.mm_pixel_values_per_item, 3u * 896 * 896);  // vision_config num_channels x image_size^2
  // vLLM 0.19 defaults on an H100: T = 8192, S = 1024, max_model_len 8192, bf16.
  // N = min(8192 // 256, 1024 x min(999, 8192 // 256)) = 32 images;
  // pixels 32 x 2,408,448 x 2 B = 154,140,672 B; embeddings 32 x 256 x 3840 x 2 B = 62,914,560 B.
  const auto p = vllm_encoder_profile(a, 8192, 1024, 8192, 2);
  EXPECT_EQ(p.items, 32u);
  EXPECT_EQ(p.budget_tokens, 8192u);
  EXPECT_DOUBLE_EQ(p.held_bytes, 217055232.0);
  // gemma-3-27b: same SigLIP tower, h = 5376: 154,140,672 + 32 x 256 x 5376 x 2 = 242,221,056 B.
  EXPECT_DOUBLE_EQ(vllm_encoder_profile(arch("gemma-3-27b"), 8192, 1024, 8192, 2).held_bytes, 242221056.0);
}

TEST(VllmEncoderProfile, FewSequencesOrShortPromptsBoundTheItems) {
  const auto a = arch("gemma-3-12b");
  // max_model_len 200 < 256: one image per prompt, so 4 sequences take 4 images:
  // 4 x (2,408,448 + 256 x 3840) x 2 B = 27,131,904 B.
  const auto few = vllm_encoder_profile(a, 8192, 4, 200, 2);
  EXPECT_EQ(few.items, 4u);
  EXPECT_DOUBLE_EQ(few.held_bytes, 27131904.0);
  // T = 128 < 256: the budget is raised to one item (compute_mm_encoder_budget), N = 1:
  // (2,408,448 + 256 x 3840) x 2 B = 6,782,976 B.
  const auto one = vllm_encoder_profile(a, 128, 1024, 8192, 2);
  EXPECT_EQ(one.budget_tokens, 256u);
  EXPECT_EQ(one.items, 1u);
  EXPECT_DOUBLE_EQ(one.held_bytes, 6782976.0);
}

TEST(VllmEncoderProfile, NothingForTextModels) {
  EXPECT_EQ(vllm_encoder_profile(arch("gemma-3-1b"), 8192, 1024, 8192, 2).held_bytes, 0.0);
}

TEST(VllmEncoderProfile, Llama4TilesFromThePreprocessorMaxPatches) {
  // max_patches 16 tiles + the global tile, 144 embeddings each: P = 2448; pixels 17 x 3 x 336^2 =
  // 5,757,696. N = min(8192 // 2448, 1024 x min(999, 8192 // 2448)) = 3;
  // held = 3 x (5,757,696 + 2448 x 5120) x 2 B = 109,748,736 B.
  const auto p = vllm_encoder_profile(arch("llama-4-scout"), 8192, 1024, 8192, 2);
  EXPECT_EQ(p.items, 3u);
  EXPECT_DOUBLE_EQ(p.held_bytes, 109748736.0);
}

TEST(VllmEncoderProfile, QwenVlProfilesOneImageOfTheLargestArea) {
  // Qwen2.5-VL-7B: P = 16384 > T = 8192, so the budget is raised to 16384 and N = 1 (vLLM logs
  // "Encoder cache will be initialized with a budget of 16384 tokens, and profiled with 1 image
  // items of the maximum feature size", github.com/vllm-project/vllm/issues/27706).
  // held = (65536 x 1176 + 16384 x 3584) x 2 B = (77,070,336 + 58,720,256) x 2 = 271,581,184 B.
  const auto q25 = vllm_encoder_profile(arch("qwen2.5-vl-7b"), 8192, 1024, 8192, 2);
  EXPECT_EQ(q25.budget_tokens, 16384u);
  EXPECT_EQ(q25.items, 1u);
  EXPECT_DOUBLE_EQ(q25.held_bytes, 271581184.0);
  // Qwen3-VL-8B: embeddings 4096 x (1 + 3 deepstack levels) wide:
  // (65536 x 1536 + 16384 x 16384) x 2 B = (100,663,296 + 268,435,456) x 2 = 738,197,504 B.
  EXPECT_DOUBLE_EQ(vllm_encoder_profile(arch("qwen3-vl-8b"), 8192, 1024, 8192, 2).held_bytes, 738197504.0);
}

TEST(VllmEncoderProfile, MistralSmallEncodesTwoFullSizeImages) {
  // P = 55 x 55 = 3025 merged patches; N = min(8192 // 3025, 1024 x min(999, 16000 // 3025)) = 2;
  // held = 2 x (3 x 1540^2 + 3025 x 5120) x 2 B = 2 x (7,114,800 + 15,488,000) x 2 = 90,411,200 B.
  const auto p = vllm_encoder_profile(arch("mistral-small-3.1-24b"), 8192, 1024, 16000, 2);
  EXPECT_EQ(p.items, 2u);
  EXPECT_DOUBLE_EQ(p.held_bytes, 90411200.0);
}

}  // namespace
}  // namespace vramplan::memory
