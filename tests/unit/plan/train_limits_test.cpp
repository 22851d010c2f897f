// Training limits (plan/train_limits.hpp) on tests/fixtures/hf/tiny-llama, where the whole peak
// is small enough to add up by hand. tiny-llama: h 64, I 128 (SwiGLU), 2 layers, 4 heads x 16,
// 2 KV heads, vocabulary 256, untied: parameters
//   embedding 256 x 64 = 16,384; per layer q 4,096 + k 2,048 + v 2,048 + o 4,096 + gate/up/down
//   3 x 8,192 + 2 norms x 64 = 36,992, x 2 = 73,984; final norm 64; lm_head 16,384 -> P = 106,816.
// Full training, pure bf16, foreach AdamW, flash attention, no recomputation, one GPU:
//   resident        weights 2P + AdamW states 4P = 640,896 B
//   optimizer step  gradients 2P + foreach sqrt temporary 2P = 427,264 B
//   forward/backward per token: 2 layers x 2,584 B (train/activations.hpp: 2 RMSNorms x (4 h + 4
//     + 2 h) = 776, q/k/v input 2 h = 128, flash 2 (2 x 64 + 2 x 32) + 4 x 4 = 400, o input 128,
//     gate/up input 128, SwiGLU 3 x 2 x 128 = 768, down input 256) = 5,168, plus the logits and
//     loss 256 x (2 + 4) + 256 x 4 = 2,560 -> 7,728 B per token.
// peak(b, s) = 640,896 + max(7,728 b s, 427,264).
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/plan/train_limits.hpp"

namespace vramplan::test {
namespace {

train::TrainRequest tiny_llama_request(const std::string& gpu) {
  train::TrainRequest r;
  r.model = fixture("hf/tiny-llama/config.json").string();
  r.gpu = gpu;
  r.seq_len = 64;
  return r;
}

const DataRoot& limits_root() {
  static const DataRoot r{source_dir()};
  return r;
}

bool tiny_fits(train::TrainRequest r) { return train::plan_training(r, limits_root()).fits; }

double part_bytes(const train::TrainPlan& p, const std::string& name) {
  for (const auto& c : p.gpu)
    if (c.part.name == name) return static_cast<double>(c.part.bytes.count());
  return -1;
}

TEST(TrainPlan, AutocastCopiesAnFp32FrozenHead) {
  // QLoRA with PEFT's fp32 upcast of the unquantized lm_head under autocast (HF Trainer bf16=True,
  // the amp recipe): a bf16 copy of the head, 256 x 64 x 2 B = 32,768 B, saved for backward.
  auto r = tiny_llama_request("custom:4MiB");
  r.method = train::Method::Qlora;
  r.adapter.base_format = "nf4";
  r.adapter.upcast_unquantized = true;
  r.precision = train::PrecisionRecipe::AmpFp32Params;
  EXPECT_EQ(part_bytes(train::plan_training(r, limits_root()), "autocast_head_copy"), 32'768.0);
  // A quantized head (bitsandbytes dequantizes it itself) or pure bf16: no copy.
  r.adapter.quantize_head = true;
  EXPECT_EQ(part_bytes(train::plan_training(r, limits_root()), "autocast_head_copy"), -1.0);
  r.adapter.quantize_head = false;
  r.precision = train::PrecisionRecipe::PureBf16;
  EXPECT_EQ(part_bytes(train::plan_training(r, limits_root()), "autocast_head_copy"), -1.0);
}

TEST(TrainPlan, PreviousGraphHoldsBitsandbytesInputsAndLogits) {
  // LitGPT's loop holds the previous graph (TrainRequest::holds_previous_graph). QLoRA (nf4,
  // lm_head quantized too): bitsandbytes' ctx keeps, per token, each block's q/k/v input h, o input
  // q = 64, gate/up input h and down input I: 2 B x (64 + 64 + 64 + 128) = 640, x 2 layers = 1,280;
  // the lm_head input 2 x 64 = 128; the logits 2 B x 256 = 512 -> 1,920 B per token.
  auto r = tiny_llama_request("custom:4MiB");
  r.method = train::Method::Qlora;
  r.adapter.base_format = "nf4";
  r.adapter.targets = "q_proj,v_proj";
  r.adapter.quantize_head = true;
  r.holds_previous_graph = true;
  EXPECT_EQ(part_bytes(train::plan_training(r, limits_root()), "previous_graph"), 1'920.0 * 64);
  r.previous_tokens = 10;  // a shorter previous micro-batch
  EXPECT_EQ(part_bytes(train::plan_training(r, limits_root()), "previous_graph"), 1'920.0 * 10);
  // A bf16 base: autograd released everything on backward; only the logits remain (512 B a token).
  r.method = train::Method::Lora;
  r.adapter.base_format = "bf16";
  r.previous_tokens = 0;
  EXPECT_EQ(part_bytes(train::plan_training(r, limits_root()), "previous_graph"), 512.0 * 64);
  r.holds_previous_graph = false;
  EXPECT_EQ(part_bytes(train::plan_training(r, limits_root()), "previous_graph"), -1.0);
}

// The searches plan on inputs loaded once (train::TrainInputs): the model in them is the one
// planned, whatever the request's model string says, and the plan equals a fresh load's.
TEST(TrainPlan, PlansOnInputsLoadedOnce) {
  const train::TrainRequest r = tiny_llama_request("h100-sxm-80");
  const train::TrainInputs in = train::load_train_inputs(r.model, limits_root());
  train::TrainRequest elsewhere = r;
  elsewhere.model = "no-such-model";  // never loaded: the inputs hold the model
  const train::TrainPlan once = train::plan_training(elsewhere, in), fresh = train::plan_training(r, limits_root());
  EXPECT_EQ(once.peak_allocated, fresh.peak_allocated);
  EXPECT_EQ(once.peak_allocated.count(), 640'896u + 7'728u * 64u);  // peak(1, 64), above
  EXPECT_EQ(once.model_id, fresh.model_id);
}

TEST(TrainLimits, ThePeakIsTheHandSum) {
  const auto p = train::plan_training(tiny_llama_request("custom:4MiB"), limits_root());
  EXPECT_EQ(p.total_params, 106'816u);
  EXPECT_EQ(p.peak_allocated.count(), 640'896u + 7'728u * 64);  // 1,135,488 B
}

TEST(TrainLimits, MaxMicroBatchIsTheLastThatFits) {
  // 4 MiB = 4,194,304 B: 4,194,304 - 640,896 = 3,553,408 B for forward/backward; at 64 tokens a
  // sequence needs 7,728 x 64 = 494,592 B -> floor(3,553,408 / 494,592) = 7 (7.18).
  const auto r = tiny_llama_request("custom:4MiB");
  const auto limit = plan::train_max_micro_batch(r, limits_root());
  EXPECT_EQ(limit.value, 7u);
  EXPECT_FALSE(limit.capped);
  auto at = r;
  at.micro_batch = 7;
  EXPECT_TRUE(tiny_fits(at));
  at.micro_batch = 8;
  EXPECT_FALSE(tiny_fits(at));
  EXPECT_NE(limit.breaks.find("at micro-batch 8: peak allocated"), std::string::npos) << limit.breaks;
  EXPECT_NE(limit.breaks.find("forward_backward"), std::string::npos) << limit.breaks;
}

TEST(TrainLimits, MaxSeqLenIsTheLastThatFits) {
  // floor(3,553,408 / 7,728) = 459 tokens (459.8) at micro-batch 1; at 460, 7,728 x 460 = 3,554,880 B
  // is 1,472 B too many.
  const auto r = tiny_llama_request("custom:4MiB");
  const auto limit = plan::train_max_seq_len(r, limits_root());
  EXPECT_EQ(limit.value, 459u);
  auto at = r;
  at.seq_len = 459;
  EXPECT_TRUE(tiny_fits(at));
  at.seq_len = 460;
  EXPECT_FALSE(tiny_fits(at));
  EXPECT_NE(limit.breaks.find("at 460 tokens"), std::string::npos) << limit.breaks;
  EXPECT_NE(limit.breaks.find("by 1.44 KiB"), std::string::npos) << limit.breaks;  // 1,472 B
}

TEST(TrainLimits, SeqLenStopsAtTheModelsPositions) {
  // 1 GiB holds floor((1,073,741,824 - 640,896) / 7,728) = 138,858 tokens, far beyond the
  // model's max_position_embeddings (512).
  const auto limit = plan::train_max_seq_len(tiny_llama_request("custom:1GiB"), limits_root());
  EXPECT_EQ(limit.value, 512u);
  EXPECT_TRUE(limit.capped);
  EXPECT_NE(limit.cap_reason.find("max_position_embeddings (512)"), std::string::npos);
  const auto batch = plan::train_max_micro_batch(tiny_llama_request("custom:1GiB"), limits_root());
  EXPECT_EQ(batch.value, 2169u);  // floor(1,073,100,928 / 494,592) = 2,169 (2,169.7)
}

TEST(TrainLimits, MinGpusShardsTheStatesNotTheActivations) {
  // ZeRO-3 over d ranks (d >= 2): resident ceil(2P / d) + ceil(4P / d); forward/backward adds the
  // gathered unit, 2 x a layer's weights + its gradients = 3 x 73,984 = 221,952 B, to 494,592 B:
  //   d = 2: 106,816 + 213,632 + 716,544 = 1,036,992 B
  //   d = 3:  71,211 + 142,422 + 716,544 =   930,177 B
  // 920 KiB = 942,080 B: 3 GPUs.
  auto r = tiny_llama_request("custom:920KiB");
  r.sharding = train::Sharding::Zero3;
  const auto m = plan::train_min_gpus(r, limits_root());
  ASSERT_TRUE(m.gpus.has_value()) << m.why_none;
  EXPECT_EQ(*m.gpus, 3u);
  auto at = r;
  at.parallel.gpus = 3;
  EXPECT_TRUE(tiny_fits(at));
  at.parallel.gpus = 2;
  EXPECT_FALSE(tiny_fits(at));
  // 700 KiB = 716,800 B: even 1,024 GPUs leave 716,544 + 209 + 418 = 717,171 B.
  r.gpu = "custom:700KiB";
  const auto none = plan::train_min_gpus(r, limits_root());
  EXPECT_FALSE(none.gpus.has_value());
  EXPECT_EQ(none.bound, 1024u);
  for (const char* part : {"at 1024 GPUs", "activations 323.00 KiB", "logits_and_loss 160.00 KiB", "gathered_units"})
    EXPECT_NE(none.why_none.find(part), std::string::npos) << part << ": " << none.why_none;
}

TEST(TrainLimits, MinGpusWithoutShardingIsOneProbe) {
  auto r = tiny_llama_request("custom:4MiB");
  const auto one = plan::train_min_gpus(r, limits_root());
  EXPECT_EQ(one.gpus, 1u);
  EXPECT_EQ(one.probes, 1u);
  r.gpu = "custom:1MiB";  // 1,048,576 < 1,135,488: DDP replicates, no count helps
  const auto none = plan::train_min_gpus(r, limits_root());
  EXPECT_FALSE(none.gpus.has_value());
  EXPECT_NE(none.why_none.find("DDP"), std::string::npos) << none.why_none;
}

TEST(TrainLimits, GradAccumRoundsUpAndSaysSo) {
  // 512 sequences at micro-batch 4 on 8 data-parallel ranks: 512 / 32 = 16 steps exactly.
  const auto exact = plan::grad_accum_for(512, 4, 8);
  EXPECT_EQ(exact.steps, 16u);
  EXPECT_EQ(exact.effective, 512u);
  EXPECT_EQ(exact.note.find("rounded"), std::string::npos);
  // 100 sequences at 3 x 4 = 12 per micro-step: ceil(100 / 12) = 9 steps, 108 sequences.
  const auto rounded = plan::grad_accum_for(100, 3, 4);
  EXPECT_EQ(rounded.per_step, 12u);
  EXPECT_EQ(rounded.steps, 9u);
  EXPECT_EQ(rounded.effective, 108u);
  EXPECT_NE(rounded.note.find("not a multiple of 12"), std::string::npos) << rounded.note;
  EXPECT_THROW(plan::grad_accum_for(0, 1, 1), Error);
}

TEST(TrainLimits, LargestFittingFindsEveryBoundary) {
  // The shared search (plan/limits.hpp) on a step function, every boundary from 0 to the cap.
  for (std::uint64_t edge = 0; edge <= 40; ++edge) {
    std::uint64_t probes = 0;
    EXPECT_EQ(plan::largest_fitting(40, [&](std::uint64_t v) { return v <= edge; }, probes), edge);
  }
}

}  // namespace
}  // namespace vramplan::test
