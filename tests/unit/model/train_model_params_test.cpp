// Parameter counts of the catalogue entries added for the training records (issue 16): the
// inventory each config builds, against the module arithmetic and the publisher's figure.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/model/inventory.hpp"

namespace vramplan {
namespace {

ModelSpec train_model(const std::string& id) { return load_catalogue_model(test::source_root(), id); }
std::uint64_t train_model_total(const std::string& id) { return count_params(train_model(id)).total; }

TEST(TrainModelParams, GemmaMatchesTheTechnicalReport) {
  // Gemma report (arXiv 2403.08295) Table 2, non-embedding parameters: 2B 1,981,884,416 and
  // 7B 7,751,248,896. The embedding there counts 256,128 rows; the released vocabulary has 256,000:
  // 2B: 18 x (2048 x 2048 + 2 x 2048 x 256 + 2048 x 2048 + 3 x 2048 x 16384 + 2 x 2048) + 2048
  //     = 1,981,884,416, + 256000 x 2048 (tied) = 2,506,172,416.
  // 7B: 28 x (4 x 3072 x 4096 + 3 x 3072 x 24576 + 2 x 3072) + 3072 = 7,751,248,896,
  //     + 256000 x 3072 = 8,537,680,896.
  const auto c2 = count_params(train_model("gemma-2b"));
  EXPECT_EQ(c2.total, 2'506'172'416ull);
  EXPECT_EQ(c2.total - c2.embedding, 1'981'884'416ull);
  const auto c7 = count_params(train_model("gemma-7b"));
  EXPECT_EQ(c7.total, 8'537'680'896ull);
  EXPECT_EQ(c7.total - c7.embedding, 7'751'248'896ull);
}

TEST(TrainModelParams, TinyLlamaPhi15StableLmAlpha) {
  // TinyLlama-1.1B: 22 x (2 x 2048^2 + 2 x 2048 x 256 + 3 x 2048 x 5632 + 2 x 2048) = 968,974,336
  // + 2 x 32000 x 2048 (131,072,000) + 2048 = 1,100,048,384 ("1.1B").
  EXPECT_EQ(train_model_total("tinyllama-1.1b"), 1'100'048'384ull);
  // phi-1.5: 24 x (3 x (2048^2 + 2048) + (2048^2 + 2048) + (2048 x 8192 + 8192) + (8192 x 2048 + 2048)
  // + 2 x 2048) = 1,208,500,224 + embed 104,857,600 + lm_head with bias 104,908,800 + final LayerNorm
  // 4,096 = 1,418,270,720 (the phi-1.5 report says "1.3 billion").
  EXPECT_EQ(train_model_total("phi-1.5"), 1'418'270'720ull);
  // stablelm-base-alpha-3b: 16 x ((4096 x 12288 + 12288) + (4096^2 + 4096) + (4096 x 16384 + 16384)
  // + (16384 x 4096 + 4096) + 4 x 4096) = 3,222,077,440 + 2 x 50688 x 4096 (415,236,096) + 8,192
  // = 3,637,321,728. The StableLM README (@93eea082) states 3,638,525,952: 1,204,224 (0.033 %,
  // = 294 x 4096) more than the tensors this config describes; not a tensor of the HF checkpoint
  // that we could identify.
  EXPECT_EQ(train_model_total("stablelm-base-alpha-3b"), 3'637'321'728ull);
}

}  // namespace
}  // namespace vramplan
