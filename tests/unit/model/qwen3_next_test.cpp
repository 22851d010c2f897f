// Qwen3-Next (Qwen3NextForCausalLM): the tensor inventory as vLLM's qwen3_next.py builds it,
// checked against the publisher's counts, and the per-request recurrent state.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/catalogue_counts.hpp"

namespace vramplan {
namespace {

const ModelSpec& qwen3_next() {
  static const ModelSpec m = load_catalogue_model(test::source_root(), "qwen3-next-80b-a3b");
  return m;
}

TEST(Qwen3Next, ParameterCountsMatchTheModelCard) {
  const auto c = count_params(qwen3_next());
  // hidden 2048, vocab 151,936, 48 layers (36 gated-DeltaNet + 12 gated attention), 512 experts:
  //   embedding + lm_head         2 x 151,936 x 2048                              =    622,329,856
  //   DeltaNet layer   in_proj_qkvz (2x2048 + 2x4096) x 2048 = 25,165,824; in_proj_ba 64 x 2048
  //                    = 131,072; conv1d 8192 x 4 = 32,768; dt_bias 32, A_log 32, norm 128;
  //                    out_proj 2048 x 4096 = 8,388,608                  -> 33,718,464 x 36 =  1,213,864,704
  //   attention layer  q_proj 16 x 256 x 2 (output gate) x 2048 = 16,777,216; k, v 512 x 2048
  //                    each; o 2048 x 4096; q_norm, k_norm 256           -> 27,263,488 x 12 =    327,161,856
  //   MoE per layer    router 512 x 2048 + experts 512 x 3 x 512 x 2048 + shared 3 x 512 x 2048
  //                    + shared_expert_gate 2048                     -> 1,614,809,088 x 48 = 77,510,836,224
  //   norms            2 x 2048 x 48 + final 2048                                     =        198,656
  //   total                                                                           = 79,674,391,296
  EXPECT_EQ(c.total, 79'674'391'296ull);
  // Model card (huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct): "80B in total",
  // "Number of Parameters (Non-Embedding): 79B" (79.05B: lm_head counted as embedding too).
  EXPECT_NEAR(static_cast<double>(c.total) / 1e9, 80.0, 0.5);
  EXPECT_NEAR(static_cast<double>(c.total - 2 * c.embedding) / 1e9, 79.0, 0.1);
  // Active: 10 of 512 experts -> 79,674,391,296 - 48 x 502/512 x 1,610,612,736 = 3,874,929,408
  // (NVIDIA's NIM card for the model: "Active Parameters: 3.9B").
  EXPECT_EQ(c.active, 3'874'929'408ull);
  // MTP (qwen3_next_mtp.py): fc 2048 x 4096 = 8,388,608 + 3 norms 6,144 + one full-attention MoE
  // layer 27,263,488 + 1,614,809,088 + 4,096 = 1,650,471,424, reported apart from the total.
  EXPECT_EQ(c.mtp, 1'650'471'424ull);
}

TEST(Qwen3Next, EveryFourthLayerIsFullAttention) {
  const auto& a = qwen3_next().arch;
  ASSERT_EQ(a.layer_attention.size(), 48u);
  EXPECT_EQ(std::count(a.layer_attention.begin(), a.layer_attention.end(), LayerAttention::Full), 12);
  EXPECT_EQ(a.layer_attention[3], LayerAttention::Full);  // (3 + 1) % 4 == 0
  EXPECT_EQ(a.layer_attention[0], LayerAttention::Recurrent);
  EXPECT_EQ(a.mtp_layers, 1u);
}

TEST(Qwen3Next, RecurrentStateIsConvPlusSsmState) {
  // vLLM MambaStateShapeCalculator.gated_delta_net_state_shape at TP 1: conv state
  // {kernel - 1 = 3, conv_dim = 2 x 16 x 128 + 32 x 128 = 8192} = 24,576 values; SSM state
  // {32 v_heads, 128, 128} = 524,288 values; bf16 -> (24,576 + 524,288) x 2 B = 1,097,728 B.
  EXPECT_EQ(qwen3_next().arch.recurrent_state_bytes_per_layer, 1'097'728u);
}

TEST(Qwen3Next, CoderNextSharesTheArchitecture) {
  const auto m = load_catalogue_model(test::source_root(), "qwen3-coder-next");
  EXPECT_EQ(count_params(m).total, 79'674'391'296ull);
  EXPECT_EQ(m.arch.recurrent_state_bytes_per_layer, 1'097'728u);
}

// Qwen3.5-397B-A17B (Qwen3_5MoeForConditionalGeneration): Qwen3-Next's layers under
// "model.language_model.", hidden 4096, vocab 248,320, 60 layers (45 gated-DeltaNet + 15 gated
// attention), 512 experts of 1024, top 10, and a Qwen3-VL vision tower:
//   embedding + lm_head    2 x 248,320 x 4096                                  =   2,034,237,440
//   DeltaNet layer  in_proj_qkv (2x2048 + 8192) x 4096 = 50,331,648; in_proj_z 8192 x 4096 =
//                   33,554,432; in_proj_b, in_proj_a 64 x 4096 each; conv1d 12,288 x 4 = 49,152;
//                   dt_bias, A_log 64; norm 128; out_proj 4096 x 8192 -> 118,014,208 x 45
//   attention layer q_proj 32 x 256 x 2 x 4096 = 67,108,864; k, v 512 x 4096 each; o 4096 x 8192;
//                   q_norm, k_norm 256                                  -> 104,858,112 x 15
//   MoE per layer   router 512 x 4096 + experts 512 x 3 x 1024 x 4096 + shared 3 x 1024 x 4096
//                   + shared_expert_gate 4096                        -> 6,457,135,104 x 60
//   norms 2 x 4096 x 60 + final 4096; text total 396,346,350,336
//   vision (27 blocks of 1152, MLP 4304, patch 16 x 16 x 2 frames, 2304 positions, merger 4608 ->
//   4096): 456,010,480; total 396,802,360,816 (published: 397B)
//   active: 10 of 512 experts, 60 x 502 x 3 x 1024 x 4096 = 378,997,309,440 fewer: 17,805,051,376
TEST(Qwen3Next, Qwen35IsTheSameHybridUnderItsTextConfig) {
  const auto spec = test::expect_catalogue_counts("qwen3.5-397b-a17b", 396'802'360'816ull, 17'805'051'376ull,
                                                  397'000'000'000ull);
  EXPECT_TRUE(test::has_tensor(spec, "model.language_model.layers.0.linear_attn.in_proj_qkv.weight"));
  EXPECT_TRUE(test::has_tensor(spec, "model.language_model.layers.3.self_attn.q_norm.weight"));
  EXPECT_TRUE(test::has_tensor(spec, "model.visual.merger.linear_fc2.weight"));
  EXPECT_EQ(count_params(spec).vision, 456'010'480ull);
  const auto& a = spec.arch;
  EXPECT_EQ(std::count(a.layer_attention.begin(), a.layer_attention.end(), LayerAttention::Full), 15);
  EXPECT_EQ(a.mtp_layers, 1u);  // mtp_num_hidden_layers
  ASSERT_FALSE(a.rope_tables.empty());
  EXPECT_EQ(a.rope_tables[0].rotary_dim, 64u);  // 256 x partial_rotary_factor 0.25 (class default)
}


// The smaller Qwen3.5 releases are the same hybrid; one GDN layer, with Kh x Kd = 16 x 128 keys and
// Vh x Vd values: in_proj_qkv (2 x 2048 + Vh x 128) x h, in_proj_z Vh x 128 x h, in_proj_b / _a
// Vh x h each, conv1d (2 x 2048 + Vh x 128) x 4, dt_bias + A_log 2 x Vh, norm 128, out_proj
// h x Vh x 128. A gated attention layer: q_proj (q and gate) 2 x nh x 256 x h, k / v nkv x 256 x h
// each, o h x nh x 256, q_norm + k_norm 2 x 256. Every 4th layer attends. Norms 2 h a layer + h;
// untied embedding + lm_head 2 x 248,320 x h. The vision tower is the 397B's (437,132,016 without
// its merger's last projection) + that projection out x 4608 + its bias out, out = h.
//   27B (h 5120, 64 layers, Vh 48, 24 / 4 heads, MLP 3 x 17,408 x 5120 = 267,386,880):
//     GDN (8,192 x 5120 = 41,943,040) + (31,457,280) + (491,520) + (32,768) + 96 + 128 + (31,457,280)
//       = 115,876,064 x 48 = 5,562,051,072; attention 104,858,112 x 16 = 1,677,729,792;
//     MLP x 64 = 17,112,760,320; norms 660,480; embeddings 2,542,796,800 -> text 26,895,998,464;
//     vision 437,132,016 + 5120 x 4609 = 460,730,096; total 27,356,728,560 (dense: all active)
//   35B-A3B (h 2048, 40 layers, Vh 32, 16 / 2 heads; 256 experts of 512, top 8, shared 512):
//     GDN 33,718,464 x 30; attention 27,263,488 x 10; MoE router 256 x 2048 + experts
//     256 x 3 x 512 x 2048 + shared 3 x 512 x 2048 + its gate 2048 = 808,978,432 x 40;
//     norms 165,888; embeddings 1,017,118,720 -> text 34,660,610,688; vision 446,571,248;
//     total 35,107,181,936; 248 idle experts x 3 x 512 x 2048 x 40 layers = 31,205,621,760 fewer:
//     3,901,560,176 active
//   122B-A10B (h 3072, 48 layers, Vh 64, 32 / 2 heads; 256 experts of 1024, top 8, shared 1024):
//     GDN 88,523,008 x 36; attention 78,643,712 x 12; MoE 2,426,145,792 x 48; norms 297,984;
//     embeddings 1,525,678,080 -> text 122,111,526,912; vision 451,290,864; total 122,562,817,776;
//     248 x 3 x 1024 x 3072 x 48 = 112,340,238,336 fewer: 10,222,579,440 active
TEST(Qwen3Next, SmallerQwen35ReleasesCountAsTheFamily) {
  // Published (NVIDIA Megatron Bridge, Qwen 3.5): 27B; 35B total, 3B activated; 122B total, 10B activated.
  const auto dense = test::expect_catalogue_counts("qwen3.5-27b", 27'356'728'560ull, 27'356'728'560ull,
                                                   27'000'000'000ull);
  EXPECT_EQ(dense.arch.num_experts, 0u);
  EXPECT_EQ(dense.arch.intermediate_size, 17408u);
  const auto small = test::expect_catalogue_counts("qwen3.5-35b-a3b", 35'107'181'936ull, 3'901'560'176ull,
                                                   35'000'000'000ull);
  EXPECT_EQ(count_params(small).vision, 446'571'248ull);
  const auto mid = test::expect_catalogue_counts("qwen3.5-122b-a10b", 122'562'817'776ull, 10'222'579'440ull,
                                                 122'000'000'000ull);
  for (const auto* s : {&dense, &small, &mid}) {
    const auto& a = s->arch;
    EXPECT_EQ(static_cast<std::uint64_t>(std::count(a.layer_attention.begin(), a.layer_attention.end(),
                                                    LayerAttention::Full)),
              a.num_layers / 4) << s->id;
    EXPECT_EQ(a.mtp_layers, 1u) << s->id;
  }
  // The names' active figures are rounded labels: 10.2B with the embeddings for "A10B", and for
  // "A3B" 3.90B with the vision tower and embeddings, 2.44B without either.
  EXPECT_NEAR(test::active_billions_without(small, 1'017'118'720ull + 446'571'248ull), 2.44, 0.01);
}

}  // namespace
}  // namespace vramplan
