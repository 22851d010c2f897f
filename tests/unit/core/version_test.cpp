// core/version.hpp: release numbers as the engine profiles and the step-overhead entries read them.
#include "vramplan/core/version.hpp"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "vramplan/core/error.hpp"

namespace vramplan {
namespace {

using Parts = std::vector<std::uint64_t>;

TEST(VersionNumbers, LeadingDottedNumbersWithoutThePep440Suffix) {
  EXPECT_EQ(version_numbers("0.17.1"), (Parts{0, 17, 1}));
  EXPECT_EQ(version_numbers("0.6.4.post1"), (Parts{0, 6, 4}));
  EXPECT_EQ(version_numbers("0.8.5.dev169+gce17db808"), (Parts{0, 8, 5}));
  EXPECT_EQ(version_numbers("0.19.0rc1"), (Parts{0, 19, 0}));
  // Lexicographic order is release order: 0.13.9 < 0.14 <= 0.14.0 < 1.0.
  EXPECT_LT(version_numbers("0.13.9"), version_numbers("0.14"));
  EXPECT_LT(version_numbers("0.14"), version_numbers("0.14.0"));
  EXPECT_LT(version_numbers("0.14.0"), version_numbers("1.0"));
}

TEST(VersionNumbers, AnythingElseIsAUsageError) {
  for (const char* bad : {"", "nightly", "v0.15", "0..1", "9999999"}) {
    try {
      (void)version_numbers(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << bad;
    }
  }
}

TEST(ReleasedBefore, TheCurrentReleaseIsBeforeNone) {
  EXPECT_TRUE(released_before(release_numbers("0.18.1"), {0, 19}));
  EXPECT_FALSE(released_before(release_numbers("0.19"), {0, 19}));
  EXPECT_FALSE(released_before(release_numbers("0.19.0rc1"), {0, 19}));  // the release's own numbers
  EXPECT_FALSE(released_before(release_numbers("nightly"), {0, 99}));    // the current release
  EXPECT_FALSE(released_before(release_numbers(""), {0, 99}));
}

}  // namespace
}  // namespace vramplan
