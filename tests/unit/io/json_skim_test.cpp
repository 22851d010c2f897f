// The JSON skimmer: member and element texts without a full parse, faults located in the file.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/io/json_skim.hpp"

namespace vramplan {
namespace {

const SkimSource kSource{"t.json", {}};

TEST(JsonSkim, ObjectMembersKeepTheirTextIncludingNesting) {
  // Quotes, brackets and escaped quotes inside strings must not end a value early.
  const std::string text = R"( {"a": 1, "b" : {"x": "}]\"{", "y": [1, [2]]}, "c\"d": "s\\", "e": null} )";
  const auto m = skim_object(text, kSource);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].first, "a");
  EXPECT_EQ(m[0].second, "1");
  EXPECT_EQ(m[1].second, R"({"x": "}]\"{", "y": [1, [2]]})");
  EXPECT_EQ(m[2].first, "c\"d");  // an escaped key is decoded
  EXPECT_EQ(m[2].second, R"("s\\")");
  EXPECT_EQ(m[3].second, "null");
  // Every member text is itself valid JSON.
  EXPECT_EQ(parse_json_text(m[1].second, "t")["x"], "}]\"{");
}

TEST(JsonSkim, ArrayElements) {
  const auto e = skim_array(R"([{"id": "a"}, "b", 3.5e2, [], {}])", kSource);
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0], R"({"id": "a"})");
  EXPECT_EQ(e[2], "3.5e2");
  EXPECT_EQ(e[3], "[]");
  EXPECT_TRUE(skim_array(" [ ] ", kSource).empty());
}

TEST(JsonSkim, StringMemberStopsAtItsKey) {
  // The text after "id" is broken: the skimmer stops at the key it was asked for.
  EXPECT_EQ(skim_string_member(R"({"id": "h100", "x": [}})", "id", kSource), "h100");
  EXPECT_EQ(skim_string_member(R"({"n": 1, "id": 7})", "id", kSource), "");  // not a string
  EXPECT_EQ(skim_string_member(R"({"n": 1})", "id", kSource), "");
}

TEST(JsonSkim, BrokenStructureNamesFileLineAndColumn) {
  const std::string doc = "{\n  \"a\": [1, 2}\n}";
  try {
    skim_object(doc, SkimSource{"cat.json", doc});
    FAIL() << "skimmed a broken object";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InputFile);
    // The '}' that wrongly closes '[' is at line 2, column 13: `  "a": [1, 2` is 12 characters.
    EXPECT_NE(std::string(e.what()).find("cat.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unexpected '}'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("line 2, column 13"), std::string::npos) << e.what();
  }
  for (const char* bad : {"", "[1]", "{\"a\" 1}", "{\"a\": \"open}", "{\"a\": 1} x", "{\"a\": [1, {]}"})
    EXPECT_THROW(skim_object(bad, kSource), Error) << bad;
}

TEST(JsonSkim, SkimmedFileRequiredMembers) {
  test::ScratchDir dir;
  const auto path = dir.write("f.json", R"({"gpus": [], "aliases": null})");
  const auto f = SkimmedFile::read(path, "an object");
  EXPECT_EQ(f.required("gpus"), "[]");
  EXPECT_FALSE(f.member("aliases"));  // null counts as absent
  EXPECT_EQ(test::error_message([&] { f.required("nope"); }, ErrorKind::InputFile), path.string() + ": /nope: required field is missing");
  // Broken structure is worded by the full parser; a broken scalar inside a member shows when
  // the member is parsed, at its line in the file; a non-object top level names what was expected.
  const auto unclosed = dir.write("u.json", "{\n\"a\": [1,\n}");
  EXPECT_NE(test::error_message([&] { SkimmedFile::read(unclosed, "an object"); }, ErrorKind::InputFile)
                .find("invalid JSON at line 3"),
            std::string::npos);
  const auto f2 = SkimmedFile::read(dir.write("b.json", "{\n\"a\": 1,\n\"b\": tru\n}"), "an object");
  EXPECT_EQ(f2.parse(f2.required("a")), 1);
  EXPECT_NE(test::error_message([&] { f2.parse(f2.required("b")); }, ErrorKind::InputFile)
                .find("invalid JSON at line 3"),
            std::string::npos);
  const auto array = dir.write("a.json", "[1]");
  EXPECT_NE(test::error_message([&] { SkimmedFile::read(array, "an object with \"gpus\""); }, ErrorKind::InputFile)
                .find("expected an object with \"gpus\""),
            std::string::npos);
}

}  // namespace
}  // namespace vramplan

namespace vramplan {
namespace {

// Truncations and random byte changes of the shipped GPU catalogue: the lazy loader (skimmer,
// then each entry parsed on use) must load or refuse with a vramplan Error — never crash or hang.
// Structural bytes ('"', '{', '}', '[', ']', ',', ':', '\\') are chosen half the time, as they
// are what the skimmer tracks.
TEST(JsonSkim, MutatedCatalogueLoadsOrIsRefused) {
  const std::string seed = test::read_text(test::source_dir() / "data" / "gpus.json");
  ASSERT_GT(seed.size(), 1000u);
  test::ScratchDir dir;
  std::mt19937 rng(20261130);
  const std::string structural = "\"{}[],:\\";
  int loaded = 0, refused = 0;
  for (int k = 0; k < 300; ++k) {
    std::string text = seed;
    if (k % 3 == 0) {
      text.resize(std::uniform_int_distribution<std::size_t>(0, seed.size() - 1)(rng));
    } else {
      for (int flips = 0; flips < 1 + k % 4; ++flips) {
        const std::size_t at = std::uniform_int_distribution<std::size_t>(0, text.size() - 1)(rng);
        text[at] = rng() % 2 ? structural[rng() % structural.size()] : static_cast<char>(rng() % 256);
      }
    }
    const auto path = dir.write("g" + std::to_string(k) + ".json", text);
    try {
      const auto cat = GpuCatalog::load(path);
      cat.find("h100-sxm-80");
      cat.all();
      ++loaded;
    } catch (const Error& e) {
      // A broken file is refused naming it; a mangled id is an unknown GPU (no file to name).
      if (e.kind() != ErrorKind::UnknownName) {
        EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
      }
      ++refused;
    }
  }
  EXPECT_EQ(loaded + refused, 300);
  EXPECT_GT(refused, 100);  // every truncation at least is refused
}

}  // namespace
}  // namespace vramplan
