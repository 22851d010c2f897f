// vLLM's parameters in construction order, replayed through the caching-allocator model
// (memory/vllm_weight_allocation.hpp), on Qwen2.5-7B-Instruct (config copy in tests/accuracy):
// hidden 3584, 28 heads, 4 KV heads, head_dim 128, intermediate 18944, vocab 152064, 28 layers,
// qkv bias, untied embeddings, rope 32768 positions x 128.
#include <gtest/gtest.h>

#include "support/catalogs.hpp"
#include "support/test_support.hpp"
#include "vramplan/io/data_root.hpp"
#include "vramplan/memory/vllm_weight_allocation.hpp"
#include "vramplan/model/load.hpp"

namespace vramplan::memory {
namespace {

struct Qwen {
  ModelSpec model;
  ResolvedWeights weights;
};

Qwen qwen25_7b() {
  const auto path = test::source_dir() / "tests" / "accuracy" / "data" / "models" / "Qwen__Qwen2.5-7B-Instruct.json";
  Qwen q{load_model(path.string(), test::source_root(), test::quant_catalog()), {}};
  q.weights = resolve_weights(q.model, test::quant_catalog(), WeightRequest{});
  return q;
}

TEST(VllmWeightAllocation, ParametersFollowVllmConstructionOrder) {
  const auto q = qwen25_7b();
  const auto plan = vllm_allocation_plan(q.model, q.weights, ShardOptions{});
  ASSERT_GE(plan.size(), 9u);
  EXPECT_EQ(plan[0].bytes, 1089994752u);  // embed_tokens: 152,064 x 3,584 x 2 B
  // Layer 0: q, k, v fused: (28 + 2 x 4) x 128 = 4,608 rows x 3,584 x 2 B; bias 4,608 x 2 B.
  EXPECT_EQ(plan[1].name, "layers.0.self_attn.qkv_proj.weight");
  EXPECT_EQ(plan[1].bytes, 33030144u);
  EXPECT_EQ(plan[2].name, "layers.0.self_attn.qkv_proj.bias");
  EXPECT_EQ(plan[2].bytes, 9216u);
  EXPECT_EQ(plan[3].name, "layers.0.self_attn.o_proj.weight");
  EXPECT_EQ(plan[3].bytes, 25690112u);  // 3,584 x 3,584 x 2 B
  // get_rope() after o_proj: 32,768 positions x 128 x 2 B.
  ASSERT_TRUE(plan[4].rope.has_value());
  EXPECT_EQ(plan[4].bytes, 8388608u);
  EXPECT_EQ(plan[5].name, "layers.0.mlp.gate_up_proj.weight");
  EXPECT_EQ(plan[5].bytes, 271581184u);  // 2 x 18,944 x 3,584 x 2 B
  EXPECT_EQ(plan[6].name, "layers.0.mlp.down_proj.weight");
  EXPECT_EQ(plan[6].bytes, 135790592u);
  EXPECT_EQ(plan[7].bytes, 7168u);  // the two norms
  EXPECT_EQ(plan[8].bytes, 7168u);
  EXPECT_EQ(plan[9].name, "layers.1.self_attn.qkv_proj.weight");
  // Last: final norm, then lm_head.
  EXPECT_EQ(plan.back().bytes, 1089994752u);
  EXPECT_EQ(plan[plan.size() - 2].bytes, 7168u);
  // 1 + 28 x 7 + 1 rope + 2 = 200 kept allocations.
  EXPECT_EQ(plan.size(), 200u);
}

TEST(VllmWeightAllocation, Qwen25_7bBlocksExceedTheBytesBy57MiB) {
  // Per layer: qkv 31.5 MiB -> 32 MiB segment, 0.5 MiB tail kept (+0.5); o_proj 24.5 -> 26 MiB,
  // 1.5 MiB split off (+0); gate_up 259 -> 260, 1 MiB tail is not > 1 MiB (+1); down 129.5 -> 130
  // (+0.5): +2 MiB a layer, x 28 = 56 MiB. Embedding and lm_head 1039.5 MiB -> 1040 (+0.5 each).
  // The rope scratch (8 MiB fp32 pieces in 20 MiB segments, a 16 MiB cache) is freed and too small
  // for any later parameter but the 8 MiB bf16 cache, which reuses it exactly. Total 57 MiB; the
  // log says 14.25 GiB for 14.193 GiB of tensors (+0.057 GiB).
  const auto q = qwen25_7b();
  const auto r = replay_vllm_allocations(vllm_allocation_plan(q.model, q.weights, ShardOptions{}));
  EXPECT_EQ(r.allocated - r.exact_bytes, 57 * kMiB);
  EXPECT_EQ(r.parameters, 200u);
  EXPECT_GE(r.reserved, r.allocated);
  const auto c = vllm_allocator_rounding(q.model, q.weights, ShardOptions{});
  EXPECT_EQ(c.name, "weights.allocator_rounding");
  EXPECT_EQ(c.bytes.count(), 57 * kMiB);
}

TEST(VllmWeightAllocation, PipelineStagesHoldTheirOwnParameters) {
  // PP 2: stage 0 = embedding + layers 0-13 (+ the rope cache), stage 1 = layers 14-27 + final
  // norm + lm_head: 1 + 14 x 7 + 1 = 100 and 14 x 7 + 1 (rope, built by its first layer) + 2 = 101.
  const auto q = qwen25_7b();
  EXPECT_EQ(vllm_allocation_plan(q.model, q.weights, ShardOptions{1, 2, 0, 64, true}).size(), 100u);
  EXPECT_EQ(vllm_allocation_plan(q.model, q.weights, ShardOptions{1, 2, 1, 64, true}).size(), 101u);
}

}  // namespace
}  // namespace vramplan::memory
