#include "vramplan/core/bytes.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"

namespace vramplan {
namespace {

[[noreturn]] void overflow(std::string_view what, std::string_view op) {
  throw Error(ErrorKind::Usage,
              "size overflow while computing " + std::string(what) + " (" + std::string(op) +
                  " exceeds 2^64 bytes): an input is impossibly large");
}

Bytes from_double(double value, std::uint64_t unit, std::string_view what) {
  const long double exact = static_cast<long double>(value) * static_cast<long double>(unit);
  if (!std::isfinite(value) || exact < 0.0L)
    throw Error(ErrorKind::Usage, std::string(what) + ": size must be a finite, non-negative number");
  // 2^64 as long double; anything >= it cannot be represented.
  if (exact >= 18446744073709551616.0L) overflow(what, "value");
  // A size in bytes is a whole number (0.5 B had been rounded to a card of 1 B); in a larger unit
  // the fraction of a byte is rounding (79.22 GiB = 85,061,827,297.28 B).
  if (unit == 1 && exact != std::floor(exact))
    throw Error(ErrorKind::Usage, std::string(what) + ": a size in bytes is a whole number, got " + format_number("%g", value));
  return Bytes(static_cast<std::uint64_t>(std::llroundl(exact)));
}

struct UnitRow {
  std::string_view name;  // lower case
  std::uint64_t factor;
};
// One row per accepted unit; the lookup is the only place units are known.
constexpr std::array<UnitRow, 10> kUnits{{
    {"", 1},         {"b", 1},        {"kb", kKB},     {"mb", kMB},     {"gb", kGB},
    {"tb", kTB},     {"kib", kKiB},   {"mib", kMiB},   {"gib", kGiB},   {"tib", kTiB},
}};

std::string format_scaled(Bytes b, std::uint64_t unit, int decimals, const char* suffix) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals,
                static_cast<double>(b.count()) / static_cast<double>(unit), suffix);
  return buf;
}

}  // namespace

std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, std::string_view what) {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) overflow(what, "sum");
  return r;
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::string_view what) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) overflow(what, "product");
  return r;
}

std::uint64_t checked_sub(std::uint64_t a, std::uint64_t b, std::string_view what) {
  if (b > a) throw_internal("negative size while computing " + std::string(what));
  return a - b;
}

std::uint64_t round_up(std::uint64_t a, std::uint64_t multiple, std::string_view what) {
  if (multiple == 0) throw_internal("round_up to a multiple of 0 (" + std::string(what) + ")");
  return checked_mul(ceil_div(a, multiple), multiple, what);
}

Bytes Bytes::from_gib(double gib) { return from_double(gib, kGiB, "GiB value"); }
Bytes Bytes::from_mib(double mib) { return from_double(mib, kMiB, "MiB value"); }

Bytes& Bytes::operator+=(Bytes other) {
  count_ = checked_add(count_, other.count_);
  return *this;
}

Bytes& Bytes::operator-=(Bytes other) {
  count_ = checked_sub(count_, other.count_);
  return *this;
}

Bytes operator*(Bytes a, std::uint64_t n) { return Bytes(checked_mul(a.count(), n)); }

std::int64_t signed_difference(Bytes a, Bytes b) {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (a >= b) {
    const std::uint64_t d = a.count() - b.count();
    if (d > kMax) overflow("difference", "difference");
    return static_cast<std::int64_t>(d);
  }
  const std::uint64_t d = b.count() - a.count();
  if (d > kMax) overflow("difference", "difference");
  return -static_cast<std::int64_t>(d);
}

Bytes parse_bytes(std::string_view text, std::string_view what) {
  auto bad = [&](std::string_view why) -> Error {
    return Error(ErrorKind::Usage, std::string(what) + ": cannot read size '" + std::string(text) +
                                       "': " + std::string(why) +
                                       " (examples: 80GB, 79.22GiB, 81559MiB, 48e9)");
  };
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  const std::size_t num_begin = i;
  // Number: digits [. digits] [e[+-]digits]; no sign (sizes are non-negative).
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  }
  if (i == num_begin || (i == num_begin + 1 && text[num_begin] == '.')) throw bad("no number");
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    const std::size_t exp_digits = j;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j != exp_digits) i = j;  // else the 'e' starts the unit ("16EiB": an unknown unit, said so)
  }
  const std::string number(text.substr(num_begin, i - num_begin));
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::string unit;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) break;
    unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i != text.size()) throw bad("unexpected text after the unit");
  for (const UnitRow& row : kUnits) {
    if (row.name == unit) {
      const double value = std::strtod(number.c_str(), nullptr);
      return from_double(value, row.factor, what);
    }
  }
  throw bad("unknown unit '" + unit + "' (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)");
}

std::string format_gib(Bytes b, int decimals) { return format_scaled(b, kGiB, decimals, "GiB"); }
std::string format_mib(Bytes b, int decimals) { return format_scaled(b, kMiB, decimals, "MiB"); }
std::string format_gb(Bytes b, int decimals) { return format_scaled(b, kGB, decimals, "GB"); }

std::string format_binary(Bytes b, int decimals) {
  if (b.count() < kKiB) return std::to_string(b.count()) + " B";
  if (b.count() < kMiB) return format_scaled(b, kKiB, decimals, "KiB");
  if (b.count() < kGiB) return format_scaled(b, kMiB, decimals, "MiB");
  if (b.count() < kTiB) return format_scaled(b, kGiB, decimals, "GiB");
  return format_scaled(b, kTiB, decimals, "TiB");
}

std::string format_exact(Bytes b) {
  std::string digits = std::to_string(b.count());
  std::string out;
  const std::size_t n = digits.size();
  for (std::size_t k = 0; k < n; ++k) {
    if (k != 0 && (n - k) % 3 == 0) out += ',';
    out += digits[k];
  }
  return out + " B";
}

}  // namespace vramplan
