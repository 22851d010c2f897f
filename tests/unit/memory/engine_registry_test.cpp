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
  EXPECT_EQ(make_engine("vllm@0.21.1", data())->version(), "0.20");  // 0.20+: 0.92 utilization, graphs in the budget
  EXPECT_EQ(make_engine("vllm@0.30.0", data())->version(), "0.28");  // 0.28+: the >= 160 GiB batch class
  EXPECT_EQ(make_engine("vllm@0.19.1", data())->version(), "0.19");
  // A profile's own name picks it, even inside an older range: "0.5" reads as 0.5.0, which the
  // 0.4.7 profile's 0.4.7 - 0.5.2 holds.
  EXPECT_EQ(make_engine("sglang@0.5", data())->version(), "0.5");
  EXPECT_EQ(make_engine("sglang@0.5.0", data())->version(), "0.4.7");
  EXPECT_EQ(make_engine("sglang@0.5.20", data())->version(), "0.5.20");  // 20-35 GiB cards: 4096 / 48
  EXPECT_EQ(make_engine("vllm@0.18.2", data())->version(), "0.17");
  EXPECT_EQ(make_engine("vllm@0.17", data())->version(), "0.17");
  EXPECT_EQ(make_engine("vllm@0.15.0", data())->version(), "0.11");
  // The legacy ranges (data/engines/vllm.json): V1 0.8, 0.9.0, 0.9.1-0.10; V0 0.6.5-0.7, 0.6.4, 0.6.0-0.6.3.
  EXPECT_EQ(make_engine("vllm@0.10.1.1", data())->version(), "0.9.1");
  EXPECT_EQ(make_engine("vllm@0.9.1", data())->version(), "0.9.1");
  EXPECT_EQ(make_engine("vllm@0.9.0.1", data())->version(), "0.9");
  EXPECT_EQ(make_engine("vllm@0.8.5", data())->version(), "0.8");
  EXPECT_EQ(make_engine("vllm@0.7.3", data())->version(), "0.6.5");
  EXPECT_EQ(make_engine("vllm@0.6.4.post1", data())->version(), "0.6.4");
  EXPECT_EQ(make_engine("vllm@0.6.3", data())->version(), "0.6");
  EXPECT_THROW(make_engine("vllm@", data()), Error);
  EXPECT_THROW(make_engine("vllm@x.y", data()), Error);
}

// Issue 17: an unknown version is never an error. Below every profile: the oldest, flagged as
// outside the profiled range; pip suffixes (.post1, .devN+g...) select their release's profile.
TEST(EngineRegistry, AVersionWithoutItsOwnProfileTakesTheNearestOlderOne) {
  const auto old = EngineProfileData::load(data(), "vllm", "0.5.4");
  EXPECT_EQ(old.version(), "0.6");
  EXPECT_TRUE(old.substituted());
  EXPECT_NE(old.note().find("vllm 0.5.4 is older than every profile (outside the profiled range)"), std::string::npos)
      << old.note();
  const auto dev = EngineProfileData::load(data(), "vllm", "0.8.5.dev169+gce17db808");
  EXPECT_EQ(dev.version(), "0.8");
  EXPECT_FALSE(dev.substituted());
  // sglang profiles start at 0.4: an older release gets 0.4 with the same note.
  EXPECT_EQ(EngineProfileData::load(data(), "sglang", "0.3.6").version(), "0.4");
  EXPECT_THROW(EngineProfileData::load(data(), "vllm", "x.y"), Error);
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
