// Catalogue entries added for SGLang cookbook serving records (tests/accuracy/data/
// serving_sim_setup.json): each loads through the real catalogue loader, sums to a count derived
// by hand from its config and the HF module constructors, and lands within rounding of the
// publisher's total / active figures.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/catalogue_counts.hpp"

namespace vramplan {
namespace {

// MiniMax-M2.5 (transformers modular_minimax_m2.py; h 3072, 62 layers, vocab 200064, 48 / 8 heads of
// 128, 256 experts of 1536, top 8, untied):
//   embed + lm_head 2·200064·3072 = 1,229,193,216; final norm 3,072
//   per layer: norms 2·3072 + q/o 2·3072·6144 + k/v 2·3072·1024 + q_norm 6144 + k_norm 1024
//              + gate 256·3072 + e_score_correction_bias 256 + experts 256·3·3072·1536
//            = 6,144 + 44,040,192 + 7,168 + 786,432 + 256 + 3,623,878,656 = 3,668,718,848
//   total 62·3,668,718,848 + 1,229,196,288 = 228,689,764,864
//   active: 8 of 256 experts, 8·3·3072·1536 = 113,246,208 a layer:
//           62·(3,668,718,848 - 3,623,878,656 + 113,246,208) + 1,229,196,288 = 11,030,553,088
//   Published (SGLang docs, MiniMax's model-card text): 230B total, 10B active.
TEST(CookbookModels, MiniMaxM25CountsItsExperts) {
  const auto spec =
      test::expect_catalogue_counts("minimax-m2.5", 228'689'764'864ull, 11'030'553'088ull, 230'000'000'000ull);
  // 10B active as published: 9.80B without the 1.23B of embedding and LM head.
  EXPECT_NEAR(test::active_billions_without(spec, 1'229'193'216ull), 9.8, 0.05);
  EXPECT_EQ(spec.arch.num_experts, 256u);
  EXPECT_EQ(spec.arch.experts_per_token, 8u);
  EXPECT_EQ(spec.arch.moe_intermediate_size, 1536u);
  EXPECT_TRUE(spec.exclusions.empty());
}

// MiniMax-M2.7 has M2.5's shapes (62 layers, 256 experts of 1536, top 8; its config adds a longer
// context and attn_type_list, every layer 1 = full attention): the same counts, 230B / 10B published.
TEST(CookbookModels, MiniMaxM27IsM25sShape) {
  const auto spec =
      test::expect_catalogue_counts("minimax-m2.7", 228'689'764'864ull, 11'030'553'088ull, 230'000'000'000ull);
  EXPECT_EQ(spec.arch.max_position_embeddings, 204'800u);
  EXPECT_EQ(std::count(spec.arch.layer_attention.begin(), spec.arch.layer_attention.end(), LayerAttention::Full), 62);
}

// ERNIE-4.5-21B-A3B (transformers modular_ernie4_5_moe.py; h 2560, 28 layers, vocab 103424 tied,
// 20 / 4 heads of 128, layer 0 dense (12288), layers 1-27 with 64 experts of 1536, top 6, and
// shared experts of 2·1536):
//   embed 103424·2560 = 264,765,440; final norm 2,560
//   attention + norms, every layer: 2·2560·2560 + 2·2560·512 + 2·2560 = 15,733,760 (x 28 = 440,545,280)
//   layer 0 MLP 3·2560·12288 = 94,371,840
//   MoE layer: gate 64·2560 + bias 64 + experts 64·3·2560·1536 + shared 3·2560·3072
//            = 163,840 + 64 + 754,974,720 + 23,592,960 = 778,731,584 (x 27 = 21,025,752,768)
//   total 264,765,440 + 2,560 + 440,545,280 + 94,371,840 + 21,025,752,768 = 21,825,437,888
//   active: 6 of 64 experts (70,778,880 a layer): 27·94,535,744 = 2,552,465,088 instead,
//           3,352,150,208 in all. Published: 21B total, 3B active.
TEST(CookbookModels, Ernie45CountsItsSharedExpertsAndDenseFirstLayer) {
  const auto spec =
      test::expect_catalogue_counts("ernie-4.5-21b-a3b", 21'825'437'888ull, 3'352'150'208ull, 21'000'000'000ull);
  // 3B active as published: 3.09B without the tied embedding.
  EXPECT_NEAR(test::active_billions_without(spec, 264'765'440ull), 3.0, 0.1);
  EXPECT_TRUE(spec.arch.tied_embeddings);
  ASSERT_EQ(spec.arch.layer_is_moe.size(), 28u);
  EXPECT_FALSE(spec.arch.layer_is_moe[0]);
  for (std::size_t i = 1; i < 28; ++i) EXPECT_TRUE(spec.arch.layer_is_moe[i]) << i;
  EXPECT_EQ(spec.arch.shared_expert_intermediate_size, 3072u);
  EXPECT_TRUE(spec.exclusions.empty());
}

// GLM-4.7-Flash (DeepSeek-V3's layer: transformers modular_glm4_moe_lite.py; h 2048, 47 layers,
// vocab 154880 untied, 20 heads, q_lora 768, kv_lora 512, qk 192 + 64, v 256, layer 0 dense (10240),
// layers 1-46 with 64 experts of 1536, top 4, one shared expert of 1536):
//   embed + lm_head 2·154880·2048 = 634,388,480; final norm 2,048
//   attention, every layer: q_a 2048·768 + q_a_norm 768 + q_b 768·20·256 + kv_a 2048·576
//     + kv_a_norm 512 + kv_b 512·20·448 + o 20·256·2048 + 2 norms 2·2048
//     = 1,572,864 + 768 + 3,932,160 + 1,179,648 + 512 + 4,587,520 + 10,485,760 + 4,096
//     = 21,763,328 (x 47 = 1,022,876,416)
//   layer 0 MLP 3·2048·10240 = 62,914,560
//   MoE layer: gate 64·2048 + bias 64 + experts 64·3·2048·1536 + shared 3·2048·1536
//            = 131,072 + 64 + 603,979,776 + 9,437,184 = 613,548,096 (x 46 = 28,223,212,416)
//   total 634,388,480 + 2,048 + 1,022,876,416 + 62,914,560 + 28,223,212,416 = 29,943,393,920
//   active: 4 of 64 experts, 46·60·9,437,184 = 26,046,627,840 fewer: 3,896,766,080.
//   Published (SGLang cookbook): 30B total, 3B active.
TEST(CookbookModels, Glm47FlashIsDeepseekV3sLayer) {
  const auto spec =
      test::expect_catalogue_counts("glm-4.7-flash", 29'943'393'920ull, 3'896'766'080ull, 30'000'000'000ull);
  EXPECT_EQ(count_params(spec).mtp, 0u);
  // 3B active as published: 3.26B without the embedding and LM head.
  EXPECT_NEAR(test::active_billions_without(spec, 634'388'480ull), 3.26, 0.01);
  EXPECT_EQ(spec.arch.kv_lora_rank, 512u);
  EXPECT_EQ(spec.arch.qk_rope_head_dim, 64u);
  ASSERT_EQ(spec.arch.layer_is_moe.size(), 47u);
  EXPECT_FALSE(spec.arch.layer_is_moe[0]);
  for (std::size_t i = 1; i < 47; ++i) EXPECT_TRUE(spec.arch.layer_is_moe[i]) << i;
  EXPECT_TRUE(spec.exclusions.empty());
}

}  // namespace
}  // namespace vramplan
