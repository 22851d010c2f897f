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

TEST(VllmEncoderProfile, NothingForTextModelsOrImagesTheConfigDoesNotSize) {
  EXPECT_EQ(vllm_encoder_profile(arch("gemma-3-1b"), 8192, 1024, 8192, 2).held_bytes, 0.0);
  // Llama-4's tiles per image (max_patches) are a preprocessor setting, not in config.json.
  const auto scout = arch("llama-4-scout");
  EXPECT_TRUE(scout.multimodal);
  EXPECT_EQ(vllm_encoder_profile(scout, 8192, 1024, 8192, 2).items, 0u);
}

}  // namespace
}  // namespace vramplan::memory
