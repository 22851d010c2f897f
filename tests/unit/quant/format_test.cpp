#include "vramplan/quant/format.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan {
namespace {

const QuantCatalog& catalog() {
  static const QuantCatalog c = QuantCatalog::load(test::source_dir() / "data" / "quant_formats.json");
  return c;
}

std::uint64_t bytes(std::string_view fmt, std::vector<std::uint64_t> shape) {
  return tensor_bytes(catalog().get(fmt), shape, "t");
}

TEST(QuantFormat, GgufBlockSizesGiveExactBitsPerWeight) {
  // ggml-common.h block structs: bpw = 8 * block_bytes / block_elems.
  EXPECT_DOUBLE_EQ(catalog().get("Q4_K").bits_per_weight(), 4.5);      // 144 * 8 / 256
  EXPECT_DOUBLE_EQ(catalog().get("Q6_K").bits_per_weight(), 6.5625);   // 210 * 8 / 256
  EXPECT_DOUBLE_EQ(catalog().get("Q8_0").bits_per_weight(), 8.5);      // 34 * 8 / 32
  EXPECT_DOUBLE_EQ(catalog().get("Q2_K").bits_per_weight(), 2.625);    // 84 * 8 / 256
  EXPECT_DOUBLE_EQ(catalog().get("IQ4_XS").bits_per_weight(), 4.25);   // 136 * 8 / 256
  EXPECT_DOUBLE_EQ(catalog().get("MXFP4").bits_per_weight(), 4.25);    // 17 * 8 / 32
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
  EXPECT_FALSE(row_fits(catalog().get("Q4_K"), 896));
  EXPECT_TRUE(row_fits(catalog().get("Q5_0"), 896));  // 896 = 28 x 32
  EXPECT_THROW(bytes("Q4_K", {4864, 896}), Error);
}

TEST(QuantFormat, LookupByAliasGgufIdAndSafetensorsDtype) {
  EXPECT_EQ(catalog().get("bfloat16").name, "bf16");
  EXPECT_EQ(catalog().get("gguf:q4_k").name, "Q4_K");
  ASSERT_NE(catalog().find_gguf(14), nullptr);
  EXPECT_EQ(catalog().find_gguf(14)->name, "Q6_K");  // GGML_TYPE_Q6_K = 14
  EXPECT_EQ(catalog().find_gguf(31), nullptr);        // removed Q4_0_4_4
  ASSERT_NE(catalog().find_safetensors("F8_E4M3"), nullptr);
  EXPECT_EQ(catalog().find_safetensors("F8_E4M3")->name, "fp8-e4m3");
  try {
    catalog().get("q9_z");
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
