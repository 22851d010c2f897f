#include "vramplan/core/sizes.hpp"

namespace vramplan {
namespace {

// True when `b` rounds to a non-zero number of `unit` at `decimals` places: b / unit >= 0.5 x 10^-decimals.
bool shows_in(Bytes b, std::uint64_t unit, int decimals) {
  long double scaled = static_cast<long double>(b.count()) * 2;
  for (int k = 0; k < decimals; ++k) scaled *= 10;
  return scaled >= static_cast<long double>(unit);
}

}  // namespace

std::string size_cell(Bytes b, int decimals) {
  if (shows_in(b, std::uint64_t{1} << 30, decimals)) return format_gib(b, decimals);
  if (shows_in(b, std::uint64_t{1} << 20, decimals)) return format_mib(b, decimals);
  return format_exact(b);
}

}  // namespace vramplan
