// load_model: which reader a --model argument goes to.
#include "vramplan/model/load.hpp"

#include <gtest/gtest.h>

#include "support/gguf_writer.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan {
namespace {

TEST(LoadModel, CatalogueId) { EXPECT_EQ(load_model("qwen3-8b", test::source_root()).source.kind, "catalogue"); }

TEST(LoadModel, ConfigFileAndDirectory) {
  EXPECT_EQ(load_model(test::fixture("hf/tiny-llama/config.json").string(), test::source_root()).source.kind, "hf-config");
  const auto spec = load_model(test::fixture("hf/tiny-llama").string(), test::source_root());
  EXPECT_EQ(spec.id, "tiny-llama");
  EXPECT_EQ(spec.source.kind, "hf-config");  // no safetensors beside it
}

TEST(LoadModel, GgufFile) {
  test::ScratchDir dir;
  const auto path = dir.write("tiny.gguf", test::build_gguf(test::llama_like_gguf()).bytes);
  EXPECT_EQ(load_model(path.string(), test::source_root()).source.kind, "gguf");
}

TEST(LoadModel, DirectoryWithoutConfigIsInputError) {
  test::ScratchDir dir;
  try {
    load_model(dir.path().string(), test::source_root());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InputFile);
    EXPECT_NE(std::string(e.what()).find("no config.json"), std::string::npos);
  }
}

TEST(LoadModel, MissingPathIsIoUnknownIdIsUnknownName) {
  try {
    load_model("./nowhere/config.json", test::source_root());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
  }
  try {
    load_model("mixtral-8x8b", test::source_root());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnknownName);
    EXPECT_NE(std::string(e.what()).find("mixtral-8x7b"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vramplan
