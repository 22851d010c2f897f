// DeepSeek sparse attention in the step model (planner/src/perf/model_shape.cpp add_layer /
// indexer_group): the MLA reads at most index_topk latent rows per query, the lightning indexer
// scores every cached indexer key, and its replicated weights are read in full on every TP rank.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/perf/model_shape.hpp"

namespace vramplan::perf {
namespace {

// GLM-5 (models/glm-5.json): 78 layers, each with its own indexer (no index_topk_freq); 64
// heads, kv_lora 512 + rope 64; indexer 32 heads of 128, index_topk 2048; h 6144, q_lora 2048.
struct Glm5 {
  ModelSpec spec = load_catalogue_model(test::source_root(), "glm-5");
  std::vector<std::uint64_t> bytes;  // bf16: 2 B per element
  Glm5() {
    for (const TensorInfo& t : spec.tensors) bytes.push_back(t.elements() * 2);
  }
  PerfModelShape shape(ShapeOptions opt) const { return shape_from_model(spec, bytes, opt); }
};

const AttentionGroup* find_group(const PerfModelShape& s, double qk_dim) {
  for (const AttentionGroup& g : s.attention)
    if (g.qk_dim == qk_dim) return &g;
  return nullptr;
}

TEST(DsaStep, LatentReadsAreCappedAtTopKAndTheIndexerIsAGroupOfItsOwn) {
  const Glm5 m;
  const PerfModelShape s = m.shape(ShapeOptions{8, 1, 1, 2, 2});
  ASSERT_EQ(s.attention.size(), 2u);
  const AttentionGroup* mla = find_group(s, 576);
  const AttentionGroup* idx = find_group(s, 128);
  ASSERT_TRUE(mla && idx);
  // MLA: 64 / 8 = 8 heads per rank, the latent (576 x 2 B = 1,152 B) on every rank, at most 2048
  // rows per query.
  EXPECT_DOUBLE_EQ(mla->layers, 78);
  EXPECT_DOUBLE_EQ(mla->q_heads, 8);
  EXPECT_DOUBLE_EQ(mla->kv_bytes_per_token, 1152);
  EXPECT_EQ(mla->window, 2048u);
  // Indexer: all 32 heads on every rank (ReplicatedLinear), keys of 128 fp8 + one fp32 scale =
  // 132 B, no value sum, every cached key scored (no window).
  EXPECT_DOUBLE_EQ(idx->layers, 78);
  EXPECT_DOUBLE_EQ(idx->q_heads, 32);
  EXPECT_DOUBLE_EQ(idx->v_dim, 0);
  EXPECT_DOUBLE_EQ(idx->kv_bytes_per_token, 132);
  EXPECT_EQ(idx->window, 0u);
  EXPECT_TRUE(idx->fixed_row);
}

TEST(DsaStep, DecodeKvTrafficAtLongContext) {
  const Glm5 m;
  const PerfModelShape s = m.shape(ShapeOptions{8, 1, 1, 2, 2});
  const HardwareRates r{1e12, 1e15, 0, 0, 0};
  // One sequence at 65,536 cached tokens: 78 x (2048 latent rows x 1,152 B + 65,536 keys x 132 B)
  // = 78 x (2,359,296 + 8,650,752) = 858,783,744 B. Dense MLA would read 78 x 65,536 x 1,152 =
  // 5,888,802,816 B.
  EXPECT_DOUBLE_EQ(decode_step(s, r, 1, 65536).kv_bytes, 858783744.0);
  // Below index_topk every latent row is read: 78 x 1,000 x (1,152 + 132) = 100,152,000 B.
  EXPECT_DOUBLE_EQ(decode_step(s, r, 1, 1000).kv_bytes, 100152000.0);
  // Attention FLOPs at 65,536: MLA 78 x 2 x 8 heads x (576 + 512) x 2048 = 2,780,823,552;
  // indexer 78 x 2 x 32 heads x 128 x 65,536 = 41,875,931,136.
  EXPECT_DOUBLE_EQ(decode_step(s, r, 1, 65536).attention_flops, 2780823552.0 + 41875931136.0);
}

TEST(DsaStep, PlannedKvRescalesTheLatentButNotTheIndexerKey) {
  const Glm5 m;
  ShapeOptions opt{8, 1, 1, 2, 2};
  // SGLang on a B200 stores the latent as fp8_ds_mla: the plan's 78 x (656 + 132) = 61,464 B.
  opt.kv_bytes_per_token_per_gpu = 61464;
  const PerfModelShape s = m.shape(opt);
  EXPECT_DOUBLE_EQ(find_group(s, 576)->kv_bytes_per_token, 656);
  EXPECT_DOUBLE_EQ(find_group(s, 128)->kv_bytes_per_token, 132);
  // An fp8 KV element size gives the same rows without the plan's figure.
  const PerfModelShape fp8 = m.shape(ShapeOptions{8, 1, 1, 1, 2});
  EXPECT_DOUBLE_EQ(find_group(fp8, 576)->kv_bytes_per_token, 656);  // 512 + 4 x 4 + 64 x 2
}

TEST(DsaStep, IndexerWeightsAreReadInFullOnEveryRank) {
  const Glm5 m;
  const PerfModelShape tp1 = m.shape(ShapeOptions{1, 1, 1, 2, 2});
  const PerfModelShape tp8 = m.shape(ShapeOptions{8, 1, 1, 2, 2});
  // Indexer per layer (tests/unit/model/deepseek_sparse_attention_test.cpp): 9,371,904 params;
  // 78 layers x 9,371,904 x 2 B = 1,462,017,024 B. MLA's down-projections are replicated too
  // (ReplicatedLinear in vLLM and SGLang): q_a 6,144 x 2,048 + kv_a 6,144 x (512 + 64) =
  // 16,121,856 params a layer, x 78 x 2 B = 2,515,009,536 B. At TP 8 the rest divides by 8, these
  // do not: tp8 = (tp1 - R) / 8 + R.
  const double indexer = 78.0 * 9371904 * 2;
  EXPECT_DOUBLE_EQ(indexer, 1462017024.0);
  const double down = 78.0 * 16121856 * 2;
  EXPECT_DOUBLE_EQ(down, 2515009536.0);
  const double replicated = indexer + down;
  EXPECT_NEAR(tp8.dense_weight_bytes, (tp1.dense_weight_bytes - replicated) / 8 + replicated, 1e-3);
  EXPECT_NEAR(tp8.active_params, (tp1.active_params - replicated / 2) / 8 + replicated / 2, 1e-3);
}

}  // namespace
}  // namespace vramplan::perf
