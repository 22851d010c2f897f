// The allocator view (train/reserved.hpp), hand-computed.
#include <gtest/gtest.h>

#include "vramplan/train/reserved.hpp"

namespace vramplan::train {
namespace {

constexpr std::uint64_t kMiBytes = 1ull << 20;

ReservedInput reserved_case(std::vector<std::uint64_t> step, std::uint64_t largest_fb) {
  ReservedInput in;
  in.resident = Bytes(1000 * kMiBytes);
  in.forward_backward = Bytes(300 * kMiBytes);
  std::uint64_t total = 0;
  for (auto t : step) total += t;
  in.optimizer_step = Bytes(total);
  in.capacity = Bytes(10000 * kMiBytes);
  in.step_tensors = std::move(step);
  in.largest_forward_block = largest_fb;
  return in;
}

TEST(TrainReserved, StepTensorsThatFitReuseFreedBlocks) {
  // 4 step tensors of 50 MiB (200 MiB) each fit a 64 MiB freed block: reserved = allocated =
  // 1000 + max(300, 200) = 1300 MiB.
  const auto v = reserved_view(reserved_case({50 * kMiBytes, 50 * kMiBytes, 50 * kMiBytes, 50 * kMiBytes}, 64 * kMiBytes));
  EXPECT_EQ(v.peak_reserved.count(), 1300 * kMiBytes);
  EXPECT_EQ(v.step_not_reused.count(), 0u);
}

TEST(TrainReserved, StepTensorsLargerThanAnyFreedBlockNeedNewSegments) {
  // 2 x 100 MiB gradients, largest freed forward block 30 MiB: 1000 + 300 + 200 = 1500 MiB.
  const auto v = reserved_view(reserved_case({100 * kMiBytes, 100 * kMiBytes}, 30 * kMiBytes));
  EXPECT_EQ(v.peak_reserved.count(), 1500 * kMiBytes);
  EXPECT_EQ(v.step_not_reused.count(), 200 * kMiBytes);
  // A fitting step larger than forward/backward adds its excess: 5 x 80 MiB = 400 fit (> 300),
  // plus 1 x 100 MiB too large: 1000 + 300 + (400 - 300) + 100 = 1500 MiB.
  const auto w = reserved_view(reserved_case({80 * kMiBytes, 80 * kMiBytes, 80 * kMiBytes, 80 * kMiBytes, 80 * kMiBytes,
                                              100 * kMiBytes}, 90 * kMiBytes));
  EXPECT_EQ(w.peak_reserved.count(), 1500 * kMiBytes);
}

TEST(TrainReserved, CappedAtTheGpuButNeverBelowAllocated) {
  auto in = reserved_case({100 * kMiBytes, 100 * kMiBytes}, 30 * kMiBytes);
  in.capacity = Bytes(1400 * kMiBytes);  // a failed cudaMalloc frees the cache: 1400, not 1500
  EXPECT_EQ(reserved_view(in).peak_reserved.count(), 1400 * kMiBytes);
  in.capacity = Bytes(1200 * kMiBytes);  // below the allocated 1300: reserved >= allocated
  EXPECT_EQ(reserved_view(in).peak_reserved.count(), 1300 * kMiBytes);
}

}  // namespace
}  // namespace vramplan::train
