// vramplan/calib/fit.hpp — least-squares fits that turn raw probe points into model parameters.
//
// Every timing model in a calibration file is a straight line  t = t0 + x / rate :
//   GEMM time vs FLOPs      -> t0 = fixed overhead per call, rate = achieved FLOP/s
//   copy/read time vs bytes -> t0 = launch + ramp-up,        rate = achieved bytes/s
// The fit is ordinary least squares (Eigen, column-pivoting QR) on (x, t); the residuals are kept
// beside the parameters so a reader can judge how well a line describes the card.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace vramplan::calib {

struct SamplePoint {
  double x = 0;        //!< work of the point: FLOPs or bytes
  double seconds = 0;  //!< measured time (median of repeats)
};

struct LineFit {
  double t0_seconds = 0;           //!< intercept: time at zero work
  double rate_per_second = 0;      //!< 1 / slope: work per second
  double rms_residual_seconds = 0; //!< sqrt(mean((t - fitted)^2))
  double max_rel_residual = 0;     //!< max |t - fitted| / t over the points
  std::size_t points = 0;
};

//! Least-squares line t = t0 + x / rate through `points`. Throws Error(Usage) naming `what` when
//! there are fewer than 2 points, all x are equal, a value is not finite or negative, or the
//! fitted slope is not positive (time that does not grow with work has no rate).
LineFit fit_time_vs_work(std::span<const SamplePoint> points, std::string_view what);

//! Median of `values` (the mean of the two middle values for an even count). Throws Error(Usage)
//! on an empty span. Probes keep the median of repeated timings.
double median(std::span<const double> values);

}  // namespace vramplan::calib
