// An encoder checkpoint directory (model/checkpoint.cpp): the config's BertPooler may be absent from
// the safetensors files (transformers initialises it, vLLM never builds it), so its absence is a
// warning, not the refusal a missing layer tensor gets.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/catalogs.hpp"
#include "support/safetensors_writer.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/model/checkpoint.hpp"
#include "vramplan/model/hf_config.hpp"
#include "vramplan/model/inventory.hpp"

namespace vramplan {
namespace {

const nlohmann::json kTinyBert = {{"architectures", {"BertModel"}}, {"model_type", "bert"}, {"hidden_size", 8},
                                  {"num_hidden_layers", 1}, {"num_attention_heads", 2}, {"intermediate_size", 16},
                                  {"vocab_size", 10}, {"max_position_embeddings", 4}, {"type_vocab_size", 2},
                                  {"torch_dtype", "float32"}};

//! Writes config.json and one safetensors file holding every tensor of the config except those
//! whose name contains `skip`.
void write_tiny_bert(const test::ScratchDir& dir, const std::string& skip) {
  const auto spec = model_from_hf_config(kTinyBert, "tiny-bert.json");
  std::vector<test::SafetensorsEntry> entries;
  for (const auto& t : spec.tensors)
    if (t.name.find(skip) == std::string::npos) entries.emplace_back(t.name, "F32", t.shape, t.elements() * 4);
  dir.write("config.json", kTinyBert.dump());
  dir.write("model.safetensors", test::build_safetensors(entries));
}

TEST(EncoderCheckpoint, AbsentPoolerIsNotCountedAndNotRefused) {
  test::ScratchDir dir;
  write_tiny_bert(dir, "pooler.");
  const auto spec = model_from_checkpoint_dir(dir.path(), test::quant_catalog());
  // The config's inventory less pooler.dense (8 x 8 + 8 = 72 parameters).
  EXPECT_EQ(count_params(spec).total, count_params(model_from_hf_config(kTinyBert, "tiny-bert.json")).total - 72);
  ASSERT_FALSE(spec.warnings.empty());
  EXPECT_NE(spec.warnings.back().find("no pooler"), std::string::npos) << spec.warnings.back();
}

TEST(EncoderCheckpoint, AbsentLayerTensorIsStillRefused) {
  test::ScratchDir dir;
  write_tiny_bert(dir, "attention.self.query.");
  try {
    model_from_checkpoint_dir(dir.path(), test::quant_catalog());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InputFile);
    EXPECT_NE(std::string(e.what()).find("encoder.layer.0.attention.self.query"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vramplan
