#include "vramplan/core/sizes.hpp"

#include <gtest/gtest.h>

namespace vramplan {
namespace {

TEST(SizeCell, GiBUnlessItWouldPrintAsZero) {
  EXPECT_EQ(size_cell(Bytes(2ull << 30)), "2.00 GiB");
  // 0.005 GiB = 5,368,709.12 B is the smallest size "x.xx GiB" shows as 0.01.
  EXPECT_EQ(size_cell(Bytes(5'368'710)), "0.01 GiB");
  EXPECT_EQ(size_cell(Bytes(5'368'709)), "5.12 MiB");
  EXPECT_EQ(size_cell(Bytes(3ull << 20)), "3.00 MiB");
  // 0.005 MiB = 5,242.88 B: below it, exact bytes (a norm of 4096 x 2 B).
  EXPECT_EQ(size_cell(Bytes(8192)), "0.01 MiB");
  EXPECT_EQ(size_cell(Bytes(5242)), "5,242 B");
  EXPECT_EQ(size_cell(Bytes(0)), "0 B");
  // Three decimals: 0.0005 GiB = 536,870.912 B.
  EXPECT_EQ(size_cell(Bytes(536'871), 3), "0.001 GiB");
  EXPECT_EQ(size_cell(Bytes(536'870), 3), "0.512 MiB");
}

}  // namespace
}  // namespace vramplan
