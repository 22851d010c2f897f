#include "vramplan/quant/format.hpp"

#include <gtest/gtest.h>

#include "support/catalogs.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan {
namespace {

std::uint64_t bytes(std::string_view fmt, std::vector<std::uint64_t> shape) {
  return tensor_bytes(test::quant_formats().get(fmt), shape, "t");
}

TEST(QuantFormat, GgufBlockSizesGiveExactBitsPerWeight) {
  // ggml-common.h block structs: bpw = 8 * block_bytes / block_elems.
  EXPECT_DOUBLE_EQ(test::quant_formats().get("Q4_K").bits_per_weight(), 4.5);      // 144 * 8 / 256
  EXPECT_DOUBLE_EQ(test::quant_formats().get("Q6_K").bits_per_weight(), 6.5625);   // 210 * 8 / 256
  EXPECT_DOUBLE_EQ(test::quant_formats().get("Q8_0").bits_per_weight(), 8.5);      // 34 * 8 / 32
  EXPECT_DOUBLE_EQ(test::quant_formats().get("Q2_K").bits_per_weight(), 2.625);    // 84 * 8 / 256
  EXPECT_DOUBLE_EQ(test::quant_formats().get("IQ4_XS").bits_per_weight(), 4.25);   // 136 * 8 / 256
  EXPECT_DOUBLE_EQ(test::quant_formats().get("MXFP4").bits_per_weight(), 4.25);    // 17 * 8 / 32
}

TEST(QuantFormat, NewGgufTypesAndFp4Layouts) {
  EXPECT_DOUBLE_EQ(test::quant_formats().get("Q1_0").bits_per_weight(), 1.125);  // 18 * 8 / 128
  EXPECT_DOUBLE_EQ(test::quant_formats().get("Q2_0").bits_per_weight(), 2.25);   // 18 * 8 / 64
  // MXFP4 is one row, whichever spelling: 4096 x 4096 / 32 blocks x 17 B = 8,912,896 B.
  EXPECT_EQ(&test::quant_formats().get("mxfp4"), &test::quant_formats().get("MXFP4"));
  EXPECT_EQ(bytes("mxfp4", {4096, 4096}), 8'912'896u);
  // ModelOpt NVFP4: 16,777,216 / 16 x 9 B = 9,437,184 + fp32 weight_scale_2 + input_scale = 9,437,192.
  EXPECT_EQ(bytes("nvfp4-b16", {4096, 4096}), 9'437'192u);
  // GGUF NVFP4 (type 40): 16,777,216 / 64 x 36 B = 9,437,184, no per-tensor scale: a distinct row.
  EXPECT_EQ(bytes("NVFP4", {4096, 4096}), 9'437'184u);
  // Stacked experts carry one global scale pair each: 8 x (2048 x 4096 / 16 x 9 + 8).
  EXPECT_EQ(bytes("nvfp4-b16", {8, 2048, 4096}), 8u * (2048u * 4096u / 16u * 9u + 8u));
}

TEST(QuantFormat, GptqAwqMarlinOn4096Square) {
  // GPTQ 4-bit g128, {4096, 4096}: qweight 4096*4096*4/8 = 8,388,608; scales 32 groups x 4096
  // x 2 B = 262,144; qzeros 32 x 4096*4/8 = 65,536; g_idx 4096 x 4 = 16,384 -> 8,732,672 B
  // = 4.1640625 bpw (memory-model.md §2.3: 4.164).
  EXPECT_EQ(bytes("gptq-4bit-g128", {4096, 4096}), 8'732'672u);
  EXPECT_DOUBLE_EQ(test::quant_formats().get("gptq-4bit-g128").bits_per_weight(), 4.1640625);
  // act-order does not change the checkpoint layout (g_idx is always stored).
  EXPECT_EQ(bytes("gptq-4bit-g128-actorder", {4096, 4096}), 8'732'672u);
  // AWQ: no g_idx -> 8,716,288 B = 4.15625 bpw.
  EXPECT_EQ(bytes("awq-4bit-g128", {4096, 4096}), 8'716'288u);
  // vLLM gptq_marlin after repack: weights + scales, symmetric zeros and g_idx dropped
  // -> 8,650,752 B; with act-order g_idx + sort indices 4096 x 8 B = 32,768 more.
  EXPECT_EQ(bytes("gptq-marlin-4bit-g128", {4096, 4096}), 8'650'752u);
  EXPECT_EQ(bytes("gptq-marlin-4bit-g128-actorder", {4096, 4096}), 8'683'520u);
  // awq_marlin keeps the (repacked, same-size) zero points: same bytes as AWQ.
  EXPECT_EQ(bytes("awq-marlin-4bit-g128", {4096, 4096}), 8'716'288u);
  // 3-bit g-1 (one group per row): qweight 4096*3/32 = 384 words = 1536 B x 4096 rows =
  // 6,291,456; scales 4096 x 2 = 8,192; zeros 4096*3/32*4 = 1,536; g_idx 16,384.
  EXPECT_EQ(bytes("gptq-3bit-g-1", {4096, 4096}), 6'317'568u);
  // compressed-tensors W4A16 g128: weight_packed + weight_scale + weight_shape int64[2].
  EXPECT_EQ(bytes("ct-4bit-g128", {4096, 4096}), 8'650'752u + 16u);
}

TEST(QuantFormat, BitsandbytesAndHqq) {
  // NF4 blocksize 64 on {4096, 4096}: 8,388,608 B of nibbles + 262,144 fp32 absmax = 9,437,184
  // = 4.5 bpw; double quant: 262,144 uint8 absmax + 1,024 fp32 per 256 = 8,654,848 B
  // = 4.126953125 bpw (QLoRA: 0.127 bits of constants).
  EXPECT_EQ(bytes("nf4", {4096, 4096}), 9'437'184u);
  EXPECT_EQ(bytes("nf4-dq", {4096, 4096}), 8'654'848u);
  EXPECT_DOUBLE_EQ(test::quant_formats().get("nf4-dq").bits_per_weight(), 4.126953125);
  EXPECT_EQ(bytes("fp4", {4096, 4096}), bytes("nf4", {4096, 4096}));
  // LLM.int8(): 16,777,216 int8 + 4096 fp32 SCB = 16,793,600.
  EXPECT_EQ(bytes("llm.int8", {4096, 4096}), 16'793'600u);
  // HQQ 4-bit g64: 8,388,608 + 262,144 groups x (fp16 scale + fp16 zero) = 9,437,184 (4.5 bpw).
  EXPECT_EQ(bytes("hqq-4bit-g64", {4096, 4096}), 9'437'184u);
  // HQQ 3-bit packs 10 per int32: ceil(4096/10) = 410 words = 1,640 B x 4096 + 1,048,576.
  EXPECT_EQ(bytes("hqq-3bit-g64", {4096, 4096}), 1640u * 4096u + 1'048'576u);
}

TEST(QuantFormat, Fp8ScalesOnDeepSeekV3Matrices) {
  // DeepSeek-V3 routed expert gate_proj {2048, 7168} with 128x128 fp32 scales:
  // 14,680,064 B + 16 x 56 tiles x 4 B = 3,584 -> 14,683,648.
  EXPECT_EQ(bytes("fp8-block", {2048, 7168}), 14'683'648u);
  // All 256 experts of a layer stacked: 256 x that.
  EXPECT_EQ(bytes("fp8-block", {256, 2048, 7168}), 256u * 14'683'648u);
  // kv_a_proj_with_mqa {576, 7168}: ceil(576/128) = 5 x 56 tiles -> 4,128,768 + 1,120.
  EXPECT_EQ(bytes("fp8-block", {576, 7168}), 4'129'888u);
  // Per-channel: one fp32 per output row; per-tensor: one fp32 per matrix.
  EXPECT_EQ(bytes("fp8-channel", {4096, 4096}), 16'777'216u + 16'384u);
  EXPECT_EQ(bytes("fp8-tensor", {4096, 4096}), 16'777'216u + 4u);
}

TEST(QuantFormat, TemplateNamesOutsideTheFamilyAreUnknown) {
  EXPECT_EQ(test::quant_formats().find("gptq-5bit-g128"), nullptr);  // GPTQ bits are 2, 3, 4, 8
  EXPECT_EQ(test::quant_formats().find("awq-4bit-g128-actorder"), nullptr);
  EXPECT_EQ(test::quant_formats().find("gptq-4bit-g0"), nullptr);
  EXPECT_EQ(test::quant_formats().find("gptq-4bit-g128-fast"), nullptr);
  EXPECT_EQ(test::quant_formats().get("GPTQ-4bit-G32").name, "gptq-4bit-g32");
}

TEST(QuantFormat, TensorBytesFollowRows) {
  // Llama-3.1-8B ffn_down {4096, 14336} in Q6_K: 4096 rows x 14336/256 = 56 blocks x 210 B
  // = 4096 x 11760 = 48,168,960 B.
  EXPECT_EQ(bytes("Q6_K", {4096, 14336}), 48'168'960u);
  // bf16 embedding {128256, 4096}: 525,336,576 elements x 2 B = 1,050,673,152 B.
  EXPECT_EQ(bytes("bf16", {128256, 4096}), 1'050'673'152u);
  // A 1-D norm in f32: 4096 x 4 = 16,384 B.
  EXPECT_EQ(bytes("f32", {4096}), 16'384u);
}

TEST(QuantFormat, RowNotMultipleOfBlockIsRefused) {
  // Qwen2.5-0.5B hidden 896 = 3.5 x 256: K-quants cannot store its rows.
  EXPECT_FALSE(row_fits(test::quant_formats().get("Q4_K"), 896));
  EXPECT_TRUE(row_fits(test::quant_formats().get("Q5_0"), 896));  // 896 = 28 x 32
  EXPECT_THROW(bytes("Q4_K", {4864, 896}), Error);
}

TEST(QuantFormat, LookupByAliasGgufIdAndSafetensorsDtype) {
  EXPECT_EQ(test::quant_formats().get("bfloat16").name, "bf16");
  EXPECT_EQ(test::quant_formats().get("gguf:q4_k").name, "Q4_K");
  ASSERT_NE(test::quant_formats().find_gguf(14), nullptr);
  EXPECT_EQ(test::quant_formats().find_gguf(14)->name, "Q6_K");  // GGML_TYPE_Q6_K = 14
  EXPECT_EQ(test::quant_formats().find_gguf(31), nullptr);        // removed Q4_0_4_4
  ASSERT_NE(test::quant_formats().find_safetensors("F8_E4M3"), nullptr);
  EXPECT_EQ(test::quant_formats().find_safetensors("F8_E4M3")->name, "fp8-e4m3");
  try {
    test::quant_formats().get("q9_z");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnknownName);
  }
}

TEST(QuantCatalog, DuplicateNamesAreRejected) {
  test::ScratchDir dir;
  const auto p = dir.write("q.json", R"({"formats": [
    {"name": "a", "layout": "block", "block_elems": 1, "block_bytes": 2, "source": "x"},
    {"name": "b", "aliases": ["A"], "layout": "block", "block_elems": 1, "block_bytes": 2, "source": "x"}]})");
  try {
    QuantCatalog::load(p);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InputFile);
    EXPECT_NE(std::string(e.what()).find("/formats/1"), std::string::npos) << e.what();
  }
}

TEST(QuantCatalog, ZeroBlockIsRejected) {
  test::ScratchDir dir;
  const auto p = dir.write("q.json", R"({"formats": [
    {"name": "a", "layout": "block", "block_elems": 0, "block_bytes": 2, "source": "x"}]})");
  EXPECT_THROW(QuantCatalog::load(p), Error);
}

}  // namespace
}  // namespace vramplan
