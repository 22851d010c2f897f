#include <gtest/gtest.h>

#include "support/catalogs.hpp"
#include "support/test_support.hpp"
#include "support/test_models.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/kv_cache.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan::memory {
namespace {

ModelArch llama70b() {
  return test::dense_model({80, 8192, 64, 8, 128, 28672, 128256, 131072}).arch;
}

TEST(KvCache, GqaBytesPerTokenLlama70b) {
  const auto l = kv_layout(llama70b(), resolve_kv_dtype("auto", "bf16", test::quant_formats()), 1);
  // 2 (K,V) x 80 layers x 8 kv_heads x 128 x 2 B = 327,680 B (memory-model.md 3.1).
  EXPECT_EQ(l.bytes_per_token, 327680u);
  EXPECT_NE(l.explain.find("80 full layers x 2 x 8 kv_heads x 128 x 2 B (bf16)"), std::string::npos) << l.explain;
  EXPECT_NE(l.explain.find("327,680 B"), std::string::npos);
}

TEST(KvCache, TensorParallelShardsAndReplicatesKvHeads) {
  const auto dt = resolve_kv_dtype("auto", "bf16", test::quant_formats());
  EXPECT_EQ(kv_layout(llama70b(), dt, 2).bytes_per_token, 327680u / 2);
  EXPECT_EQ(kv_layout(llama70b(), dt, 8).bytes_per_token, 327680u / 8);
  // TP 16 > 8 heads: one head per rank, 2 x 80 x 1 x 128 x 2 = 40,960 B (not 20,480).
  const auto l16 = kv_layout(llama70b(), dt, 16);
  EXPECT_EQ(l16.bytes_per_token, 40960u);
  EXPECT_NE(l16.explain.find("replicated"), std::string::npos);
  EXPECT_THROW(kv_layout(llama70b(), dt, 3), Error);
}

TEST(KvCache, PipelineStageHoldsItsLayers) {
  const auto dt = resolve_kv_dtype("auto", "bf16", test::quant_formats());
  EXPECT_EQ(kv_layout(llama70b(), dt, 1, 0, 40).bytes_per_token, 327680u / 2);
}

TEST(KvCache, MlaLatentIsReplicatedOnEveryRank) {
  ModelArch a;
  a.num_layers = 61;
  a.num_heads = 128;
  a.num_kv_heads = 128;
  a.head_dim = 192;
  a.v_head_dim = 128;
  a.kv_lora_rank = 512;
  a.qk_rope_head_dim = 64;
  const auto dt = resolve_kv_dtype("auto", "bf16", test::quant_formats());
  // DeepSeek-V3: 61 x (512 + 64) x 2 B = 70,272 B per token, on each of 8 ranks.
  EXPECT_EQ(kv_layout(a, dt, 1).bytes_per_token, 70272u);
  EXPECT_EQ(kv_layout(a, dt, 8).bytes_per_token, 70272u);
  // fp8 halves it: 35,136 B.
  EXPECT_EQ(kv_layout(a, resolve_kv_dtype("fp8", "bf16", test::quant_formats()), 8).bytes_per_token, 35136u);
}

TEST(KvCache, QuantizedCacheTypesCountBlockScales) {
  const auto a = test::dense_model({}).arch;  // Llama-3.1-8B shape: 8 kv heads x 128 = 1024 per K row
  // q8_0: 34 B per 32 values -> 1024 values = 1088 B per K and per V row; x 2 x 32 layers = 69,632 B.
  EXPECT_EQ(kv_layout(a, resolve_kv_dtype("q8_0", "bf16", test::quant_formats()), 1).bytes_per_token, 69632u);
  // q4_0: 18 B per 32 -> 576 B per row; x 2 x 32 = 36,864 B.
  EXPECT_EQ(kv_layout(a, resolve_kv_dtype("q4_0", "bf16", test::quant_formats()), 1).bytes_per_token, 36864u);
  // fp8 (e5m2 as well): 1 B per value -> 65,536 B.
  EXPECT_EQ(kv_layout(a, resolve_kv_dtype("fp8_e5m2", "bf16", test::quant_formats()), 1).bytes_per_token, 65536u);
  EXPECT_THROW(resolve_kv_dtype("fp7", "bf16", test::quant_formats()), Error);
}

TEST(KvCache, MqaAndDistinctValueHeadDim) {
  ModelArch a;
  a.num_layers = 2;
  a.num_heads = 8;
  a.num_kv_heads = 1;
  a.head_dim = 64;
  a.v_head_dim = 32;
  // Per layer: 1 head x (64 + 32) x 2 B = 192 B; two layers = 384 B.
  EXPECT_EQ(kv_layout(a, resolve_kv_dtype("fp16", "fp16", test::quant_formats()), 1).bytes_per_token, 384u);
}

TEST(KvCache, SharedRecurrentAndSlidingLayers) {
  ModelArch a = test::dense_model({4, 1024, 8, 2, 128, 4096, 1000, 4096}).arch;
  a.layer_attention = {LayerAttention::Sliding, LayerAttention::Full, LayerAttention::Recurrent, LayerAttention::Full};
  a.sliding_window = 512;
  a.recurrent_state_bytes_per_layer = 1000;
  a.kv_shared_with = {-1, -1, -1, 1};  // layer 3 reuses layer 1's KV
  const auto l = kv_layout(a, resolve_kv_dtype("auto", "bf16", test::quant_formats()), 1);
  // Per attention layer 2 x 2 x 128 x 2 B = 1,024 B; layers 0 and 1 own KV, 2 is recurrent, 3 shares.
  EXPECT_EQ(l.bytes_per_token, 2048u);
  EXPECT_EQ(l.layers[0].window, 512u);
  EXPECT_EQ(l.state_bytes_per_seq, 1000u);
  EXPECT_TRUE(l.layers[3].shared);
}

}  // namespace
}  // namespace vramplan::memory
