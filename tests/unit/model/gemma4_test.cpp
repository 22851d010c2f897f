// Gemma 4 (family_gemma4.cpp): tensor inventories against the published safetensors totals, the
// two attention geometries in the KV layout, and the configs it refuses by name. The arithmetic is
// docs/research/gemma4.md section 5, read off transformers models/gemma4.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "support/catalogs.hpp"
#include "support/catalogue_counts.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/kv_cache.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/model/gguf_model.hpp"
#include "vramplan/model/hf_config.hpp"
#include "vramplan/model/inventory.hpp"

namespace vramplan {
namespace {

const ModelSpec& gemma4_model(const std::string& id) { return test::cached_catalogue_model(id); }

std::uint64_t gemma4_params_named(const ModelSpec& m, const std::string& suffix) {
  std::uint64_t n = 0;
  for (const auto& t : m.tensors)
    if (t.name.ends_with(suffix)) n += t.elements();
  return n;
}

TEST(Gemma4, MoeCountsMatchThePublishedTotal) {
  const auto& m = gemma4_model("gemma-4-26b-a4b");
  // hidden 2816, 30 layers (25 sliding + 5 full), 16 heads; vocab 262,144, tied lm_head.
  //   embed_tokens 262,144 x 2816                                               =    738,197,504
  //   sliding attention q 4096 x 2816, k v 2048 x 2816, o 2816 x 4096, q/k norms 2 x 256
  //                                                              34,603,520 x 25
  //   full attention (head_dim 512, 2 KV heads, no v_proj) q 8192 x 2816, k 1024 x 2816,
  //                  o 2816 x 8192, norms 2 x 512                49,021,952 x 5
  //   dense MLP 3 x 2816 x 2112 = 17,842,176; 4 norms 11,264; layer_scalar 1
  //   MoE block: router 128 x 2816 + scale 2816 + per_expert_scale 128, experts
  //              128 x (1408 + 704) x 2816 = 761,266,176, 3 norms 8448     = 761,638,016
  //   layers 25 x 814,094,977 + 5 x 828,513,409                               = 24,494,941,470
  //   final norm 2816 -> text                                                 = 25,233,141,790
  //   vision: 27 x (4 x 1152^2 + 2 x 72 + 3 x 1152 x 4304 + 4 x 1152) = 545,070,384,
  //           patch 768 x 1152, positions 2 x 10,240 x 1152, std buffers 2 x 1152 = 569,550,384
  //   projector 2816 x 1152                                                   =      3,244,032
  //   total                                                                   = 25,805,936,206
  // = HF safetensors.total of google/gemma-4-26B-A4B-it (docs/research/gemma4.md section 6).
  const auto c = count_params(m);
  EXPECT_EQ(c.total, 25'805'936'206ull);
  EXPECT_EQ(c.vision, 569'550'384ull + 3'244'032ull);
  // Active text parameters: all but 30 x 120 unrouted experts of 3 x 704 x 2816 = 5,947,392:
  // 25,233,141,790 - 30 x 120 x 5,947,392 = 3,822,530,590 (the card's 3.8B active).
  EXPECT_EQ(c.active - c.vision, 3'822'530'590ull);
  // No v_proj on the 5 full layers (the vision tower's are "v_proj.linear.weight").
  EXPECT_EQ(gemma4_params_named(m, "self_attn.v_proj.weight"), 25ull * 2048 * 2816);
  EXPECT_EQ(m.arch.global_head_dim, 512u);
  EXPECT_EQ(m.arch.global_kv_heads, 2u);
  EXPECT_TRUE(m.arch.attention_k_eq_v);
  EXPECT_EQ(m.arch.layer_attention[5], LayerAttention::Full);
  EXPECT_EQ(m.arch.layer_attention[4], LayerAttention::Sliding);
  // vLLM profiles the tower on its largest item, a 32-frame video: 32 x (70 + 8) tokens, 32 x 70 x
  // 9 patches of 3 x 16 x 16 values.
  EXPECT_EQ(m.arch.mm_tokens_per_item, 2496u);
  EXPECT_EQ(m.arch.mm_pixel_values_per_item, 32u * 70 * 9 * 768);
}

TEST(Gemma4, DenseCountsMatchThePublishedTotal) {
  const auto& m = gemma4_model("gemma-4-31b");
  // hidden 5376, 60 layers (50 sliding + 10 full), 32 heads, intermediate 21,504.
  //   embed_tokens 262,144 x 5376                                             =  1,409,286,144
  //   sliding layer: attention 2 x 5376 x 8192 + 2 x 5376 x 4096 + 512 = 132,121,088,
  //                  MLP 3 x 5376 x 21,504 = 346,816,512, norms 21,504, scalar 1 -> 478,959,105 x 50
  //   full layer:    attention 2 x 5376 x 16,384 + 5376 x 2048 + 1024 = 187,171,840 -> 534,009,857 x 10
  //   final norm 5376 -> text                                                 = 30,697,345,340
  //   vision 569,550,384 + projector 5376 x 1152 = 6,193,152                  = 31,273,088,876
  // = HF safetensors.total of google/gemma-4-31B-it.
  const auto c = count_params(m);
  EXPECT_EQ(c.total, 31'273'088'876ull);
  EXPECT_EQ(c.total - c.vision, 30'697'345'340ull);  // the card's "30.7B"
  EXPECT_EQ(m.arch.num_experts, 0u);
}

TEST(Gemma4, FullLayersCacheTheirOwnGeometry) {
  const auto dt = memory::resolve_kv_dtype("auto", "bf16", test::quant_formats());
  const auto& moe = gemma4_model("gemma-4-26b-a4b");
  // Per token, bf16: sliding 2 x 8 x 256 x 2 B = 8192 x 25; full 2 x 2 x 512 x 2 B = 4096 x 5
  // (V still cached on the k_eq_v layers) -> 204,800 + 20,480 = 225,280 B.
  const auto l1 = memory::kv_layout(moe.arch, dt, 1);
  EXPECT_EQ(l1.bytes_per_token, 225'280u);
  EXPECT_EQ(l1.layers[0].bytes_per_token, 8192u);
  EXPECT_EQ(l1.layers[5].bytes_per_token, 4096u);
  // TP 4: sliding 2 heads a rank (2048 B); the 2 global KV heads replicated, one a rank (2048 B).
  const auto l4 = memory::kv_layout(moe.arch, dt, 4);
  EXPECT_EQ(l4.layers[0].bytes_per_token, 2048u);
  EXPECT_EQ(l4.layers[5].bytes_per_token, 2048u);
  EXPECT_EQ(l4.bytes_per_token, 30u * 2048);
  // TP 8: sliding 1 head (1024 B), full still 1 head of 512 (2048 B): 25 x 1024 + 5 x 2048.
  EXPECT_EQ(memory::kv_layout(moe.arch, dt, 8).bytes_per_token, 25u * 1024 + 5u * 2048);

  const auto& dense = gemma4_model("gemma-4-31b");
  // 50 x 2 x 16 x 256 x 2 B = 819,200; 10 x 2 x 4 x 512 x 2 B = 81,920 -> 901,120 B.
  EXPECT_EQ(memory::kv_layout(dense.arch, dt, 1).bytes_per_token, 901'120u);
  EXPECT_NE(memory::kv_layout(dense.arch, dt, 1).explain.find("10 full layers x 2 x 4 kv_heads x 512"), std::string::npos);
}

TEST(Gemma4, GgufCarriesBothGeometries) {
  // tests/fuzz/seeds/gguf/tiny-gemma4-moe-f16.gguf (written as conversion/gemma.py does): layers
  // sliding, sliding, full; key_length_swa 16 / key_length 32; head_count_kv [2, 2, 1]; no attn_v on
  // the full layer. The reader keeps the sliding geometry as head_dim / num_kv_heads and the full one
  // as global_head_dim / global_kv_heads, K = V on the full layer.
  const auto spec = model_from_gguf_file(test::source_root().root / "tests/fuzz/seeds/gguf/tiny-gemma4-moe-f16.gguf",
                                         test::quant_formats());
  EXPECT_EQ(spec.arch.head_dim, 16u);
  EXPECT_EQ(spec.arch.global_head_dim, 32u);
  EXPECT_EQ(spec.arch.num_kv_heads, 2u);
  EXPECT_EQ(spec.arch.global_kv_heads, 1u);
  EXPECT_TRUE(spec.arch.attention_k_eq_v);
  EXPECT_EQ(spec.arch.layer_head_dim(2), 32u);
  EXPECT_EQ(spec.arch.layer_kv_heads(0), 2u);
  for (const auto& w : spec.warnings) EXPECT_EQ(w.find("varies per layer"), std::string::npos) << w;
  // f16 cache: sliding 2 x 2 x 16 x 2 B = 128 B a layer, full 2 x 1 x 32 x 2 B = 128 B.
  const auto dt = memory::resolve_kv_dtype("f16", "f16", test::quant_formats());
  EXPECT_EQ(memory::kv_layout(spec.arch, dt, 1).bytes_per_token, 3u * 128);
}

nlohmann::json gemma4_small_config() {
  return {{"architectures", {"Gemma4ForCausalLM"}},
          {"model_type", "gemma4_text"},
          {"hidden_size", 256},
          {"num_hidden_layers", 7},
          {"num_attention_heads", 4},
          {"num_key_value_heads", 2},
          {"head_dim", 64},
          {"global_head_dim", 128},
          {"intermediate_size", 512},
          {"vocab_size", 1000},
          {"sliding_window", 128},
          {"torch_dtype", "bfloat16"}};
}

TEST(Gemma4, DefaultPatternEndsOnAFullLayer) {
  // No layer_types: full when (i + 1) % 6 == 0, and the last layer forced full
  // (Gemma4TextConfig.__post_init__): layers 5 and 6 of 7. Without attention_k_eq_v the full
  // layers keep num_key_value_heads (2) but take global_head_dim (128) and have a v_proj.
  const auto spec = model_from_hf_config(gemma4_small_config(), "small.json");
  EXPECT_EQ(spec.arch.layer_attention[4], LayerAttention::Sliding);
  EXPECT_EQ(spec.arch.layer_attention[5], LayerAttention::Full);
  EXPECT_EQ(spec.arch.layer_attention[6], LayerAttention::Full);
  EXPECT_EQ(spec.arch.layer_kv_heads(6), 2u);
  EXPECT_EQ(spec.arch.layer_head_dim(6), 128u);
  EXPECT_EQ(gemma4_params_named(spec, "layers.6.self_attn.v_proj.weight"), 2u * 128 * 256);
}

TEST(Gemma4, PerLayerEmbeddingsAndSharedKvAreRefusedByName) {
  auto ple = gemma4_small_config();
  ple["hidden_size_per_layer_input"] = 256;
  EXPECT_THROW(
      {
        try {
          model_from_hf_config(ple, "e2b.json");
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("hidden_size_per_layer_input"), std::string::npos);
          throw;
        }
      },
      Error);
  auto shared = gemma4_small_config();
  shared["num_kv_shared_layers"] = 2;
  EXPECT_THROW(model_from_hf_config(shared, "e4b.json"), Error);
}

}  // namespace
}  // namespace vramplan
