// vLLM MXFP4 MoE padding (engine-mechanisms.md item 8): gpt-oss experts as the kernel backend
// holds them. Each hand-computed test compares against the same plan with an unknown compute
// capability (checkpoint bytes, no padding), so the expectation is the padding alone.
// Baseline expert bytes: fp4 values + e8m0 scales = 17 B per 32 elements; the expert biases stay
// bf16 as in the checkpoint (2 B per element), so each bias term below is "as held - E x n x 2".
#include <gtest/gtest.h>

#include "support/catalogs.hpp"
#include "support/engine_plans.hpp"
#include "support/test_support.hpp"
#include "vramplan/io/data_root.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/model/load.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan::memory {
namespace {

MemoryPlan plan(const std::string& model, const std::string& cc, std::uint64_t tp, const std::string& version = "0.19") {
  const ModelSpec m = load_model(model, test::source_root(), test::quant_catalog());
  return test::plan_engine("vllm@" + version, m, test::gpu_target(Bytes::from_gib(79.19), test::kH100Name, tp, cc),
                           {{"tensor-parallel-size", std::to_string(tp)}});
}

const Component& layers(const MemoryPlan& p) { return test::component(p.weights, "weights.layers"); }

std::uint64_t padding(const std::string& model, const std::string& cc, std::uint64_t tp) {
  return layers(plan(model, cc, tp)).bytes.count() - layers(plan(model, "", tp)).bytes.count();
}

TEST(VllmMxfp4, Gpt20bHopperTriton) {
  // cc 9.0 -> Triton. create_weights: intermediate 2880 = 45 x 64 (kept), hidden kept; Hopper
  // swizzle: values [N -> x256, K -> x128], scales [N -> x256, K/32 -> x2].
  // w13 (N 5760 -> 5888, K 2880 -> 2944): 32 x 5888 x 2944 / 2 + 32 x 5888 x 90 = 294,305,792
  //   vs 32 x 5760 x 2880 x 17/32 = 282,009,600: +12,296,192.
  // w2 (N 2880 -> 3072, K 2880 -> 2944): 32 x 3072 x 2944 / 2 + 32 x 3072 x 90 = 153,550,848
  //   vs 141,004,800: +12,546,048.
  // Biases fp32: 32 x (5760 + 2880) x 4 = 1,105,920 vs 32 x 8640 x 2 = 552,960: +552,960.
  // Per layer +25,395,200; x 24 layers.
  EXPECT_EQ(padding("gpt-oss-20b", "9.0", 1), 609484800u);
}

TEST(VllmMxfp4, Gpt120bHopperTritonTp1) {
  // 128 experts: w13 128 x 5888 x 2944 / 2 + 128 x 5888 x 90 = 1,177,223,168 vs 1,128,038,400
  // (+49,184,768); w2 128 x 3072 x 2944 / 2 + 128 x 3072 x 90 = 614,203,392 vs 564,019,200
  // (+50,184,192); biases 128 x 8640 x 4 = 4,423,680 vs 128 x 8640 x 2 = 2,211,840 (+2,211,840).
  // Per layer +101,580,800; x 36.
  EXPECT_EQ(padding("gpt-oss-120b", "9.0", 1), 3656908800u);
}

TEST(VllmMxfp4, Gpt120bHopperTritonTp2PadsTheRankIntermediate) {
  // Per rank. Rank intermediate 1440 -> round_up(1440, 64) = 1472.
  // w13 (N 2944 -> 3072, K 2880 -> 2944): 128 x 3072 x 2944 / 2 + 128 x 3072 x 90 = 614,203,392
  //   vs 1,128,038,400 / 2 = 564,019,200: +50,184,192.
  // w2 (N 2880 -> 3072, K 1472 -> 1536 values, 1472 -> 46 scales): 128 x 3072 x 1536 / 2 +
  //   128 x 3072 x 46 = 320,077,824 vs 564,019,200 / 2 = 282,009,600: +38,068,224.
  // w13_bias 128 x 2944 x 4 = 1,507,328 vs 128 x 2880 x 2 = 737,280: +770,048.
  // w2_bias (whole on each rank) 128 x 2880 x 4 = 1,474,560 vs 737,280: +737,280.
  // Per layer +89,759,744; x 36.
  EXPECT_EQ(padding("gpt-oss-120b", "9.0", 2), 3231350784u);
}

TEST(VllmMxfp4, Gpt20bAmpereMarlinPadsBothDims) {
  // cc 8.0 -> Marlin: intermediate 2880 -> 2944 (x128), hidden 2880 -> 3072 (x256), biases bf16.
  // w13 32 x 5888 x 3072 x 17/32 = 307,494,912 vs 282,009,600 (+25,485,312); w2 32 x 3072 x 2944
  // x 17/32 = 153,747,456 vs 141,004,800 (+12,742,656); biases 32 x (5888 + 3072) x 2 = 573,440
  // vs 32 x 8640 x 2 = 552,960 (+20,480). Per layer +38,248,448; x 24.
  EXPECT_EQ(padding("gpt-oss-20b", "8.0", 1), 917962752u);
}

// The kernel path is data/compat's: rule vllm-mxfp4-marlin-sm12x sends an RTX 5090 (12.0) to the
// same Marlin layout as an A100, and below 8.0 (vllm-mxfp4-min-capability) nothing is padded.
TEST(VllmMxfp4, KernelPathFromTheCompatibilityRules) {
  EXPECT_EQ(padding("gpt-oss-20b", "12.0", 1), 917962752u);
  EXPECT_EQ(padding("gpt-oss-20b", "7.5", 1), 0u);
}

TEST(VllmMxfp4, ExplainShowsThePaddedShapes) {
  const auto p = plan("gpt-oss-120b", "9.0", 2);
  EXPECT_NE(layers(p).explain.find("w13 [128, 3072, 2944], w2 [128, 3072, 1536]"), std::string::npos)
      << layers(p).explain;
}

// Published start-up logs (tests/accuracy/data/vllm_mxfp4_logs.json), 'Model loading took'.
TEST(VllmMxfp4, Logged120bHopperTritonWithinOnePercent) {
  // vLLM 0.14.1, H100, TP1, "Using Triton backend": 64.38 GiB (vllm issue 33155).
  EXPECT_NEAR(plan("gpt-oss-120b", "9.0", 1, "0.11").weights_bytes().gib(), 64.38, 0.01 * 64.38);
}

TEST(VllmMxfp4, Logged120bMarlinWithinOnePercent) {
  // vLLM 0.10.1 on an H100 without triton_kernels fell back to Marlin (log: marlin_utils_fp4.py
  // warning): 65.9651 GiB (vllm issue 23278). cc 8.0 selects the same Marlin layout here.
  EXPECT_NEAR(plan("gpt-oss-120b", "8.0", 1, "0.11").weights_bytes().gib(), 65.9651, 0.01 * 65.9651);
}

}  // namespace
}  // namespace vramplan::memory
