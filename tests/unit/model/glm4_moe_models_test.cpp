// GLM-4.5 MoE (Glm4MoeForCausalLM, the generic decoder's Moe::Glm4 row in hf_families.cpp): the
// catalogue's two sizes, from transformers' conversion-script configs, counted by hand from the
// vLLM / SGLang glm4_moe.py module constructors.
#include <gtest/gtest.h>

#include "support/catalogue_counts.hpp"

namespace vramplan {
namespace {

using test::has_tensor;

// GLM-4.5-Air (CONFIG_100B: h 4096, 46 layers, 96 / 8 heads of 128, q/k/v bias, no q/k norm,
// layer 0 dense 10944, then 128 experts of 1408, top 8, one shared expert; vocab 151552 untied):
//   attention + norms, every layer: 2 norms 2·4096 + q 4096·12288 + 12288 + k, v 2·(4096·1024 + 1024)
//     + o 12288·4096 = 8,192 + 50,343,936 + 8,390,656 + 50,331,648 = 109,074,432 (x 46)
//   layer 0 MLP 3·4096·10944 = 134,479,872
//   MoE layer: gate 128·4096 + bias 128 + experts 128·3·4096·1408 + shared 3·4096·1408
//            = 524,288 + 128 + 2,214,592,512 + 17,301,504 = 2,232,418,432 (x 45)
//   embed + lm_head 2·151552·4096 = 1,241,513,984; final norm 4,096
//   total 1,241,518,080 + 46·109,074,432 + 134,479,872 + 45·2,232,418,432 = 106,852,251,264
//   active: 8 of 128 experts, 45·120·17,301,504 = 93,428,121,600 fewer: 13,424,129,664.
//   Published: 106B total, 12B active.
TEST(Glm4MoeModels, Glm45AirCountsItsDenseFirstLayerAndSharedExpert) {
  const auto spec =
      test::expect_catalogue_counts("glm-4.5-air", 106'852'251'264ull, 13'424'129'664ull, 106'000'000'000ull);
  // 12B active as published: 12.18B without the embedding and LM head.
  EXPECT_NEAR(test::active_billions_without(spec, 1'241'513'984ull), 12.18, 0.01);
  ASSERT_EQ(spec.arch.layer_is_moe.size(), 46u);
  EXPECT_FALSE(spec.arch.layer_is_moe[0]);
  EXPECT_TRUE(spec.arch.layer_is_moe[1]);
  EXPECT_TRUE(has_tensor(spec, "model.layers.0.self_attn.q_proj.bias"));
  EXPECT_FALSE(has_tensor(spec, "model.layers.0.self_attn.o_proj.bias"));
  EXPECT_FALSE(has_tensor(spec, "model.layers.0.self_attn.q_norm.weight"));
  EXPECT_TRUE(has_tensor(spec, "model.layers.1.mlp.gate.e_score_correction_bias"));
  // Glm4MoeConfig's partial_rotary_factor 0.5: half of each 128-wide head rotates.
  ASSERT_FALSE(spec.arch.rope_tables.empty());
  EXPECT_EQ(spec.arch.rope_tables[0].rotary_dim, 64u);
}

// GLM-4.5 (CONFIG_360B + use_qk_norm: h 5120, 92 layers, 96 / 8 heads of 128, q/k/v bias, q/k
// norms of 128, layers 0-2 dense 12288, then 160 experts of 1536, top 8, one shared expert):
//   attention + norms: 2·5120 + q 5120·12288 + 12288 + k, v 2·(5120·1024 + 1024) + o 12288·5120
//     + q/k norm 2·128 = 10,240 + 62,926,848 + 10,487,808 + 62,914,560 + 256 = 136,339,712 (x 92)
//   dense MLP 3·5120·12288 = 188,743,680 (x 3)
//   MoE layer: gate 160·5120 + bias 160 + experts 160·3·5120·1536 + shared 3·5120·1536
//            = 819,200 + 160 + 3,774,873,600 + 23,592,960 = 3,799,285,920 (x 89)
//   embed + lm_head 2·151552·5120 = 1,551,892,480; final norm 5,120
//   total 352,797,829,024 (published 355B, which the MTP layer this count leaves out nearly fills)
//   active: 8 of 160 experts, 89·152·23,592,960 = 319,165,562,880 fewer: 33,632,266,144.
TEST(Glm4MoeModels, Glm45CountsItsQkNormsAndThreeDenseLayers) {
  const auto spec =
      test::expect_catalogue_counts("glm-4.5", 352'797'829'024ull, 33'632'266'144ull, 355'000'000'000ull);
  ASSERT_EQ(spec.arch.layer_is_moe.size(), 92u);
  EXPECT_FALSE(spec.arch.layer_is_moe[2]);
  EXPECT_TRUE(spec.arch.layer_is_moe[3]);
  EXPECT_TRUE(has_tensor(spec, "model.layers.0.self_attn.q_norm.weight"));
  EXPECT_EQ(spec.arch.num_kv_heads, 8u);
}

}  // namespace
}  // namespace vramplan
