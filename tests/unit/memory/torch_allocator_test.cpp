// Hand-worked cases of PyTorch's caching-allocator rules (memory/torch_allocator.hpp):
// round to 512 B; <= 1 MiB -> small pool (2 MiB segments, split when >= 512 B remain);
// larger -> 20 MiB segments below 10 MiB, else the request rounded up to 2 MiB; a large block
// is split only when more than 1 MiB remains; best fit; "allocated" counts block sizes.
#include <gtest/gtest.h>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/torch_allocator.hpp"

namespace vramplan::memory {
namespace {

TEST(TorchAllocator, RoundSizeAndSegmentSize) {
  EXPECT_EQ(TorchCachingAllocator::round_size(1), 512u);
  EXPECT_EQ(TorchCachingAllocator::round_size(512), 512u);
  EXPECT_EQ(TorchCachingAllocator::round_size(513), 1024u);
  EXPECT_EQ(TorchCachingAllocator::segment_size(kMiB), 2 * kMiB);           // still small
  EXPECT_EQ(TorchCachingAllocator::segment_size(kMiB + 512), 20 * kMiB);    // large, < 10 MiB
  EXPECT_EQ(TorchCachingAllocator::segment_size(10 * kMiB - 512), 20 * kMiB);
  EXPECT_EQ(TorchCachingAllocator::segment_size(10 * kMiB), 10 * kMiB);     // own segment, 2 MiB multiple
  EXPECT_EQ(TorchCachingAllocator::segment_size(11 * kMiB), 12 * kMiB);
}

TEST(TorchAllocator, ElevenMiBTakesAWholeTwelveMiBSegment) {
  // 11 MiB -> segment round_up(11, 2) = 12 MiB; 1 MiB remains, not > 1 MiB: no split.
  TorchCachingAllocator a;
  const auto h = a.malloc(11 * kMiB);
  EXPECT_EQ(a.block_size(h), 12 * kMiB);
  EXPECT_EQ(a.allocated(), 12 * kMiB);
  EXPECT_EQ(a.reserved(), 12 * kMiB);
  EXPECT_EQ(a.requested(), 11 * kMiB);
}

TEST(TorchAllocator, ElevenAndAHalfMiBAlsoTwelve) {
  // 11.5 MiB -> 12 MiB segment, 0.5 MiB remains: block 12 MiB.
  TorchCachingAllocator a;
  EXPECT_EQ(a.block_size(a.malloc(11 * kMiB + 512 * kKiB)), 12 * kMiB);
}

TEST(TorchAllocator, ThirteenMiBKeepsItsOneMiBTailButTwelveAndAHalfSplits) {
  // 13 MiB -> 14 MiB segment, remainder exactly 1 MiB: not split (the rule is > 1 MiB): 14 MiB.
  TorchCachingAllocator a;
  EXPECT_EQ(a.block_size(a.malloc(13 * kMiB)), 14 * kMiB);
  // 12.5 MiB -> 14 MiB segment, 1.5 MiB remains: split, block 12.5 MiB. A later 1.5 MiB request
  // (large pool) fits the cached tail exactly: no new segment.
  TorchCachingAllocator b;
  EXPECT_EQ(b.block_size(b.malloc(12 * kMiB + 512 * kKiB)), 12 * kMiB + 512 * kKiB);
  EXPECT_EQ(b.block_size(b.malloc(kMiB + 512 * kKiB)), kMiB + 512 * kKiB);
  EXPECT_EQ(b.reserved(), 14 * kMiB);
  EXPECT_EQ(b.segments(), 1u);
  EXPECT_EQ(b.allocated(), 14 * kMiB);
}

TEST(TorchAllocator, ThreeMiBRequestsShareATwentyMiBSegment) {
  // 20 MiB segment: 3 MiB blocks leave 17, 14, 11, 8, 5, 2 MiB (all > 1 MiB: split each time);
  // the seventh does not fit the 2 MiB tail and opens a second segment.
  TorchCachingAllocator a;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(a.block_size(a.malloc(3 * kMiB)), 3 * kMiB);
  EXPECT_EQ(a.segments(), 1u);
  EXPECT_EQ(a.allocated(), 18 * kMiB);
  a.malloc(3 * kMiB);
  EXPECT_EQ(a.segments(), 2u);
  EXPECT_EQ(a.reserved(), 40 * kMiB);
  EXPECT_EQ(a.allocated(), 21 * kMiB);
}

TEST(TorchAllocator, LastBlockOfASegmentKeepsASmallTail) {
  // 6.5 MiB x 3 in one 20 MiB segment: remainders 13.5, 7, then 0.5 MiB (not split): the third
  // block is 7 MiB, so allocated = 6.5 + 6.5 + 7 = 20 MiB for 19.5 MiB requested.
  TorchCachingAllocator a;
  a.malloc(6 * kMiB + 512 * kKiB);
  a.malloc(6 * kMiB + 512 * kKiB);
  EXPECT_EQ(a.block_size(a.malloc(6 * kMiB + 512 * kKiB)), 7 * kMiB);
  EXPECT_EQ(a.allocated(), 20 * kMiB);
  EXPECT_EQ(a.requested(), 19 * kMiB + 512 * kKiB);
}

TEST(TorchAllocator, SmallPoolPacksTwoMiBSegments) {
  // 100 B -> 512 B block in a 2 MiB small segment; two 1 MiB requests: the first goes after it
  // (2 MiB - 512 B remain), the second does not fit the 1 MiB - 512 B left and opens segment 2.
  // 1 MiB + 1 B rounds to 1 MiB + 512 B: large pool, a 20 MiB segment.
  TorchCachingAllocator a;
  EXPECT_EQ(a.block_size(a.malloc(100)), 512u);
  EXPECT_EQ(a.block_size(a.malloc(kMiB)), kMiB);
  EXPECT_EQ(a.segments(), 1u);
  EXPECT_EQ(a.block_size(a.malloc(kMiB)), kMiB);
  EXPECT_EQ(a.segments(), 2u);
  EXPECT_EQ(a.reserved(), 4 * kMiB);
  EXPECT_EQ(a.block_size(a.malloc(kMiB + 1)), kMiB + 512);
  EXPECT_EQ(a.reserved(), 24 * kMiB);
  EXPECT_EQ(a.allocated(), 512 + 2 * kMiB + kMiB + 512);
}

TEST(TorchAllocator, FreedBlocksAreReusedBestFitAndCoalesced) {
  TorchCachingAllocator a;
  // A freed 12 MiB segment serves an 11 MiB request whole (1 MiB tail not split).
  const auto big = a.malloc(12 * kMiB);
  a.free(big);
  EXPECT_EQ(a.allocated(), 0u);
  EXPECT_EQ(a.block_size(a.malloc(11 * kMiB)), 12 * kMiB);
  EXPECT_EQ(a.reserved(), 12 * kMiB);
  EXPECT_EQ(a.peak_allocated(), 12 * kMiB);

  // 3 x 3 MiB in a 20 MiB segment (11 MiB free at its end); freeing the first two merges them
  // into one 6 MiB block. A 5 MiB request takes the best fit, the 6 MiB block rather than the
  // 11 MiB one, and keeps its 1 MiB tail: block 6 MiB.
  TorchCachingAllocator b;
  const auto x = b.malloc(3 * kMiB), y = b.malloc(3 * kMiB);
  b.malloc(3 * kMiB);
  b.free(y);
  b.free(x);
  EXPECT_EQ(b.allocated(), 3 * kMiB);
  const auto z = b.malloc(5 * kMiB);
  EXPECT_EQ(b.block_size(z), 6 * kMiB);
  EXPECT_EQ(b.segments(), 1u);
  // Freed again and merged with nothing else (its right neighbour is allocated): 6 MiB reusable;
  // an 11 MiB request fits the tail block exactly.
  b.free(z);
  EXPECT_EQ(b.block_size(b.malloc(11 * kMiB)), 11 * kMiB);
  EXPECT_EQ(b.allocated(), 14 * kMiB);
  EXPECT_EQ(b.reserved(), 20 * kMiB);
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
