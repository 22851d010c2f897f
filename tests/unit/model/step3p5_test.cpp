// Step-3.5-Flash (Step3p5ForCausalLM, family_step3p5.cpp): the inventory against the hand count
// of docs/research/step3.5-flash.md section 1, the per-layer-type attention and SGLang's pools.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "support/catalogue_counts.hpp"
#include "support/engine_plans.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/model/hf_config.hpp"

namespace vramplan {
namespace {

const ModelSpec& step35() {
  static const ModelSpec m = load_catalogue_model(test::source_root(), "step-3.5-flash");
  return m;
}

// h = 4096, d = 128, 8 KV heads, vocab 128,896, 45 layers: 12 full (64 query heads), 33 sliding (96):
//   full attention    q 8192 x 4096 + k, v 1024 x 4096 each + o 4096 x 8192 + q/k norms 2 x 128
//                     + g_proj 64 x 4096                             -> 75,759,872 x 12 =    909,118,464
//   sliding attention q 12,288 x 4096 + k, v + o 4096 x 12,288 + norms + g_proj 96 x 4096
//                                                                    -> 109,445,376 x 33 =  3,611,697,408
//   dense MLP (layers 0-2) 3 x 11,264 x 4096                         -> 138,412,032 x 3 =     415,236,096
//   MoE (layers 3-44) router 288 x 4096 + bias 288 + experts 288 x 3 x 1280 x 4096 + shared
//                     3 x 1280 x 4096                                -> 4,546,756,896 x 42 = 190,963,789,632
//   norms 45 x 2 x 4096 + 4096 = 372,736; embedding + lm_head 2 x 128,896 x 4096 = 1,055,916,032
//   total 196,956,130,368 (published: 196.81B, "196B backbone + 0.81B head")
//   active: 280 idle experts x 3 x 1280 x 4096 x 42 layers = 184,968,806,400 fewer: 11,987,323,968
//   MTP: 3 x (sliding attention 109,445,376 + dense MLP 138,412,032 + eh_proj 4096 x 8192 + 5 norms
//        of 4096 + head 128,896 x 4096) = 3 x 809,390,336 = 2,428,171,008, apart from the total
TEST(Step3p5, ParameterCountsMatchTheHandCount) {
  const auto spec = test::expect_catalogue_counts("step-3.5-flash", 196'956'130'368ull, 11'987'323'968ull,
                                                  196'810'000'000ull);
  EXPECT_EQ(count_params(spec).mtp, 2'428'171'008ull);
}

TEST(Step3p5, SlidingLayersHaveTheirOwnQueryHeads) {
  const auto& a = step35().arch;
  ASSERT_EQ(a.layer_attention.size(), 45u);  // layer_types has 48 entries: the last 3 are the MTP layers'
  EXPECT_EQ(std::count(a.layer_attention.begin(), a.layer_attention.end(), LayerAttention::Full), 12);
  EXPECT_EQ(a.layer_attention[0], LayerAttention::Full);
  EXPECT_EQ(a.layer_attention[1], LayerAttention::Sliding);
  EXPECT_EQ(a.sliding_window, 512u);
  EXPECT_EQ(a.num_kv_heads, 8u);  // num_attention_groups
  const auto rows = [&](const std::string& name) {
    for (const auto& t : step35().tensors)
      if (t.name == name) return t.shape.front();
    return std::uint64_t{0};
  };
  EXPECT_EQ(rows("model.layers.0.self_attn.q_proj.weight"), 64u * 128u);
  EXPECT_EQ(rows("model.layers.1.self_attn.q_proj.weight"), 96u * 128u);
  EXPECT_EQ(rows("model.layers.1.self_attn.g_proj.weight"), 96u);
  EXPECT_EQ(rows("model.layers.3.moe.gate_proj.weight"), 288u);  // stacked {E, I, h}
  // Two cos/sin caches: the full layers' 64 rotated dims with llama3 scaling, the sliding layers' 128.
  ASSERT_EQ(a.rope_tables.size(), 2u);
  EXPECT_EQ(a.rope_tables[0].rotary_dim, 64u);
  EXPECT_EQ(a.rope_tables[0].scaling_type, "llama3");
  EXPECT_EQ(a.rope_tables[1].rotary_dim, 128u);
}

TEST(Step3p5, SglangSplitsItsPoolsAsAHybridSwaModel) {
  // 0.5.9 is_hybrid_swa_model lists Step3p5ForCausalLM: at TP 4 a full layer and a sliding one
  // both cost 2 KV heads x 128 x 2 x 2 B = 1,024 B a token; the sliding pool is 0.8 of the full one.
  const auto p = test::plan_engine("sglang@0.5.9", step35(), test::gpu_target(Bytes::from_gib(139), test::kH100Name, 4),
                                   {{"tp-size", "4"}});
  const auto full = p.engine_view.at("full_max_total_num_tokens").get<std::uint64_t>();
  const auto swa = p.engine_view.at("swa_max_total_num_tokens").get<std::uint64_t>();
  EXPECT_EQ(swa, full * 8 / 10);
  EXPECT_EQ(p.kv_cache_bytes().count(), full * 12u * 1024u + swa * 33u * 1024u);
}

TEST(Step3p5, BadMoeLayerListsNameTheField) {
  std::ifstream in(test::source_dir() / "models" / "step-3.5-flash.json");
  const nlohmann::json config = nlohmann::json::parse(in);
  for (const char* list : {"3, 99", "3,x", "3,,4"}) {
    auto bad = config;
    bad["moe_layers_enum"] = list;
    EXPECT_NE(test::error_message([&] { model_from_hf_config(bad, "step.json"); }, ErrorKind::InputFile)
                  .find("moe_layers_enum"),
              std::string::npos)
        << list;
  }
  auto spaced = config;
  spaced["moe_layers_enum"] = " 3, 4 ,5";  // int() of each item: blanks allowed
  const auto moe = model_from_hf_config(spaced, "step.json").arch.layer_is_moe;
  EXPECT_EQ(std::count(moe.begin(), moe.end(), true), 3);
}

}  // namespace
}  // namespace vramplan
