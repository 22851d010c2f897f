// Parameter counts summed over the tensor inventory equal the publishers' figures.
// Exact counts: /work/shared/docs/memory-model.md §1 (derived from the HF module constructors and
// checked against the checkpoints), copied here with the publisher's rounded figure and its page.
#include <gtest/gtest.h>

#include <cmath>

#include "support/test_support.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/model/inventory.hpp"

namespace vramplan {
namespace {

ParamCounts counts_of(const std::string& id) {
  return count_params(load_catalogue_model(test::source_root(), id));
}

struct Exact {
  const char* id;
  std::uint64_t total;
  const char* source;
};

// Exact totals (memory-model.md §1.1-1.3 validation tables).
const Exact kExact[] = {
    {"llama-3.1-8b", 8'030'261'248ull, "huggingface.co/meta-llama/Llama-3.1-8B: 8.03B"},
    {"llama-3.1-70b", 70'553'706'496ull, "huggingface.co/meta-llama/Llama-3.1-70B: 70.6B"},
    {"llama-3.1-405b", 405'853'388'800ull, "huggingface.co/meta-llama/Llama-3.1-405B: 405B"},
    {"qwen2.5-7b", 7'615'616'512ull, "huggingface.co/Qwen/Qwen2.5-7B: 7.61B"},
    {"mistral-7b-v0.1", 7'241'732'096ull, "mistral.ai/news/announcing-mistral-7b: 7.3B"},
    {"mixtral-8x7b", 46'702'792'704ull, "mistral.ai/news/mixtral-of-experts: 46.7B"},
    {"deepseek-v3", 671'026'419'200ull, "github.com/deepseek-ai/DeepSeek-V3 README_WEIGHTS.md: 671B main model"},
    {"qwen2.5-0.5b", 494'032'768ull, "huggingface.co/Qwen/Qwen2.5-0.5B: 0.49B (memory-model.md §1.1)"},
};

TEST(ParamCounts, ExactPublishedTotals) {
  for (const auto& e : kExact) EXPECT_EQ(counts_of(e.id).total, e.total) << e.id << " (" << e.source << ")";
}

TEST(ParamCounts, Falcon7bMatchesItsCheckpointIndex) {
  // tiiuae/falcon-7b pytorch_model.bin.index.json (vendored next to the catalogue's config copy,
  // github.com/tenstorrent/tt-buda/blob/97caab79/pybuda/test/falcon/models/falcon7b/):
  // total_size 14,434,379,520 B in bf16 = 7,217,189,760 parameters, which include lm_head.weight
  // stored on disk although tied to the embedding: 7,217,189,760 - 65024 x 4544 = 6,921,720,704.
  EXPECT_EQ(counts_of("falcon-7b").total, 14'434'379'520ull / 2 - 65'024ull * 4'544ull);
}

TEST(ParamCounts, MixtralActivePerToken) {
  // mistral.ai/news/mixtral-of-experts: 12.9B per token. Top-2 of 8 experts:
  // 46,702,792,704 - 32 layers x 6 unused experts x 3 x 4096 x 14336 = 12,879,925,248.
  EXPECT_EQ(counts_of("mixtral-8x7b").active, 12'879'925'248ull);
}

TEST(ParamCounts, DeepSeekV3MtpIsSeparateAndActiveMatchesReadme) {
  const auto c = counts_of("deepseek-v3");
  // memory-model.md §1.3: active 37.55B with embedding + head, 36.63B without the embedding.
  EXPECT_NEAR(static_cast<double>(c.active) / 1e9, 37.55, 0.005);
  EXPECT_NEAR(static_cast<double>(c.active - c.embedding) / 1e9, 36.63, 0.005);
  // README: 685B on the card = 671B + ~14B MTP (incl. its own embedding and head copies).
  EXPECT_NEAR(static_cast<double>(c.total + c.mtp) / 1e9, 685.0, 0.6);
}

struct Rounded {
  const char* id;
  double billions;  //!< as published
  double unit;      //!< one unit of the last published digit
  const char* source;
};

// Publishers that state rounded counts. Some round (Qwen2 blog 72.71B for 72,706,203,648), some
// truncate (Meta's 1.23B for 1,235,814,400; Qwen's 14.7B for 14.77B): the inventory must lie in
// [published - unit/2, published + unit), which is what either convention can print.
bool consistent(double computed, double published, double unit) {
  return computed >= published - unit / 2 && computed < published + unit;
}

const Rounded kRounded[] = {
    {"llama-3.2-1b", 1.23, 0.01, "huggingface.co/meta-llama/Llama-3.2-1B model card table"},
    {"llama-3.2-3b", 3.21, 0.01, "huggingface.co/meta-llama/Llama-3.2-3B model card table"},
    {"qwen2.5-1.5b", 1.54, 0.01, "Qwen2.5-1.5B model card: Number of Parameters 1.54B"},
    {"qwen2.5-3b", 3.09, 0.01, "Qwen2.5-3B model card: 3.09B"},
    {"qwen2.5-14b", 14.7, 0.1, "Qwen2.5-14B model card: 14.7B"},
    {"qwen3-14b", 14.8, 0.1, "Qwen3-14B model card: 14.8B"},
    {"qwen3-32b", 32.8, 0.1, "Qwen3-32B model card: 32.8B"},
    {"qwen3-8b", 8.2, 0.1, "Qwen3-8B model card: 8.2B"},
    {"qwen3-4b", 4.0, 0.1, "Qwen3-4B model card: 4.0B"},
    {"qwen3-30b-a3b", 30.5, 0.1, "Qwen3-30B-A3B model card: 30.5B total"},
    {"qwen2-72b", 72.71, 0.01, "qwenlm.github.io/blog/qwen2: 72.71B"},
    {"qwen2-57b-a14b", 57.41, 0.01, "qwenlm.github.io/blog/qwen2: 57.41B"},
    {"gpt-oss-20b", 20.91, 0.01, "arXiv:2508.10925 Table 1: 20.91B"},
    {"gpt-oss-120b", 116.83, 0.01, "arXiv:2508.10925 Table 1: 116.83B"},
    {"deepseek-v2-lite", 15.7, 0.1, "github.com/deepseek-ai/DeepSeek-V2 README: 15.7B"},
    {"mixtral-8x22b", 141, 1.0, "mistral.ai/news/mixtral-8x22b: 141B"},
    {"llama-4-maverick", 400, 1.0, "Llama-4-Maverick model card: 400B total"},
    {"gemma-3-27b", 27.4, 0.1, "google/gemma-3-27b-it: 27.4B (vision tower included)"},
    {"gemma-3-4b", 4.3, 0.1, "google/gemma-3-4b-it: 4.3B (vision tower included)"},
    {"phi-3-mini", 3.8, 0.1, "Phi-3-mini-4k-instruct model card: 3.8B"},
    {"phi-2", 2.7, 0.1, "microsoft/phi-2 model card: 2.7 billion"},
    {"phi-3.5-mini", 3.8, 0.1, "Phi-3.5-mini-instruct model card: 3.8B"},
    {"qwen3-1.7b", 1.7, 0.1, "Qwen3-1.7B model card: 1.7B"},
    {"gemma-3-1b", 1.0, 0.1, "google/gemma-3-1b-it model card: 1B"},
    {"falcon-7b", 7, 1.0, "tiiuae/falcon-7b model card: 7B"},
    {"qwen3-coder-480b-a35b", 480, 1.0, "Qwen3-Coder-480B-A35B-Instruct model card: 480B in total"},
    {"kimi-k2-instruct", 1000, 100, "github.com/MoonshotAI/Kimi-K2 README: 1T total"},
};

TEST(ParamCounts, RoundedPublishedTotals) {
  for (const auto& r : kRounded) {
    const double computed = static_cast<double>(counts_of(r.id).total) / 1e9;
    EXPECT_TRUE(consistent(computed, r.billions, r.unit)) << r.id << ": " << computed << "B vs " << r.source;
  }
}

TEST(ParamCounts, ActivePerTokenOfMoeModels) {
  // Publishers' active counts exclude the input embedding (a lookup, not a matmul).
  auto active_wo_embed = [](const char* id) {
    const auto c = counts_of(id);
    return static_cast<double>(c.active - c.embedding) / 1e9;
  };
  EXPECT_NEAR(active_wo_embed("gpt-oss-20b"), 3.61, 0.005);   // arXiv:2508.10925 Table 1
  EXPECT_NEAR(active_wo_embed("gpt-oss-120b"), 5.13, 0.005);  // arXiv:2508.10925 Table 1
  EXPECT_TRUE(consistent(active_wo_embed("deepseek-v2-lite"), 2.4, 0.1));  // DeepSeek-V2 README: 2.4B
  EXPECT_TRUE(consistent(static_cast<double>(counts_of("qwen3-30b-a3b").active) / 1e9, 3.3, 0.1));  // card: 3.3B
  EXPECT_NEAR(static_cast<double>(counts_of("qwen3-235b-a22b").active) / 1e9, 22.0, 0.5);  // card: 22B
  EXPECT_NEAR(static_cast<double>(counts_of("mixtral-8x22b").active) / 1e9, 39.0, 0.5);  // 39B
  // Scout's card counts the language model per text token (17B); the vision encoder runs on image tiles only.
  const auto scout = counts_of("llama-4-scout");
  EXPECT_NEAR(static_cast<double>(scout.active - scout.vision) / 1e9, 17.0, 0.5);  // 17B
}

TEST(ParamCounts, KimiK2FromItsModuleShapes) {
  // DeepseekV3 modules at Kimi-K2's config (h 7168, 64 heads, q_lora 1536, kv_lora 512, rope 64,
  // nope 128, v 128, 1 dense layer of 18432, 60 MoE layers of 384 experts x 2048 + 1 shared,
  // vocab 163840, untied head):
  //   MLA per layer: q_a 1536x7168 + 1536 + q_b 64x192x1536 + kv_a 576x7168 + 512
  //                  + kv_b 64x256x512 + o 7168x8192 = 101,124,096; two norms 14,336
  //   layer 0: 101,124,096 + 14,336 + 3 x 7168 x 18432 = 497,500,160
  //   MoE layer: 101,124,096 + 14,336 + gate 384x7168 + bias 384 + 384 x 3 x 2048 x 7168
  //              + shared 3 x 2048 x 7168 = 17,059,365,248; x 60 = 1,023,561,914,880
  //   + embedding and head 2 x 163840 x 7168 + final norm 7168 = 1,026,408,232,448 (README: 1T).
  EXPECT_EQ(counts_of("kimi-k2-instruct").total, 1'026'408'232'448ull);
  // Kimi-K2.5 keeps that text model (text_config of KimiK25ForConditionalGeneration); its MoonViT
  // tower (README: 400M) is listed as not counted.
  const auto k25 = load_catalogue_model(test::source_root(), "kimi-k2.5");
  EXPECT_EQ(count_params(k25).total, 1'026'408'232'448ull);
  EXPECT_EQ(k25.exclusions.size(), 1u);
  // Active: 376 of 384 experts idle, 60 x 376 x 3 x 2048 x 7168 = 993,546,731,520 fewer
  // = 32,861,500,928 (README: 32B activated).
  EXPECT_EQ(counts_of("kimi-k2-instruct").active, 32'861'500'928ull);
}

TEST(ParamCounts, Qwen3CoderActivePerToken) {
  // Card: 35B activated. 62 layers x 8 of 160 experts x 3 x 6144 x 2560 = 23.4B routed, plus
  // attention, norms, routers, embedding and head: 35.5B (34.5B without the input embedding).
  EXPECT_NEAR(static_cast<double>(counts_of("qwen3-coder-480b-a35b").active) / 1e9, 35.0, 0.6);
}

}  // namespace
}  // namespace vramplan
