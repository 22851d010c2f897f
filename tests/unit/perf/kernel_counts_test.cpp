// Counted kernels (data/perf_defaults.json step_overhead.sglang.kernel_counts; perf/model_shape.cpp
// count_kernels, perf_model.cpp finish_step): which deployments they apply to, the per-layer sums,
// and what decode and prompt steps cost with them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/perf/model_shape.hpp"

namespace vramplan::perf {
namespace {

const PerfDefaults& defaults() {
  static const PerfDefaults d = load_perf_defaults(test::source_dir() / "data" / "perf_defaults.json");
  return d;
}

const StepOverheadDefaults& sglang() { return defaults().step_overhead_for("sglang"); }

// Block-scaled FP8 flags for weights stored `weights` ("bf16", "fp8-block" or "mxfp4"): one flagged tensor
// makes the format fp8-block (kernel_count_format).
std::vector<bool> block_fp8(std::string_view weights) { return weights == "fp8-block" ? std::vector<bool>{true} : std::vector<bool>{}; }

// The catalogue model with its tensors in bf16 (2 B an element; the counts do not read the bytes).
PerfModelShape counted_shape(const std::string& id, std::string_view weights, std::uint32_t tp = 1) {
  const ModelSpec spec = load_catalogue_model(test::source_root(), id);
  std::vector<std::uint64_t> bytes;
  for (const TensorInfo& t : spec.tensors) bytes.push_back(t.elements() * 2);
  ShapeOptions opt;
  opt.tp = tp;
  opt.counted_kernels = sglang().counted_layers("nvidia", 10, spec.arch.architecture, block_fp8(weights), weights);
  EXPECT_NE(opt.counted_kernels, nullptr) << id;
  return shape_from_model(spec, bytes, opt);
}

// Per forward: the decode critical path (attention part + MLP part per layer) and the launches of
// a prompt step (every stream, the all-reduces included), hand-summed from the table in
// data/perf_defaults.json.
struct Expected {
  const char* id;
  const char* weights;
  std::uint32_t tp;
  double decode_kernels, prompt_launches, extra_allreduces;
};
constexpr Expected kExpected[] = {
    // Qwen3-235B-A22B: 94 MoE layers x (8 + 9) = 1,598; launches 94 x (10 + 10) = 1,880.
    {"qwen3-235b-a22b", "bf16", 8, 1598, 1880, 0},
    // DeepSeek-R1: 58 MoE x (13 + 11) + 3 dense x (13 + 5) = 1,392 + 54 = 1,446;
    // launches 58 x (15 + 17) + 3 x (15 + 6) = 1,856 + 63 = 1,919.
    {"deepseek-r1", "fp8-block", 8, 1446, 1919, 0},
    // GLM-4.5 / 4.6: 89 MoE x (8 + 20) + 3 dense x (8 + 4) = 2,528; 89 x (12 + 21) + 3 x (12 + 5) = 2,988.
    {"glm-4.5", "bf16", 8, 2528, 2988, 0},
    // Qwen3-Coder-Next: 36 gated-DeltaNet x (7 + 9) + 12 full x (12 + 9) = 828; launches with a prompt
    // (the chunked gated-DeltaNet kernels: 29 a layer) 36 x (29 + 15) + 12 x (14 + 15) = 1,584 + 348 = 1,932.
    {"qwen3-coder-next", "bf16", 2, 828, 1932, 0},
    // GLM-4.7-Flash: 46 MoE x (13 + 20) + (13 + 4) = 1,535; 46 x (14 + 20) + (14 + 4) = 1,582.
    {"glm-4.7-flash", "bf16", 1, 1535, 1582, 0},
    // MiniMax-M2.5: 62 x (12 + 12) = 1,488; 62 x (14 + 13) = 1,674; one q/k-norm all-reduce a layer.
    {"minimax-m2.5", "fp8-block", 8, 1488, 1674, 62},
    // Nemotron-3-Nano (one block a layer): 23 Mamba-2 x 16 + 6 attention x 7 + 23 MoE x (5 + 17)
    // = 368 + 42 + 506 = 916; launches with a prompt (the chunked scan: 22 a Mamba-2 block)
    // 23 x 22 + 6 x 7 + 23 x (5 + 21) = 506 + 42 + 598 = 1,146.
    {"nemotron-3-nano-30b-a3b", "bf16", 1, 916, 1146, 0},
    // Nemotron-H-8B: 24 Mamba-2 x 16 + 4 attention x 7 + 24 MLP x 5 = 532; launched with a prompt
    // 24 x 22 + 28 + 120 = 676.
    {"nemotron-h-8b", "bf16", 1, 532, 676, 0},
    // Step-3.5-Flash at TP 4: 12 full x 15 + 33 sliding x 17 + 42 MoE x 19 + 3 dense x 5 = 1,554;
    // 12 x 16 + 33 x 18 + 42 x 21 + 3 x 6 = 1,686; a third all-reduce charged on each of 45 layers.
    {"step-3.5-flash", "bf16", 4, 1554, 1686, 45},
    // gpt-oss-120b at TP 8 (sliding and full layers alike): 36 x (5 + 7) = 432; 36 x (6 + 8) = 504.
    {"gpt-oss-120b", "mxfp4", 8, 432, 504, 0},
};

TEST(KernelCounts, PerLayerCountsSumOverTheModel) {
  for (const Expected& e : kExpected) {
    const PerfModelShape s = counted_shape(e.id, e.weights, e.tp);
    EXPECT_DOUBLE_EQ(s.decode_kernels, e.decode_kernels) << e.id;
    EXPECT_DOUBLE_EQ(s.prompt_launches, e.prompt_launches) << e.id;
    EXPECT_DOUBLE_EQ(s.extra_allreduces, e.extra_allreduces) << e.id;
    // The plan says that the count applies, and what it is.
    const std::string counted = std::to_string(static_cast<int>(e.decode_kernels)) + " per decode step";
    EXPECT_TRUE(std::any_of(s.notes.begin(), s.notes.end(),
                            [&](const std::string& n) { return n.find(counted) != std::string::npos; }))
        << e.id;
  }
}

// Nemotron-H's layers are one block each, reduced once at TP > 1 (vLLM / SGLang nemotron_h.py); a
// decoder layer is reduced twice. At TP 4, 88 layers of 4 tokens x 4096 x 2 B = 32 KiB over a link of
// 1 TB/s and 10 us: 2 x 3/4 x 32,768 / 1e12 = 0.049 us + 10 us each.
TEST(KernelCounts, NemotronHReducesOnceALayer) {
  const PerfModelShape super4 = counted_shape("nemotron-3-super-120b-a12b", "bf16", 4);
  EXPECT_DOUBLE_EQ(super4.allreduces_per_layer, 1);
  EXPECT_DOUBLE_EQ(counted_shape("qwen3-235b-a22b", "bf16", 8).allreduces_per_layer, 2);
  HardwareRates r{1e15, 1e18, 0.5e-3, 1e12, 10e-6, 1, 55e-6};
  const double one = 10e-6 + 2 * 0.75 * 4 * 4096 * 2 / 1e12;
  EXPECT_NEAR(decode_step(super4, r, 4, 100).comm_s, 88 * one, 1e-12);
}

TEST(KernelCounts, ApplyOnlyToTheCountedVendorArchitectureAndFormat) {
  const std::vector<bool> bf16 = block_fp8("bf16"), fp8 = block_fp8("fp8-block");
  EXPECT_NE(sglang().counted_layers("nvidia", 10, "Qwen3MoeForCausalLM", bf16, "bf16"), nullptr);
  EXPECT_NE(sglang().counted_layers("nvidia", 10, "Qwen3MoeForCausalLM", bf16, "fp16"), nullptr);  // same kernels
  EXPECT_EQ(sglang().counted_layers("amd", 0, "Qwen3MoeForCausalLM", bf16, "bf16"), nullptr);  // ROCm kernels not counted
  EXPECT_EQ(sglang().counted_layers("nvidia", 10, "Qwen3MoeForCausalLM", fp8, "fp8-block"), nullptr);  // +1 quant per GEMM
  EXPECT_EQ(sglang().counted_layers("nvidia", 10, "Qwen3MoeForCausalLM", bf16, "int4-awq (linear) + bf16"), nullptr);
  EXPECT_EQ(sglang().counted_layers("nvidia", 10, "LlamaForCausalLM", bf16, "bf16"), nullptr);
  EXPECT_EQ(defaults().step_overhead_for("vllm").counted_layers("nvidia", 10, "Qwen3MoeForCausalLM", bf16, "bf16"), nullptr);
  EXPECT_EQ(kernel_count_format({false, true}, "fp8-block (mixed)"), "fp8-block");
  EXPECT_EQ(kernel_count_format({false, false}, "fp16"), "bf16");
  EXPECT_EQ(kernel_count_format({}, "int4-awq (linear) + bf16"), "");
  EXPECT_EQ(kernel_count_format({}, "mxfp4 (mixed: 4.04 GiB bf16 kept)"), "mxfp4");  // gpt-oss's MXFP4 experts
  // gpt-oss was counted for Blackwell (10.x: trtllm-gen attention and MoE); Hopper runs fa3 and
  // triton_kernels, other kernels, so the count does not apply there. Unkeyed entries apply on any.
  EXPECT_NE(sglang().counted_layers("nvidia", 10, "GptOssForCausalLM", {}, "mxfp4"), nullptr);
  EXPECT_EQ(sglang().counted_layers("nvidia", 9, "GptOssForCausalLM", {}, "mxfp4"), nullptr);
  EXPECT_NE(sglang().counted_layers("nvidia", 9, "Qwen3MoeForCausalLM", bf16, "bf16"), nullptr);
}

TEST(KernelCounts, CountedStepsPayPerKernelOthersPerLayer) {
  PerfModelShape s = counted_shape("qwen3-235b-a22b", "bf16", 8);
  HardwareRates r{1e15, 1e18, 0.5e-3, 1e12, 10e-6, 1, 55e-6};
  r.moe_layer_overhead_s = 20e-6;
  r.prompt_moe_layer_overhead_s = 700e-6;
  r.decode_kernel_overhead_s = 4.5e-6;
  // Decode: 0.5 ms + 1,598 x 4.5 us = 7.691 ms (the per-layer terms would give 0.5 + 94 x 75 us).
  EXPECT_NEAR(decode_step(s, r, 1, 100).overhead_s, 0.5e-3 + 1598 * 4.5e-6, 1e-12);
  // A prompt chunk keeps the per-layer terms: 0.5 ms + 94 x (55 + 700) us = 71.47 ms.
  const PrefillChunk chunk{0, 100};
  const MixedStep prompt{0, 0, std::span<const PrefillChunk>(&chunk, 1)};
  const double with_prompt = mixed_step_seconds(s, r, prompt);
  EXPECT_GT(with_prompt, 0.5e-3 + 94 * 755e-6);
  // With a cost per launch the prompt step pays every launch instead: doubling it from 36 to 72 us
  // adds 1,880 x 36 us = 67.68 ms.
  r.prompt_launch_overhead_s = 36e-6;
  const double at36 = mixed_step_seconds(s, r, prompt);
  r.prompt_launch_overhead_s = 72e-6;
  EXPECT_NEAR(mixed_step_seconds(s, r, prompt) - at36, 1880 * 36e-6, 1e-9);
  r.prompt_launch_overhead_s = 0;
  // Without a cost for this vendor the per-layer terms serve decode too: 0.5 + 94 x 75 us.
  r.decode_kernel_overhead_s = 0;
  EXPECT_NEAR(decode_step(s, r, 1, 100).overhead_s, 0.5e-3 + 94 * 75e-6, 1e-12);
}

TEST(KernelCounts, BadCountsNameTheField) {
  nlohmann::json doc = read_json_file(test::source_dir() / "data" / "perf_defaults.json");
  test::ScratchDir dir;
  auto& arch = doc["step_overhead"]["engines"]["sglang"]["kernel_counts"]["architectures"]["Qwen3MoeForCausalLM"];
  arch["weights"] = "int4";
  try {
    load_perf_defaults(dir.write("perf.json", doc.dump()));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InputFile);
    EXPECT_NE(std::string(e.what()).find("Qwen3MoeForCausalLM/weights"), std::string::npos) << e.what();
  }
  arch["weights"] = "bf16";
  arch["moe_mlp"] = -1;
  EXPECT_THROW(load_perf_defaults(dir.write("perf.json", doc.dump())), Error);
  // A misspelt layer kind would leave the architecture uncounted without a word.
  arch["moe_mlp"] = 9;
  arch["attention"] = {{"ful", 8}};
  try {
    load_perf_defaults(dir.write("perf.json", doc.dump()));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("attention/ful"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vramplan::perf
