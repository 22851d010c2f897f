// Axis ticks and bar lengths for svg_chart.hpp: the arithmetic the unit tests check by hand.
#include <algorithm>
#include <cmath>

#include "vramplan/core/text.hpp"
#include "vramplan/report/svg_chart.hpp"

namespace vramplan::report {

std::vector<double> nice_ticks(double lo, double hi, int max_ticks) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) hi = lo + 1;  // one value: an axis of one unit above it
  max_ticks = std::max(max_ticks, 2);
  const double magnitude = std::pow(10.0, std::floor(std::log10((hi - lo) / (max_ticks - 1))));
  for (double scale : {1.0, 10.0, 100.0})
    for (double m : {1.0, 2.0, 2.5, 5.0}) {
      const double step = m * magnitude * scale;
      const double first = std::floor(lo / step), last = std::ceil(hi / step);
      if (last - first + 1 > max_ticks) continue;
      std::vector<double> ticks;
      // Multiplying the index (not adding step repeatedly) keeps 0.1 steps free of drift.
      for (double k = first; k <= last; ++k) ticks.push_back(k * step);
      return ticks;
    }
  return {lo, hi};  // unreachable: 10 x the magnitude's step needs at most 2 + 1 ticks
}

std::vector<double> log2_ticks(double lo, double hi, int max_ticks) {
  lo = std::max(lo, 1.0);
  hi = std::max(hi, lo);
  const int first = static_cast<int>(std::floor(std::log2(lo))), last = static_cast<int>(std::ceil(std::log2(hi)));
  // A stride of ceil(D / (max - 1)) exponents covers the D = last - first octaves in at most
  // max_ticks ticks (the last one may lie beyond `hi`).
  const int span = std::max(last - first, 1);
  const int every = std::max(1, (span + std::max(max_ticks, 2) - 2) / (std::max(max_ticks, 2) - 1));
  std::vector<double> ticks;
  for (int e = first;; e += every) {
    ticks.push_back(std::ldexp(1.0, e));
    if (e >= first + span) break;
  }
  return ticks;
}

std::string tick_label(double value, double step) {
  const int decimals = step >= 1 || step <= 0 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  // 2.5 x 10^k steps need one decimal more than their magnitude.
  const double scaled = step * std::pow(10.0, decimals);
  const int extra = std::fabs(scaled - std::round(scaled)) > 1e-9 ? 1 : 0;
  return fixed(value, decimals + extra);
}

double bar_length(double value, double axis_max, double plot_width) {
  if (!(value > 0) || !(axis_max > 0)) return 0;
  return value / axis_max * plot_width;
}

}  // namespace vramplan::report
