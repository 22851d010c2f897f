// `vramplan models` and `vramplan inspect` through the real executable.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace vramplan {
namespace {

TEST(ModelsCli, ListsTheCatalogueAsJson) {
  const auto r = test::run_cli({"models", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "vramplan.models/1");
  EXPECT_GE(j["models"].size(), 50u);
  bool found = false;
  for (const auto& m : j["models"])
    if (m["id"] == "llama-3.1-8b") {
      found = true;
      EXPECT_EQ(m["params"], 8'030'261'248ull);
    }
  EXPECT_TRUE(found);
}

// --family matches without regard to case; a family no entry has is an unknown name (it listed
// 0 models with exit 0), while a known family that other filters empty is a valid empty list.
TEST(ModelsCli, FamilyIsCaseBlindAndAnUnknownOneIsRefused) {
  const auto llama = test::run_cli_json({"models", "--json", "--family", "LLAMA"})["models"];
  ASSERT_FALSE(llama.empty());
  for (const auto& m : llama) EXPECT_TRUE(m["family"] == "llama" || m["model_type"] == "llama") << m["id"];
  const auto r = test::run_cli({"models", "--family", "nope"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.err.rfind("vramplan: error: --family 'nope': no catalogue model has that family or model_type (families: ", 0),
            0u) << r.err;
  const auto empty = test::run_cli({"models", "--json", "--family", "llama", "--min-params", "10T"});
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  // Every feature the table shows can be filtered on (encoder and pooling had been refused).
  const auto encoders = test::run_cli_json({"models", "--json", "--feature", "encoder"})["models"];
  ASSERT_FALSE(encoders.empty());
  for (const auto& m : encoders) EXPECT_NE(m["features"].dump().find("\"encoder\""), std::string::npos) << m["id"];
}

TEST(ModelsCli, FeatureAndSizeFilters) {
  const auto r = test::run_cli({"models", "--json", "--feature", "mla"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto mla = nlohmann::json::parse(r.out);  // keep the document alive for the loop
  for (const auto& m : mla["models"])  // Kimi-Linear's MLA layers sit between its KDA layers
    EXPECT_TRUE(m["family"] == "deepseek" || m["family"] == "kimi_linear") << m["id"];
  const auto small = test::run_cli({"models", "--json", "--max-params", "1.6B", "--min-params", "500M"});
  ASSERT_EQ(small.exit_code, 0) << small.err;
  const auto list = nlohmann::json::parse(small.out)["models"];
  EXPECT_FALSE(list.empty());
  for (const auto& m : list) {
    EXPECT_LE(m["params"].get<std::uint64_t>(), 1'600'000'000ull);
    EXPECT_GE(m["params"].get<std::uint64_t>(), 500'000'000ull);
  }
}

TEST(ModelsCli, TableAndBadFeature) {
  const auto r = test::run_cli({"models", "--family", "mixtral"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("mixtral-8x7b"), std::string::npos);
  EXPECT_EQ(r.out.find("llama-3.1-8b"), std::string::npos);
  EXPECT_EQ(test::run_cli({"models", "--feature", "bogus"}).exit_code, 2);
  EXPECT_EQ(test::run_cli({"models", "--min-params", "lots"}).exit_code, 2);
}

TEST(InspectCli, CatalogueModelJson) {
  const auto r = test::run_cli({"inspect", "--model", "mixtral-8x7b", "--json", "--layers"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "vramplan.inspect/1");
  EXPECT_EQ(j["params"]["total"], 46'702'792'704ull);
  EXPECT_EQ(j["params"]["active"], 12'879'925'248ull);
  EXPECT_EQ(j["weight_bytes"], 2 * 46'702'792'704ull);  // bf16 checkpoint
  EXPECT_EQ(j["layers"].size(), 33u);                    // global + 32 layers
}

TEST(InspectCli, TextReport) {
  const auto r = test::run_cli({"inspect", "gemma-3-27b"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("10 full, 52 sliding"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("attn_q_norm"), std::string::npos);
}

TEST(InspectCli, UnknownIdIsExitFourWithSuggestions) {
  const auto r = test::run_cli({"inspect", "--model", "llama-3.1-8"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("llama-3.1-8b"), std::string::npos) << r.err;
}

TEST(InspectCli, ConfigPathAndAssumeLlamaLike) {
  const auto path = test::fixture("hf/tiny-llama/config.json").string();
  const auto r = test::run_cli({"inspect", "--model", path, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["source"]["kind"], "hf-config");

  const auto unknown = test::fixture("hf/unknown-arch.json").string();
  EXPECT_EQ(test::run_cli({"inspect", "--model", unknown}).exit_code, 4);
  const auto assumed = test::run_cli({"inspect", "--model", unknown, "--assume-llama-like", "--json"});
  ASSERT_EQ(assumed.exit_code, 0) << assumed.err;
  EXPECT_EQ(nlohmann::json::parse(assumed.out)["warnings"].size(), 1u);
}

TEST(InspectCli, MissingFileIsIoError) {
  EXPECT_EQ(test::run_cli({"inspect", "--model", "./no/such/config.json"}).exit_code, 5);
}

}  // namespace
}  // namespace vramplan
