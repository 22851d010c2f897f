#include "param_count.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "vramplan/core/error.hpp"

namespace vramplan::cli {

std::string format_params(std::uint64_t n) {
  static constexpr std::pair<double, const char*> kUnits[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
  for (const auto& [scale, suffix] : kUnits) {
    const double v = static_cast<double>(n) / scale;
    if (v >= 0.9995) {  // 999.9M prints as 1.00B, not 1000M
      char buf[32];
      std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f%s" : v >= 10 ? "%.1f%s" : "%.2f%s", v, suffix);
      return buf;
    }
  }
  return std::to_string(n);
}

std::uint64_t parse_params(std::string_view text, std::string_view option) {
  std::string s(text);
  double scale = 1.0;
  if (!s.empty()) {
    switch (s.back()) {
      case 'K': case 'k': scale = 1e3; break;
      case 'M': case 'm': scale = 1e6; break;
      case 'B': case 'b': case 'G': case 'g': scale = 1e9; break;
      case 'T': case 't': scale = 1e12; break;
      default: break;
    }
    if (scale != 1.0) s.pop_back();
  }
  char* end = nullptr;
  const double v = s.empty() ? NAN : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < 0 || v * scale > 1e18)
    throw_usage("--" + std::string(option) + ": '" + std::string(text) +
                "' is not a parameter count (e.g. 7B, 500M, 7e9)");
  return static_cast<std::uint64_t>(std::llround(v * scale));
}

}  // namespace vramplan::cli
