// Model states per GPU (train/model_states.hpp), hand-computed on Llama-3.1-8B from the catalogue
// (8,030,261,248 parameters, tests/unit/model/param_counts_test.cpp):
//   embedding = lm_head = 128256 x 4096 = 525,336,576; final norm 4096;
//   one decoder block = 2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336 + 2 x 4096 = 218,112,000.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/train/model_states.hpp"

namespace vramplan::train {
namespace {

constexpr std::uint64_t P = 8'030'261'248;
constexpr std::uint64_t kEmbed = 525'336'576, kBlock = 218'112'000;

const ModelSpec& llama8b() {
  static const ModelSpec spec = load_catalogue_model(test::source_root(), "llama-3.1-8b");
  return spec;
}

ModelStatesInput input(PrecisionRecipe precision, Optimizer optimizer) {
  ModelStatesInput in;
  in.tensors = full_model_tensors(llama8b());
  in.num_layers = 32;
  in.precision = precision;
  in.optimizer = optimizer;
  return in;
}

std::uint64_t bytes_of(const std::vector<memory::Component>& parts, const std::string& name) {
  for (const auto& c : parts)
    if (c.name == name) return c.bytes.count();
  return 0;
}

TEST(TrainModelStates, MixedPrecisionAdamIsSixteenBytesPerParameter) {
  // ZeRO paper §3.1: 2 (bf16 weights) + 2 (bf16 grads) + 4 (fp32 master) + 8 (fp32 m, v) = 16 B/param.
  const auto s = model_states(input(PrecisionRecipe::Bf16WithFp32Master, Optimizer::AdamW));
  EXPECT_EQ(s.trainable_params, P);
  EXPECT_EQ(bytes_of(s.gpu, "weights"), 2 * P);
  EXPECT_EQ(bytes_of(s.gpu, "master_weights"), 4 * P);
  EXPECT_EQ(bytes_of(s.gpu, "gradients"), 2 * P);
  EXPECT_EQ(bytes_of(s.gpu, "optimizer_states"), 8 * P);
  EXPECT_EQ(memory::sum_bytes(s.gpu).count(), 16 * P);  // 128,484,179,968 B
  EXPECT_TRUE(s.cpu.empty());
}

TEST(TrainModelStates, PureBf16KeepsTorchOptimizerStatesInBf16) {
  // torchtune dtype=bf16: AdamW's exp_avg / exp_avg_sq are zeros_like(param) -> 2 x 2 B; 8 B/param.
  const auto s = model_states(input(PrecisionRecipe::PureBf16, Optimizer::AdamW));
  EXPECT_EQ(memory::sum_bytes(s.gpu).count(), 8 * P);
  EXPECT_EQ(bytes_of(s.gpu, "master_weights"), 0u);
}

TEST(TrainModelStates, AmpOverFp32ParamsIsSixteenBytesWithoutAMaster) {
  // fp32 params 4 + fp32 grads 4 + fp32 m, v 8 = 16 B/param (HF Trainer bf16=True).
  const auto s = model_states(input(PrecisionRecipe::AmpFp32Params, Optimizer::AdamW));
  EXPECT_EQ(memory::sum_bytes(s.gpu).count(), 16 * P);
}

TEST(TrainModelStates, OptimizerStatePerTensorRules) {
  const std::uint64_t n = 4096ull * 4096;  // 16,777,216 values, 65,536 blocks of 256
  EXPECT_EQ(optimizer_state_bytes(Optimizer::AdamW, {4096, 4096}, n, 4), 8 * n);
  EXPECT_EQ(optimizer_state_bytes(Optimizer::AdamW8bit, {4096, 4096}, n, 2), 2 * (n + 4 * 65'536));  // 34,078,720
  EXPECT_EQ(optimizer_state_bytes(Optimizer::AdamW8bit, {4095}, 4095, 2), 8 * 4095u);  // below min_8bit_size
  EXPECT_EQ(optimizer_state_bytes(Optimizer::PagedAdamW, {4096}, 4096, 2), 8 * 4096u);  // fp32 whatever the param
  EXPECT_EQ(optimizer_state_bytes(Optimizer::Adafactor, {14336, 4096}, 14336ull * 4096, 4), (14336u + 4096u) * 4);
  EXPECT_EQ(optimizer_state_bytes(Optimizer::Adafactor, {4096}, 4096, 4), 4096u * 4);
  EXPECT_EQ(optimizer_state_bytes(Optimizer::SgdMomentum, {4096}, 4096, 4), 4096u * 4);
  EXPECT_EQ(optimizer_state_bytes(Optimizer::Lion, {4096}, 4096, 2), 4096u * 2);
}

TEST(TrainModelStates, Zero3ShardsEverythingAndGathersTheRootUnit) {
  // 8 GPUs, mixed AdamW: each 16 B/param copy / 8, rounded up per component; the largest FSDP
  // unit is the root (embedding + lm_head + norm = 1,050,677,248 params): 2 x its bf16 weights
  // + its bf16 grads = 6 x 1,050,677,248 = 6,304,063,488 B.
  auto in = input(PrecisionRecipe::Bf16WithFp32Master, Optimizer::AdamW);
  in.sharding = Sharding::Zero3;
  in.parallel.gpus = 8;
  const auto s = model_states(in);
  EXPECT_EQ(s.shard_degree, 8u);
  EXPECT_EQ(bytes_of(s.gpu, "weights"), 2 * P / 8);
  EXPECT_EQ(bytes_of(s.gpu, "optimizer_states"), 8 * P / 8);
  EXPECT_EQ(bytes_of(s.gpu, "gathered_units"), 6 * (2 * kEmbed + 4096));
}

TEST(TrainModelStates, ParameterOffloadStillGathersUnitsOnOneGpu) {
  // ZeRO-3 with everything offloaded on 1 GPU: weights, gradients, master and states live on the
  // CPU, but each unit is fetched to the GPU to run it (DeepSpeed offload_param fetch_sub_module):
  // 2 x the root unit's bf16 weights + its bf16 grads = 6 x (2 x 525,336,576 + 4096)
  // = 6 x 1,050,677,248 = 6,304,063,488 B (5.87 GiB), as on 2 GPUs. It had been 0.
  auto in = input(PrecisionRecipe::PureBf16, Optimizer::AdamW);
  in.sharding = Sharding::Zero3;
  in.offload.params = true;
  in.offload.optimizer = true;
  const auto s = model_states(in);
  EXPECT_EQ(s.shard_degree, 1u);
  EXPECT_EQ(bytes_of(s.gpu, "weights"), 0u);
  EXPECT_EQ(bytes_of(s.gpu, "gathered_units"), 6 * (2 * kEmbed + 4096));
  EXPECT_EQ(memory::sum_bytes(s.gpu).count(), 6'304'063'488ull);
  // Without offload one rank holds everything and gathers nothing.
  in.offload = {};
  EXPECT_EQ(bytes_of(model_states(in).gpu, "gathered_units"), 0u);
}

TEST(TrainModelStates, OptimizerOffloadNeedsZero) {
  // DeepSpeed's offload_optimizer is a ZeRO option; plain DDP has none.
  auto in = input(PrecisionRecipe::Bf16WithFp32Master, Optimizer::AdamW);
  in.offload.optimizer = true;
  EXPECT_THROW(model_states(in), Error);
  in.sharding = Sharding::Zero1;  // ZeRO-Offload on one GPU: legal
  EXPECT_NO_THROW(model_states(in));
}

TEST(TrainModelStates, AdafactorStatesAreFp32UnderPureBf16) {
  // transformers' Adafactor makes its states .to(grad) after grad = grad.float(): 4 B each.
  // Llama-3.1-8B rows + cols: embedding and lm_head (128,256 + 4,096) x 2 = 264,704; per block
  // q, o (4,096 + 4,096) x 2 = 16,384, k, v (1,024 + 4,096) x 2 = 10,240, gate, up
  // (14,336 + 4,096) x 2 and down (4,096 + 14,336) = 55,296, two 1-D norms 8,192 -> 90,112,
  // x 32 = 2,883,584; final norm 4,096. 3,152,384 values x 4 B = 12,609,536 B (was x 2 B).
  const auto s = model_states(input(PrecisionRecipe::PureBf16, Optimizer::Adafactor));
  EXPECT_EQ(bytes_of(s.gpu, "optimizer_states"), 12'609'536u);
}

TEST(TrainModelStates, PipelineLastStageKeepsACopyOfATiedEmbedding) {
  // Llama-3.2-1B (tied, 16 blocks of 60,821,504, embedding 128,256 x 2,048 = 262,668,288, final
  // norm 2,048), PP 2: stage 0 = embedding + 8 blocks = 749,240,320; stage 1 = 8 blocks + norm +
  // its own lm_head copy of the embedding (Megatron setup_embeddings_and_output_layer)
  // = 486,572,032 + 2,048 + 262,668,288 = 749,242,368: shown, x 2 B bf16 weights. The parameter
  // count stays the model's 1,235,814,400.
  static const ModelSpec spec = load_catalogue_model(test::source_root(), "llama-3.2-1b");
  ModelStatesInput in;
  in.tensors = full_model_tensors(spec);
  in.num_layers = 16;
  in.optimizer = Optimizer::SgdMomentum;
  in.parallel.gpus = 2;
  in.parallel.pp = 2;
  for (const auto& t : spec.tensors)
    if (t.role == TensorRole::TokenEmbedding) in.tied_embedding = t.name;
  ASSERT_FALSE(in.tied_embedding.empty());
  const auto s = model_states(in);
  EXPECT_EQ(s.pp_stage, 1u);
  EXPECT_EQ(bytes_of(s.gpu, "weights"), 2 * 749'242'368ull);
  EXPECT_EQ(bytes_of(s.gpu, "optimizer_states"), 2 * 749'242'368ull);  // SGD momentum, bf16
  EXPECT_EQ(s.trainable_params, 1'235'814'400u);
  in.parallel.pp = 1;  // one stage: one embedding, used as the head
  in.parallel.gpus = 1;
  EXPECT_EQ(bytes_of(model_states(in).gpu, "weights"), 2 * 1'235'814'400ull);
}

TEST(TrainModelStates, Zero1AndZero2ShardLessThanZero3) {
  auto in = input(PrecisionRecipe::Bf16WithFp32Master, Optimizer::AdamW);
  in.parallel.gpus = 4;
  in.sharding = Sharding::Zero1;  // weights 2P + grads 2P + (4P + 8P) / 4 = 7P
  EXPECT_EQ(memory::sum_bytes(model_states(in).gpu).count(), 7 * P);
  in.sharding = Sharding::Zero2;  // weights 2P + (2P + 12P) / 4 = 5.5P
  EXPECT_EQ(memory::sum_bytes(model_states(in).gpu).count(), 2 * P + 14 * P / 4);
}

TEST(TrainModelStates, OptimizerOffloadMovesStatesMasterAndGradientsToTheCpu) {
  // ZeRO-2 offload on 8 GPUs leaves the bf16 weights on the GPU: 2P (DeepSpeed's estimator agrees: gpu = 2P).
  auto in = input(PrecisionRecipe::Bf16WithFp32Master, Optimizer::AdamW);
  in.parallel.gpus = 8;
  in.sharding = Sharding::Zero2;
  in.offload.optimizer = true;
  const auto s = model_states(in);
  EXPECT_EQ(memory::sum_bytes(s.gpu).count(), 2 * P);
  EXPECT_EQ(memory::sum_bytes(s.cpu).count(), 14 * P / 8);  // (4 + 2 + 8) B x P / 8 ranks
}

TEST(TrainModelStates, PagedOptimizerStatesLiveInUnifiedMemory) {
  const auto s = model_states(input(PrecisionRecipe::PureBf16, Optimizer::PagedAdamW));
  EXPECT_EQ(bytes_of(s.gpu, "optimizer_states"), 0u);
  EXPECT_EQ(memory::sum_bytes(s.unified).count(), 8 * P);  // fp32 m, v
  EXPECT_EQ(memory::sum_bytes(s.gpu).count(), 4 * P);      // bf16 weights + grads
}

TEST(TrainModelStates, TensorParallelSplitsAllButTheNorms) {
  // Norms: 32 x 2 x 4096 + 4096 = 266,240 replicated; the rest halves:
  // (8,030,261,248 - 266,240) / 2 + 266,240 = 4,015,263,744 params per GPU, x 2 B bf16 weights.
  auto in = input(PrecisionRecipe::PureBf16, Optimizer::SgdMomentum);
  in.parallel.gpus = 2;
  in.parallel.tp = 2;
  EXPECT_EQ(bytes_of(model_states(in).gpu, "weights"), 2 * 4'015'263'744ull);
}

TEST(TrainModelStates, PipelineShowsTheHeaviestStage) {
  // PP 2: stage 0 = embedding + blocks 0-15 = 4,015,128,576; stage 1 = blocks 16-31 + norm +
  // lm_head = 4,015,132,672 (4096 more): stage 1 is shown.
  auto in = input(PrecisionRecipe::PureBf16, Optimizer::SgdMomentum);
  in.parallel.gpus = 2;
  in.parallel.pp = 2;
  const auto s = model_states(in);
  EXPECT_EQ(s.pp_stage, 1u);
  EXPECT_EQ(bytes_of(s.gpu, "weights"), 2 * (16 * kBlock + 4096 + kEmbed));
}

TEST(TrainModelStates, HybridShardStopsAtTheNode) {
  Parallelism p;
  p.gpus = 16;
  p.gpus_per_node = 8;
  EXPECT_EQ(p.shard_degree(Sharding::HybridShard), 8u);
  EXPECT_EQ(p.shard_degree(Sharding::Zero3), 16u);
  p.cp = 2;  // FSDP mesh = dp x cp = 8 x 2
  EXPECT_EQ(p.shard_degree(Sharding::Zero3), 16u);
  // HSDP replicates over whole nodes: 16 GPUs are not nodes of 3; 0 GPUs per node is no node.
  Parallelism odd;
  odd.gpus = 16;
  odd.gpus_per_node = 3;
  EXPECT_THROW(odd.shard_degree(Sharding::HybridShard), Error);
  odd.gpus_per_node = 0;
  EXPECT_THROW(odd.shard_degree(Sharding::HybridShard), Error);
  odd.gpus = 2;  // a run within one node of 8
  odd.gpus_per_node = 8;
  EXPECT_EQ(odd.shard_degree(Sharding::HybridShard), 2u);
}

TEST(TrainModelStates, RejectsImpossibleLayouts) {
  auto in = input(PrecisionRecipe::PureBf16, Optimizer::AdamW);
  in.offload.params = true;  // needs ZeRO-3 / FSDP
  EXPECT_THROW(model_states(in), Error);
  in.offload.params = false;
  in.parallel.gpus = 3;
  in.parallel.tp = 2;
  EXPECT_THROW(model_states(in), Error);
  EXPECT_THROW(optimizer_from_name("adamax"), Error);
  EXPECT_EQ(optimizer_from_name("paged-adamw-8bit"), Optimizer::PagedAdamW8bit);
  EXPECT_EQ(sharding_from_name("fsdp"), Sharding::Zero3);
}

}  // namespace
}  // namespace vramplan::train
