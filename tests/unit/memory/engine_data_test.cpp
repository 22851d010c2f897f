// EngineProfileData::load skims data/engines/<engine>.json and parses only the chosen profile, so
// every profile of every shipped file is loaded here once: a fault in a profile no default plan
// chooses still fails a test.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/memory/engine_data.hpp"
#include "vramplan/memory/engine.hpp"

namespace vramplan::memory {
namespace {

const std::filesystem::path shipped_data_dir() { return test::source_dir() / "data"; }

TEST(EngineProfileData, EveryShippedProfileLoadsByItsOwnVersion) {
  std::size_t loaded = 0;
  for (const auto& e : engine_registry()) {
    const auto doc = read_json_file(shipped_data_dir() / "engines" / (std::string(e.name) + ".json"));
    if (!doc.contains("profiles")) continue;  // llamacpp.json: one pinned commit, its own reader
    for (const auto& p : doc.at("profiles")) {
      // A profile's own min_version falls in its own range; the first profile holding it wins,
      // and the shipped ranges do not overlap, so it must be this one.
      const auto got = EngineProfileData::load(shipped_data_dir(), e.name, p.at("min_version").get<std::string>());
      EXPECT_EQ(got.version(), p.at("version").get<std::string>()) << e.name;
      EXPECT_FALSE(got.substituted()) << e.name << " " << got.version();
      ++loaded;
    }
  }
  EXPECT_EQ(loaded, 21u);  // data/engines: hf 2, sglang 4, tei 2, trtllm 2, vllm 11
}

// A skimmed profile that lacks its bounds is parsed for the error: the fault names the profile.
TEST(EngineProfileData, AProfileWithoutBoundsIsNamedEvenWhenNotChosen) {
  const test::ScratchDir dir;
  dir.write("engines/vllm.json", R"({"engine": "vllm", "default_profile": "1.0", "profiles": [
    {"version": "1.0", "min_version": "1.0", "description": "d", "params": {}},
    {"version": "2.0", "description": "no min_version", "params": {}}]})");
  const std::string msg = test::error_message([&] { EngineProfileData::load(dir.path(), "vllm", "1.0"); },
                                              ErrorKind::InputFile);
  EXPECT_NE(msg.find("/profiles/1/min_version"), std::string::npos) << msg;
}

TEST(EngineProfileData, TheChosenProfileIsValidated) {
  const test::ScratchDir dir;
  dir.write("engines/vllm.json", R"({"engine": "vllm", "default_profile": "1.0", "profiles": [
    {"version": "1.0", "min_version": "1.0", "description": "d", "params": []}]})");
  const std::string msg = test::error_message([&] { EngineProfileData::load(dir.path(), "vllm", ""); },
                                              ErrorKind::InputFile);
  EXPECT_NE(msg.find("/profiles/0/params"), std::string::npos) << msg;
}

}  // namespace
}  // namespace vramplan::memory
