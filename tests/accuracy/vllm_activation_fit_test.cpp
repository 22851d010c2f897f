// The fitting tool for vLLM's activation-peak coefficients, run as a test: least squares
// (Eigen) on the published start-up records, per version family. It prints the coefficients
// and residuals and checks that data/engines/vllm.json carries the fitted values, so the data
// file can never drift from its inputs. To refit after adding records: run
//   vramplan_tests --gtest_filter='VllmActivationFit.*'
// and copy the printed coefficients into data/engines/vllm.json.
#include <cstdio>

#include <gtest/gtest.h>

#include "accuracy/vllm_legacy_records.hpp"
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

// V0 (0.6 - 0.7): the legacy records whose logs give the activation peak (printed, or 0.6.4's
// torch peak minus the weights), shaped by the scheduler limits the planner derives for them
// (V0 defaults: the whole context below 32K, chunked 2048 above). V0 with TP > 1 quotes a
// non-driver worker, which runs no sampler (model_runner.py execute_model), so that point has no
// sampler term. The framework terms are zero: V0's eager model runner has no persistent
// max_num_tokens input buffers or compiled-graph scratch (the V1 terms c_h, c0), and the
// forward-dominated 0.6.4 logs are reproduced by the dense forward term alone (2.06 vs 2.07 GiB,
// 2.99 vs 2.99 GiB); only k32 is fitted.
FamilyFit fit_v0_family() {
  const DataRoot root{source_dir()};
  FamilyFit f;
  for (const auto& c : load_vllm_legacy_records().cases) {
    const auto act = legacy_activation_gib(c.record);
    if (c.record.at("engine") != "V0" || !act) continue;
    const auto planned = compare_vllm_legacy(c);
    memory::VllmStageShape s;
    s.max_num_batched_tokens = planned.max_num_batched_tokens;
    s.max_num_seqs = planned.max_num_seqs;
    s.tp = c.record.at("tp").get<std::uint64_t>();
    s.compute_bytes = 2;  // every V0 record runs bf16 / fp16
    s.last_stage = !quotes_non_driver_rank(c);
    f.points.push_back({c.id, memory::vllm_activation_features(load_model(c.config, root).arch, s),
                        *act * static_cast<double>(kGiB)});
  }
  // k32 by least squares over the sampler-branch points, the branches re-decided with each fit
  // until stable; the first guess puts on the sampler branch every point whose forward term is
  // below its observed peak (fit_vllm_activation starts from the V1 value k32 = 3, at which every
  // V0 point looks forward-dominated, and would stay there).
  std::vector<bool> sampler_branch, previous;
  for (const auto& pt : f.points) sampler_branch.push_back(pt.observed_bytes > pt.features.forward);
  memory::VllmActivationCoefficients c{0, 1, 0, 0};
  for (int iteration = 0; iteration < 10 && sampler_branch != previous; ++iteration) {
    previous = sampler_branch;
    double num = 0, den = 0;
    for (std::size_t i = 0; i < f.points.size(); ++i) {
      const auto& x = f.points[i].features;
      if (!sampler_branch[i] || x.sampler_fp32 <= 0) continue;
      num += x.sampler_fp32 * (f.points[i].observed_bytes - x.sampler_model);
      den += x.sampler_fp32 * x.sampler_fp32;
    }
    c.sampler_fp32_copies = den > 0 ? num / den : 0;
    for (std::size_t i = 0; i < f.points.size(); ++i) sampler_branch[i] = !memory::forward_dominates(f.points[i].features, c);
  }
  f.fit.coefficients = c;
  for (const auto& pt : f.points)
    f.fit.residual_bytes.push_back(static_cast<double>(sum_bytes(memory::vllm_activation(pt.features, f.fit.coefficients)).count()) -
                                   pt.observed_bytes);
  std::printf("family V0 0.6-0.7: k32 = %.4f (c_h, c0 fixed at 0)\n", f.fit.coefficients.sampler_fp32_copies);
  for (std::size_t i = 0; i < f.points.size(); ++i)
    std::printf("  %-44s observed %.2f GiB residual %+.3f GiB\n", f.points[i].id.c_str(),
                f.points[i].observed_bytes / static_cast<double>(kGiB), f.fit.residual_bytes[i] / static_cast<double>(kGiB));
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
  // V0 (data/engines/vllm.json 0.6, 0.6.4, 0.6.5) from the legacy records.
  const auto v0 = fit_v0_family();
  ASSERT_GE(v0.points.size(), 4u);
  for (const char* profile : {"0.6.5", "0.6.4", "0.6"}) expect_profile_matches(profile, v0.fit.coefficients);
  for (std::size_t i = 0; i < v0.points.size(); ++i)
    EXPECT_LT(std::fabs(v0.fit.residual_bytes[i]), 0.1 * static_cast<double>(kGiB)) << v0.points[i].id;
  // Residuals: every fitted record within 0.25 GiB (stated in docs/accuracy.md).
  for (const auto* f : {&v19, &v11})
    for (std::size_t i = 0; i < f->points.size(); ++i)
      EXPECT_LT(std::fabs(f->fit.residual_bytes[i]), 0.25 * static_cast<double>(kGiB)) << f->points[i].id;
}

}  // namespace
}  // namespace vramplan::test
