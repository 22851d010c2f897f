// Vision-language catalogue entries: the counted towers (model/vision_pixtral.cpp,
// vision_qwen.cpp, family_mllama.cpp) make each entry sum to the checkpoint's exact parameter
// total, the figure the publisher's safetensors metadata gives (sources in each models/*.json).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "support/catalogue_counts.hpp"
#include "support/test_support.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/model/inventory.hpp"

namespace vramplan {
namespace {

ModelSpec vl_model(const char* id) { return load_catalogue_model(test::source_root(), id); }

struct ExactVl {
  const char* id;
  std::uint64_t total;   // published exact total
  std::uint64_t vision;  // hand-computed tower + projector (arithmetic below)
};

// Vision arithmetic (w = vision width, I = its MLP width):
//  Pixtral (Mistral-Small-3.1): w 1024, I 4096, 24 layers, patch 14:
//    1024·3·14·14 + 1024 (ln_pre) + 24·(4·1024² + 3·1024·4096 + 2·1024) = 403,305,472;
//    projector 1024 (norm) + 4096·1024 (merger) + 1024·5120 + 5120·5120 = 35,652,608 -> 438,958,080;
//    text 2·131072·5120 + 40·(2·5120·4096 + 2·5120·1024 + 3·5120·32768 + 2·5120) + 5120 = 23,572,403,200.
//  Qwen2.5-VL: w 1280, I 3420, 32 blocks: 1280·3·2·14·14 + 32·(2·1280 + (3·1280² + 3·1280)
//    + (1280² + 1280) + 2·(1280·3420 + 3420) + (3420·1280 + 1280)) + 1280 + (5120² + 5120)
//    + (5120·out + out): out 2048 -> 668,684,288 (3B), out 3584 -> 676,550,144 (7B).
//  Qwen3-VL-8B: w 1152, I 4304, 27 blocks, 3 deepstack mergers: 1152·3·2·16² + 1152 + 2304·1152
//    + 27·(4·1152 + 3·1152² + 3·1152 + 1152² + 1152 + 2·1152·4304 + 4304 + 1152)
//    + (2·1152 + 4608² + 4608 + 4608·4096 + 4096) + 3·(2·4608 + 4608² + 4608 + 4608·4096 + 4096)
//    = 576,388,336.
//  Llama-3.2-11B-Vision: w 1280, I 5120, 32 + 8 global layers, 4 tiles, 9 aspect ids, 1601 positions:
//    1280·588 + 1280 + 1601·1280 + 1 + 9·4·1601·1280 + 2·(9·4·1280 + 1) + 2·2·1280
//    + 32·19,672,320 + 8·19,672,322 + (7680·4096 + 4096) = 895,028,755.
const ExactVl kExactVlTotals[] = {
    {"mistral-small-3.1-24b", 24'011'361'280ull, 438'958'080ull},
    {"qwen2.5-vl-3b", 3'754'622'976ull, 668'684'288ull},
    {"qwen2.5-vl-7b", 8'292'166'656ull, 676'550'144ull},
    {"qwen3-vl-4b", 4'437'815'808ull, 0},
    {"qwen3-vl-8b", 8'767'123'696ull, 576'388'336ull},
    {"llama-3.2-11b-vision", 10'670'220'835ull, 895'028'755ull},
};

TEST(VisionTowers, EntriesSumToThePublishedExactTotals) {
  for (const auto& e : kExactVlTotals) {
    SCOPED_TRACE(e.id);
    const auto spec = vl_model(e.id);
    const auto c = count_params(spec);
    EXPECT_EQ(c.total, e.total);
    ASSERT_TRUE(spec.source.published_params.has_value());
    EXPECT_EQ(*spec.source.published_params, e.total);
    if (e.vision > 0) {
      EXPECT_EQ(c.vision, e.vision);
    }
    EXPECT_TRUE(spec.arch.multimodal);
  }
}

TEST(VisionTowers, LargeSizesMatchTheRoundedPublishedFigures) {
  // Model pages: Qwen2.5-VL-72B "73.4B params", Llama-3.2-90B-Vision "88.6B params"
  // (0.05 B rounding: well under the 0.5 % target).
  for (const auto* id : {"qwen2.5-vl-72b", "llama-3.2-90b-vision"}) {
    SCOPED_TRACE(id);
    const auto spec = vl_model(id);
    const double total = static_cast<double>(count_params(spec).total);
    const double published = static_cast<double>(*spec.source.published_params);
    EXPECT_LT(std::fabs(total - published) / published, 0.001) << total;
  }
}

// Qwen3-VL MoE: the Qwen3-MoE text model of the same shape plus the Qwen3-VL-8B tower above, its
// four mergers' last projection sized by out_hidden_size (4608 x out + out each):
//   30B-A3B: text = qwen3-30b-a3b's 30,532,122,624; tower 576,388,336 - 4 x (4096 - 2048) x 4609
//            = 538,631,408; total 31,070,754,032 (published: 31B, Qwen's GGUF as Hugging Face lists it)
//   235B-A22B: text = qwen3-235b-a22b's 235,093,634,560 + the 8B's tower (out 4096) 576,388,336
//            = 235,670,022,896 (published: 235B total, about 22B active)
TEST(VisionTowers, Qwen3VlMoeIsQwen3MoePlusTheQwen3VlTower) {
  const auto text30 = count_params(vl_model("qwen3-30b-a3b"));
  const auto vl30 = test::expect_catalogue_counts("qwen3-vl-30b-a3b", 31'070'754'032ull,
                                                  text30.active + 538'631'408ull, 31'000'000'000ull);
  EXPECT_EQ(text30.total, 30'532'122'624ull);
  EXPECT_EQ(count_params(vl30).vision, 538'631'408ull);
  EXPECT_TRUE(vl30.arch.multimodal);
  EXPECT_EQ(vl30.arch.num_experts, 128u);
  EXPECT_TRUE(test::has_tensor(vl30, "model.language_model.layers.47.mlp.experts.*.down_proj.weight"));
  const auto text235 = count_params(vl_model("qwen3-235b-a22b"));
  const auto vl235 = test::expect_catalogue_counts("qwen3-vl-235b-a22b", 235'670'022'896ull,
                                                   text235.active + 576'388'336ull, 235'000'000'000ull);
  EXPECT_EQ(text235.total, 235'093'634'560ull);
  EXPECT_EQ(vl235.arch.max_position_embeddings, 262'144u);
}

TEST(VisionTowers, Pixtral12bIsMistralNemoPlusTheFourHundredMillionEncoder) {
  // mistral.ai/news/pixtral-12b: "a 12B parameter multimodal decoder based on Mistral Nemo" and "a new
  // 400M parameter vision encoder". Decoder = the mistral-nemo-12b entry exactly; encoder
  // 1024·3·16·16 + 1024 + 24·16,779,264 = 403,489,792 plus the LLaVA projector
  // (1024·5120 + 5120) + (5120·5120 + 5120) = 31,467,520.
  const auto pixtral = count_params(vl_model("pixtral-12b"));
  const auto nemo = count_params(vl_model("mistral-nemo-12b"));
  EXPECT_EQ(pixtral.vision, 403'489'792ull + 31'467'520ull);
  EXPECT_EQ(pixtral.total - pixtral.vision, nemo.total);
}

TEST(VisionTowers, MllamaBlocksSpanEveryLayerAsVllmV0SizesThem) {
  const auto spec = vl_model("llama-3.2-11b-vision");
  // vLLM V0 CacheEngine.get_cache_block_size counts all 40 attention layers, the 8 cross-attention
  // layers ([3, 8, ..., 38]) included.
  EXPECT_EQ(std::count(spec.arch.layer_attention.begin(), spec.arch.layer_attention.end(), LayerAttention::Full), 40);
  EXPECT_FALSE(spec.exclusions.empty());  // the image's encoder-token blocks are listed, not modelled
  const auto cross = std::find_if(spec.tensors.begin(), spec.tensors.end(), [](const TensorInfo& t) {
    return t.name == "language_model.model.layers.3.cross_attn.q_norm.weight";
  });
  ASSERT_NE(cross, spec.tensors.end());
  EXPECT_EQ(cross->layer, std::optional<int>(3));
  const auto embed = std::find_if(spec.tensors.begin(), spec.tensors.end(),
                                  [](const TensorInfo& t) { return t.role == TensorRole::TokenEmbedding; });
  ASSERT_NE(embed, spec.tensors.end());
  EXPECT_EQ(embed->shape[0], 128256u + 8u);  // vocab_size + 8 image rows
}

TEST(VisionTowers, DummyImagesFollowTheProcessors) {
  // Mistral3: 1540 / (14 x 2) = 55 merged patches a side -> 3025 embeddings; 3 x 1540^2 pixel values.
  const auto mistral = vl_model("mistral-small-3.1-24b").arch;
  EXPECT_EQ(mistral.mm_tokens_per_item, 3025u);
  EXPECT_EQ(mistral.mm_pixel_values_per_item, 3u * 1540 * 1540);
  // Qwen2.5-VL: max_pixels 12,845,056 / 28^2 = 16384 embeddings; x 4 = 65536 patches of 3·2·14·14.
  const auto qwen25 = vl_model("qwen2.5-vl-7b").arch;
  EXPECT_EQ(qwen25.mm_tokens_per_item, 16384u);
  EXPECT_EQ(qwen25.mm_pixel_values_per_item, 65536u * 1176);
  EXPECT_EQ(qwen25.mm_embedding_width, 0u);  // the text hidden size
  // Qwen3-VL: 16,777,216 / 32^2 = 16384; 65536 patches of 3·2·16·16; embeddings 4096 x (1 + 3 deepstack).
  const auto qwen3 = vl_model("qwen3-vl-8b").arch;
  EXPECT_EQ(qwen3.mm_tokens_per_item, 16384u);
  EXPECT_EQ(qwen3.mm_pixel_values_per_item, 65536u * 1536);
  EXPECT_EQ(qwen3.mm_embedding_width, 4u * 4096);
  // Llama-4: 16 tiles + the global tile, (336 / 14)^2 / 4 = 144 embeddings each.
  const auto scout = vl_model("llama-4-scout").arch;
  EXPECT_EQ(scout.mm_tokens_per_item, 17u * 144);
  EXPECT_EQ(scout.mm_pixel_values_per_item, 17u * 3 * 336 * 336);
}

}  // namespace
}  // namespace vramplan
