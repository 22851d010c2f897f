// PerfModelShape from a tensor inventory: what is streamed, how it shards, KV per token.
#include "vramplan/perf/model_shape.hpp"

#include <gtest/gtest.h>

#include "accuracy/perf_llama_inventory.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan::perf {
namespace {

// Llama-3.1-8B (HF config: hidden 4096, 32 layers, 32 heads, 8 KV heads, I 14336, V 128256).
const test::LlamaConfig kLlama8b{4096, 32, 32, 8, 14336, 128256, false, 0, 0};

TEST(PerfModelShape, DenseLlamaStreamsEverythingButTheEmbedding) {
  const auto inv = test::llama_inventory("llama-3.1-8b", kLlama8b, 2, 2);
  const PerfModelShape s = shape_from_model(inv.spec, inv.bytes, ShapeOptions{});
  // docs/memory-model.md §8.1: 8,030,261,248 params x 2 B = 16,060,522,496 B; minus the
  // embedding 128256 x 4096 x 2 = 1,050,673,152 B gathered, not streamed -> 15,009,849,344 B.
  EXPECT_DOUBLE_EQ(s.dense_weight_bytes, 15009849344.0);
  EXPECT_DOUBLE_EQ(s.active_params, 8030261248.0 - 525336576.0);
  ASSERT_EQ(s.attention.size(), 1u);
  EXPECT_DOUBLE_EQ(s.attention[0].layers, 32);
  // 8 KV heads x (128 + 128) x 2 B = 4096 B per layer -> 131,072 B per token (§8.1).
  EXPECT_DOUBLE_EQ(s.attention[0].kv_bytes_per_token * s.attention[0].layers, 131072.0);
  EXPECT_EQ(s.num_experts, 0);
}

TEST(PerfModelShape, TiedEmbeddingIsReadAsTheHead) {
  test::LlamaConfig tied = kLlama8b;
  tied.tied = true;
  const auto inv = test::llama_inventory("tied", tied, 2, 2);
  const auto untied = test::llama_inventory("untied", kLlama8b, 2, 2);
  // Untied streams lm_head (1,050,673,152 B); tied streams the embedding in its place.
  EXPECT_DOUBLE_EQ(shape_from_model(inv.spec, inv.bytes, {}).dense_weight_bytes,
                   shape_from_model(untied.spec, untied.bytes, {}).dense_weight_bytes);
  // Either way the head is 128256 x 4096 = 525,336,576 params, the part of a token's GEMMs only
  // the rows whose logits are taken go through; over TP 4 a quarter of it per GPU.
  EXPECT_DOUBLE_EQ(shape_from_model(inv.spec, inv.bytes, {}).head_params, 525336576.0);
  EXPECT_DOUBLE_EQ(shape_from_model(untied.spec, untied.bytes, {}).head_params, 525336576.0);
  EXPECT_DOUBLE_EQ(shape_from_model(inv.spec, inv.bytes, ShapeOptions{4, 1, 1, 2, 2}).head_params, 525336576.0 / 4);
}

TEST(PerfModelShape, TensorAndPipelineParallelShares) {
  // Llama-2-70B-like: 80 layers, 64 heads, 8 KV heads.
  const test::LlamaConfig c{8192, 80, 64, 8, 28672, 32000, false, 0, 0};
  const auto inv = test::llama_inventory("70b", c, 2, 2);
  const PerfModelShape one = shape_from_model(inv.spec, inv.bytes, {});
  const PerfModelShape tp16 = shape_from_model(inv.spec, inv.bytes, ShapeOptions{16, 1, 1, 2, 2});
  EXPECT_DOUBLE_EQ(tp16.dense_weight_bytes, one.dense_weight_bytes / 16);
  EXPECT_DOUBLE_EQ(tp16.attention[0].q_heads, 4);
  // 8 KV heads over 16 ranks: one head replicated per rank (docs/memory-model.md §3.7):
  // 1 x 256 x 2 = 512 B per layer, 80 layers = 40 KiB per token per GPU.
  EXPECT_DOUBLE_EQ(tp16.attention[0].kv_bytes_per_token * 80, 40960.0);
  const PerfModelShape pp4 = shape_from_model(inv.spec, inv.bytes, ShapeOptions{1, 4, 1, 2, 2});
  EXPECT_DOUBLE_EQ(pp4.layers, 20);
  EXPECT_DOUBLE_EQ(pp4.attention[0].layers, 20);
  EXPECT_DOUBLE_EQ(pp4.dense_weight_bytes, one.dense_weight_bytes / 4);
}

TEST(PerfModelShape, DpAttentionSplitsTheAttentionOverItsGroup) {
  // Llama-3.1-8B at tp 8 as 4 DP-attention ranks of 2 (SGLang --dp 4 --enable-dp-attention):
  // q / k / v / o per layer are 4096 x (4096 + 2 x 1024) + 4096 x 4096 = 41,943,040 params,
  // x 32 layers = 1,342,177,280 params = 2,684,354,560 B, split over 2 GPUs, not 8; the rest over 8.
  const auto inv = test::llama_inventory("llama-3.1-8b", kLlama8b, 2, 2);
  ShapeOptions o{8, 1, 1, 2, 2};
  const PerfModelShape tp8 = shape_from_model(inv.spec, inv.bytes, o);
  o.attention_tp = 2;
  o.dp_attention_ranks = 4;
  const PerfModelShape dp = shape_from_model(inv.spec, inv.bytes, o);
  EXPECT_DOUBLE_EQ(tp8.attention_weight_bytes, 2684354560.0 / 8);
  EXPECT_DOUBLE_EQ(dp.attention_weight_bytes, 2684354560.0 / 2);
  EXPECT_DOUBLE_EQ(dp.attention_params, 1342177280.0 / 2);
  EXPECT_NEAR(dp.dense_weight_bytes - tp8.dense_weight_bytes, 2684354560.0 * (0.5 - 0.125), 1);
  EXPECT_EQ(dp.dp_attention_ranks, 4u);
  EXPECT_EQ(dp.attention_tp, 2u);
  EXPECT_DOUBLE_EQ(dp.attention[0].q_heads, 16);  // 32 heads over the group's 2 GPUs
  o.attention_tp = 3;
  EXPECT_THROW(shape_from_model(inv.spec, inv.bytes, o), Error);
}

TEST(PerfModelShape, MoeExpertsSplitOut) {
  // Mixtral-8x7B: hidden 4096, 32 layers, 32 heads, 8 KV, expert I 14336, V 32000, 8 experts top-2.
  const test::LlamaConfig c{4096, 32, 32, 8, 14336, 32000, false, 8, 2};
  const auto inv = test::llama_inventory("mixtral", c, 2, 2);
  const PerfModelShape s = shape_from_model(inv.spec, inv.bytes, {});
  EXPECT_EQ(s.num_experts, 8);
  EXPECT_EQ(s.experts_per_token, 2);
  EXPECT_EQ(s.moe_layers, 32);
  EXPECT_EQ(s.local_experts, 8);
  // one expert = 3 x 4096 x 14336 x 2 B = 352,321,536 B
  EXPECT_DOUBLE_EQ(s.expert_bytes, 352321536.0);
  // docs/memory-model.md §1.2: Mixtral active 12,879,925,248 incl. embedding 32000 x 4096.
  EXPECT_DOUBLE_EQ(s.active_params, 12879925248.0 - 131072000.0);
  // Expert parallelism 4: two whole experts per GPU; TP 4: a quarter of each of the 8.
  const PerfModelShape ep = shape_from_model(inv.spec, inv.bytes, ShapeOptions{1, 1, 4, 2, 2});
  EXPECT_EQ(ep.local_experts, 2);
  EXPECT_DOUBLE_EQ(ep.expert_bytes, 352321536.0);
  EXPECT_EQ(ep.expert_ranks, 4);
  const PerfModelShape tp = shape_from_model(inv.spec, inv.bytes, ShapeOptions{4, 1, 1, 2, 2});
  EXPECT_EQ(tp.local_experts, 8);
  EXPECT_DOUBLE_EQ(tp.expert_bytes, 352321536.0 / 4);
  EXPECT_EQ(tp.expert_ranks, 1);
  // SGLang --tp 8 --ep 4: 2 whole-expert groups of the 8 experts a rank, each expert split over
  // the other tp / ep = 2 ranks (parallel_state.py moe_tp_size = tp // ep).
  const PerfModelShape tp8ep4 = shape_from_model(inv.spec, inv.bytes, ShapeOptions{8, 1, 4, 2, 2});
  EXPECT_EQ(tp8ep4.local_experts, 2);
  EXPECT_DOUBLE_EQ(tp8ep4.expert_bytes, 352321536.0 / 2);
  EXPECT_THROW(shape_from_model(inv.spec, inv.bytes, ShapeOptions{6, 1, 4, 2, 2}), Error);
}

TEST(PerfModelShape, MlaKvIsTheLatentOnEveryRank) {
  // DeepSeek-V3 attention numbers: 128 heads, kv_lora 512, rope 64 (docs/memory-model.md §3.2).
  ModelSpec spec;
  spec.id = "mla";
  spec.arch.hidden_size = 7168;
  spec.arch.num_layers = 61;
  spec.arch.num_heads = 128;
  spec.arch.kv_lora_rank = 512;
  spec.arch.qk_rope_head_dim = 64;
  spec.arch.layer_attention.assign(61, LayerAttention::Mla);
  const std::vector<std::uint64_t> none;
  const PerfModelShape s = shape_from_model(spec, none, ShapeOptions{8, 1, 1, 2, 2});
  ASSERT_EQ(s.attention.size(), 1u);
  // 61 x 576 x 2 = 70,272 B per token, on each of the 8 ranks; 16 heads per rank.
  EXPECT_DOUBLE_EQ(s.attention[0].kv_bytes_per_token * s.attention[0].layers, 70272.0);
  EXPECT_DOUBLE_EQ(s.attention[0].q_heads, 16);
  EXPECT_DOUBLE_EQ(s.attention[0].qk_dim, 576);
  EXPECT_DOUBLE_EQ(s.attention[0].v_dim, 512);
}

TEST(PerfModelShape, RejectsMismatchedSizes) {
  const auto inv = test::llama_inventory("x", kLlama8b, 2, 2);
  std::vector<std::uint64_t> short_bytes(inv.bytes.begin(), inv.bytes.end() - 1);
  EXPECT_THROW(shape_from_model(inv.spec, short_bytes, {}), Error);
  EXPECT_THROW(shape_from_model(inv.spec, inv.bytes, ShapeOptions{1, 64, 1, 2, 2}), Error);
}

}  // namespace
}  // namespace vramplan::perf

namespace vramplan::perf {
namespace {

// Llama-3.1-8B-like GQA (32 query / 8 KV heads, head 128), bf16, from the test inventory helper.
PerfModelShape gqa_shape(ShapeOptions opt) {
  const test::LlamaConfig cfg{4096, 32, 32, 8, 14336, 128256, false, 0, 0};
  const auto inv = test::llama_inventory("gqa", cfg, 2, 2);
  return shape_from_model(inv.spec, inv.bytes, opt);
}

TEST(ModelShapePlanned, KvBytesFromTheMemoryPlanReplaceTheDerivedOnes) {
  ShapeOptions opt;
  opt.kv_bytes_per_token_per_gpu = 65536;  // e.g. an fp8 KV cache the plan resolved: 131072 / 2
  const PerfModelShape s = gqa_shape(opt);
  double total = 0;
  for (const auto& g : s.attention) total += g.layers * g.kv_bytes_per_token;
  EXPECT_DOUBLE_EQ(total, 65536);
  ASSERT_FALSE(s.notes.empty());
  EXPECT_NE(s.notes.back().find("the config alone gives 131072 B"), std::string::npos);
  // Equal figures: no note. 2 x 32 x 8 x 128 x 2 B = 131072.
  opt.kv_bytes_per_token_per_gpu = 131072;
  EXPECT_TRUE(gqa_shape(opt).notes.empty());
}

TEST(ModelShapePlanned, PerQueryHeadDecodeReadsMultiplyKvTrafficByTheGroupSize) {
  ShapeOptions opt;
  opt.decode_kv_read_per_query_head = true;
  const PerfModelShape s = gqa_shape(opt);
  ASSERT_EQ(s.attention.size(), 1u);
  EXPECT_DOUBLE_EQ(s.attention[0].decode_kv_reads, 4);  // 32 query heads / 8 KV heads
  // Decode KV bytes of 2 sequences at 1000 tokens: 32 layers x 4096 B x 2000 tokens x 4 reads.
  HardwareRates r{1e12, 1e15, 0, 0, 0};
  EXPECT_DOUBLE_EQ(decode_step(s, r, 2, 1000).kv_bytes, 32.0 * 4096 * 2000 * 4);
  // GQA-aware kernels (the default) read each KV head once.
  opt.decode_kv_read_per_query_head = false;
  EXPECT_DOUBLE_EQ(decode_step(gqa_shape(opt), r, 2, 1000).kv_bytes, 32.0 * 4096 * 2000);
}

}  // namespace
}  // namespace vramplan::perf
