#include "vramplan/calib/fit.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "vramplan/core/error.hpp"

namespace vramplan::calib {

LineFit fit_time_vs_work(std::span<const SamplePoint> points, std::string_view what) {
  const std::string name(what);
  if (points.size() < 2)
    throw_usage(name + ": a line fit needs at least 2 points, got " + std::to_string(points.size()));
  for (const auto& p : points)
    if (!std::isfinite(p.x) || !std::isfinite(p.seconds) || p.x < 0 || p.seconds < 0)
      throw_usage(name + ": points must be finite and non-negative");
  const auto [lo, hi] = std::minmax_element(points.begin(), points.end(),
                                            [](const auto& a, const auto& b) { return a.x < b.x; });
  if (lo->x == hi->x) throw_usage(name + ": all points have the same work, no slope can be fitted");

  // Work spans many decades (1 token to 8192); scaling x to [0, 1] keeps the normal matrix well
  // conditioned. Design matrix rows are [1, x / x_max].
  const double x_scale = hi->x;
  const auto n = static_cast<Eigen::Index>(points.size());
  Eigen::MatrixXd design(n, 2);
  Eigen::VectorXd t(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    design(i, 0) = 1.0;
    design(i, 1) = points[static_cast<std::size_t>(i)].x / x_scale;
    t(i) = points[static_cast<std::size_t>(i)].seconds;
  }
  const Eigen::Vector2d coef = design.colPivHouseholderQr().solve(t);
  const double slope = coef(1) / x_scale;  // seconds per unit of work
  if (!(slope > 0)) throw_usage(name + ": time does not grow with work (fitted slope <= 0)");

  LineFit fit;
  fit.t0_seconds = coef(0);
  fit.rate_per_second = 1.0 / slope;
  fit.points = points.size();
  const Eigen::VectorXd residual = t - design * coef;
  fit.rms_residual_seconds = std::sqrt(residual.squaredNorm() / static_cast<double>(n));
  for (Eigen::Index i = 0; i < n; ++i)
    if (t(i) > 0) fit.max_rel_residual = std::max(fit.max_rel_residual, std::abs(residual(i)) / t(i));
  return fit;
}

double median(std::span<const double> values) {
  if (values.empty()) throw_usage("median of no values");
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2.0;
}

}  // namespace vramplan::calib
