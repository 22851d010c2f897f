// The batch range at a rate (issue 15, item 6): the search for the largest running-request cap
// that meets the targets, on synthetic curves with a known crossing, and the engine flag table.
#include "vramplan/plan/batch_at_rate.hpp"

#include <gtest/gtest.h>

#include <set>

#include "vramplan/core/error.hpp"

namespace vramplan::plan {
namespace {

const std::vector<std::uint64_t> kLadder = {1, 2, 4, 8, 16, 32, 64, 100};

// Records every cap probed, so the tests can say how many simulations a search costs.
struct Probed {
  std::vector<std::uint64_t> caps;
  std::function<bool(std::uint64_t)> wrap(std::function<bool(std::uint64_t)> f) {
    return [this, f](std::uint64_t c) {
      caps.push_back(c);
      return f(c);
    };
  }
};

TEST(BatchAtRate, MonotoneCurveFindsItsCrossing) {
  // A p99 TPOT that grows with the cap crosses its limit between 37 and 38: every ladder value
  // is probed (8), then 32..64 is bisected: 48, 40, 36, 38, 37 (5 more).
  Probed p;
  EXPECT_EQ(largest_meeting(kLadder, p.wrap([](std::uint64_t c) { return c <= 37; })), 37u);
  EXPECT_EQ(p.caps.size(), 8u + 5u);
  EXPECT_EQ(std::set<std::uint64_t>(p.caps.begin(), p.caps.end()).size(), p.caps.size());  // no cap twice
}

TEST(BatchAtRate, SmallCapsOverloadedLargeOnesMeet) {
  // Below 3 running requests the queue grows (overloaded); above 37 the steps are too long.
  // Nothing is assumed below the largest meeting value, so the answer is still 37.
  EXPECT_EQ(largest_meeting(kLadder, [](std::uint64_t c) { return c >= 3 && c <= 37; }), 37u);
}

TEST(BatchAtRate, EveryCapMeetsOrNone) {
  Probed p;
  // The rate never makes the cap bind: the largest cap the memory allows, without bisection.
  EXPECT_EQ(largest_meeting(kLadder, p.wrap([](std::uint64_t) { return true; })), 100u);
  EXPECT_EQ(p.caps, kLadder);
  EXPECT_EQ(largest_meeting(kLadder, [](std::uint64_t) { return false; }), 0u);
  EXPECT_EQ(largest_meeting({}, [](std::uint64_t) { return true; }), 0u);
}

TEST(BatchAtRate, CrossingJustAboveALadderValue) {
  // Meets at 64, fails at 65: bisection of 64..100 ends at 64 (the ladder value itself).
  EXPECT_EQ(largest_meeting(kLadder, [](std::uint64_t c) { return c <= 64; }), 64u);
  EXPECT_EQ(largest_meeting(kLadder, [](std::uint64_t c) { return c <= 99; }), 99u);
}

TEST(BatchAtRate, EngineFlagThatCapsRunningRequests) {
  EXPECT_EQ(running_cap_flag("vllm"), "max-num-seqs");
  EXPECT_EQ(running_cap_flag("vllm@0.17"), "max-num-seqs");
  EXPECT_EQ(running_cap_flag("sglang"), "max-running-requests");
  EXPECT_EQ(running_cap_flag("trtllm"), "max-batch-size");
  EXPECT_EQ(running_cap_flag("llamacpp"), "parallel");
  EXPECT_EQ(running_cap_flag("hf"), "");
  EXPECT_THROW(running_cap_flag("mystery"), Error);
}

}  // namespace
}  // namespace vramplan::plan
