// Catalogue entries added for the models of the vLLM start-up records
// (tests/accuracy/data/vllm_startup_logs.jsonl) whose published name differs from an existing
// entry: each loads through the real catalogue loader and sums to the publisher's exact count.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/model/inventory.hpp"

namespace vramplan {
namespace {

struct ExactEntry {
  const char* id;
  const char* same_architecture_as;  // existing entry with identical dimensions
  std::uint64_t total;
  const char* source;
};

// Exact totals: /work/shared/docs/memory-model.md §1.1 validation table (derived from the HF
// module constructors and checked against the checkpoints).
//   Llama-3.1-8B: 128256·4096 (embed) + 32·(4096·4096·2 + 2·4096·1024 + 3·4096·14336 + 2·4096)
//                 + 4096 (norm) + 128256·4096 (lm_head) = 8,030,261,248
//   Qwen2.5-7B:   152064·3584·2 + 28·(2·3584·3584 + 2·3584·512 + 3584 + 2·512 (qkv bias)
//                 + 3·3584·18944 + 2·3584) + 3584 = 7,615,616,512
const ExactEntry kAdded[] = {
    {"llama-3.1-8b-instruct", "llama-3.1-8b", 8'030'261'248ull,
     "huggingface.co/meta-llama/Llama-3.1-8B-Instruct: 8.03B"},
    {"qwen2.5-7b-instruct", "qwen2.5-7b", 7'615'616'512ull, "huggingface.co/Qwen/Qwen2.5-7B-Instruct: 7.61B"},
};

TEST(CatalogueExtra, AddedEntriesLoadWithTheirSources) {
  for (const auto& e : kAdded) {
    SCOPED_TRACE(e.id);
    const auto spec = load_catalogue_model(test::source_root(), e.id);
    EXPECT_EQ(spec.id, e.id);
    EXPECT_TRUE(spec.source.url.starts_with("https://github.com/")) << spec.source.url;
    ASSERT_TRUE(spec.source.published_params.has_value());
    EXPECT_EQ(*spec.source.published_params, e.total);
  }
}

TEST(CatalogueExtra, AddedEntriesMatchThePublishedExactCount) {
  for (const auto& e : kAdded)
    EXPECT_EQ(count_params(load_catalogue_model(test::source_root(), e.id)).total, e.total) << e.id << " (" << e.source << ")";
}

TEST(CatalogueExtra, InstructEntriesShareTheBaseArchitecture) {
  for (const auto& e : kAdded) {
    SCOPED_TRACE(e.id);
    const auto added = load_catalogue_model(test::source_root(), e.id);
    const auto base = load_catalogue_model(test::source_root(), e.same_architecture_as);
    EXPECT_EQ(added.arch.num_layers, base.arch.num_layers);
    EXPECT_EQ(added.arch.hidden_size, base.arch.hidden_size);
    EXPECT_EQ(added.arch.vocab_size, base.arch.vocab_size);
    EXPECT_EQ(added.tensors.size(), base.tensors.size());
    EXPECT_EQ(count_params(added).total, count_params(base).total);
  }
}

// Mistral-Small-3.1-24B: language model 2·131072·5120 + 40·(2·5120·4096 + 2·5120·1024 + 3·5120·32768
// + 2·5120) + 5120 = 23,572,403,200 plus the Pixtral encoder, patch merger and projector
// (438,958,080, tests/unit/model/vision_towers_test.cpp) = 24,011,361,280, the checkpoint's total.
TEST(CatalogueExtra, MistralSmall31CountsItsVisionTower) {
  const auto spec = load_catalogue_model(test::source_root(), "mistral-small-3.1-24b");
  const auto c = count_params(spec);
  EXPECT_EQ(c.total, 24'011'361'280ull);
  EXPECT_EQ(c.total - c.vision, 23'572'403'200ull);
  EXPECT_EQ(spec.arch.num_layers, 40u);
  EXPECT_TRUE(spec.exclusions.empty());  // nothing of the checkpoint left uncounted
}

}  // namespace
}  // namespace vramplan
