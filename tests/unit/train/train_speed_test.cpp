// Training FLOPs, step time and run duration (train/train_speed.hpp) against hand arithmetic on
// Llama-3.1-8B (catalogue config: 32 layers, hidden 4096, 32 query heads of 128, 8 KV heads,
// vocabulary 128,256, untied output head).
#include <gtest/gtest.h>

#include "support/catalogs.hpp"
#include "support/test_support.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/model/load.hpp"
#include "vramplan/perf/perf_defaults.hpp"
#include "vramplan/train/train_plan.hpp"

namespace vramplan::train {
namespace {

const ModelSpec& train_speed_llama8b() {
  static const ModelSpec spec = load_model("llama-3.1-8b", test::source_root(), test::quant_catalog());
  return spec;
}

TrainRequest request(Method method, Recompute recompute) {
  TrainRequest r;
  r.method = method;
  r.recompute = recompute;
  r.micro_batch = 2;
  r.seq_len = 2048;
  return r;
}

// f = 2 x (8,030,261,248 params - 525,336,576 token embedding) = 15,009,849,344;
// a = 32 layers x 2 x 32 heads x (128 + 128) x (2048 + 1) / 2 attended = 537,133,056.
constexpr double kF = 15'009'849'344.0, kA = 537'133'056.0;

TEST(TrainSpeed, FullTrainingIsThreeForwards) {
  const TrainFlops f = training_flops(train_speed_llama8b(), request(Method::Full, Recompute::None), 0);
  EXPECT_DOUBLE_EQ(f.matmul, kF);
  EXPECT_DOUBLE_EQ(f.attention, kA);
  EXPECT_DOUBLE_EQ(f.executed, 3 * (kF + kA));  // 46,640,947,200
  EXPECT_EQ(f.formula, "3 (f + a)");
  // Full recomputation runs the forward once more; selective only the attention core.
  EXPECT_DOUBLE_EQ(training_flops(train_speed_llama8b(), request(Method::Full, Recompute::Full), 0).executed, 4 * (kF + kA));
  EXPECT_DOUBLE_EQ(training_flops(train_speed_llama8b(), request(Method::Full, Recompute::Selective), 0).executed,
                   3 * (kF + kA) + kA);
  TrainRequest op = request(Method::Full, Recompute::Selective);
  op.selective_op = true;  // torchtitan: every second matmul again, the attention core saved
  EXPECT_DOUBLE_EQ(training_flops(train_speed_llama8b(), op, 0).executed, 3 * (kF + kA) + kF / 2);
}

TEST(TrainSpeed, FrozenBaseSkipsWeightGradients) {
  // LoRA rank 8 on q_proj and v_proj: 32 x (8 x (4096 + 4096) + 8 x (4096 + 1024)) = 3,407,872
  // adapter parameters, t = 2 x 3,407,872 = 6,815,744.
  const TrainFlops f = training_flops(train_speed_llama8b(), request(Method::Lora, Recompute::None), 3'407'872);
  EXPECT_DOUBLE_EQ(f.adapter, 6'815'744.0);
  EXPECT_DOUBLE_EQ(f.executed, 2 * kF + 3 * kA + 3 * 6'815'744.0);  // 31,651,545,088
  EXPECT_EQ(f.formula, "2 f + 3 a + 3 t");
}

TEST(TrainSpeed, StepTimeIsExecutedFlopsOverPeakTimesEfficiency) {
  const GpuCatalog gpus = GpuCatalog::load(test::source_dir() / "data" / "gpus.json");
  const perf::PerfDefaults d = perf::load_perf_defaults(test::source_dir() / "data" / "perf_defaults.json");
  const TrainRequest r = request(Method::Full, Recompute::None);
  std::string why;
  const auto sp = training_speed(training_flops(train_speed_llama8b(), r, 0), r, gpus.resolve_one("h100-sxm-80"), d, why);
  ASSERT_TRUE(sp) << why;
  EXPECT_DOUBLE_EQ(sp->peak_tflops, 989.4);  // H100 SXM dense bf16, data/gpus.json
  EXPECT_EQ(sp->tokens_per_step, 4096u);     // 2 x 2048 x 1 accumulation x 1 replica
  // 4096 x 46,640,947,200 FLOPs / (989.4e12 x 0.40) = 0.48272 s; 8,485 tokens/s.
  EXPECT_NEAR(sp->step_s, 4096 * 3 * (kF + kA) / (989.4e12 * d.training_efficiency.expected), 1e-12);
  EXPECT_NEAR(sp->step_s, 0.48272, 1e-4);
  EXPECT_LT(sp->step_s_fast, sp->step_s);
  EXPECT_GT(sp->step_s_slow, sp->step_s);
  // A run of 1e9 tokens: 1e9 / 8,485 tokens/s = 32.7 h on one GPU.
  const TrainRun run = training_run(*sp, 1e9);
  EXPECT_NEAR(run.hours, 1e9 / sp->tokens_per_s / 3600, 1e-9);
  EXPECT_NEAR(run.hours, 32.74, 0.01);
  EXPECT_DOUBLE_EQ(run.gpu_hours, run.hours);
}

TEST(TrainSpeed, NoTensorFigureSaysWhy) {
  GpuSpec gpu = GpuCatalog::load(test::source_dir() / "data" / "gpus.json").resolve_one("h100-sxm-80");
  gpu.tflops = {};
  const perf::PerfDefaults d = perf::load_perf_defaults(test::source_dir() / "data" / "perf_defaults.json");
  const TrainRequest r = request(Method::Full, Recompute::None);
  std::string why;
  EXPECT_FALSE(training_speed(training_flops(train_speed_llama8b(), r, 0), r, gpu, d, why));
  EXPECT_NE(why.find("no dense bf16 tensor figure"), std::string::npos) << why;
}

}  // namespace
}  // namespace vramplan::train
