// DeciLM / Nemotron-NAS (family_decilm.cpp): per-layer attention and FFN from block_configs.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/catalogue_counts.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/model/hf_config.hpp"

namespace vramplan {
namespace {

std::size_t layers_of(const ModelArch& a, LayerAttention kind) {
  return static_cast<std::size_t>(std::count(a.layer_attention.begin(), a.layer_attention.end(), kind));
}

// Llama-3.3-Nemotron-Super-49B-v1 (h 8192, 80 layers, 64 heads of 128, vocab 128256 untied). Its
// block_configs: 49 attention blocks with n_heads_in_group 8 (8 KV heads), 31 with no attention;
// FFN widths round_up(int(2 * ffn_mult * 8192 / 3), 256):
//   ffn_mult 5.25 -> 28672 (49 layers), 2.625 -> 14336 (6), 3.28125 -> 17920 (1),
//   1.3125 -> 7168 (10), 1.0 -> int(5461.33) = 5461 -> 5632 (8), 0.5 -> 2730 -> 2816 (6)
//   attention block: input_layernorm 8192 + q, o 2·8192·8192 + k, v 2·8192·1024 = 151,003,136
//     (x 49 = 7,399,153,664)
//   FFN block: post_attention_layernorm 8192 + 3·8192·I:
//     49·704,651,264 + 6·352,329,728 + 440,410,112 + 10·176,168,960 + 8·138,420,224
//     + 6·69,214,208 = 40,366,637,056
//   embed + lm_head 2·128256·8192 = 2,101,346,304; final norm 8,192
//   total 49,867,145,216 (published: 49B)
TEST(FamilyDecilm, NemotronSuper49bCountsEveryBlock) {
  const auto spec = test::expect_catalogue_counts("llama-3.3-nemotron-super-49b", 49'867'145'216ull,
                                                   49'867'145'216ull, 49'000'000'000ull);  // dense: all active
  EXPECT_EQ(spec.arch.num_kv_heads, 8u);
  EXPECT_EQ(spec.arch.head_dim, 128u);
  EXPECT_EQ(layers_of(spec.arch, LayerAttention::Full), 49u);
  EXPECT_EQ(layers_of(spec.arch, LayerAttention::None), 31u);
  EXPECT_EQ(spec.arch.intermediate_size, 28672u);  // the widest block: the activation peak
  // Layer 0: attention, FFN 2.625 (14336); a no-attention layer has no q_proj and no input norm.
  const auto has = [&](const std::string& name) { return test::has_tensor(spec, name); };
  EXPECT_TRUE(has("model.layers.0.self_attn.k_proj.weight"));
  for (std::size_t i = 0; i < spec.arch.layer_attention.size(); ++i)
    if (spec.arch.layer_attention[i] == LayerAttention::None) {
      EXPECT_FALSE(has("model.layers." + std::to_string(i) + ".self_attn.q_proj.weight")) << i;
      EXPECT_FALSE(has("model.layers." + std::to_string(i) + ".input_layernorm.weight")) << i;
      EXPECT_TRUE(has("model.layers." + std::to_string(i) + ".mlp.down_proj.weight")) << i;
    }
}

// Two layers of h 256, 4 heads: one attention block (2 KV heads) with FFN 1.0 -> int(170.67) =
// 170 -> 256, one block with neither.
nlohmann::json tiny_decilm() {
  return {{"architectures", {"DeciLMForCausalLM"}}, {"model_type", "nemotron-nas"}, {"hidden_size", 256},
          {"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"num_key_value_heads", nullptr},
          {"vocab_size", 1000}, {"max_position_embeddings", 128}, {"tie_word_embeddings", false},
          {"block_configs",
           {{{"attention", {{"n_heads_in_group", 2}, {"no_op", false}, {"replace_with_linear", false}}},
             {"ffn", {{"ffn_mult", 1.0}, {"no_op", false}}}},
            {{"attention", {{"n_heads_in_group", nullptr}, {"no_op", true}}}, {"ffn", {{"no_op", true}}}}}}};
}

TEST(FamilyDecilm, TinyBlocksAndEmptyLayer) {
  const auto spec = model_from_hf_config(tiny_decilm(), "tiny/config.json");
  // embed 1000·256 + layer 0 (norms 2·256 + q,o 2·256·256 + k,v 2·256·128 + 3·256·256 = 393,728)
  // + final norm 256 + lm_head 1000·256 = 256,000 + 393,728 + 256 + 256,000 = 905,984
  EXPECT_EQ(count_params(spec).total, 905'984ull);
  EXPECT_EQ(spec.arch.num_kv_heads, 2u);
  EXPECT_EQ(layers_of(spec.arch, LayerAttention::None), 1u);
}

void expect_error(const nlohmann::json& config, const std::string& fragment) {
  try {
    model_from_hf_config(config, "bad/config.json");
    FAIL() << "no error, expected " << fragment;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InputFile) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(FamilyDecilm, RefusesWhatItDoesNotLayOut) {
  auto c = tiny_decilm();
  c.erase("block_configs");
  expect_error(c, "/block_configs: is missing");
  c = tiny_decilm();
  c["num_hidden_layers"] = 3;
  expect_error(c, "/block_configs: has 2 entries, num_hidden_layers is 3");
  c = tiny_decilm();
  c["block_configs"][0]["attention"]["replace_with_linear"] = true;
  expect_error(c, "/block_configs/0/attention/replace_with_linear: is not supported");
  c = tiny_decilm();
  c["block_configs"][0]["attention"]["n_heads_in_group"] = 3;
  expect_error(c, "/block_configs/0/attention/n_heads_in_group: 3 does not divide num_attention_heads 4");
  c = tiny_decilm();
  c["block_configs"][1] = c["block_configs"][0];
  c["block_configs"][1]["attention"]["n_heads_in_group"] = 4;
  expect_error(c, "different n_heads_in_group are not supported");
}

}  // namespace
}  // namespace vramplan
