// load_model on hostile or odd-but-valid --model arguments: formats told by magic bytes,
// non-regular files refused before anything opens them, names too long for any path, configs
// nested without bound. Each case was a crash, hang or misleading message before (issue 14).
#include <sys/stat.h>

#include <chrono>
#include <gtest/gtest.h>

#include "support/gguf_writer.hpp"
#include "support/safetensors_writer.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/model/load.hpp"

namespace vramplan {
namespace {

TEST(LoadHostile, GgufIsToldByItsMagicNotItsName) {
  // Was: "invalid JSON" for a GGUF file not named *.gguf.
  test::ScratchDir dir;
  const auto path = dir.write("model.bin", test::build_gguf(test::llama_like_gguf()).bytes);
  EXPECT_EQ(load_model(path.string(), test::source_root()).source.kind, "gguf");
}

TEST(LoadHostile, BareSafetensorsFileAsksForItsDirectory) {
  test::ScratchDir dir;
  const auto path = dir.write("model.safetensors", test::build_safetensors({{"a", "BF16", {2}, 4}}));
  EXPECT_EQ(test::error_message([&] { load_model(path.string(), test::source_root()); }, ErrorKind::InputFile),
            path.string() + ": is a safetensors file; pass the checkpoint directory that holds it and its config.json");
}

TEST(LoadHostile, FifoIsRefusedWithoutOpeningIt) {
  // Was: open() on a FIFO named *.gguf blocked forever. A hang here would time the test out.
  test::ScratchDir dir;
  const auto fifo = dir.path() / "model.gguf";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(test::error_message([&] { load_model(fifo.string(), test::source_root()); }, ErrorKind::Io),
            fifo.string() + ": is not a regular file (a FIFO, socket or device), refused");
  const auto config_fifo = dir.path() / "config.json";
  ASSERT_EQ(::mkfifo(config_fifo.c_str(), 0600), 0);
  EXPECT_EQ(test::error_message([&] { load_model(dir.path().string(), test::source_root()); }, ErrorKind::Io),
            config_fifo.string() + ": is not a regular file (a FIFO, socket or device), refused");
}

TEST(LoadHostile, ConfigJsonThatIsADirectoryIsNamedAsSuch) {
  // Was: "directory has no config.json" when there is one, as a directory.
  test::ScratchDir dir;
  std::filesystem::create_directory(dir.path() / "config.json");
  EXPECT_EQ(test::error_message([&] { load_model(dir.path().string(), test::source_root()); }, ErrorKind::Io),
            (dir.path() / "config.json").string() + ": is a directory, expected a file");
}

TEST(LoadHostile, NameLongerThanAnyPathIsAUsageError) {
  // Was: exit 70 (a filesystem_error from a 100,000-character name).
  const std::string name(100'000, 'x');
  EXPECT_EQ(test::error_message([&] { load_model(name, test::source_root()); }, ErrorKind::Usage),
            "--model: 100000 characters, longer than any path (4096)");
  // Just under the limit but too long for one path component: simply not in the catalogue.
  test::error_message([&] { load_model(std::string(300, 'y'), test::source_root()); }, ErrorKind::UnknownName);
}

TEST(LoadHostile, DeeplyNestedConfigIsRefusedNotACrash) {
  // Was: a segfault (a recursive copy of the parsed JSON) for an object nested 100,000 deep
  // inside an otherwise valid config.
  const std::string config = test::read_text(test::fixture("hf/tiny-llama/config.json"));
  std::string deep = "{\"quantization_config\": ";
  for (int k = 0; k < 100'000; ++k) deep += "{\"a\": ";
  deep += "1";
  deep += std::string(100'000, '}');
  deep += ", " + config.substr(config.find('{') + 1);
  test::ScratchDir dir;
  const auto path = dir.write("config.json", deep);
  EXPECT_EQ(test::error_message([&] { load_model(path.string(), test::source_root()); }, ErrorKind::InputFile),
            path.string() + ": objects and arrays nested deeper than 64 levels (at byte 402)");  // 24 + 63 x 6: the 65th opening brace
}

}  // namespace
}  // namespace vramplan
