// Hand-computed llama.cpp context, KV, offload and buffer figures.
#include <gtest/gtest.h>

#include "support/catalogs.hpp"
#include "support/catalogue_counts.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/llamacpp.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan {
namespace {

namespace lc = llamacpp;

const lc::LlamacppProfile& profile() {
  static const lc::LlamacppProfile p =
      lc::load_profile(test::source_dir() / "data" / "engines" / "llamacpp.json");
  return p;
}

// meta-llama/Llama-3.2-1B config.json: 16 layers, hidden 2048, 32 heads, 8 KV heads, head_dim 64.
ModelArch llama_1b() {
  ModelArch a;
  a.num_layers = 16;
  a.hidden_size = 2048;
  a.num_heads = 32;
  a.num_kv_heads = 8;
  a.head_dim = a.v_head_dim = 64;
  a.intermediate_size = 8192;
  a.vocab_size = 128256;
  a.tied_embeddings = true;
  return a;
}

std::uint64_t kv_total(const ModelArch& a, const lc::Settings& s) {
  const auto ctx = lc::make_context(a, s, profile());
  EXPECT_TRUE(ctx.context) << ctx.refusal;
  std::uint64_t total = 0;
  for (const auto& kv : lc::kv_caches(a, *ctx.context, s, test::quant_formats())) total += kv.bytes();
  return total;
}

TEST(LlamacppKv, Llama1bF16) {
  // 16 layers x 4096 cells x (8 x 64) x 2 B x 2 (K, V) = 134,217,728 B = 128 MiB
  EXPECT_EQ(kv_total(llama_1b(), {}), 134217728u);
}

// gemma3n's layers from n_layer_kv_from_start on read an earlier layer's cache (hparams.has_kv):
// with the last 4 of Llama-3.2-1B's 16 layers shared, 12 x 4096 x 512 x 2 B x 2 = 100,663,296 B.
TEST(LlamacppKv, SharedLayersHoldNoCache) {
  ModelArch a = llama_1b();
  a.kv_shared_with.assign(16, -1);
  for (int l = 12; l < 16; ++l) a.kv_shared_with[l] = 11;
  EXPECT_EQ(kv_total(a, {}), 100663296u);
}

// DeepSeek sparse attention (llama_kv_cache_dsa): the MLA cache plus the lightning indexer's key
// cache, one head of index_head_dim per token for each layer with an indexer, no V. A 3-layer
// DeepSeek-V3.2-shaped model (kv_lora_rank 256, rope 32, index_head_dim 128) at 4096 cells, f16:
// MLA 3 x 4096 x 288 x 2 = 7,077,888 B (6.75 MiB), indexer 3 x 4096 x 128 x 2 = 3,145,728 B
// (3.00 MiB), as llama.cpp 0c1e5709 printed for this shape (tools/llamacpp-oracle, dsv32-tiny).
// With layer 1 keeping no indexer (GLM-5.2's indexer types) the indexer cache has 2 layers.
TEST(LlamacppKv, SparseAttentionAddsTheIndexerKeyCache) {
  ModelArch a = llama_1b();
  a.num_layers = 3;
  a.kv_lora_rank = 256;
  a.qk_rope_head_dim = 32;
  a.layer_attention.assign(3, LayerAttention::Mla);
  a.index_head_dim = 128;
  a.index_n_heads = 8;
  a.layer_has_indexer.assign(3, true);
  const auto ctx = lc::make_context(a, {}, profile());
  ASSERT_TRUE(ctx.context);
  const auto caches = lc::kv_caches(a, *ctx.context, {}, test::quant_formats());
  ASSERT_EQ(caches.size(), 2u);
  EXPECT_EQ(caches[0].bytes(), 7077888u);
  EXPECT_EQ(caches[1].role, "indexer");
  EXPECT_EQ(caches[1].k_bytes, 3145728u);
  EXPECT_EQ(caches[1].v_bytes, 0u);
  a.layer_has_indexer[1] = false;
  EXPECT_EQ(lc::kv_caches(a, *ctx.context, {}, test::quant_formats())[1].k_bytes, 2097152u);  // 2 x 4096 x 128 x 2
}

// llama_memory_recurrent for Nemotron-H-8B's Mamba-2 (d_inner 8192 = 128 heads x 64, 8 groups of
// d_state 128, conv kernel 4) cut to its first 9 layers (M-M-M-M*-: layers 0, 2, 4, 6 recurrent):
// n_embd_r = 3 x (8192 + 2 x 8 x 128) = 30,720 and n_embd_s = 128 x 8192 = 1,048,576 f32 values a
// cell, max(1, n_seq_max) cells. One sequence: R 4 x 30,720 x 4 B = 491,520 B (0.47 MiB), S 4 x
// 1,048,576 x 4 B = 16 MiB; four: 65.88 MiB, as llama.cpp 0c1e5709 printed (oracle nemoh8-L9).
TEST(LlamacppKv, RecurrentStateCacheOfMambaLayers) {
  ModelArch a = llama_1b();
  a.num_layers = 9;
  a.layer_attention = {LayerAttention::Recurrent, LayerAttention::None, LayerAttention::Recurrent,
                       LayerAttention::None,      LayerAttention::Recurrent, LayerAttention::None,
                       LayerAttention::Recurrent, LayerAttention::Full,      LayerAttention::None};
  a.recurrent_shape = {.conv_window = 3, .conv_channels = 8192, .groups = 8, .group_state = 128, .ssm_heads = 128,
                       .ssm_head_elems = 64 * 128};
  lc::Settings s;
  const auto ctx = lc::make_context(a, s, profile());
  ASSERT_TRUE(ctx.context);
  const auto rs = lc::recurrent_cache(a, *ctx.context);
  ASSERT_TRUE(rs);
  EXPECT_EQ(rs->layers, (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(rs->r_values, 30720u);
  EXPECT_EQ(rs->s_values, 1048576u);
  EXPECT_EQ(rs->r_bytes, 491520u);
  EXPECT_EQ(rs->s_bytes, 16777216u);
  s.n_parallel = 4;
  const auto four = lc::recurrent_cache(a, *lc::make_context(a, s, profile()).context);
  EXPECT_EQ(four->cells, 4u);
  EXPECT_EQ(four->bytes(), 4u * (491520u + 16777216u));  // 69,074,944 B = 65.875 MiB
  // Only the attention layer keeps KV: 1 x 4096 x 512 x 2 B x 2 = 8 MiB.
  EXPECT_EQ(kv_total(a, {}), 8388608u);
  a.recurrent_shape = {};
  test::error_message([&] { lc::recurrent_cache(a, *ctx.context); }, ErrorKind::Usage);
}

TEST(LlamacppKv, Llama1bQ8_0UsesBlockRowSize) {
  lc::Settings s;
  s.type_k = s.type_v = "q8_0";
  s.flash_attn = lc::FlashAttn::On;
  // a 512-value row = 16 blocks x 34 B = 544 B; 16 x 4096 x 544 x 2 = 71,303,168 B = 68 MiB
  EXPECT_EQ(kv_total(llama_1b(), s), 71303168u);
}

TEST(LlamacppKv, ContextPaddedTo256) {
  lc::Settings s;
  s.n_ctx = 4000;  // -> 4096 cells
  EXPECT_EQ(kv_total(llama_1b(), s), 134217728u);
}

TEST(LlamacppKv, ParallelSequencesSplitTheContext) {
  lc::Settings s;
  s.n_ctx = 4100;      // padded to 4352
  s.n_parallel = 4;    // n_ctx_seq = PAD(4352 / 4 = 1088, 256) = 1280; n_ctx = 4 x 1280 = 5120
  const auto ctx = lc::make_context(llama_1b(), s, profile());
  ASSERT_TRUE(ctx.context);
  EXPECT_EQ(ctx.context->n_ctx_seq, 1280u);
  EXPECT_EQ(ctx.context->n_ctx, 5120u);
  EXPECT_EQ(ctx.context->n_streams, 4u);
  // 16 x (4 streams x 1280 cells) x 512 x 2 B x 2 = 167,772,160 B = 160 MiB
  EXPECT_EQ(kv_total(llama_1b(), s), 167772160u);
  s.kv_unified = true;  // one stream of the whole padded n_ctx: 16 x 4352 x 512 x 2 x 2
  EXPECT_EQ(kv_total(llama_1b(), s), 142606336u);
}

// google/gemma-3-1b-it: 26 layers (every 6th global), 1 KV head of 256, window 512.
ModelArch gemma3_1b() {
  ModelArch a;
  a.num_layers = 26;
  a.hidden_size = 1152;
  a.num_heads = 4;
  a.num_kv_heads = 1;
  a.head_dim = a.v_head_dim = 256;
  a.vocab_size = 262144;
  a.sliding_window = 512;
  for (int i = 0; i < 26; ++i)
    a.layer_attention.push_back((i + 1) % 6 == 0 ? LayerAttention::Full : LayerAttention::Sliding);
  return a;
}

TEST(LlamacppKv, SlidingWindowCacheHoldsWindowPlusUbatch) {
  lc::Settings s;
  s.n_ctx = 32768;
  s.n_ubatch = 128;
  const auto ctx = lc::make_context(gemma3_1b(), s, profile());
  const auto caches = lc::kv_caches(gemma3_1b(), *ctx.context, s, test::quant_formats());
  ASSERT_EQ(caches.size(), 2u);
  EXPECT_EQ(caches[0].layers.size(), 4u);  // layers 5, 11, 17, 23
  EXPECT_EQ(caches[0].cells, 32768u);
  EXPECT_EQ(caches[1].layers.size(), 22u);
  EXPECT_EQ(caches[1].cells, 768u);  // PAD256(min(32768, 512 + 128) = 640) = 768
  // SWA: 22 x 768 x 256 x 2 B = 8,650,752 B per K (8.25 MiB)
  EXPECT_EQ(caches[1].k_bytes, 8650752u);
  s.swa_full = true;
  EXPECT_EQ(lc::kv_caches(gemma3_1b(), *ctx.context, s, test::quant_formats())[1].cells, 32768u);
}

// google/gemma-4-26B-A4B (the catalogue entry): 30 layers, every sixth full; sliding layers 8 KV
// heads of 256, full layers (attention_k_eq_v) 2 KV heads of global_head_dim 512; window 1024.
const ModelArch& gemma4_26b() { return test::cached_catalogue_model("gemma-4-26b-a4b").arch; }

// llama_kv_cache sizes each layer by n_embd_k_gqa(il) / n_embd_v_gqa(il): a K=V full layer still
// stores V (gemma4.cpp: Vcur = Kcur). At -c 4096 -ub 512:
//   non-SWA: 5 layers x 4096 cells x (2 x 512) x 2 B = 41,943,040 B per K (40 MiB), the same for V;
//   SWA: PAD256(min(4096, 1024 + 512)) = 1536 cells; 25 x 1536 x (8 x 256) x 2 B = 157,286,400 B (150 MiB).
TEST(LlamacppKv, Gemma4LayersHaveTheirOwnGeometry) {
  lc::Settings s;
  const auto ctx = lc::make_context(gemma4_26b(), s, profile());
  const auto caches = lc::kv_caches(gemma4_26b(), *ctx.context, s, test::quant_formats());
  ASSERT_EQ(caches.size(), 2u);
  EXPECT_EQ(caches[0].layers.size(), 5u);
  EXPECT_EQ(caches[0].k_bytes, 41943040u);
  EXPECT_EQ(caches[0].v_bytes, 41943040u);
  EXPECT_EQ(caches[1].cells, 1536u);
  EXPECT_EQ(caches[1].k_bytes, 157286400u);
  EXPECT_EQ(caches[1].v_bytes, 157286400u);
}

// deepseek-ai/DeepSeek-V2-Lite reduced to 3 layers: kv_lora_rank 512, rope 64.
ModelArch deepseek_lite3() {
  ModelArch a;
  a.num_layers = 3;
  a.hidden_size = 2048;
  a.num_heads = a.num_kv_heads = 16;
  a.head_dim = 192;
  a.v_head_dim = 128;
  a.kv_lora_rank = 512;
  a.qk_rope_head_dim = 64;
  a.vocab_size = 102400;
  a.layer_attention.assign(3, LayerAttention::Mla);
  return a;
}

TEST(LlamacppKv, MlaStores576KValuesAndNoV) {
  lc::Settings s;
  const auto ctx = lc::make_context(deepseek_lite3(), s, profile());
  const auto caches = lc::kv_caches(deepseek_lite3(), *ctx.context, s, test::quant_formats());
  // 3 layers x 4096 cells x 576 x 2 B = 14,155,776 B = 13.5 MiB; V = 0
  EXPECT_EQ(caches.at(0).k_bytes, 14155776u);
  EXPECT_EQ(caches.at(0).v_bytes, 0u);
}

TEST(LlamacppRefusals, AsLlamaCppWordsThem) {
  lc::Settings s;
  s.flash_attn = lc::FlashAttn::Off;
  s.type_k = s.type_v = "q8_0";
  EXPECT_EQ(lc::make_context(llama_1b(), s, profile()).refusal,
            "quantized V cache requires flash_attn to be enabled");
  s.type_v = "f16";  // quantized K alone is fine without FA
  EXPECT_TRUE(lc::make_context(llama_1b(), s, profile()).context);
  s.flash_attn = lc::FlashAttn::On;  // MLA refuses K != V whatever FA says
  EXPECT_EQ(lc::make_context(deepseek_lite3(), s, profile()).refusal,
            "model does not support different K (q8_0) and V (f16) cache types");
  s.type_k = "q3_k";
  EXPECT_THROW(lc::make_context(llama_1b(), s, profile()), Error);
}

// With FA, a quantized cache's 32-value blocks must divide the head: Phi-2's 80 does not (llama.cpp
// 0c1e5709 refuses the context with this line; checked on a Phi-2 GGUF, tools/llamacpp-oracle/).
TEST(LlamacppRefusals, QuantizedCacheBlockMustDivideTheHead) {
  ModelArch phi2 = llama_1b();
  phi2.head_dim = phi2.v_head_dim = 80;
  lc::Settings s;
  s.flash_attn = lc::FlashAttn::On;
  s.type_k = "q8_0";
  EXPECT_EQ(lc::make_context(phi2, s, profile()).refusal,
            "K cache type q8_0 with block size 32 does not divide n_embd_head_k=80");
  s.type_k = "f16";
  s.type_v = "q4_0";
  EXPECT_EQ(lc::make_context(phi2, s, profile()).refusal,
            "V cache type q4_0 with block size 32 does not divide n_embd_head_v=80");
  s.type_v = "f16";
  s.type_k = "q8_0";
  s.flash_attn = lc::FlashAttn::Off;  // without FA llama.cpp does not check K's blocks
  EXPECT_TRUE(lc::make_context(phi2, s, profile()).context);
}

TEST(LlamacppOffload, PartialNglPutsTheLastLayersOnTheGpu) {
  lc::Settings s;
  s.device = lc::Device::Cuda;
  s.n_gpu_layers = 10;  // 16 layers: 6..15 on the GPU, output layer on the host
  auto o = lc::offload_split(16, s);
  EXPECT_EQ(o.first_gpu_layer, 6u);
  EXPECT_FALSE(o.output_on_gpu);
  s.n_gpu_layers = 17;  // n_layer + 1: the output layer too
  o = lc::offload_split(16, s);
  EXPECT_EQ(o.first_gpu_layer, 0u);
  EXPECT_TRUE(o.output_on_gpu);
}

TEST(LlamacppModelBuffers, CudaKeepsTokenEmbeddingOnHost) {
  ModelSpec m;
  m.arch = llama_1b();
  m.arch.num_layers = 2;
  m.arch.tied_embeddings = false;
  auto add = [&](std::string name, TensorRole role, std::optional<int> layer, std::uint64_t bytes) {
    TensorInfo t;
    t.name = std::move(name);
    t.role = role;
    t.layer = layer;
    t.stored_format = "Q6_K";
    t.stored_bytes = bytes;
    t.shape = {1, 256};
    m.tensors.push_back(t);
  };
  add("token_embd.weight", TensorRole::TokenEmbedding, std::nullopt, 1000);
  add("blk.0.attn_q.weight", TensorRole::AttnQ, 0, 64);
  add("blk.1.attn_q.weight", TensorRole::AttnQ, 1, 64);
  add("output.weight", TensorRole::Output, std::nullopt, 640);
  lc::Settings s;
  s.device = lc::Device::Cuda;
  s.n_gpu_layers = 1;  // only layer 1 offloaded; output stays on the host
  const auto b = lc::model_buffers(m, s, profile(), test::quant_formats());
  ASSERT_EQ(b.size(), 2u);
  // host span: token_embd at 0 (1000 B, padded to 1024) ... output ends at 1024+64+64+640
  EXPECT_EQ(b[0].name, "CPU_Mapped");
  EXPECT_EQ(b[0].bytes, 1792u);
  EXPECT_EQ(b[1].name, "CUDA0");
  EXPECT_EQ(b[1].bytes, 64u);
}

TEST(LlamacppOutput, LogitsPerSequence) {
  lc::Settings s;
  const auto ctx = lc::make_context(llama_1b(), s, profile());
  EXPECT_EQ(lc::output_buffer_bytes(llama_1b(), *ctx.context), 128256u * 4u);  // 0.49 MiB
}

// A DeepSeek sparse-attention GGUF without its indexer's keys: llama.cpp's loader requires them
// (deepseek32.cpp load_arch_hparams), so the plan refuses it as bad input, not as an internal error.
TEST(LlamacppCompute, SparseAttentionWithoutItsIndexerIsBadInput) {
  lc::Settings s;
  ModelArch a = deepseek_lite3();
  a.model_type = "deepseek32";
  const auto ctx = lc::make_context(a, s, profile());
  const auto caches = lc::kv_caches(a, *ctx.context, s, test::quant_formats());
  ModelSpec model;
  model.arch = a;
  try {
    lc::compute_buffer(model, *ctx.context, caches, lc::Device::Cpu);
    ADD_FAILURE() << "planned a DSA graph without an indexer";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("attention.indexer.head_count"), std::string::npos) << e.what();
  }
}

TEST(LlamacppCompute, LogitsDominateWithFlashAttention) {
  lc::Settings s;
  s.flash_attn = lc::FlashAttn::On;
  const auto ctx = lc::make_context(llama_1b(), s, profile());
  const auto caches = lc::kv_caches(llama_1b(), *ctx.context, s, test::quant_formats());
  ModelSpec model;
  model.arch = llama_1b();
  const auto e = lc::compute_buffer(model, *ctx.context, caches, lc::Device::Cpu);
  // ggml-alloc's layout when the logits are allocated last: inp_tokens' freed 2,048 B hole at 0
  // (512 x 4 B), inp_embd 4,194,304 B (2048 x 512 x 4; an input with no consumer, never freed),
  // result_norm 4,194,304 B, then the logits 128256 x 512 x 4 = 262,668,288 B on top:
  // 2,048 + 2 x 4,194,304 + 262,668,288 = 271,058,944 B = 258.50 MiB, as llama.cpp prints
  // (tests/accuracy/data/llamacpp_measured.jsonl lcm-0001).
  EXPECT_EQ(e.bytes, 271058944u);
  EXPECT_EQ(e.logits, 262668288u);
  EXPECT_EQ(e.graph_nodes, 502u);  // lcm-0001 "graph nodes"
}

}  // namespace
}  // namespace vramplan
