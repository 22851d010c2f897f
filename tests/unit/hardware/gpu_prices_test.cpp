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

TEST(GpuPrices, LotsAttachToTheirCards) {
  GpuCatalog cat = loaded();
  cat.attach_prices(test::source_dir() / "data" / "prices.json");
  // The seed fact: B200 is rented in lots of two cards (or whole 8-GPU HGX nodes).
  const auto& lots = cat.find("b200").lots;
  ASSERT_TRUE(lots.has_value());
  EXPECT_EQ(lots->sizes, (std::vector<std::uint64_t>{2, 8}));
  EXPECT_FALSE(lots->source.empty());
  EXPECT_FALSE(cat.find("h100-sxm-80").lots.has_value());
  // 8-GPU HGX offers say so per quote (AWS p5.48xlarge = 8x H100).
  bool node = false;
  for (const auto& q : cat.find("h100-sxm-80").prices)
    node |= q.offering.find("8x H100") != std::string::npos && q.gpus_per_lot == 8u;
  EXPECT_TRUE(node);
}

TEST(GpuPrices, BadLotsNameFileAndField) {
  test::ScratchDir dir;
  GpuCatalog cat = loaded();
  auto msg = test::error_message(
      [&] { cat.attach_prices(dir.write("l1.json", R"({"quotes": {}, "lots": {"b200": {"lot_sizes": [0], "note": "n", "source": "s"}}})")); },
      ErrorKind::InputFile);
  EXPECT_NE(msg.find("/lots/b200/lot_sizes/0"), std::string::npos) << msg;
  msg = test::error_message(
      [&] { cat.attach_prices(dir.write("l2.json", R"({"quotes": {}, "lots": {"b900": {"lot_sizes": [2], "note": "n", "source": "s"}}})")); },
      ErrorKind::InputFile);
  EXPECT_NE(msg.find("unknown GPU id 'b900'"), std::string::npos) << msg;
  msg = test::error_message(
      [&] { cat.attach_prices(dir.write("l3.json", R"({"quotes": {}, "lots": {"b200": {"lot_sizes": [2], "note": "n"}}})")); },
      ErrorKind::InputFile);
  EXPECT_NE(msg.find("/lots/b200/source"), std::string::npos) << msg;
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
