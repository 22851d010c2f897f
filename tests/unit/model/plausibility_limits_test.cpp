// Plausibility limits (core/limits.hpp) on the numbers a config.json states: each refusal is
// Error(InputFile) naming the file and the field, and the largest public models stay accepted.
#include "vramplan/core/limits.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/model/hf_config.hpp"

namespace vramplan {
namespace {

nlohmann::json tiny_llama_config() { return read_json_file(test::fixture("hf/tiny-llama/config.json")); }

std::string refusal(const nlohmann::json& config) {
  return test::error_message([&] { model_from_hf_config(config, "cfg.json"); }, ErrorKind::InputFile);
}

TEST(PlausibilityLimits, TenMillionLayersRefusedBeforeAnyLayerIsBuilt) {
  // Was: 10^7 layers grew to 23 GB until the kernel killed the process.
  auto c = tiny_llama_config();
  c["num_hidden_layers"] = 10'000'000;
  EXPECT_EQ(refusal(c),
            "cfg.json: /num_hidden_layers: 10000000 is above the plausibility limit 1024 for layers "
            "(largest public model: 126 (Llama-3.1-405B))");
}

TEST(PlausibilityLimits, OverflowingSizesNameTheirField) {
  // Were: exit 2 ("usage") from a checked multiplication, naming neither file nor field.
  auto c = tiny_llama_config();
  c["hidden_size"] = 1ull << 62;
  EXPECT_NE(refusal(c).find("cfg.json: /hidden_size: 4611686018427387904 is above the plausibility limit 131072"),
            std::string::npos);
  c = tiny_llama_config();
  c["vocab_size"] = 1ull << 40;
  EXPECT_NE(refusal(c).find("cfg.json: /vocab_size: 1099511627776 is above the plausibility limit 4194304"),
            std::string::npos);
}

TEST(PlausibilityLimits, RopeScalingFactorBounded) {
  auto c = tiny_llama_config();
  c["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 1e300}};
  EXPECT_EQ(refusal(c), "cfg.json: /rope_scaling/factor: must be in (0, 1024] (real configs stretch the context 2 to 40 times)");
  c["rope_scaling"]["factor"] = -2.0;
  EXPECT_NE(refusal(c).find("/rope_scaling/factor: must be in (0, 1024]"), std::string::npos);
}

TEST(PlausibilityLimits, MultimodalTextConfigFieldsAreLocatedThere) {
  auto c = nlohmann::json{{"architectures", {"Gemma3ForConditionalGeneration"}}, {"model_type", "gemma3"}};
  c["text_config"] = tiny_llama_config();
  c["text_config"]["num_attention_heads"] = 100'000;
  EXPECT_NE(refusal(c).find("/text_config/num_attention_heads: 100000 is above the plausibility limit 4096"),
            std::string::npos);
}

TEST(PlausibilityLimits, EveryCatalogueModelIsWithinTheLimits) {
  // The catalogue holds the largest public models vramplan plans (Llama-3.1-405B, DeepSeek-V3,
  // Llama 4, Qwen3 MoE ...): none may trip a limit.
  const DataRoot root{test::source_dir()};
  for (const auto& id : catalogue_ids(root)) EXPECT_NO_THROW(load_catalogue_model(root, id)) << id;
}

TEST(PlausibilityLimits, UnlistedKeysGetTheGenericLimit) {
  EXPECT_EQ(config_field_limit("num_hidden_layers").max, 1024u);
  EXPECT_EQ(config_field_limit("block_count").max, 1024u);  // the GGUF key shares the layer limit
  EXPECT_EQ(config_field_limit("some_future_count").kind, "other count");
}

}  // namespace
}  // namespace vramplan
