// The fitting tool for vLLM's activation-peak coefficients, run as a test: least squares
// (Eigen) on the published start-up records, per version family. It prints the coefficients
// and residuals and checks that data/engines/vllm.json carries the fitted values, so the data
// file can never drift from its inputs. To refit after adding records: run
//   vramplan_tests --gtest_filter='VllmActivationFit.*'
// and copy the printed coefficients into data/engines/vllm.json.
#include <cstdio>

#include <gtest/gtest.h>

#include "accuracy/vllm_records.hpp"

namespace vramplan::test {
namespace {

struct FamilyFit {
  memory::VllmActivationFit fit;
  std::vector<memory::VllmActivationPoint> points;
};

FamilyFit fit_family(const char* min, const char* max, const memory::VllmActivationCoefficients* fixed) {
  const DataRoot root{source_dir()};
  FamilyFit f;
  for (const auto& c : load_vllm_records().cases)
    if (in_family(c, min, max) && !c.record.at("activation_peak_gib").is_null() && !has_vision_tower(c, root))
      f.points.push_back(activation_point(c, root));
  f.fit = memory::fit_vllm_activation(f.points, fixed);
  std::printf("family %s-%s: k32 = %.4f, c_h = %.4f, c0 = %.4f GiB\n", min, max,
              f.fit.coefficients.sampler_fp32_copies, f.fit.coefficients.hidden_buffers,
              f.fit.coefficients.constant_bytes / static_cast<double>(kGiB));
  for (std::size_t i = 0; i < f.points.size(); ++i)
    std::printf("  %-36s observed %.2f GiB residual %+.3f GiB\n", f.points[i].id.c_str(),
                f.points[i].observed_bytes / static_cast<double>(kGiB),
                f.fit.residual_bytes[i] / static_cast<double>(kGiB));
  return f;
}

void expect_profile_matches(const char* version, const memory::VllmActivationCoefficients& c) {
  const auto d = memory::EngineProfileData::load(source_dir() / "data", "vllm", version);
  EXPECT_NEAR(d.number("activation_sampler_fp32_copies"), c.sampler_fp32_copies, 5e-4) << version;
  EXPECT_NEAR(d.number("activation_hidden_buffers"), c.hidden_buffers, 5e-4) << version;
  EXPECT_NEAR(d.number("activation_constant_gib"), c.constant_bytes / static_cast<double>(kGiB), 5e-4) << version;
}

TEST(VllmActivationFit, CommittedCoefficientsAreTheLeastSquaresFit) {
  const auto v19 = fit_family("0.17", "0.19.99", nullptr);
  ASSERT_GE(v19.points.size(), 8u);
  expect_profile_matches("0.19", v19.fit.coefficients);
  expect_profile_matches("0.17", v19.fit.coefficients);
  // Too few distinct 0.11-0.16 records to fit the framework terms: share them with 0.17+.
  const auto v11 = fit_family("0.11", "0.16.99", &v19.fit.coefficients);
  ASSERT_GE(v11.points.size(), 2u);
  expect_profile_matches("0.11", v11.fit.coefficients);
  // Residuals: every fitted record within 0.25 GiB (stated in docs/accuracy.md).
  for (const auto* f : {&v19, &v11})
    for (std::size_t i = 0; i < f->points.size(); ++i)
      EXPECT_LT(std::fabs(f->fit.residual_bytes[i]), 0.25 * static_cast<double>(kGiB)) << f->points[i].id;
}

}  // namespace
}  // namespace vramplan::test
