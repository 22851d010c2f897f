// Saved activations (train/activations.hpp), hand-computed for Llama-3.1-8B: h 4096, 32 heads x
// 128 (q = 4096), 8 KV heads (kv = 1024), SwiGLU I = 14336, vocab 128256, bf16 (b = 2).
//   each RMSNorm 4h + 4 + 2h = 24,580; two of them 49,160; q/k/v input and gate/up input 2h each
//     -> sequence-sized 49,160 + 8,192 + 8,192 = 65,544
//   flash attention 2 (2 x 4096 + 2 x 1024) + 4 x 32 = 20,608; o_proj input 2 x 4096 = 8,192
//   SwiGLU 3 x 2 x 14336 = 86,016; down input 2 x 14336 = 28,672  -> TP-sized 143,488
//   per token per layer 209,032 B
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/train/activations.hpp"

namespace vramplan::train {
namespace {

ActivationInput llama8b(std::uint64_t batch, std::uint64_t seq) {
  static const ModelSpec spec = load_catalogue_model(test::source_root(), "llama-3.1-8b");
  ActivationInput in;
  in.arch = spec.arch;
  in.gated_mlp = has_gated_mlp(spec);
  in.micro_batch = batch;
  in.seq_len = seq;
  return in;
}

std::uint64_t bytes_of(const Activations& a, const std::string& name) {
  for (const auto& c : a.parts)
    if (c.name == name) return c.bytes.count();
  return 0;
}

TEST(TrainActivations, LlamaLayerWithoutRecomputation) {
  const auto a = activations(llama8b(1, 2048));
  EXPECT_EQ(a.per_token_layer, 209'032u);
  EXPECT_EQ(bytes_of(a, "activations"), 209'032ull * 32 * 2048);  // 13,699,047,424 B
  // logits 2048 x 128256 x (2 B bf16 logits + 4 B fp32 log-softmax) + 2048 x 128256 x 4 B (the
  // fp32 upcast in forward / the gradient in backward, one at a time)
  EXPECT_EQ(bytes_of(a, "logits_and_loss"), 2048ull * 128256 * 10);
  EXPECT_EQ(bytes_of(a, "recomputed_block"), 0u);
}

TEST(TrainActivations, FullRecomputationKeepsBlockInputsAndRebuildsOneBlock) {
  auto in = llama8b(2, 2048);
  in.recompute = Recompute::Full;
  const auto a = activations(in);
  EXPECT_EQ(bytes_of(a, "activations"), 2ull * 4096 * 32 * 4096);      // b h x 32 layers x 4096 tokens
  EXPECT_EQ(bytes_of(a, "recomputed_block"), 209'032ull * 4096);       // one block, no recompute
}

TEST(TrainActivations, Fp32HiddenStatesWidenTheBlockInputsNormsAndMlp) {
  // PEFT's kbit preparation (residual_bytes 4): the block input 4 h per layer under full
  // recomputation; the rebuilt block has each norm's output at 4 h (+ 2 h x 2 norms) and the
  // SwiGLU gate / up / product at 4 I (+ 2 x 3 x 14336): 209,032 + 16,384 + 86,016 = 311,432 B.
  auto in = llama8b(1, 1024);
  in.recompute = Recompute::Full;
  in.residual_bytes = 4;
  const auto a = activations(in);
  EXPECT_EQ(bytes_of(a, "activations"), 4ull * 4096 * 32 * 1024);
  EXPECT_EQ(bytes_of(a, "recomputed_block"), 311'432ull * 1024);
}

// torchtitan's op-level SAC: block input 2h + outputs of wq (2q), wv (2kv), w1 (2I), w2 (2h) and
// SDPA (2q + 4a) = 2 (4096 + 4096 + 1024 + 14336 + 4096 + 4096) + 4 x 32 = 63,616 B per token and
// layer; backward rebuilds the rest of one block: 209,032 - 63,616 = 145,416 B per token.
TEST(TrainActivations, OpLevelSelectiveKeepsEveryOtherMatmul) {
  auto in = llama8b(2, 8192);
  in.recompute = Recompute::Selective;
  in.selective_op = true;
  const auto a = activations(in);
  EXPECT_EQ(bytes_of(a, "activations"), 63'616ull * 32 * 16384);
  EXPECT_EQ(bytes_of(a, "recomputed_block"), 145'416ull * 16384);
  in.attention = AttentionImpl::Eager;
  EXPECT_THROW(activations(in), Error);
}

TEST(TrainActivations, EagerAttentionKeepsTheScoresUnlessSelectivelyRecomputed) {
  // eager: q, k, v 2 (4096 + 2048) + probabilities 32 x 2048 x (4 fp32 softmax + 2 bf16) = 393,216
  // + output 2 x 4096 -> attention 413,696 vs flash 20,608: + 393,088 per token per layer.
  auto in = llama8b(1, 2048);
  in.attention = AttentionImpl::Eager;
  EXPECT_EQ(activations(in).per_token_layer, 209'032u + 393'088u);
  in.recompute = Recompute::Selective;  // drops the 393,216 s-proportional bytes
  EXPECT_EQ(bytes_of(activations(in), "activations"), (209'032ull + 393'088 - 393'216) * 32 * 2048);
  // ...but backward recomputes one layer's core: its 393,216 B per token come back for that layer,
  // x 2,048 tokens = 805,306,368 B (there had been no term for them).
  EXPECT_EQ(bytes_of(activations(in), "recomputed_attention"), 393'216ull * 2048);
  in.attention = AttentionImpl::Flash;  // flash keeps no scores: nothing to rematerialise
  EXPECT_EQ(bytes_of(activations(in), "recomputed_attention"), 0u);
}

TEST(TrainActivations, ChunkedLossBoundsOnlyTheTransient) {
  auto in = llama8b(1, 2048);
  in.loss_chunks = 8;  // torchtune CEWithChunkedOutputLoss: 256 tokens at a time in fp32
  EXPECT_EQ(bytes_of(activations(in), "logits_and_loss"), 2048ull * 128256 * 6 + 256ull * 128256 * 4);
  in.loss = LossImpl::Bf16;  // LitGPT bf16-true: log-softmax in bf16
  EXPECT_EQ(bytes_of(activations(in), "logits_and_loss"), 2048ull * 128256 * 4 + 256ull * 128256 * 2);
}

TEST(TrainActivations, LegacyHfLossKeepsThreeFp32Copies) {
  // fp32 logits (returned), the shifted .contiguous() copy, the log-softmax: 12 B kept + 4 B transient.
  auto in = llama8b(1, 2048);
  in.loss = LossImpl::HfLegacy;
  EXPECT_EQ(bytes_of(activations(in), "logits_and_loss"), 2048ull * 128256 * 16);
  EXPECT_THROW(loss_from_name("fp16"), Error);
}

TEST(TrainActivations, TensorAndSequenceParallelSplit) {
  // TP 2 without SP: sequence-sized 65,544 stays, TP-sized 143,488 halves -> 137,288;
  // with SP both halve -> 104,516.
  auto in = llama8b(1, 2048);
  in.parallel.gpus = 2;
  in.parallel.tp = 2;
  EXPECT_EQ(bytes_of(activations(in), "activations"), 137'288ull * 32 * 2048);
  in.sequence_parallel = true;
  EXPECT_EQ(bytes_of(activations(in), "activations"), 104'516ull * 32 * 2048);
}

TEST(TrainActivations, PipelineFirstStageHoldsAtMostTheStepsMicroBatches) {
  // PP 4 on 4 GPUs: 8 layers a stage, 8 x 209,032 = 1,672,256 B per token, x 2,048 tokens =
  // 3,424,780,288 B per micro-batch. The last stage adds the logits, 2048 x 128256 x 10 =
  // 2,626,682,880 B. 1F1B's first stage holds min(PP, micro-batches per step):
  //   1 micro-batch:  1 in flight (it had been PP = 4): the last stage's 3,424,780,288 + logits is larger
  //   2 micro-batches: 2 x 3,424,780,288 = 6,849,560,576 > 6,051,463,168
  //   8 micro-batches: 4 x 3,424,780,288 = 13,699,121,152
  auto in = llama8b(1, 2048);
  in.parallel.gpus = 4;
  in.parallel.pp = 4;
  auto a = activations(in);
  EXPECT_EQ(bytes_of(a, "activations"), 3'424'780'288ull);
  EXPECT_EQ(bytes_of(a, "logits_and_loss"), 2'626'682'880ull);
  in.micro_batches = 2;
  a = activations(in);
  EXPECT_EQ(bytes_of(a, "activations"), 6'849'560'576ull);
  EXPECT_NE(a.parts[0].explain.find("2 micro-batches in flight"), std::string::npos) << a.parts[0].explain;
  in.micro_batches = 8;
  EXPECT_EQ(bytes_of(activations(in), "activations"), 13'699'121'152ull);
}

TEST(TrainActivations, FrozenLinearsDoNotSaveTheirInputs) {
  // LoRA on q, v only: o_proj, gate/up and down keep no input: 209,032 - 8,192 (o) - 8,192
  // (gate/up) - 28,672 (down) = 163,976.
  auto in = llama8b(1, 2048);
  in.saved = {true, false, false, false};
  EXPECT_EQ(bytes_of(activations(in), "activations"), 163'976ull * 32 * 2048);
}

TEST(TrainActivations, OneSharedLayerNormInParallelBlocks) {
  // Phi-2: attention and MLP in parallel off one input_layernorm, a LayerNorm (it has a bias):
  // h 2560, 32 heads x 80 (q = kv = 2560), GELU MLP I 10240, full training, bf16.
  //   the norm: its input 2h + mean and rstd 8 = 5,128 (not 2 x (4h + 4 + 2h) = 30,728)
  //   q/k/v input 2h + fc1 input 2h = 10,240 -> sequence-sized 15,368
  //   flash 2 (2 x 2560 + 2 x 2560) + 4 x 32 = 20,608; dense input 5,120; GELU input 2I = 20,480;
  //   fc2 input 2I = 20,480 -> 66,688; per token per layer 82,056 B.
  static const ModelSpec spec = load_catalogue_model(test::source_root(), "phi-2");
  ActivationInput in;
  in.arch = spec.arch;
  in.gated_mlp = has_gated_mlp(spec);
  norm_layout(spec, in);
  EXPECT_EQ(in.norms_per_layer, 1u);
  EXPECT_TRUE(in.layer_norm);
  EXPECT_EQ(activations(in).per_token_layer, 82'056u);
  // Llama: two RMSNorms (no bias).
  ActivationInput llama = llama8b(1, 2048);
  norm_layout(load_catalogue_model(test::source_root(), "llama-3.1-8b"), llama);
  EXPECT_EQ(llama.norms_per_layer, 2u);
  EXPECT_FALSE(llama.layer_norm);
}

TEST(TrainActivations, EveryNormOfTheBlockIsCounted) {
  // Gemma-2-2B: four RMSNorms over h per layer (input, post_attention, pre_feedforward,
  // post_feedforward: transformers Gemma2DecoderLayer.forward); h 2304, 8 heads x 256 (q 2048),
  // 4 KV heads (kv 1024), GeGLU I 9216, bf16, flash, full training:
  //   norms 4 x (4 h + 4 + 2 h) = 4 x 13,828 = 55,312; q/k/v and gate/up inputs 2 x 2 h = 9,216
  //   flash 2 (2 x 2048 + 2 x 1024) + 4 x 8 = 12,320; o input 4,096; GeGLU 3 x 2 x 9216 = 55,296;
  //   down input 18,432 -> 154,672 B per token and layer (two norms had given 127,016).
  static const ModelSpec gemma = load_catalogue_model(test::source_root(), "gemma-2-2b");
  ActivationInput g;
  g.arch = gemma.arch;
  g.gated_mlp = has_gated_mlp(gemma);
  norm_layout(gemma, g);
  EXPECT_EQ(g.norms_per_layer, 4u);
  EXPECT_EQ(g.qk_norm_width, 0u);
  EXPECT_EQ(activations(g).per_token_layer, 154'672u);
  // Qwen3-0.6B: two block norms and q_norm / k_norm over head_dim 128 (Qwen3Attention.forward);
  // h 1024, 16 heads (q 2048), 8 KV heads (kv 1024), SwiGLU I 3072:
  //   norms 2 x (4 h + 4 + 2 h) = 12,296; q/k/v and gate/up inputs 4,096 -> 16,392
  //   flash 2 (2 x 2048 + 2 x 1024) + 4 x 16 = 12,352; o input 4,096; q / k norms (4 + 2) x
  //   (2048 + 1024) + 4 x (16 + 8) rows = 18,528; SwiGLU 18,432; down input 6,144 -> 59,552
  //   -> 75,944 B per token and layer (57,416 without the q / k norms).
  static const ModelSpec qwen = load_catalogue_model(test::source_root(), "qwen3-0.6b");
  ActivationInput q;
  q.arch = qwen.arch;
  q.gated_mlp = has_gated_mlp(qwen);
  norm_layout(qwen, q);
  EXPECT_EQ(q.norms_per_layer, 2u);
  EXPECT_EQ(q.qk_norm_width, 128u);
  EXPECT_EQ(activations(q).per_token_layer, 75'944u);
}

TEST(TrainActivations, ContextParallelMustDivideTheSequence) {
  auto in = llama8b(1, 2049);
  in.parallel.gpus = 2;
  in.parallel.cp = 2;
  EXPECT_THROW(activations(in), Error);
  EXPECT_THROW(recompute_from_name("partial"), Error);
}

TEST(TrainActivations, Gemma4FullLayersSaveTheirOwnGeometry) {
  // gemma-4-31b, flash attention, bf16, no recomputation; h 5376, 32 heads, I 21,504, 4 norms a layer.
  //   sequence-sized: 4 norms x (4 h + 4 + 2 h) = 4 x 32,260 = 129,040; q/k/v and gate/up inputs 2 x 2 h
  //     = 21,504 -> 150,544
  //   sliding (head_dim 256, 16 KV heads): q 8192, kv 4096: 2 (2 x 8192 + 2 x 4096) + 4 x 32 = 49,280,
  //     o input 16,384; GeGLU 3 x 2 x 21,504 = 129,024, down input 43,008 -> 237,696 + 150,544 = 388,240
  //   full (head_dim 512, 4 KV heads): q 16,384, kv 2048: 2 (2 x 16,384 + 2 x 2048) + 128 = 73,856,
  //     o input 32,768 -> 278,656 + 150,544 = 429,200
  //   50 x 388,240 + 10 x 429,200 = 23,704,000 B per token
  static const ModelSpec spec = load_catalogue_model(test::source_root(), "gemma-4-31b");
  ActivationInput in;
  in.arch = spec.arch;
  in.gated_mlp = has_gated_mlp(spec);
  in.norms_per_layer = 4;
  in.micro_batch = 1;
  in.seq_len = 1024;
  const auto a = activations(in);
  EXPECT_EQ(a.per_token_layer, 388'240u);  // layer 0, sliding
  EXPECT_EQ(bytes_of(a, "activations"), 23'704'000ull * 1024);
}

}  // namespace
}  // namespace vramplan::train
