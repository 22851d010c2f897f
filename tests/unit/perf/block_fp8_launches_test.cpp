// GEMM launches on 2-D block-scaled FP8 weights per forward (PerfModelShape::block_fp8_gemms) and
// the per-launch overhead they carry (HardwareRates::block_fp8_gemm_overhead_s).
#include <gtest/gtest.h>

#include "support/catalogs.hpp"
#include "support/test_support.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/perf/model_shape.hpp"
#include "vramplan/perf/perf_model.hpp"

namespace vramplan::perf {
namespace {

PerfModelShape shape_of(const std::string& id, const std::optional<std::string>& weights, std::uint32_t pp = 1) {
  const ModelSpec model = load_catalogue_model(test::source_root(), id);
  const memory::ResolvedWeights rw =
      memory::resolve_weights(model, test::quant_catalog(), memory::WeightRequest{std::nullopt, std::nullopt, weights});
  ShapeOptions o;
  o.tp = 8;
  o.pp = pp;
  o.block_scaled_fp8 = rw.block_scaled_fp8;
  return shape_from_model(model, rw.tensor_bytes, o);
}

TEST(BlockFp8Launches, DeepSeekV3CountsFusedProjectionsOnce) {
  // DeepSeek-V3 (config: 61 layers, first_k_dense_replace 3, q_lora_rank 1536, FP8 128 x 128).
  // A dense layer: fused q_a + kv_a, q_b, o, gate_up, down = 5 launches; an MoE layer: fused
  // q_a + kv_a, q_b, o, shared gate_up, shared down, routed w13, routed w2 = 7 (kv_b_proj is not
  // a launch of the absorbed decode). 3 x 5 + 58 x 7 = 421; the MTP layer (61) is not counted.
  EXPECT_DOUBLE_EQ(shape_of("deepseek-v3", std::nullopt).block_fp8_gemms, 421);
  // Over two pipeline stages each GPU runs half of them on average.
  EXPECT_DOUBLE_EQ(shape_of("deepseek-v3", std::nullopt, 2).block_fp8_gemms, 210.5);
}

TEST(BlockFp8Launches, QwenMoeHasQkvOAndTheTwoExpertGemms) {
  // Qwen3-Coder-480B-A35B (62 layers, every one MoE, no shared expert) as its -FP8 checkpoint
  // (128 x 128 blocks): qkv, o, routed w13, routed w2 = 4 per layer; 62 x 4 = 248.
  EXPECT_DOUBLE_EQ(shape_of("qwen3-coder-480b-a35b", std::string("fp8-block")).block_fp8_gemms, 248);
}

TEST(BlockFp8Launches, OtherFormatsLaunchNone) {
  // bf16 weights, and FP8 with one scale per channel (not 2-D blocks): no such launch.
  EXPECT_DOUBLE_EQ(shape_of("qwen3-coder-480b-a35b", std::nullopt).block_fp8_gemms, 0);
  EXPECT_DOUBLE_EQ(shape_of("qwen3-coder-480b-a35b", std::string("fp8-channel")).block_fp8_gemms, 0);
}

TEST(BlockFp8Launches, EachLaunchAddsItsOverheadToEveryStep) {
  PerfModelShape s;
  s.dense_weight_bytes = 1e9;
  s.active_params = 5e8;
  s.layers = 10;
  s.hidden = 1024;
  s.attention.push_back(AttentionGroup{10, 8, 128, 128, 1024, 0, 1});
  HardwareRates r{1e12, 1e14};
  const StepBreakdown base = decode_step(s, r, 1, 100);
  s.block_fp8_gemms = 40;
  r.block_fp8_gemm_overhead_s = 38e-6;
  // 40 launches x 38 us = 1.52 ms of overhead; the kernels are unchanged.
  const StepBreakdown with = decode_step(s, r, 1, 100);
  EXPECT_NEAR(with.overhead_s - base.overhead_s, 1.52e-3, 1e-12);
  EXPECT_DOUBLE_EQ(with.kernels_s, base.kernels_s);
  // A step with prompt tokens takes the prompt rate, not the decode one: with the prompt rate 0 it
  // carries no such overhead, with 150 us it carries 40 x 150 us = 6 ms.
  const PrefillChunk chunk[] = {{0, 64}};
  const MixedStep prompt{0, 0, chunk};
  const double without = mixed_step_seconds(s, r, prompt);
  r.prompt_block_fp8_gemm_overhead_s = 150e-6;
  EXPECT_NEAR(mixed_step_seconds(s, r, prompt) - without, 6e-3, 1e-12);
}

}  // namespace
}  // namespace vramplan::perf
