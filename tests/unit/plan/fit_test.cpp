// Fit and headroom on hand-built plans: every figure below is computed by hand in the comments.
#include "vramplan/plan/fit.hpp"

#include <gtest/gtest.h>

#include "vramplan/plan/limits.hpp"
#include "vramplan/model/tp_validity.hpp"

namespace vramplan::plan {
namespace {

constexpr std::uint64_t GiB = 1ull << 30;

// An 80 GiB GPU: weights 40 GiB, activation 2 GiB, overhead 1 GiB; a vLLM-style pool of 6250
// blocks of 16 tokens x 163,840 B/token (Llama-3.1-70B at TP 2: 2 x 80 x 4 x 128 x 2 B):
// 100,000 tokens = 16,384,000,000 B = 15.26 GiB. At max length L the engine's concurrency is
// 6250 / ceil(L / 16).
memory::MemoryPlan pool_plan(std::uint64_t max_len) {
  memory::MemoryPlan p;
  p.engine = "vllm";
  p.gpu_total = Bytes(80 * GiB);
  p.weights = {{"weights.layers", Bytes(40 * GiB), ""}};
  p.activation = {{"activation.sampler", Bytes(2 * GiB), ""}};
  p.overhead = {{"overhead.non_torch", Bytes(1 * GiB), ""}};
  p.kv_cache = {{"kv_cache", Bytes(6250ull * 16 * 163840), ""}};
  p.kv.bytes_per_token = 163840;
  p.kv.capacity_tokens = 100000;
  p.kv.max_concurrency = 6250.0 / static_cast<double>((max_len + 15) / 16);
  return p;
}

TEST(DecisionFit, NeededAndHeldHandComputed) {
  // 12 sequences of 8192 tokens: 512 blocks each = 8192 x 163,840 = 1,342,177,280 B (1.25 GiB);
  // x 12 = 15 GiB. needed = 40 + 2 + 1 + 15 = 58 GiB; held = 40 + 2 + 1 + the whole pool
  // (6250 x 16 x 163,840 = 16,384,000,000 B) = 46,170,898,432 + 16,384,000,000 = 62,554,898,432 B
  // (58.26 GiB). The pool holds floor(16,384,000,000 / 1,342,177,280) = 12 sequences; spare =
  // 16,384,000,000 - 16,106,127,360 = 277,872,640 B.
  const FitResult r = assess_fit(pool_plan(8192), "", 12, 8192, FitPolicy{}, ErrorBounds{});
  EXPECT_EQ(r.per_sequence_kv, 1342177280u);
  EXPECT_EQ(r.expected.kv_needed.count(), 15 * GiB);
  EXPECT_EQ(r.expected.needed.count(), 58 * GiB);
  EXPECT_EQ(r.expected.held.count(), 43 * GiB + 16384000000u);
  EXPECT_EQ(r.expected.spare_bytes, 277872640);
  EXPECT_EQ(r.expected_sequences, 12u);
  EXPECT_EQ(r.verdict, Verdict::Fits);  // no margins: the upper bounds are the expected values
  EXPECT_TRUE(r.fits);
  EXPECT_EQ(fit_line(r, "gpu-x", 2, 2, 1, 1),
            "FITS gpu-x x2 tp2: needs 58.0 GiB per GPU, vLLM holds 58.3 of 80.0 GiB; KV pool 15.3 GiB = 12 sequences of 8192");
}

TEST(DecisionFit, BlockRoundingAtTheBoundary) {
  // 8193 tokens need ceil(8193 / 16) = 513 blocks = 8208 tokens x 163,840 = 1,344,798,720 B,
  // one whole block (2,621,440 B) more than 8192 tokens.
  const FitResult at = assess_fit(pool_plan(8192), "", 1, 8192, FitPolicy{}, ErrorBounds{});
  const FitResult over = assess_fit(pool_plan(8193), "", 1, 8193, FitPolicy{}, ErrorBounds{});
  EXPECT_EQ(over.per_sequence_kv, 1344798720u);
  EXPECT_EQ(over.per_sequence_kv - at.per_sequence_kv, 16u * 163840u);
  // 8208 tokens fill the same 513 blocks: no further growth until 8209.
  EXPECT_EQ(assess_fit(pool_plan(8208), "", 1, 8208, FitPolicy{}, ErrorBounds{}).per_sequence_kv, 1344798720u);
}

TEST(DecisionFit, KvCacheIsTheFirstThingThatBreaks) {
  // 13 x 1.25 GiB = 16.25 GiB > pool 16,384,000,000 B = 15.26 GiB (12 sequences).
  const FitResult r = assess_fit(pool_plan(8192), "", 13, 8192, FitPolicy{}, ErrorBounds{});
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.verdict, Verdict::DoesNotFit);
  EXPECT_EQ(r.limit, Limit::KvCache);
  EXPECT_EQ(r.reason, "KV cache for 13 sequences of 8192 tokens needs 16.25 GiB; the vLLM KV pool is 15.26 GiB "
                      "(12 sequences of 8192)");
  EXPECT_EQ(fit_line(r, "gpu-x", 1, 1, 1, 1), "DOES NOT FIT gpu-x x1: " + r.reason);
}

TEST(DecisionFit, HeadroomIsAnExtraMarginOnNeededMemory) {
  // --headroom 1 % of 80 GiB = 858,993,460 B (rounded up) more than the 277,872,640 B the 12
  // sequences leave in the pool.
  const FitResult r = assess_fit(pool_plan(8192), "", 12, 8192, FitPolicy{0.01}, ErrorBounds{});
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.limit, Limit::Headroom);
  EXPECT_EQ(r.reason, "--headroom 1.0% asks 819.20 MiB spare in the KV pool; 12 sequences of 8192 tokens leave 265.00 MiB");
  // The default asks nothing extra.
  EXPECT_EQ(FitPolicy{}.headroom, 0.0);
}

TEST(DecisionFit, EngineRefusalComesFirst) {
  const FitResult r = assess_fit(pool_plan(8192), "No available memory for the cache blocks", 1, 8192, FitPolicy{},
                                 ErrorBounds{});
  EXPECT_EQ(r.limit, Limit::Engine);
  EXPECT_EQ(r.verdict, Verdict::DoesNotFit);
  EXPECT_EQ(r.reason, "No available memory for the cache blocks");
}

TEST(DecisionFit, MarginalWhenOnlyTheExpectedValuesFit) {
  // Margins: weights +1 %, activation +0.5 GiB, once each. Upper non-KV excess = 0.4 GiB
  // (429,496,730 B, rounded up) + 0.5 GiB = 966,367,642 B, taken out of the pool:
  // 16,384,000,000 - 966,367,642 = 15,417,632,358 B = 11 sequences of 1,342,177,280 B. 12
  // sequences need 16,106,127,360 B: 688,495,002 B (656.6 MiB) short on the bounds.
  const ErrorBounds bounds({{"weights", "", 0.01, 0, "test"}, {"activation", "", 0, GiB / 2, "test"}});
  const FitResult r = assess_fit(pool_plan(8192), "", 12, 8192, FitPolicy{}, bounds);
  EXPECT_EQ(r.verdict, Verdict::Marginal);
  EXPECT_TRUE(r.fits);
  EXPECT_EQ(r.upper.weights.count(), 40 * GiB + 429496730u);
  EXPECT_EQ(r.upper.activation.count(), 2 * GiB + GiB / 2);
  EXPECT_EQ(r.upper.kv_pool.count(), 15417632358u);
  EXPECT_EQ(r.margin_short_bytes, 688495002);
  EXPECT_EQ(r.upper_sequences, 11u);
  EXPECT_EQ(fit_line(r, "gpu-x", 1, 1, 1, 1),
            "MARGINAL gpu-x x1: needs 58.0 GiB, vLLM holds 58.3 of 80.0 GiB; KV pool 15.3 GiB = 12 sequences of 8192; "
            "on the upper bounds the KV pool is 14.36 GiB = 11 sequences of 8192 (656.60 MiB short)");
  // --conservative turns it into a refusal; 11 sequences fit on the bounds too.
  EXPECT_FALSE(assess_fit(pool_plan(8192), "", 12, 8192, FitPolicy{0, true}, bounds).fits);
  EXPECT_EQ(assess_fit(pool_plan(8192), "", 11, 8192, FitPolicy{}, bounds).verdict, Verdict::Fits);
}

TEST(DecisionFit, ExcessOnTopOfTheBudgetAddsToWhatIsHeld) {
  // A component captured after the pool is sized (vLLM 0.19 CUDA graphs) does not shrink the
  // pool: its margin (1 GiB) adds to what the engine holds, 62,554,898,432 + 1 GiB.
  memory::MemoryPlan p = pool_plan(8192);
  p.overhead.push_back({"overhead.cuda_graphs", Bytes(GiB), "", true});
  const ErrorBounds bounds({{"overhead.cuda_graphs", "", 0, GiB, "test"}});
  const FitResult r = assess_fit(p, "", 12, 8192, FitPolicy{}, bounds);
  EXPECT_EQ(r.upper.kv_pool, r.expected.kv_pool);
  EXPECT_EQ(r.upper.held.count(), r.expected.held.count() + GiB);
  EXPECT_EQ(r.verdict, Verdict::Fits);  // 60.26 GiB of 80
  // A fixed KV allocation (llama.cpp -c) holds every excess on top.
  memory::MemoryPlan fixed = pool_plan(8192);
  fixed.kv_fixed = true;
  const FitResult f = assess_fit(fixed, "", 12, 8192, FitPolicy{}, ErrorBounds({{"weights", "", 0, 30 * GiB, "test"}}));
  EXPECT_EQ(f.upper.kv_pool, f.expected.kv_pool);
  EXPECT_EQ(f.verdict, Verdict::Marginal);  // 58.26 + 30 = 88.26 GiB held > 80 GiB
  EXPECT_EQ(f.limit, Limit::Card);
}

TEST(DecisionLimits, LargestFittingSearch) {
  std::uint64_t probes = 0;
  EXPECT_EQ(largest_fitting(1000, [](std::uint64_t v) { return v <= 37; }, probes), 37u);
  EXPECT_LE(probes, 2u + 7u + 6u);  // 1, doubling to 64, bisection of (32, 64)
  probes = 0;
  EXPECT_EQ(largest_fitting(1000, [](std::uint64_t) { return false; }, probes), 0u);
  EXPECT_EQ(largest_fitting(1000, [](std::uint64_t) { return true; }, probes), 1000u);
  EXPECT_EQ(largest_fitting(1, [](std::uint64_t) { return true; }, probes), 1u);
}

TEST(TpValidity, VllmRules) {
  ModelArch llama70;  // 64 heads, 8 KV heads, intermediate 28672
  llama70.num_heads = 64;
  llama70.num_kv_heads = 8;
  llama70.intermediate_size = 28672;
  llama70.num_layers = 80;
  EXPECT_TRUE(check_tp(llama70, 8).valid);
  EXPECT_TRUE(check_tp(llama70, 16).valid);  // 16 % 8 == 0: KV heads replicated
  const TpCheck three = check_tp(llama70, 3);
  EXPECT_FALSE(three.valid);
  EXPECT_EQ(three.why, "attention heads (64) must be divisible by TP 3");
  ModelArch odd = llama70;  // 48 heads, 12 KV heads: TP 8 divides the heads, not the KV heads
  odd.num_heads = 48;
  odd.num_kv_heads = 12;
  EXPECT_EQ(check_tp(odd, 8).why, "KV heads (12) must divide TP 8 or be a multiple of it");
  EXPECT_TRUE(check_tp(odd, 4).valid);
  ModelArch mla = odd;  // MLA: one replicated latent, no KV-head rule
  mla.kv_lora_rank = 512;
  EXPECT_TRUE(check_tp(mla, 8).valid);
  EXPECT_EQ(check_pp(llama70, 81), "PP 81 exceeds the 80 decoder layers");
  EXPECT_EQ(check_pp(llama70, 80), "");
}

}  // namespace
}  // namespace vramplan::plan
