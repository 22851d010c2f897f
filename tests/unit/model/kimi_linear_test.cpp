// Kimi-Linear (KimiLinearForCausalLM, family_kimi_linear.cpp): the tensor inventory against the
// checkpoint's total, the 1-based layer lists, the KDA state, and the engines' pools for it
// (docs/research/kimi-linear.md has every source).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "support/catalogue_counts.hpp"
#include "support/engine_plans.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/model/hf_config.hpp"
#include "vramplan/model/recurrent_state.hpp"

namespace vramplan {
namespace {

const ModelSpec& kimi_linear() {
  static const ModelSpec m = load_catalogue_model(test::source_root(), "kimi-linear-48b-a3b");
  return m;
}

// hidden h = 2304, 27 layers (20 KDA, 7 MLA), H = 32 KDA heads of D = 128 (P = 4096), conv K = 4:
//   KDA layer   q, k, v 3 x 4096 x 2304 = 28,311,552; f_a, g_a 2 x 128 x 2304 = 589,824;
//               f_b, g_b 2 x 4096 x 128 = 1,048,576; b_proj 32 x 2304 = 73,728; three convs
//               3 x 4096 x 4 = 49,152; A_log 32; dt_bias 4096; o_norm 128; o_proj 2304 x 4096 =
//               9,437,184                                           -> 39,514,272 x 20 =    790,285,440
//   MLA layer   q_proj 32 x 192 x 2304 = 14,155,776; kv_a 576 x 2304 = 1,327,104; kv_a norm 512;
//               kv_b 32 x 256 x 512 = 4,194,304; o_proj 2304 x 4096 = 9,437,184
//                                                                   -> 29,114,880 x 7 =     203,804,160
//   layer 0 MLP 3 x 9216 x 2304                                                      =      63,700,992
//   MoE layer   router 256 x 2304 + bias 256 + experts 256 x 3 x 1024 x 2304 + shared 3 x 1024 x 2304
//                                                                   -> 1,819,607,296 x 26 = 47,309,789,696
//   norms 27 x 2 x 2304 + final 2304 = 126,720; embedding + lm_head 2 x 163,840 x 2304 = 754,974,720
//   total 49,122,681,728 (the checkpoint's safetensors total; published "48B total")
//   active: 248 idle experts x 3 x 1024 x 2304 x 26 layers = 45,638,221,824 fewer: 3,484,459,904
TEST(KimiLinear, ParameterCountsMatchTheCheckpoint) {
  test::expect_catalogue_counts("kimi-linear-48b-a3b", 49'122'681'728ull, 3'484'459'904ull, 48'000'000'000ull);
}

TEST(KimiLinear, TheLayerListsAreOneBased) {
  const auto& a = kimi_linear().arch;
  ASSERT_EQ(a.layer_attention.size(), 27u);
  EXPECT_EQ(std::count(a.layer_attention.begin(), a.layer_attention.end(), LayerAttention::Mla), 7);
  // full_attn_layers [4, 8, ..., 24, 27]: 0-based 3, 7, ..., 23, 26.
  EXPECT_EQ(a.layer_attention[3], LayerAttention::Mla);
  EXPECT_EQ(a.layer_attention[26], LayerAttention::Mla);
  EXPECT_EQ(a.layer_attention[0], LayerAttention::Recurrent);
  EXPECT_EQ(a.layer_attention[25], LayerAttention::Recurrent);
  EXPECT_FALSE(a.layer_is_moe[0]);  // first_k_dense_replace 1
  EXPECT_TRUE(a.layer_is_moe[1]);
  EXPECT_EQ(a.max_position_embeddings, 1048576u);  // model_max_length
  EXPECT_TRUE(a.rope_tables.empty());              // mla_use_nope: no rotary cache
}

TEST(KimiLinear, KdaStateIsThreeConvStatesAndAFloat32RecurrentState) {
  // At TP 4: conv 3 x (K - 1 = 3) x 4096 / 4 = 9,216 values x 2 B (bf16) = 18,432 B; recurrent
  // 32 / 4 x 128 x 128 = 131,072 values x 4 B (float32 in both engines) = 524,288 B: 542,720 B a
  // layer, 10,854,400 B a request over 20 layers.
  EXPECT_EQ(recurrent_state_bytes(kimi_linear().arch, 4), 542'720u);
  const auto p = test::plan_engine("sglang@0.5.7", kimi_linear(), test::gpu_target(Bytes::from_gib(192)),
                                   {{"tp-size", "4"}});
  EXPECT_EQ(p.kv.state_bytes_per_sequence, 10'854'400u);
  // 0.5.7 turns the radix cache off for this architecture, so the state pool is 512 slots (+1
  // padding row) and 512 requests run at most (slots // 1).
  EXPECT_EQ(test::component(p.kv_cache, "kv_cache.recurrent_state").bytes.count(), 513ull * 10'854'400ull);
  EXPECT_EQ(p.engine_view.at("max_running_requests").get<std::uint64_t>(), 512u);
  EXPECT_FALSE(p.engine_view.at("radix_cache").get<bool>());
  // The token pool holds the 7 MLA layers' latent only: 7 x 576 x 2 B = 8,064 B a token.
  EXPECT_EQ(p.kv.bytes_per_token, 8'064u);
}

TEST(KimiLinear, BadLayerListsNameTheField) {
  std::ifstream in(test::source_dir() / "models" / "kimi-linear-48b-a3b.json");
  nlohmann::json config = nlohmann::json::parse(in);
  auto out_of_range = config;
  out_of_range["linear_attn_config"]["kda_layers"][0] = 28;
  EXPECT_NE(test::error_message([&] { model_from_hf_config(out_of_range, "kimi.json"); }, ErrorKind::InputFile)
                .find("kda_layers"),
            std::string::npos);
  auto overlap = config;
  overlap["linear_attn_config"]["full_attn_layers"][0] = 1;  // layer 1 is a KDA layer
  EXPECT_NE(test::error_message([&] { model_from_hf_config(overlap, "kimi.json"); }, ErrorKind::InputFile)
                .find("full_attn_layers"),
            std::string::npos);
}

}  // namespace
}  // namespace vramplan
