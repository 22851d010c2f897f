#include "vramplan/core/text.hpp"

#include <gtest/gtest.h>

#include "vramplan/core/error.hpp"

namespace vramplan {
namespace {

TEST(Text, LowerAndTrim) {
  EXPECT_EQ(to_lower("H100-SXM-80"), "h100-sxm-80");
  EXPECT_EQ(trim("  l40s \t"), "l40s");
  EXPECT_EQ(trim(""), "");
}

TEST(Text, EditDistance) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);  // k->s, e->i, +g
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("h200", "h200"), 0u);
}

TEST(Text, ClosestNamesPutsSubstringsFirst) {
  const std::vector<std::string> names{"a100-sxm-80", "h100-sxm-80", "h100-pcie-80", "h200", "l4"};
  // "h100" is contained in two ids (distance 0); "h200" is 1 edit away; "a100-sxm-80" is not plausible.
  EXPECT_EQ(closest_names("H100", names), (std::vector<std::string>{"h100-sxm-80", "h100-pcie-80", "h200"}));
  EXPECT_EQ(closest_names("h100", names, 1), (std::vector<std::string>{"h100-sxm-80"}));
  EXPECT_TRUE(closest_names("zzzzzzzzzzzz", names).empty());
}

TEST(Text, BandwidthParsesDecimalGigabytesPerSecond) {
  EXPECT_EQ(parse_gbps("60", "--host-bandwidth"), 60);
  EXPECT_EQ(parse_gbps("76.8GB/s", "--host-bandwidth"), 76.8);
  EXPECT_EQ(parse_gbps("40 GB/s", "--host-bandwidth"), 40);
  EXPECT_THROW(parse_gbps("fast", "--host-bandwidth"), Error);
  EXPECT_THROW(parse_gbps("0", "--host-bandwidth"), Error);
  // strtod reads these as infinities: a bandwidth must be finite.
  EXPECT_THROW(parse_gbps("inf", "--host-bandwidth"), Error);
  EXPECT_THROW(parse_gbps("1e400", "--host-bandwidth"), Error);
}

}  // namespace
}  // namespace vramplan
