// DeepSeek sparse attention (planner/src/model/family_deepseek.cpp read_dsa_indexer /
// dsa_indexer, planner/src/memory/kv_cache.cpp): DeepSeek-V3.2 and GLM-5 count their lightning
// indexers, keep the indexer's key cache, and follow the indexer-sharing rule of the config.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "support/catalogue_counts.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/memory/kv_cache.hpp"
#include "vramplan/model/hf_config.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan {
namespace {

using memory::KvDtype;

KvDtype kv_dtype(const std::string& name) {
  const auto quant = QuantCatalog::load(test::source_dir() / "data" / "quant_formats.json");
  return memory::resolve_kv_dtype(name, "bf16", quant);
}

nlohmann::json glm5_config() { return read_json_file(test::source_dir() / "models" / "glm-5.json"); }

// GLM-5 (aiconfigurator's copy + GlmMoeDsaConfig's indexer defaults; h 6144, 78 layers, vocab
// 154880 untied, 64 heads, q_lora 2048, kv_lora 512, qk 192 + 64, v 256, layers 0-2 dense (12288),
// layers 3-77 with 256 experts of 2048, top 8, one shared expert of 2048):
//   embed + lm_head 2·154880·6144 = 1,903,165,440; final norm 6,144
//   attention, every layer: q_a 6144·2048 + q_a_norm 2048 + q_b 2048·64·256 + kv_a 6144·576
//     + kv_a_norm 512 + kv_b 512·64·448 + o 64·256·6144 + 2 norms 2·6144
//     = 12,582,912 + 2,048 + 33,554,432 + 3,538,944 + 512 + 14,680,064 + 100,663,296 + 12,288
//     = 165,034,496
//   indexer, every layer: wq_b 2048·32·128 + wk 6144·128 + k_norm 2·128 + weights_proj 6144·32
//     = 8,388,608 + 786,432 + 256 + 196,608 = 9,371,904
//   dense MLP 3·6144·12288 = 226,492,416 (x 3)
//   MoE layer: gate 256·6144 + bias 256 + experts 256·3·6144·2048 + shared 3·6144·2048
//            = 1,572,864 + 256 + 9,663,676,416 + 37,748,736 = 9,702,998,272 (x 75)
//   total 1,903,171,584 + 78·174,406,400 + 3·226,492,416 + 75·9,702,998,272 = 743,911,218,432
//   active: 8 of 256 experts, 75·248·37,748,736 = 702,126,489,600 fewer: 41,784,728,832
//   Published (SGLang cookbook GLM-5.md): 744B parameters, 40B active.
TEST(DeepseekSparseAttention, Glm5CountsAnIndexerInEveryLayer) {
  const auto spec =
      test::expect_catalogue_counts("glm-5", 743'911'218'432ull, 41'784'728'832ull, 744'000'000'000ull);
  EXPECT_NEAR(test::active_billions_without(spec, 1'903'165'440ull), 39.88, 0.01);  // "40B active"
  EXPECT_EQ(spec.arch.index_topk, 2048u);
  ASSERT_EQ(spec.arch.layer_has_indexer.size(), 78u);
  for (bool own : spec.arch.layer_has_indexer) EXPECT_TRUE(own);
  EXPECT_TRUE(test::has_tensor(spec, "model.layers.77.self_attn.indexer.weights_proj.weight"));
  EXPECT_TRUE(test::has_tensor(spec, "model.layers.0.self_attn.indexer.k_norm.bias"));
}

// GLM-5.1 has GLM-5's shapes (its config differs in transformers_version only): the same counts.
// GLM-5.2 keeps an indexer in 21 of 78 layers (indexer_types: 0-2, then every 4th from 6); the 57
// shared layers drop wq_b 2048 x 4096 + wk 6144 x 128 + k_norm 2 x 128 + weights_proj 6144 x 32
// = 8,388,608 + 786,432 + 256 + 196,608 = 9,371,904 each, 534,198,528 in all:
//   743,911,218,432 - 534,198,528 = 743,377,019,904; active 41,784,728,832 - 534,198,528 = 41,250,530,304.
// Published: GLM-5.1 744B (SiliconFlow's comparison page), GLM-5.2 about 744B, 40B active (APIYI).
TEST(DeepseekSparseAttention, Glm51IsGlm5AndGlm52SharesItsIndexers) {
  const auto v51 =
      test::expect_catalogue_counts("glm-5.1", 743'911'218'432ull, 41'784'728'832ull, 744'000'000'000ull);
  for (bool own : v51.arch.layer_has_indexer) EXPECT_TRUE(own);
  const auto v52 =
      test::expect_catalogue_counts("glm-5.2", 743'377'019'904ull, 41'250'530'304ull, 744'000'000'000ull);
  ASSERT_EQ(v52.arch.layer_has_indexer.size(), 78u);
  EXPECT_EQ(std::count(v52.arch.layer_has_indexer.begin(), v52.arch.layer_has_indexer.end(), true), 21);
  EXPECT_TRUE(v52.arch.layer_has_indexer[6]);
  EXPECT_FALSE(v52.arch.layer_has_indexer[7]);
  EXPECT_EQ(v52.arch.max_position_embeddings, 1'048'576u);
}

// DeepSeek-V3.2 is DeepSeek-V3 plus one indexer a layer (index_n_heads 64 x 128 from the 1536 q
// latent): wq_b 1536·8192 + wk 7168·128 + k_norm 256 + weights_proj 7168·64
//   = 12,582,912 + 917,504 + 256 + 458,752 = 13,959,424; x 61 = 851,524,864 on V3's
//   671,026,419,200 = 671,877,944,064. Every layer's indexer is active, and the MTP layer has one too.
TEST(DeepseekSparseAttention, DeepseekV32IsV3PlusIndexers) {
  const auto v3 = count_params(load_catalogue_model(test::source_root(), "deepseek-v3"));
  const auto spec = load_catalogue_model(test::source_root(), "deepseek-v3.2");
  const auto c = count_params(spec);
  EXPECT_EQ(c.total, 671'877'944'064ull);
  EXPECT_EQ(c.active - v3.active, 851'524'864ull);
  EXPECT_EQ(c.mtp - v3.mtp, 13'959'424ull);
  EXPECT_EQ(spec.arch.index_n_heads, 64u);
}

// KV per token and layer: bf16 latent (512 + 64) x 2 B = 1,152 B; fp8 "fp8_ds_mla" 512 fp8 +
// 4 fp32 scales + 64 bf16 rope = 512 + 16 + 128 = 656 B; the indexer key 128 fp8 + one fp32 scale
// = 132 B in either. GLM-5: 78 x (1,152 + 132) = 100,152 B and 78 x (656 + 132) = 61,464 B;
// DeepSeek-V3.2 (61 layers) 61 x 788 = 48,068 B. The latent and the key are not split over TP.
TEST(DeepseekSparseAttention, KvKeepsTheLatentAndTheIndexerKey) {
  const auto glm5 = load_catalogue_model(test::source_root(), "glm-5");
  EXPECT_EQ(memory::kv_layout(glm5.arch, kv_dtype("bf16"), 1).bytes_per_token, 100'152u);
  EXPECT_EQ(memory::kv_layout(glm5.arch, kv_dtype("bf16"), 8).bytes_per_token, 100'152u);
  const auto fp8 = memory::kv_layout(glm5.arch, kv_dtype("fp8"), 8);
  EXPECT_EQ(fp8.bytes_per_token, 61'464u);
  EXPECT_NE(fp8.explain.find("fp8_ds_mla, 656 B"), std::string::npos) << fp8.explain;
  EXPECT_NE(fp8.explain.find("indexer key 132 B"), std::string::npos) << fp8.explain;
  const auto v32 = load_catalogue_model(test::source_root(), "deepseek-v3.2");
  EXPECT_EQ(memory::kv_layout(v32.arch, kv_dtype("fp8"), 8).bytes_per_token, 48'068u);
  // DeepSeek-V3 (no indexer) keeps the plain 576 fp8 values: 61 x 576 = 35,136 B.
  const auto v3 = load_catalogue_model(test::source_root(), "deepseek-v3");
  EXPECT_EQ(memory::kv_layout(v3.arch, kv_dtype("fp8"), 8).bytes_per_token, 35'136u);
}

// GLM-5.2-style sharing (index_topk_freq 4, index_skip_topk_offset 3): layer i keeps its own
// indexer when max(i - 2, 0) % 4 == 0, i.e. layers 0, 1, 2 and 6, 10, ..., 74 (18): 21 of 78.
//   params 743,911,218,432 - 57 x 9,371,904 = 743,377,019,904
//   bf16 KV 78 x 1,152 + 21 x 132 = 89,856 + 2,772 = 92,628 B
TEST(DeepseekSparseAttention, SharedIndexersFollowTheConfigRule) {
  auto config = glm5_config();
  config["index_topk_freq"] = 4;
  config["index_skip_topk_offset"] = 3;
  const auto spec = model_from_hf_config(config, "glm-5.2-like.json");
  std::uint64_t own = 0;
  for (bool b : spec.arch.layer_has_indexer) own += b ? 1 : 0;
  EXPECT_EQ(own, 21u);
  EXPECT_TRUE(spec.arch.layer_has_indexer[6]);
  EXPECT_FALSE(spec.arch.layer_has_indexer[7]);
  EXPECT_EQ(count_params(spec).total, 743'377'019'904ull);
  EXPECT_EQ(memory::kv_layout(spec.arch, kv_dtype("bf16"), 1).bytes_per_token, 92'628u);

  // indexer_types, when given, wins: "full" for layer 0 only.
  auto typed = glm5_config();
  typed["indexer_types"] = nlohmann::json::array();
  for (int i = 0; i < 78; ++i) typed["indexer_types"].push_back(i == 0 ? "full" : "shared");
  const auto one = model_from_hf_config(typed, "typed.json");
  EXPECT_EQ(memory::kv_layout(one.arch, kv_dtype("bf16"), 1).bytes_per_token, 78u * 1152u + 132u);
}

TEST(DeepseekSparseAttention, BadIndexerFieldsNameTheField) {
  auto expect_error = [](const nlohmann::json& c, const std::string& field) {
    try {
      (void)model_from_hf_config(c, "bad.json");
      ADD_FAILURE() << "accepted a bad " << field;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  auto missing = glm5_config();
  missing.erase("index_n_heads");
  expect_error(missing, "index_n_heads");
  auto short_list = glm5_config();
  short_list["indexer_types"] = nlohmann::json::array({"full", "shared"});
  expect_error(short_list, "indexer_types");
  auto bad_word = glm5_config();
  bad_word["indexer_types"] = nlohmann::json::array();
  for (int i = 0; i < 78; ++i) bad_word["indexer_types"].push_back(i == 5 ? "sparse" : "full");
  expect_error(bad_word, "indexer_types");
  auto shared_first = glm5_config();
  shared_first["index_topk_pattern"] = std::string(1, 'S') + std::string(77, 'F');
  expect_error(shared_first, "index_topk_pattern");
  auto zero_freq = glm5_config();
  zero_freq["index_topk_freq"] = 0;
  expect_error(zero_freq, "index_topk_freq");
}

}  // namespace
}  // namespace vramplan
