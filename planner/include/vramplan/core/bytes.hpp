// vramplan/core/bytes.hpp — byte counts: a strong 64-bit unsigned type with checked arithmetic,
// size parsing ("80GB", "79.22GiB", "81559MiB", "48e9") and printing that always names its unit.
//
// Units: KiB/MiB/GiB/TiB are powers of 2 (2^10, 2^20, 2^30, 2^40); KB/MB/GB/TB are powers of 10.
// Every rendering says which one it uses. Overflow never wraps: it throws Error (kind Usage,
// because an impossible size always comes from an impossible input).
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace vramplan {

inline constexpr std::uint64_t kKiB = 1ull << 10;
inline constexpr std::uint64_t kMiB = 1ull << 20;
inline constexpr std::uint64_t kGiB = 1ull << 30;
inline constexpr std::uint64_t kTiB = 1ull << 40;
inline constexpr std::uint64_t kKB = 1000ull;
inline constexpr std::uint64_t kMB = 1000ull * 1000;
inline constexpr std::uint64_t kGB = 1000ull * 1000 * 1000;
inline constexpr std::uint64_t kTB = 1000ull * 1000 * 1000 * 1000;

//! a + b, a * b and a - b on raw u64 that throw on overflow / underflow. `what` names the
//! quantity being computed and appears in the error message.
std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, std::string_view what = "size");
std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::string_view what = "size");
std::uint64_t checked_sub(std::uint64_t a, std::uint64_t b, std::string_view what = "size");
//! ceil(a / b) for b > 0, without overflow.
constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }
//! Smallest multiple of `multiple` that is >= a (checked).
std::uint64_t round_up(std::uint64_t a, std::uint64_t multiple, std::string_view what = "size");

class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(std::uint64_t count) : count_(count) {}

  constexpr std::uint64_t count() const { return count_; }
  double gib() const { return static_cast<double>(count_) / static_cast<double>(kGiB); }
  double mib() const { return static_cast<double>(count_) / static_cast<double>(kMiB); }
  double gb() const { return static_cast<double>(count_) / static_cast<double>(kGB); }

  static constexpr Bytes zero() { return Bytes(0); }
  static Bytes from_gib(double gib);  //!< rounded to the nearest byte; throws if negative / too big
  static Bytes from_mib(double mib);

  Bytes& operator+=(Bytes other);
  Bytes& operator-=(Bytes other);  //!< throws on underflow
  friend Bytes operator+(Bytes a, Bytes b) { return a += b; }
  friend Bytes operator-(Bytes a, Bytes b) { return a -= b; }
  friend Bytes operator*(Bytes a, std::uint64_t n);
  friend Bytes operator*(std::uint64_t n, Bytes a) { return a * n; }
  friend constexpr auto operator<=>(Bytes, Bytes) = default;

 private:
  std::uint64_t count_ = 0;
};

//! a - b as a signed number of bytes (for headroom, which may be negative). Throws if the
//! difference does not fit in int64.
std::int64_t signed_difference(Bytes a, Bytes b);

//! Parses a size: a decimal number (optionally with exponent) and an optional unit
//! B, KB, MB, GB, TB (10^3n), KiB, MiB, GiB, TiB (2^10n); "G"/"M"/"K" alone are rejected as
//! ambiguous. No unit = bytes. Case-insensitive units, optional space. Fractional results are
//! rounded to the nearest byte. Throws Error(Usage) naming `what` on anything else.
Bytes parse_bytes(std::string_view text, std::string_view what = "size");

//! "79.22 GiB" — binary units with `decimals` decimals.
std::string format_gib(Bytes b, int decimals = 2);
std::string format_mib(Bytes b, int decimals = 2);
//! "85.06 GB" — decimal units.
std::string format_gb(Bytes b, int decimals = 2);
//! Human rendering choosing the binary unit that keeps the number in [1, 1024): "512 B",
//! "3.50 KiB", "14.96 GiB".
std::string format_binary(Bytes b, int decimals = 2);
//! "85,899,345,920 B" — exact count with thousands separators.
std::string format_exact(Bytes b);

}  // namespace vramplan
