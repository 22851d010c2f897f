// Mamba + attention hybrids: Nemotron-H (NemotronHForCausalLM) and Granite-4.0-H
// (GraniteMoeHybridForCausalLM) in family_mamba_hybrid.cpp, Falcon-H1 (family_falcon_h1.cpp) and
// Jamba (family_jamba.cpp) — tensor inventories checked against the publishers' counts, and the
// per-request state with vLLM's TP split (mamba_utils.py MambaStateShapeCalculator
// mamba2_state_shape / mamba1_state_shape).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "support/catalogue_counts.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/model/hf_config.hpp"
#include "vramplan/model/inventory.hpp"
#include "vramplan/model/recurrent_state.hpp"

namespace vramplan {
namespace {

const ModelSpec& hybrid_model(const std::string& id) { return test::cached_catalogue_model(id); }

std::size_t count_kind(const ModelArch& a, LayerAttention k) {
  return static_cast<std::size_t>(std::count(a.layer_attention.begin(), a.layer_attention.end(), k));
}

TEST(NemotronH, Dense8BCountsMatchTheModelCard) {
  const auto& m = hybrid_model("nemotron-h-8b");
  // hidden 4096, vocab 131,072, pattern of 52: 24 Mamba2 (M), 24 MLP (-), 4 attention (*).
  //   embeddings + lm_head   2 x 131,072 x 4096                                   = 1,073,741,824
  //   Mamba2 layer  d_inner 128 x 64 = 8192, conv_dim 8192 + 2 x 8 x 128 = 10,240;
  //                 in_proj (8192 + 10,240 + 128) x 4096 = 76,021,760; conv1d 10,240 x 4 + bias
  //                 10,240 = 51,200; dt_bias, A_log, D 3 x 128; norm 8192; out_proj 4096 x 8192
  //                 = 33,554,432                                   -> 109,635,968 x 24 = 2,631,263,232
  //   attention     q, o 4096 x 4096; k, v 1024 x 4096             ->  41,943,040 x 4  =   167,772,160
  //   MLP           up, down 21,504 x 4096 (squared ReLU, no gate) -> 176,160,768 x 24 = 4,227,858,432
  //   norms         52 x 4096 + norm_f 4096                                             =       217,088
  //   total                                                                             = 8,100,852,736
  EXPECT_EQ(count_params(m).total, 8'100'852'736ull);
  // Model card: an "8B" hybrid; 4 attention, 24 Mamba-2 layers.
  EXPECT_NEAR(static_cast<double>(count_params(m).total) / 1e9, 8.0, 0.2);
  EXPECT_EQ(count_kind(m.arch, LayerAttention::Full), 4u);
  EXPECT_EQ(count_kind(m.arch, LayerAttention::Recurrent), 24u);
  EXPECT_EQ(count_kind(m.arch, LayerAttention::None), 24u);
  EXPECT_EQ(m.arch.head_dim, 128u);  // attention_head_dim
}

TEST(NemotronH, Nano3MoeCountsMatchTheModelCard) {
  const auto& m = hybrid_model("nemotron-3-nano-30b-a3b");
  const auto c = count_params(m);
  // hidden 2688, pattern of 52: 23 Mamba2, 23 MoE (E), 6 attention.
  //   embeddings + lm_head   2 x 131,072 x 2688                                    =   704,643,072
  //   Mamba2   d_inner 64 x 64 = 4096, conv_dim 4096 + 2 x 8 x 128 = 6144; in_proj 10,304 x 2688
  //            = 27,697,152; conv1d 6144 x 4 + 6144; 3 x 64; norm 4096; out_proj 2688 x 4096
  //            = 11,010,048                                        ->     38,742,208 x 23 =  891,070,784
  //   attention  q, o 4096 x 2688; k, v 256 x 2688                 ->     23,396,352 x 6  =  140,378,112
  //   MoE      router 128 x 2688 + correction bias 128; experts 128 x (up + down) 2 x 1856 x 2688
  //            = 1,277,165,568; shared up + down 2 x 3712 x 2688 = 19,955,712
  //                                                                -> 1,297,465,472 x 23 = 29,841,705,856
  //   norms    52 x 2688 + 2688                                                          =       142,464
  //   total                                                                              = 31,577,940,288
  EXPECT_EQ(c.total, 31'577'940'288ull);
  // Active: 6 of 128 experts -> minus 23 x 122 x 2 x 1856 x 2688 = 27,997,863,936 = 3,580,076,352.
  EXPECT_EQ(c.active, 3'580'076'352ull);
  // Model card: 31.6B total; 3.6B active including embeddings, 3.2B without the lm_head's 0.35B.
  EXPECT_NEAR(static_cast<double>(c.total) / 1e9, 31.6, 0.05);
  EXPECT_NEAR(static_cast<double>(c.active) / 1e9, 3.6, 0.05);
  EXPECT_NEAR(static_cast<double>(c.active - c.embedding) / 1e9, 3.2, 0.05);
}

TEST(NemotronH, Super3LatentMoeCountsMatchTheModelCard) {
  // Model card: "Total Parameters 120B (12B active)" (the catalogue's _published_params).
  const auto m = test::expect_catalogue_counts("nemotron-3-super-120b-a12b", 120'668'707'840ull,
                                               12'770'237'440ull, 120'000'000'000ull);
  const auto c = count_params(m);
  // hidden 4096, pattern of 88: 40 Mamba2, 40 latent MoE (E), 8 attention; the MTP layer is not counted.
  //   embeddings + lm_head   2 x 131,072 x 4096                                   =   1,073,741,824
  //   Mamba2     the Nemotron-H-8B mixer (128 heads of 64, 8 groups, state 128) ->
  //              109,635,968 x 40                                                =   4,385,438,720
  //   attention  q, o 4096 x 4096; k, v 2 x 128 = 256 x 4096 -> 35,651,584 x 8  =     285,212,672
  //   MoE        router 512 x 4096 = 2,097,152 + correction bias 512; experts on the 1,024-wide
  //              latent 512 x (up + down) 2 x 2688 x 1024 = 2,818,572,288; fc1 / fc2_latent_proj
  //              2 x 1024 x 4096 = 8,388,608; shared up + down 2 x 5376 x 4096 = 44,040,192
  //                                             -> 2,873,098,752 x 40            = 114,923,950,080
  //   norms      88 x 4096 + 4096                                                =         364,544
  //   total                                                                      = 120,668,707,840
  EXPECT_EQ(c.total, 120'668'707'840ull);
  // Active: 22 of 512 experts -> minus 40 x 490 x 2 x 2688 x 1024 = 107,898,470,400.
  EXPECT_EQ(c.active, 12'770'237'440ull);
  // Model card: "Total Parameters 120B (12B active)".
  EXPECT_NEAR(static_cast<double>(c.total) / 1e9, 120.0, 1.0);
  EXPECT_NEAR(static_cast<double>(c.active - c.embedding) / 1e9, 12.0, 0.3);
  EXPECT_EQ(m.arch.moe_latent_size, 1024u);
  EXPECT_EQ(m.arch.moe_hidden_size(), 1024u);
  EXPECT_EQ(hybrid_model("nemotron-3-nano-30b-a3b").arch.moe_hidden_size(), 2688u);  // no latent: hidden
  for (const auto& t : m.tensors) {
    if (t.name == "backbone.layers.1.mixer.experts.*.up_proj.weight") {
      EXPECT_EQ(t.shape, (std::vector<std::uint64_t>{512, 2688, 1024}));
    }
    if (t.name == "backbone.layers.1.mixer.fc1_latent_proj.weight") {
      EXPECT_EQ(t.role, TensorRole::FfnLatentDown);
      EXPECT_EQ(t.shape, (std::vector<std::uint64_t>{1024, 4096}));
    }
  }
}

TEST(NemotronH, LatentSizeIsCheckedAgainstTheHiddenSize) {
  auto cfg = nlohmann::json::parse(R"({"architectures":["NemotronHForCausalLM"],"model_type":"nemotron_h",
    "hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,
    "vocab_size":256,"hybrid_override_pattern":"ME","mamba_num_heads":4,"mamba_head_dim":16,"n_groups":1,
    "ssm_state_size":8,"conv_kernel":4,"intermediate_size":32,"n_routed_experts":4,"num_experts_per_tok":2,
    "moe_intermediate_size":32,"moe_latent_size":128})");
  const auto msg = test::error_message([&] { (void)model_from_hf_config(cfg, "latent.json"); }, ErrorKind::InputFile);
  EXPECT_NE(msg.find("moe_latent_size"), std::string::npos) << msg;
  cfg["moe_latent_size"] = 32;
  const auto m = model_from_hf_config(cfg, "latent.json");
  EXPECT_EQ(m.arch.moe_latent_size, 32u);
  cfg["moe_latent_size"] = nullptr;  // NemotronHMoE: use_latent_moe only when present and not None
  EXPECT_EQ(model_from_hf_config(cfg, "latent.json").arch.moe_latent_size, 0u);
}

TEST(NemotronH, Ultra3ListsItsLayersInLayersBlockType) {
  // The config has layers_block_type (mamba / moe / attention) and neither hybrid_override_pattern
  // nor num_hidden_layers: 108 layers, 48 Mamba2, 48 latent MoE, 12 attention; hidden 8192.
  //   embeddings + lm_head   2 x 131,072 x 8192                                     =   2,147,483,648
  //   Mamba2     256 heads of 64: d_inner 16,384, conv_dim 16,384 + 2 x 8 x 128 = 18,432;
  //              in_proj (16,384 + 18,432 + 256) x 8192 = 287,309,824; conv1d 18,432 x 4 + bias
  //              18,432 = 92,160; dt_bias, A_log, D 3 x 256; norm 16,384; out_proj 8192 x 16,384
  //              = 134,217,728                                    -> 421,636,864 x 48 =  20,238,569,472
  //   attention  q, o 8192 x 8192; k, v 256 x 8192                -> 138,412,032 x 12 =   1,660,944,384
  //   MoE        router 512 x 8192 + bias 512 = 4,194,816; experts 512 x 2 x 5120 x 2048
  //              = 10,737,418,240; latent projections 2 x 2048 x 8192 = 33,554,432; shared
  //              2 x 10,240 x 8192 = 167,772,160           -> 10,942,939,648 x 48 = 525,261,103,104
  //   norms      108 x 8192 + 8192                                                 =         892,928
  //   total                                                                        = 549,308,993,536
  // Active: 22 of 512 experts -> minus 48 x 490 x 2 x 5120 x 2048 = 493,250,150,400.
  // Published: 550B total, 55B active (NVIDIA's model page).
  const auto m = test::expect_catalogue_counts("nemotron-3-ultra-550b-a55b", 549'308'993'536ull,
                                               56'058'843'136ull, 550'000'000'000ull);
  EXPECT_EQ(m.arch.num_layers, 108u);
  EXPECT_EQ(count_kind(m.arch, LayerAttention::Full), 12u);
  EXPECT_EQ(count_kind(m.arch, LayerAttention::Recurrent), 48u);
  EXPECT_EQ(m.arch.layer_attention[7], LayerAttention::Full);  // 'mamba', 'moe' x 3, then 'attention'
  EXPECT_EQ(m.arch.moe_latent_size, 2048u);
  EXPECT_NEAR(static_cast<double>(count_params(m).active - count_params(m).embedding) / 1e9, 55.0, 0.1);
}

TEST(NemotronH, LayersBlockTypeNamesAnUnknownType) {
  auto cfg = nlohmann::json::parse(R"({"architectures":["NemotronHForCausalLM"],"model_type":"nemotron_h",
    "hidden_size":64,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"vocab_size":256,
    "layers_block_type":["mamba","attention","mlp"],"mamba_num_heads":4,"mamba_head_dim":16,"n_groups":1,
    "ssm_state_size":8,"conv_kernel":4,"intermediate_size":32})");
  const auto m = model_from_hf_config(cfg, "blocks.json");
  EXPECT_EQ(m.arch.num_layers, 3u);
  EXPECT_EQ(m.arch.layer_attention[1], LayerAttention::Full);
  cfg["layers_block_type"][2] = "conv";
  const auto msg = test::error_message([&] { (void)model_from_hf_config(cfg, "blocks.json"); }, ErrorKind::InputFile);
  EXPECT_NE(msg.find("layers_block_type"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'conv'"), std::string::npos) << msg;
  // An empty list, or one that disagrees with num_hidden_layers, is named as the list.
  cfg["layers_block_type"] = nlohmann::json::array();
  const auto empty = test::error_message([&] { (void)model_from_hf_config(cfg, "blocks.json"); }, ErrorKind::InputFile);
  EXPECT_NE(empty.find("/layers_block_type: is empty"), std::string::npos) << empty;
  cfg["layers_block_type"] = {"mamba", "attention"};
  cfg["num_hidden_layers"] = 5;
  const auto count = test::error_message([&] { (void)model_from_hf_config(cfg, "blocks.json"); }, ErrorKind::InputFile);
  EXPECT_NE(count.find("/layers_block_type: has 2 entries, num_hidden_layers is 5"), std::string::npos) << count;
}

TEST(NemotronH, H56bCountsMatchTheFamilySize) {
  // 118 layers of h 8192: 54 Mamba2 (256 heads of 64, 8 groups of state 256: conv_dim 16,384 +
  // 4096 = 20,480; in_proj (16,384 + 20,480 + 256) x 8192 = 303,955,968; conv1d 20,480 x 5;
  // 3 x 256; norm 16,384; out_proj 134,217,728 -> 438,424,320), 54 MLPs 2 x 32,768 x 8192
  // = 536,870,912, 10 attention layers q, o 8192 x 8192 + k, v 1024 x 8192 = 150,994,944; norms
  // 119 x 8192; embeddings + lm_head 2,147,483,648:
  //   54 x 438,424,320 + 54 x 536,870,912 + 10 x 150,994,944 + 974,848 + 2,147,483,648 = 56,324,350,464.
  // Published: the Nemotron-H family "of 8B, 47B, and 56B parameters" (NeMo user guide).
  const auto m = test::expect_catalogue_counts("nemotron-h-56b", 56'324'350'464ull, 56'324'350'464ull,
                                               56'000'000'000ull);
  EXPECT_EQ(count_kind(m.arch, LayerAttention::Full), 10u);
  EXPECT_EQ(m.arch.recurrent_state_bytes_per_layer, 3u * 20'480u * 2u + 256u * 64u * 256u * 4u);
}

TEST(GraniteMoeHybrid, TinyCountsMatchTheModelCard) {
  const auto& m = hybrid_model("granite-4.0-h-tiny");
  const auto c = count_params(m);
  // hidden 1536, 40 layers: 36 Mamba2 + 4 attention, every layer a 64-expert MoE + shared MLP.
  //   embeddings (tied)   100,352 x 1536                                           =   154,140,672
  //   Mamba2   d_inner 2 x 1536 = 3072, conv_dim 3072 + 2 x 1 x 128 = 3328; in_proj
  //            (3072 + 3328 + 48) x 1536 = 9,904,128; conv1d 3328 x 4 + 3328; 3 x 48; norm 3072;
  //            out_proj 1536 x 3072 = 4,718,592                     ->  14,642,576 x 36 =   527,132,736
  //   attention  head_dim 1536 / 12 = 128; q, o 1536 x 1536; k, v 512 x 1536 -> 6,291,456 x 4 = 25,165,824
  //   MoE      router 64 x 1536 = 98,304; input_linear 64 x 1024 x 1536 = 100,663,296;
  //            output_linear 64 x 1536 x 512 = 50,331,648; shared 2048 x 1536 + 1536 x 1024
  //            = 4,718,592                                         -> 155,811,840 x 40 = 6,232,473,600
  //   norms    2 x 40 x 1536 + 1536                                                    =       124,416
  //   total                                                                            = 6,939,037,248
  EXPECT_EQ(c.total, 6'939'037'248ull);
  // Model card: "7B"; IBM's "1B active" is rounded from 6 of 64 experts:
  // 6,939,037,248 - 40 x 58/64 x 150,994,944 = 1,465,470,528.
  EXPECT_NEAR(static_cast<double>(c.total) / 1e9, 7.0, 0.1);
  EXPECT_EQ(c.active, 1'465'470'528ull);
  EXPECT_EQ(count_kind(m.arch, LayerAttention::Full), 4u);
  EXPECT_EQ(m.arch.layer_attention[5], LayerAttention::Full);
}

TEST(MambaState, ConvPlusSsmStateInTheEnginesDtypes) {
  // Nemotron-H-8B at TP 1: conv {3, 10,240} = 30,720 values in bf16; SSM {128, 64, 128} =
  // 1,048,576 values in float32 (the config has no mamba_ssm_cache_dtype: vLLM's
  // NemotronHForCausalLMConfig default) -> 61,440 + 4,194,304 = 4,255,744 B.
  EXPECT_EQ(hybrid_model("nemotron-h-8b").arch.recurrent_state_bytes_per_layer, 4'255'744u);
  // Nemotron-3 Nano: conv 3 x 6144 x 2 B = 36,864 + SSM 64 x 64 x 128 x 4 B = 2,097,152 -> 2,134,016 B.
  EXPECT_EQ(hybrid_model("nemotron-3-nano-30b-a3b").arch.recurrent_state_bytes_per_layer, 2'134'016u);
  // Granite-4.0-H-Tiny (mamba_ssm_cache_dtype "auto": the model dtype): (3 x 3328 + 48 x 64 x 128) x 2 B
  // = (9,984 + 393,216) x 2 = 806,400 B.
  EXPECT_EQ(hybrid_model("granite-4.0-h-tiny").arch.recurrent_state_bytes_per_layer, 806'400u);
}

TEST(MambaState, GroupsAreReplicatedUpToTheTpSize) {
  const auto& nemo = hybrid_model("nemotron-h-8b").arch;
  // TP 2: 8 groups divide; conv 3 x 10,240 / 2 = 15,360, SSM 64 x 64 x 128 = 524,288.
  EXPECT_EQ(recurrent_state_elems(nemo, 2).conv, 15'360u);
  EXPECT_EQ(recurrent_state_elems(nemo, 2).ssm, 524'288u);
  // TP 16: 8 % 16 != 0 -> 8 + (16 - 8) = 16 groups (extra_groups_for_head_shards):
  // conv 3 x (8192 + 2 x 16 x 128) / 16 = 3 x 768 = 2304; SSM 8 x 64 x 128 = 65,536.
  EXPECT_EQ(recurrent_state_elems(nemo, 16).conv, 2'304u);
  EXPECT_EQ(recurrent_state_elems(nemo, 16).ssm, 65'536u);
  // Granite-4.0-H-Tiny at TP 2: 1 group -> 2; conv 3 x (3072 + 2 x 2 x 128) / 2 = 5376, SSM
  // 24 x 64 x 128 = 196,608 -> (5376 + 196,608) x 2 B = 403,968 B (not 806,400 / 2 = 403,200).
  EXPECT_EQ(recurrent_state_bytes(hybrid_model("granite-4.0-h-tiny").arch, 2), 403'968u);
}

TEST(FalconH1, HalfBCountMatchesTheHubCount) {
  const auto& m = hybrid_model("falcon-h1-0.5b");
  // hidden 1024, 36 layers, each attention + Mamba2 + SwiGLU MLP side by side; vocab 32,784, untied.
  //   embeddings + lm_head   2 x 32,784 x 1024                                       =  67,141,632
  //   Mamba2   d_ssm 24 x 64 = 1536, conv_dim 1536 + 2 x 1 x 128 = 1792; in_proj (1536 + 1792 + 24)
  //            x 1024 = 3,432,448; conv1d 1792 x 4 + 1792 = 8,960; dt_bias, A_log, D 3 x 24 = 72;
  //            no gated norm (mamba_rms_norm false); out_proj 1024 x 1536 = 1,572,864 -> 5,014,344
  //   attention head_dim 64 (not 1024 / 8): q, o 512 x 1024; k, v 128 x 1024       -> 1,310,720
  //   MLP      gate, up, down 2048 x 1024                                            -> 6,291,456
  //   norms    input_layernorm + pre_ff_layernorm 2 x 1024                           ->     2,048
  //   per layer 12,618,568 x 36 = 454,268,448; + final_layernorm 1024
  //   total                                                                          = 521,411,104
  EXPECT_EQ(count_params(m).total, 521'411'104ull);
  // The Hub's safetensors count as llmrun.dev quotes it: "521M".
  EXPECT_NEAR(static_cast<double>(count_params(m).total) / 1e6, 521.0, 0.5);
  EXPECT_TRUE(m.arch.recurrent_in_every_layer);
  EXPECT_EQ(count_kind(m.arch, LayerAttention::Full), 36u);
  EXPECT_EQ(m.arch.head_dim, 64u);
  // State per layer (bf16, mamba_ssm_cache_dtype "auto"): conv 3 x 1792 = 5,376 + SSM 24 x 64 x 128
  // = 196,608 values -> 403,968 B.
  EXPECT_EQ(m.arch.recurrent_state_bytes_per_layer, 403'968u);
}

TEST(FalconH1, SevenBCountMatchesTheCheckpointCensus) {
  const auto& m = hybrid_model("falcon-h1-7b");
  // hidden 3072, 44 layers, vocab 130,049 untied.
  //   embeddings + lm_head   2 x 130,049 x 3072                                      =   799,021,056
  //   Mamba2   d_ssm 24 x 128 = 3072, conv_dim 3072 + 2 x 256 = 3584; in_proj (3072 + 3584 + 24)
  //            x 3072 = 20,520,960; conv1d 3584 x 5 = 17,920; 72; gated norm 3072 (mamba_rms_norm);
  //            out_proj 3072 x 3072 = 9,437,184                              -> 29,979,208
  //   attention head_dim 128: q, o 1536 x 3072; k, v 256 x 3072               -> 11,010,048
  //   MLP      3 x 12,288 x 3072                                              -> 113,246,208
  //   norms    2 x 3072                                                       ->      6,144
  //   per layer 154,241,608 x 44 = 6,786,630,752; + final norm 3072           = 7,585,654,880
  // A count of the released safetensors (catalogue _published_params_source): 7,585,654,880 in 751
  // tensors = 44 x (2 norms + 4 attention + 8 Mamba + 3 MLP) + embedding, final norm, lm_head.
  EXPECT_EQ(count_params(m).total, 7'585'654'880ull);
  EXPECT_EQ(m.tensors.size(), 751u);
  // State: conv 3 x 3584 = 10,752 + SSM 24 x 128 x 256 = 786,432 values, bf16 -> 1,594,368 B.
  EXPECT_EQ(m.arch.recurrent_state_bytes_per_layer, 1'594'368u);
}

TEST(Jamba, MiniCountsMatchTheModelCard) {
  const auto& m = hybrid_model("jamba-1.5-mini");
  const auto c = count_params(m);
  // hidden 4096, 32 layers: attention at i % 8 == 4 (4 layers), Mamba-1 elsewhere (28); MoE at
  // i % 2 == 1 (16 layers), dense SwiGLU elsewhere.
  //   embeddings + lm_head   2 x 65,536 x 4096                                     =    536,870,912
  //   Mamba-1  d_inner 2 x 4096 = 8192, dt_rank 256, d_state 16: in_proj 16,384 x 4096 = 67,108,864;
  //            conv1d 8192 x 4 + 8192 = 40,960; x_proj (256 + 32) x 8192 = 2,359,296; dt_proj
  //            8192 x 256 + 8192 = 2,105,344; A_log 8192 x 16 = 131,072; D 8192; dt / b / c
  //            layernorms 256 + 16 + 16 = 288; out_proj 4096 x 8192 = 33,554,432
  //                                                      -> 105,308,448 x 28 =  2,948,636,544
  //   attention q, o 4096 x 4096; k, v 1024 x 4096       ->  41,943,040 x 4  =    167,772,160
  //   dense MLP 3 x 14,336 x 4096                         -> 176,160,768 x 16 =  2,818,572,288
  //   MoE      router 16 x 4096 + 16 x 176,160,768        -> 2,818,637,824 x 16 = 45,098,205,184
  //   norms    32 x 2 x 4096 + 4096                                           =        266,240
  //   total                                                                   = 51,570,323,328
  EXPECT_EQ(c.total, 51'570'323'328ull);
  // Active: 2 of 16 experts -> minus 16 x 14 x 176,160,768 = 39,460,012,032 -> 12,110,311,296.
  EXPECT_EQ(c.active, 12'110'311'296ull);
  // Model card: 52B total, 12B active.
  EXPECT_NEAR(static_cast<double>(c.total) / 1e9, 52.0, 0.5);
  EXPECT_NEAR(static_cast<double>(c.active) / 1e9, 12.0, 0.2);
  EXPECT_EQ(count_kind(m.arch, LayerAttention::Full), 4u);
  EXPECT_EQ(count_kind(m.arch, LayerAttention::Recurrent), 28u);
  EXPECT_EQ(m.arch.layer_attention[4], LayerAttention::Full);
  EXPECT_TRUE(m.arch.layer_is_moe[1]);
  EXPECT_FALSE(m.arch.layer_is_moe[4]);
}

TEST(MambaState, MambaOneStateSplitsItsChannelsOverTp) {
  const auto& a = hybrid_model("jamba-1.5-mini").arch;
  // mamba1_state_shape: conv {8192 / tp, 3}, temporal {8192 / tp, 16}, bf16.
  // TP 1: (24,576 + 131,072) x 2 B = 311,296 B; TP 2: (12,288 + 65,536) x 2 B = 155,648 B.
  EXPECT_EQ(a.recurrent_state_bytes_per_layer, 311'296u);
  EXPECT_EQ(recurrent_state_bytes(a, 2), 155'648u);
  EXPECT_EQ(recurrent_state_elems(a, 8).conv, 3'072u);  // 3 x 1024
  EXPECT_EQ(recurrent_state_elems(a, 8).ssm, 16'384u);  // 1024 x 16
}

}  // namespace
}  // namespace vramplan
