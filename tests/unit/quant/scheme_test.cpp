#include "vramplan/quant/scheme.hpp"

#include <gtest/gtest.h>

#include "support/catalogs.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/quant/gguf_mixture.hpp"

namespace vramplan {
namespace {

TEST(WeightScheme, NamedSchemesMapToFormatsAndRules) {
  const auto fp8 = parse_weight_scheme("fp8-block", test::quant_catalog());
  EXPECT_EQ(fp8.kind, SchemeKind::Format);
  EXPECT_EQ(fp8.format, "fp8-e4m3-block128");
  EXPECT_EQ(fp8.rules, "fp8-deepseek");
  EXPECT_EQ(parse_weight_scheme("nvfp4", test::quant_catalog()).format, "nvfp4-b16");
  EXPECT_EQ(parse_weight_scheme("mxfp4", test::quant_catalog()).format, "MXFP4");
  EXPECT_EQ(parse_weight_scheme("nf4-dq", test::quant_catalog()).format, "nf4-dq");
  EXPECT_EQ(parse_weight_scheme("fp4", test::quant_catalog()).format, "bnb-fp4");
  EXPECT_EQ(parse_weight_scheme("w8a8", test::quant_catalog()).activation, "int8");
  EXPECT_EQ(parse_weight_scheme("BF16", test::quant_catalog()).format, "bf16");
}

// Rule sets are parsed on first use: this checks that every one in data/quant_schemes.json is
// valid, as the loader did for all of them before they became lazy.
TEST(WeightScheme, EveryRuleSetInTheCatalogueParses) {
  const SchemeTable& table = test::quant_catalog().schemes();
  const auto names = table.rule_set_names();
  EXPECT_GE(names.size(), 5u);
  for (const auto& name : names) {
    const RuleSet& set = table.rules(name);
    EXPECT_EQ(set.name, name);
    EXPECT_FALSE(set.source.empty()) << name;
  }
  // fp8-deepseek keeps the MLA/MoE router and norms out of fp8 (one rule at least).
  EXPECT_FALSE(table.rules("fp8-deepseek").keep.empty());
}

TEST(WeightScheme, ParametricNamesCarryTheirFamilyRules) {
  const auto g = parse_weight_scheme("gptq-3bit-g-1-actorder", test::quant_catalog());
  EXPECT_EQ(g.kind, SchemeKind::Format);
  EXPECT_EQ(g.format, "gptq-3bit-g-1-actorder");
  EXPECT_EQ(g.rules, "autogptq");
  EXPECT_EQ(g.activation, "fp16");  // vLLM's gptq kernel takes fp16 only
  const auto m = parse_weight_scheme("gptq-marlin-4bit-g128", test::quant_catalog());
  EXPECT_EQ(m.engine_method, "gptq_marlin");
  EXPECT_EQ(m.activation, "model");
  EXPECT_EQ(parse_weight_scheme("awq-4bit-g64", test::quant_catalog()).rules, "autoawq");
}

TEST(WeightScheme, GgufFileTypesAndVllmMethods) {
  const auto q = parse_weight_scheme("gguf:Q4_K_M", test::quant_catalog());
  EXPECT_EQ(q.kind, SchemeKind::GgufFileType);
  EXPECT_EQ(q.gguf_file_type, "Q4_K_M");
  // gguf:Q4_0 is the file type (a mixture: output Q6_K), not the Q4_0 block type.
  EXPECT_EQ(parse_weight_scheme("gguf:q4_0", test::quant_catalog()).kind, SchemeKind::GgufFileType);
  EXPECT_EQ(test::quant_catalog().schemes().find_gguf_file_type(15u)->name, "Q4_K_M");  // LLAMA_FTYPE_MOSTLY_Q4_K_M
  EXPECT_EQ(test::quant_catalog().schemes().find_gguf_file_type("IQ3_M")->base, "IQ3_S");
  const auto v = parse_weight_scheme("gptq_marlin", test::quant_catalog());
  EXPECT_EQ(v.kind, SchemeKind::VllmMethod);
  EXPECT_EQ(parse_weight_scheme("vllm:compressed-tensors", test::quant_catalog()).vllm_method, "compressed-tensors");
}

TEST(WeightScheme, UnknownNamesAreRefusedWithTheList) {
  for (const char* bad : {"gguf:Q9_X", "int3", "gptq-5bit-g128", ""}) {
    try {
      parse_weight_scheme(bad, test::quant_catalog());
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::UnknownName) << bad;
      EXPECT_NE(std::string(e.what()).find("known:"), std::string::npos);
    }
  }
}

TEST(GgufMixture, UseMoreBitsSelectsSixteenOf32Layers) {
  // memory-model.md §2.10: for n = 32, layers 0-3, 6, 9, ..., 27, 28-31.
  std::vector<int> picked;
  for (int i = 0; i < 32; ++i)
    if (gguf_use_more_bits(i, 32)) picked.push_back(i);
  EXPECT_EQ(picked, (std::vector<int>{0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31}));
}

}  // namespace
}  // namespace vramplan
