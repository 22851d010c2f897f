// Hand-worked cases of PyTorch's caching-allocator rules (memory/torch_allocator.hpp):
// round to 512 B; <= 1 MiB -> small pool (2 MiB segments, split when >= 512 B remain);
// larger -> 20 MiB segments below 10 MiB, else the request rounded up to 2 MiB; a large block
// is split only when more than 1 MiB remains; best fit; "allocated" counts block sizes.
#include <gtest/gtest.h>

#include "vramplan/core/error.hpp"
#include "vramplan/memory/torch_allocator.hpp"

namespace vramplan::memory {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * 1024;

TEST(TorchAllocator, RoundSizeAndSegmentSize) {
  EXPECT_EQ(TorchCachingAllocator::round_size(1), 512u);
  EXPECT_EQ(TorchCachingAllocator::round_size(512), 512u);
  EXPECT_EQ(TorchCachingAllocator::round_size(513), 1024u);
  EXPECT_EQ(TorchCachingAllocator::segment_size(MiB), 2 * MiB);           // still small
  EXPECT_EQ(TorchCachingAllocator::segment_size(MiB + 512), 20 * MiB);    // large, < 10 MiB
  EXPECT_EQ(TorchCachingAllocator::segment_size(10 * MiB - 512), 20 * MiB);
  EXPECT_EQ(TorchCachingAllocator::segment_size(10 * MiB), 10 * MiB);     // own segment, 2 MiB multiple
  EXPECT_EQ(TorchCachingAllocator::segment_size(11 * MiB), 12 * MiB);
}

TEST(TorchAllocator, ElevenMiBTakesAWholeTwelveMiBSegment) {
  // 11 MiB -> segment round_up(11, 2) = 12 MiB; 1 MiB remains, not > 1 MiB: no split.
  TorchCachingAllocator a;
  const auto h = a.malloc(11 * MiB);
  EXPECT_EQ(a.block_size(h), 12 * MiB);
  EXPECT_EQ(a.allocated(), 12 * MiB);
  EXPECT_EQ(a.reserved(), 12 * MiB);
  EXPECT_EQ(a.requested(), 11 * MiB);
}

TEST(TorchAllocator, ElevenAndAHalfMiBAlsoTwelve) {
  // 11.5 MiB -> 12 MiB segment, 0.5 MiB remains: block 12 MiB.
  TorchCachingAllocator a;
  EXPECT_EQ(a.block_size(a.malloc(11 * MiB + 512 * KiB)), 12 * MiB);
}

TEST(TorchAllocator, ThirteenMiBKeepsItsOneMiBTailButTwelveAndAHalfSplits) {
  // 13 MiB -> 14 MiB segment, remainder exactly 1 MiB: not split (the rule is > 1 MiB): 14 MiB.
  TorchCachingAllocator a;
  EXPECT_EQ(a.block_size(a.malloc(13 * MiB)), 14 * MiB);
  // 12.5 MiB -> 14 MiB segment, 1.5 MiB remains: split, block 12.5 MiB. A later 1.5 MiB request
  // (large pool) fits the cached tail exactly: no new segment.
  TorchCachingAllocator b;
  EXPECT_EQ(b.block_size(b.malloc(12 * MiB + 512 * KiB)), 12 * MiB + 512 * KiB);
  EXPECT_EQ(b.block_size(b.malloc(MiB + 512 * KiB)), MiB + 512 * KiB);
  EXPECT_EQ(b.reserved(), 14 * MiB);
  EXPECT_EQ(b.segments(), 1u);
  EXPECT_EQ(b.allocated(), 14 * MiB);
}

TEST(TorchAllocator, ThreeMiBRequestsShareATwentyMiBSegment) {
  // 20 MiB segment: 3 MiB blocks leave 17, 14, 11, 8, 5, 2 MiB (all > 1 MiB: split each time);
  // the seventh does not fit the 2 MiB tail and opens a second segment.
  TorchCachingAllocator a;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(a.block_size(a.malloc(3 * MiB)), 3 * MiB);
  EXPECT_EQ(a.segments(), 1u);
  EXPECT_EQ(a.allocated(), 18 * MiB);
  a.malloc(3 * MiB);
  EXPECT_EQ(a.segments(), 2u);
  EXPECT_EQ(a.reserved(), 40 * MiB);
  EXPECT_EQ(a.allocated(), 21 * MiB);
}

TEST(TorchAllocator, LastBlockOfASegmentKeepsASmallTail) {
  // 6.5 MiB x 3 in one 20 MiB segment: remainders 13.5, 7, then 0.5 MiB (not split): the third
  // block is 7 MiB, so allocated = 6.5 + 6.5 + 7 = 20 MiB for 19.5 MiB requested.
  TorchCachingAllocator a;
  a.malloc(6 * MiB + 512 * KiB);
  a.malloc(6 * MiB + 512 * KiB);
  EXPECT_EQ(a.block_size(a.malloc(6 * MiB + 512 * KiB)), 7 * MiB);
  EXPECT_EQ(a.allocated(), 20 * MiB);
  EXPECT_EQ(a.requested(), 19 * MiB + 512 * KiB);
}

TEST(TorchAllocator, SmallPoolPacksTwoMiBSegments) {
  // 100 B -> 512 B block in a 2 MiB small segment; two 1 MiB requests: the first goes after it
  // (2 MiB - 512 B remain), the second does not fit the 1 MiB - 512 B left and opens segment 2.
  // 1 MiB + 1 B rounds to 1 MiB + 512 B: large pool, a 20 MiB segment.
  TorchCachingAllocator a;
  EXPECT_EQ(a.block_size(a.malloc(100)), 512u);
  EXPECT_EQ(a.block_size(a.malloc(MiB)), MiB);
  EXPECT_EQ(a.segments(), 1u);
  EXPECT_EQ(a.block_size(a.malloc(MiB)), MiB);
  EXPECT_EQ(a.segments(), 2u);
  EXPECT_EQ(a.reserved(), 4 * MiB);
  EXPECT_EQ(a.block_size(a.malloc(MiB + 1)), MiB + 512);
  EXPECT_EQ(a.reserved(), 24 * MiB);
  EXPECT_EQ(a.allocated(), 512 + 2 * MiB + MiB + 512);
}

TEST(TorchAllocator, FreedBlocksAreReusedBestFitAndCoalesced) {
  TorchCachingAllocator a;
  // A freed 12 MiB segment serves an 11 MiB request whole (1 MiB tail not split).
  const auto big = a.malloc(12 * MiB);
  a.free(big);
  EXPECT_EQ(a.allocated(), 0u);
  EXPECT_EQ(a.block_size(a.malloc(11 * MiB)), 12 * MiB);
  EXPECT_EQ(a.reserved(), 12 * MiB);
  EXPECT_EQ(a.peak_allocated(), 12 * MiB);

  // 3 x 3 MiB in a 20 MiB segment (11 MiB free at its end); freeing the first two merges them
  // into one 6 MiB block. A 5 MiB request takes the best fit, the 6 MiB block rather than the
  // 11 MiB one, and keeps its 1 MiB tail: block 6 MiB.
  TorchCachingAllocator b;
  const auto x = b.malloc(3 * MiB), y = b.malloc(3 * MiB);
  b.malloc(3 * MiB);
  b.free(y);
  b.free(x);
  EXPECT_EQ(b.allocated(), 3 * MiB);
  const auto z = b.malloc(5 * MiB);
  EXPECT_EQ(b.block_size(z), 6 * MiB);
  EXPECT_EQ(b.segments(), 1u);
  // Freed again and merged with nothing else (its right neighbour is allocated): 6 MiB reusable;
  // an 11 MiB request fits the tail block exactly.
  b.free(z);
  EXPECT_EQ(b.block_size(b.malloc(11 * MiB)), 11 * MiB);
  EXPECT_EQ(b.allocated(), 14 * MiB);
  EXPECT_EQ(b.reserved(), 20 * MiB);
}

TEST(TorchAllocator, BadUseIsAnInternalError) {
  TorchCachingAllocator a;
  EXPECT_THROW(a.malloc(0), Error);
  const auto h = a.malloc(1000);
  a.free(h);
  EXPECT_THROW(a.free(h), Error);
  EXPECT_THROW((void)a.block_size(42), Error);
}

}  // namespace
}  // namespace vramplan::memory
