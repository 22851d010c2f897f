#include "vramplan/sim/sampling.hpp"

#include <algorithm>
#include <cmath>

namespace vramplan::sim {

double Rng::uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

std::uint64_t Rng::uniform_int(std::uint64_t low, std::uint64_t high) {
  const std::uint64_t span = high - low + 1;
  // uniform() < 1 and span <= 2^32, so the product stays below span; min() guards rounding.
  return low + std::min(span - 1, static_cast<std::uint64_t>(uniform() * static_cast<double>(span)));
}

double Rng::exponential() { return -std::log(1.0 - uniform()); }

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_normal_;
  }
  for (;;) {
    const double u = 2 * uniform() - 1;
    const double v = 2 * uniform() - 1;
    const double s = u * u + v * v;
    if (s >= 1 || s == 0) continue;
    const double m = std::sqrt(-2 * std::log(s) / s);
    spare_normal_ = v * m;
    has_spare_ = true;
    return u * m;
  }
}

double Rng::gamma(double shape) {
  if (shape < 1) {
    // Gamma(a) = Gamma(a + 1) * U^(1/a) (Marsaglia & Tsang, section 6); 1 - U is in (0, 1].
    const double boosted = gamma(shape + 1);
    return boosted * std::exp(std::log(1.0 - uniform()) / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9 * d);
  for (;;) {
    const double z = normal();
    double v = 1 + c * z;
    if (v <= 0) continue;
    v = v * v * v;
    const double u = uniform();
    if (u < 1 - 0.0331 * z * z * z * z) return d * v;
    if (std::log(u) < 0.5 * z * z + d * (1 - v + std::log(v))) return d * v;
  }
}

}  // namespace vramplan::sim
