// data/prices.json: indicative quotes attached to the cards of data/gpus.json.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"

namespace vramplan {
namespace {

GpuCatalog loaded() { return GpuCatalog::load(test::source_dir() / "data" / "gpus.json"); }

TEST(GpuPrices, LoadWithoutPricesAttachesNone) {
  // check/plan never read prices: the catalogue alone carries no quotes.
  EXPECT_TRUE(loaded().find("h100-sxm-80").prices.empty());
}

TEST(GpuPrices, ShippedQuotesAttachToTheirCards) {
  GpuCatalog cat = loaded();
  cat.attach_prices(test::source_dir() / "data" / "prices.json");
  const auto& quotes = cat.find("h100-sxm-80").prices;
  ASSERT_FALSE(quotes.empty());
  for (const auto& q : quotes) {
    EXPECT_GT(q.usd_per_gpu_hour, 0.0);
    EXPECT_FALSE(q.source.empty());  // every quote names where it came from
    EXPECT_FALSE(q.as_of.empty());   // and when
  }
  // MIG slices are priced from their card by the decision layer, never quoted themselves.
  EXPECT_TRUE(cat.find("h100-sxm-80/3g.40gb").prices.empty());
}

TEST(GpuPrices, UnknownIdAndMigIdAreInputErrors) {
  test::ScratchDir dir;
  const std::string quote =
      R"([{"provider": "x", "offering": "y", "usd_per_gpu_hour": 1.0, "pricing": "on-demand", "as_of": "2026-01-01", "source": "z"}])";
  GpuCatalog cat = loaded();
  auto msg = test::error_message(
      [&] { cat.attach_prices(dir.write("p1.json", R"({"quotes": {"h900": )" + quote + "}}")); },
      ErrorKind::InputFile);
  EXPECT_NE(msg.find("/quotes/h900"), std::string::npos) << msg;
  msg = test::error_message(
      [&] { cat.attach_prices(dir.write("p2.json", R"({"quotes": {"h100-sxm-80/3g.40gb": )" + quote + "}}")); },
      ErrorKind::InputFile);
  EXPECT_NE(msg.find("per card"), std::string::npos) << msg;
  msg = test::error_message(
      [&] { cat.attach_prices(dir.write("p3.json", R"({"quotes": {"l4": [{"provider": "x"}]}})")); },
      ErrorKind::InputFile);
  EXPECT_NE(msg.find("/quotes/l4/0"), std::string::npos) << msg;
}

TEST(GpuPrices, WrongSchemaNamesFileAndField) {
  // docs/errors.md § Catalogue files: quotes must be an object of card id -> list of quotes.
  test::ScratchDir dir;
  GpuCatalog cat = loaded();
  const auto path = dir.write("prices.json", R"({"quotes": []})");
  EXPECT_EQ(test::error_message([&] { cat.attach_prices(path); }, ErrorKind::InputFile),
            path.string() + ": /quotes: expected an object, got array");
}

}  // namespace
}  // namespace vramplan
