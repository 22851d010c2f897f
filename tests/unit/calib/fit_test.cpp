#include "vramplan/calib/fit.hpp"

#include <vector>

#include <gtest/gtest.h>

#include "vramplan/core/error.hpp"

namespace vramplan::calib {
namespace {

TEST(FitTimeVsWork, TwoPointsHandComputed) {
  // (x=1e12 FLOP, 0.003 s) and (x=3e12 FLOP, 0.007 s):
  //   slope = (0.007 - 0.003) / (3e12 - 1e12) = 2e-15 s/FLOP -> rate 5e14 FLOP/s (500 TFLOP/s)
  //   t0 = 0.003 - 1e12 * 2e-15 = 0.001 s
  const std::vector<SamplePoint> points = {{1e12, 0.003}, {3e12, 0.007}};
  const LineFit fit = fit_time_vs_work(points, "two points");
  EXPECT_NEAR(fit.t0_seconds, 0.001, 1e-12);
  EXPECT_NEAR(fit.rate_per_second, 5e14, 5e14 * 1e-9);
  EXPECT_NEAR(fit.rms_residual_seconds, 0.0, 1e-12);
  EXPECT_EQ(fit.points, 2u);
}

TEST(FitTimeVsWork, RecoversKnownGemmParametersOverDecades) {
  // t = 8 us + flops / 750 TFLOP/s for M = 1..8192 of a 4096x4096 layer: x spans 4 decades.
  const double t0 = 8e-6, rate = 750e12;
  std::vector<SamplePoint> points;
  for (double m = 1; m <= 8192; m *= 2) {
    const double flops = 2 * m * 4096 * 4096;
    points.push_back({flops, t0 + flops / rate});
  }
  const LineFit fit = fit_time_vs_work(points, "gemm");
  EXPECT_NEAR(fit.t0_seconds, t0, 1e-12);
  EXPECT_NEAR(fit.rate_per_second / rate, 1.0, 1e-9);
  EXPECT_LT(fit.max_rel_residual, 1e-9);
}

TEST(FitTimeVsWork, NoisyBandwidthPointsWithinTolerance) {
  // t = 3 us + bytes / 4.3 TB/s with +-0.5 % alternating error: the rate stays within 0.5 %
  // and the residuals report the noise.
  const double t0 = 3e-6, rate = 4.3e12;
  std::vector<SamplePoint> points;
  double sign = 1;
  for (double bytes = 256.0 * (1 << 20); bytes <= 4.0 * (1u << 30); bytes *= 2, sign = -sign)
    points.push_back({bytes, (t0 + bytes / rate) * (1 + sign * 0.005)});
  const LineFit fit = fit_time_vs_work(points, "bandwidth");
  EXPECT_NEAR(fit.rate_per_second / rate, 1.0, 0.005);
  EXPECT_GT(fit.max_rel_residual, 0.001);
  EXPECT_LT(fit.max_rel_residual, 0.02);
}

TEST(FitTimeVsWork, RejectsWhatHasNoLine) {
  const std::vector<SamplePoint> one = {{1, 1}};
  const std::vector<SamplePoint> same_x = {{2, 1}, {2, 3}};
  const std::vector<SamplePoint> falling = {{1, 3}, {2, 1}};
  const std::vector<SamplePoint> negative = {{1, -1}, {2, 1}};
  for (const auto* pts : {&one, &same_x, &falling, &negative}) {
    try {
      fit_time_vs_work(*pts, "bad sweep");
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage);
      EXPECT_NE(std::string(e.what()).find("bad sweep"), std::string::npos) << e.what();
    }
  }
}

TEST(Median, OddAndEvenCounts) {
  const std::vector<double> odd = {5, 1, 3};
  const std::vector<double> even = {4, 1, 3, 2};
  EXPECT_EQ(median(odd), 3);
  EXPECT_EQ(median(even), 2.5);  // (2 + 3) / 2
  EXPECT_THROW(median(std::vector<double>{}), Error);
}

}  // namespace
}  // namespace vramplan::calib
