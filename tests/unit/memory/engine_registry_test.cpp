#include <fstream>

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/engine_data.hpp"

namespace vramplan::memory {
namespace {

const std::filesystem::path data() { return test::source_dir() / "data"; }

TEST(EngineRegistry, UnknownEngineListsTheKnownOnes) {
  try {
    make_engine("x", data());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnknownName);
    EXPECT_STREQ(e.what(), "unknown engine 'x' (known: hf, llamacpp, sglang, tei, trtllm, vllm)");
  }
}

TEST(EngineRegistry, EveryProfileLoads) {
  for (const auto& e : engine_registry()) EXPECT_EQ(make_engine(e.name, data())->name(), e.name);
}

TEST(EngineRegistry, VersionPicksTheProfileWhoseRangeHoldsIt) {
  EXPECT_EQ(make_engine("vllm", data())->version(), "0.19");
  EXPECT_EQ(make_engine("vllm@0.21.1", data())->version(), "0.19");
  EXPECT_EQ(make_engine("vllm@0.18.2", data())->version(), "0.17");
  EXPECT_EQ(make_engine("vllm@0.17", data())->version(), "0.17");
  EXPECT_EQ(make_engine("vllm@0.15.0", data())->version(), "0.11");
  EXPECT_THROW(make_engine("vllm@0.10", data()), Error);
  EXPECT_THROW(make_engine("vllm@", data()), Error);
  EXPECT_THROW(make_engine("vllm@x.y", data()), Error);
}

TEST(EngineRegistry, ProfileNoteSaysWhenTheVersionIsAssumed) {
  EXPECT_NE(EngineProfileData::load(data(), "vllm", "").note().find("assumed"), std::string::npos);
  EXPECT_EQ(EngineProfileData::load(data(), "vllm", "0.17.1").note().find("assumed"), std::string::npos);
}

TEST(EngineRegistry, EveryParameterNamesItsSource) {
  for (const char* e : {"vllm", "sglang", "trtllm", "hf"}) {
    const auto doc = nlohmann::json::parse(std::ifstream(data() / "engines" / (std::string(e) + ".json")));
    for (const auto& p : doc.at("profiles"))
      for (const auto& [name, param] : p.at("params").items())
        EXPECT_FALSE(param.at("source").get<std::string>().empty()) << e << " " << name;
  }
}

}  // namespace
}  // namespace vramplan::memory
