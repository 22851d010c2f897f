#include "vramplan/core/bytes.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "vramplan/core/error.hpp"

namespace vramplan {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

TEST(Bytes, CheckedAddAndMulThrowOnOverflow) {
  EXPECT_EQ(checked_add(kMax - 1, 1), kMax);
  EXPECT_THROW(checked_add(kMax, 1), Error);
  // 2^32 * 2^32 = 2^64 does not fit; 2^32 * (2^32 - 1) does.
  EXPECT_EQ(checked_mul(1ull << 32, (1ull << 32) - 1), 18446744069414584320ull);
  EXPECT_THROW(checked_mul(1ull << 32, 1ull << 32), Error);
  try {
    checked_mul(kMax, 2, "KV cache bytes");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("KV cache bytes"), std::string::npos);
  }
}

TEST(Bytes, OperatorsAreChecked) {
  const Bytes a(kMax);
  EXPECT_THROW(a + Bytes(1), Error);
  EXPECT_THROW(a * 2, Error);
  EXPECT_THROW(Bytes(1) - Bytes(2), Error);  // bytes never go negative
  EXPECT_EQ((Bytes(10) + Bytes(5)).count(), 15u);
  EXPECT_EQ((Bytes(10) * 3).count(), 30u);
  EXPECT_EQ(signed_difference(Bytes(5), Bytes(8)), -3);
  EXPECT_EQ(signed_difference(Bytes(8), Bytes(5)), 3);
}

TEST(Bytes, RoundUpAndCeilDiv) {
  EXPECT_EQ(ceil_div(4097, 256), 17u);     // 16 * 256 = 4096 < 4097
  EXPECT_EQ(round_up(4097, 256), 4352u);   // 17 * 256
  EXPECT_EQ(round_up(4096, 256), 4096u);
  EXPECT_THROW(round_up(kMax, 256), Error);
}

TEST(Bytes, ParsesDecimalAndBinaryUnits) {
  EXPECT_EQ(parse_bytes("80GB").count(), 80'000'000'000ull);
  EXPECT_EQ(parse_bytes("80 GB").count(), 80'000'000'000ull);
  // 81559 MiB = 81559 * 1048576 = 83,886,080,000 + 1,634,729,984 = 85,520,809,984 B
  EXPECT_EQ(parse_bytes("81559MiB").count(), 85'520'809'984ull);
  // 79.22 GiB = 79 * 2^30 + 0.22 * 2^30 = 84,825,604,096 + 236,223,201.28 -> 85,061,827,297
  EXPECT_EQ(parse_bytes("79.22GiB").count(), 85'061'827'297ull);
  EXPECT_EQ(parse_bytes("48e9").count(), 48'000'000'000ull);
  EXPECT_EQ(parse_bytes("1.5e3KB").count(), 1'500'000ull);
  EXPECT_EQ(parse_bytes("512").count(), 512u);
  EXPECT_EQ(parse_bytes("512b").count(), 512u);
  EXPECT_EQ(parse_bytes("2tib").count(), 2ull << 40);
}

TEST(Bytes, AnEAfterTheNumberWithoutDigitsIsTheUnit) {
  try {
    parse_bytes("16EiB", "custom GPU memory");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "custom GPU memory: cannot read size '16EiB': unknown unit 'eib' (use B, KB, MB, GB, TB, "
                                     "KiB, MiB, GiB or TiB) (examples: 80GB, 79.22GiB, 81559MiB, 48e9)");
  }
}

TEST(Bytes, RejectsBadSizes) {
  // 0.5 B is no whole byte; "16EiB" is an unknown unit, not an exponent (it read "incomplete exponent").
  for (const char* bad : {"", "GB", "-5GB", "80G", "80 GiB extra", "1e", "abc", ".GB", "1e30GB", "0.5B", "16EiB"}) {
    EXPECT_THROW(parse_bytes(bad), Error) << bad;
  }
  try {
    parse_bytes("80G", "--gpu-memory");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("--gpu-memory"), std::string::npos);
  }
}

TEST(Bytes, PrintingNamesTheUnit) {
  // 85,899,345,920 B = 80 * 2^30 = 85.90 * 10^9
  const Bytes b(85'899'345'920ull);
  EXPECT_EQ(format_gib(b), "80.00 GiB");
  EXPECT_EQ(format_gb(b), "85.90 GB");
  EXPECT_EQ(format_mib(Bytes(3 * kMiB / 2)), "1.50 MiB");
  EXPECT_EQ(format_binary(Bytes(512)), "512 B");
  EXPECT_EQ(format_binary(Bytes(3584)), "3.50 KiB");  // 3584 / 1024
  EXPECT_EQ(format_binary(b), "80.00 GiB");
  EXPECT_EQ(format_exact(b), "85,899,345,920 B");
  EXPECT_EQ(format_exact(Bytes(0)), "0 B");
  EXPECT_EQ(Bytes::from_gib(1.5).count(), 1610612736u);  // 1.5 * 2^30
  EXPECT_THROW(Bytes::from_gib(-1.0), Error);
}

}  // namespace
}  // namespace vramplan
