// Re-runs the fits of SGLang's step overheads (data/perf_defaults.json step_overhead.sglang:
// kernel_counts.kernel_us, moe_layer_us / prompt_moe_layer_us on NVIDIA GPUs, block_fp8_gemm_us.amd) on the serving records
// each names, through the simulator: each grid value is written into a copy of the data folder and
// the fit's one-user SGLang cookbook runs are re-simulated. The shipped values must be the grid's
// least-squares ones.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "accuracy/serving_records.hpp"
#include "support/sanitizer.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

// SGLang's fitted terms on NVIDIA GPUs (microseconds): moe_layer_us, prompt_moe_layer_us,
// block_fp8_gemm_us.nvidia, prompt_block_fp8_gemm_us.nvidia, and the counted architectures' prompt
// terms kernel_counts.prompt_launch_us and kernel_counts.prompt_block_fp8_gemm_us.
struct SglangTerms {
  double moe = 0, prompt = 0, block_nvidia = 0, prompt_block_nvidia = 0, prompt_launch = 0, counted_prompt_block = 0;
};

// A data folder equal to the shipped one except for SGLang's fitted terms.
class FitDataRoot {
 public:
  FitDataRoot() {
    const auto src = source_dir();
    std::filesystem::create_symlink(src / "models", dir_.path() / "models");
    std::filesystem::create_directory(dir_.path() / "data");
    for (const auto& e : std::filesystem::directory_iterator(src / "data"))
      if (e.path().filename() != "perf_defaults.json")
        std::filesystem::create_symlink(e.path(), dir_.path() / "data" / e.path().filename());
    std::ifstream in(src / "data" / "perf_defaults.json");
    defaults_ = nlohmann::json::parse(in);
  }
  // counted = false drops the counted decode kernels: every decode step then takes the per-layer
  // terms, as the architectures the count lacks do (their fit's setting).
  DataRoot with(const SglangTerms& t, bool counted = true) const {
    nlohmann::json d = defaults_;
    auto& e = d["step_overhead"]["engines"]["sglang"];
    for (auto [key, v] : {std::pair{"prompt_launch_us", t.prompt_launch}, std::pair{"prompt_block_fp8_gemm_us", t.counted_prompt_block}}) {
      auto& k = e["kernel_counts"][key];  // keeps its sources
      k["min"] = k["expected"] = k["max"] = v;
    }
    if (!counted) e.erase("kernel_counts");
    e["moe_layer_us"] = point(t.moe);
    e["prompt_moe_layer_us"] = point(t.prompt);
    e["block_fp8_gemm_us"]["nvidia"] = point(t.block_nvidia);
    e["prompt_block_fp8_gemm_us"]["nvidia"] = point(t.prompt_block_nvidia);
    return write(d);
  }
  // `key` = block_fp8_gemm_us or prompt_block_fp8_gemm_us.
  DataRoot with_amd_block_fp8(const char* key, double gemm_us) const {
    nlohmann::json d = defaults_;
    d["step_overhead"]["engines"]["sglang"][key]["amd"] = point(gemm_us);
    return write(d);
  }
  DataRoot with_kernel_us(double us) const {
    nlohmann::json d = defaults_;
    auto& k = d["step_overhead"]["engines"]["sglang"]["kernel_counts"]["kernel_us"];
    k["min"] = k["expected"] = k["max"] = us;
    return write(d);
  }
  // The per-kernel cost of one compute capability major (kernel_counts.kernel_us_by_capability).
  DataRoot with_capability_kernel_us(const char* major, double us) const {
    nlohmann::json d = defaults_;
    auto& k = d["step_overhead"]["engines"]["sglang"]["kernel_counts"]["kernel_us_by_capability"][major];
    k["min"] = k["expected"] = k["max"] = us;
    return write(d);
  }
  double shipped_capability_kernel_us(const char* major) const {
    return defaults_["step_overhead"]["engines"]["sglang"]["kernel_counts"]["kernel_us_by_capability"][major]["expected"]
        .get<double>();
  }
  double shipped_kernel_us() const {
    return defaults_["step_overhead"]["engines"]["sglang"]["kernel_counts"]["kernel_us"]["expected"].get<double>();
  }
  SglangTerms shipped() const {
    const auto& e = defaults_["step_overhead"]["engines"]["sglang"];
    return {e["moe_layer_us"]["expected"].get<double>(), e["prompt_moe_layer_us"]["expected"].get<double>(),
            e["block_fp8_gemm_us"]["nvidia"]["expected"].get<double>(),
            e["prompt_block_fp8_gemm_us"]["nvidia"]["expected"].get<double>(),
            e["kernel_counts"]["prompt_launch_us"]["expected"].get<double>(),
            e["kernel_counts"]["prompt_block_fp8_gemm_us"]["expected"].get<double>()};
  }
  double shipped_amd_block_fp8(const char* key) const {
    return defaults_["step_overhead"]["engines"]["sglang"][key]["amd"]["expected"].get<double>();
  }

 private:
  static nlohmann::json point(double v) { return {{"min", v}, {"expected", v}, {"max", v}}; }
  DataRoot write(const nlohmann::json& d) const {
    std::ofstream(dir_.path() / "data" / "perf_defaults.json") << d.dump(1);
    return DataRoot{dir_.path()};
  }
  ScratchDir dir_;
  nlohmann::json defaults_;
};

// Sum over the fit records `ids` of ln(predicted / measured)^2 of `metric`.
double squared_log_error(const DataRoot& root, const char* metric,
                         const std::vector<std::string>& ids = sglang_overhead_fit_records()) {
  // Read once: the fit re-simulates the same records at every grid value.
  static const nlohmann::json setup = serving_setup();
  static const std::vector<nlohmann::json> records = serving_records();
  double sum = 0;
  for (const auto& r : records) {
    const std::string id = r.at("id");
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) continue;
    const ServingComparison c = simulate_record(r, setup.at("simulated").at(id), root);
    const ServingMetric* m = c.find(metric);
    if (!m) ADD_FAILURE() << id << " has no " << metric;
    else sum += std::pow(std::log(m->predicted / m->measured), 2);
  }
  return sum;
}

// The grid value of the least summed error; the other term held at its shipped value (a one-user
// run's TPOT has no prompt step in it and its TTFT no decode step, so the two fits are separate).
double argmin(const std::vector<double>& grid, auto&& loss) {
  double best = grid.front(), best_loss = std::numeric_limits<double>::infinity();
  for (double g : grid)
    if (const double l = loss(g); l < best_loss) best = g, best_loss = l;
  return best;
}

std::vector<double> grid(double step, double last) {
  std::vector<double> g;
  for (double v = 0; v <= last + 1e-9; v += step) g.push_back(v);
  return g;
}

// Two of the terms fitted together on `metric`: from `start` (the two at their grids' first values), alternately the
// argmin of each on its grid with the other held, until neither moves.
struct Axis {
  double SglangTerms::*term;
  std::vector<double> grid;
};
SglangTerms coordinate_descent(const FitDataRoot& data, SglangTerms start, const Axis& a, const Axis& b,
                               const char* metric, bool counted) {
  SglangTerms t = start;
  t.*a.term = a.grid.front();
  t.*b.term = b.grid.front();
  for (int round = 0; round < 10; ++round) {
    const SglangTerms before = t;
    for (const Axis* axis : {&a, &b})
      t.*axis->term = argmin(axis->grid, [&](double v) {
        SglangTerms u = t;
        u.*axis->term = v;
        return squared_log_error(data.with(u, counted), metric);
      });
    if (t.*a.term == before.*a.term && t.*b.term == before.*b.term) break;
  }
  return t;
}


TEST(SimAccuracy, SglangMoeOverheadIsTheFittedValue) {
  VRAMPLAN_SKIP_REFIT_UNDER_ASAN();
  const FitDataRoot data;
  const SglangTerms shipped = data.shipped();
  // Decode: the MoE-layer term and the block-scaled FP8 GEMM term together (DeepSeek-R1 has both
  // MoE layers and FP8-block weights, Qwen3-235B MoE layers only: the two models separate them),
  // fitted without the counted decode kernels: they serve the architectures the count lacks.
  const SglangTerms d = coordinate_descent(data, shipped, {&SglangTerms::moe, grid(5, 60)},
                                           {&SglangTerms::block_nvidia, grid(1, 20)}, "TPOT p50", false);
  // Prompts: a one-user run's TTFT has no decode step of its own request in it, so its two terms
  // are fitted apart (with the decode steps as shipped), also without the count.
  const SglangTerms p = coordinate_descent(data, shipped, {&SglangTerms::prompt, grid(50, 1500)},
                                           {&SglangTerms::prompt_block_nvidia, grid(10, 250)}, "TTFT p50", false);
  // The counted architectures' prompt terms: a cost per launched kernel and an extra one per
  // block-FP8 GEMM, on the same runs with the count.
  // (0 per launch would hand those steps back to the per-layer terms: the grid starts at 1 us).
  std::vector<double> per_launch = grid(1, 150);
  per_launch.erase(per_launch.begin());
  SglangTerms start = shipped;
  start.prompt_launch = per_launch.front();
  const SglangTerms c = coordinate_descent(data, start, {&SglangTerms::prompt_launch, per_launch},
                                           {&SglangTerms::counted_prompt_block, grid(5, 300)}, "TTFT p50", true);
  RecordProperty("fitted_moe_layer_us", std::to_string(d.moe));
  RecordProperty("fitted_block_fp8_gemm_us_nvidia", std::to_string(d.block_nvidia));
  RecordProperty("fitted_prompt_moe_layer_us", std::to_string(p.prompt));
  RecordProperty("fitted_prompt_block_fp8_gemm_us_nvidia", std::to_string(p.prompt_block_nvidia));
  RecordProperty("fitted_prompt_launch_us", std::to_string(c.prompt_launch));
  RecordProperty("fitted_counted_prompt_block_fp8_gemm_us", std::to_string(c.counted_prompt_block));
  const char* why = " in data/perf_defaults.json (step_overhead.sglang) is not the fit on its stated records";
  EXPECT_EQ(shipped.moe, d.moe) << "moe_layer_us" << why;
  EXPECT_EQ(shipped.block_nvidia, d.block_nvidia) << "block_fp8_gemm_us.nvidia" << why;
  EXPECT_EQ(shipped.prompt, p.prompt) << "prompt_moe_layer_us" << why;
  EXPECT_EQ(shipped.prompt_block_nvidia, p.prompt_block_nvidia) << "prompt_block_fp8_gemm_us.nvidia" << why;
  EXPECT_EQ(shipped.prompt_launch, c.prompt_launch) << "kernel_counts.prompt_launch_us" << why;
  EXPECT_EQ(shipped.counted_prompt_block, c.counted_prompt_block) << "kernel_counts.prompt_block_fp8_gemm_us" << why;
}

// The cost of one counted kernel of a decode step on NVIDIA GPUs (kernel_counts.kernel_us): the
// median TPOT of the same six one-user runs (DeepSeek-R1 and Qwen3-235B on 8 x B200, whose kernels
// were counted), on a 0.1 us grid; the counted architectures the fit does not see (GLM-4.6,
// MiniMax-M2.5, Qwen3-Coder-Next, GLM-4.7-Flash) are held out.
TEST(SimAccuracy, SglangDecodeKernelCostIsTheFittedValue) {
  VRAMPLAN_SKIP_REFIT_UNDER_ASAN();
  const FitDataRoot data;
  std::vector<double> g;
  for (int i = 1; i <= 150; ++i) g.push_back(i / 10.0);
  const double fitted = argmin(g, [&](double v) { return squared_log_error(data.with_kernel_us(v), "TPOT p50"); });
  RecordProperty("fitted_kernel_us", std::to_string(fitted));
  EXPECT_NEAR(data.shipped_kernel_us(), fitted, 1e-9)
      << "data/perf_defaults.json sglang kernel_counts.kernel_us is not the fit on its stated records";
}

// The same on Hopper (compute capability 9.x): the median TPOT of the one one-user run of a counted
// architecture on an H200 in the ground truth (Step-3.5-Flash, 4 x H200), on a 0.1 us grid.
TEST(SimAccuracy, SglangHopperDecodeKernelCostIsTheFittedValue) {
  VRAMPLAN_SKIP_REFIT_UNDER_ASAN();
  const FitDataRoot data;
  std::vector<double> g;
  for (int i = 1; i <= 150; ++i) g.push_back(i / 10.0);
  const double fitted = argmin(g, [&](double v) {
    return squared_log_error(data.with_capability_kernel_us("9", v), "TPOT p50", sglang_hopper_kernel_fit_records());
  });
  RecordProperty("fitted_kernel_us_sm90", std::to_string(fitted));
  EXPECT_NEAR(data.shipped_capability_kernel_us("9"), fitted, 1e-9)
      << "data/perf_defaults.json sglang kernel_counts.kernel_us_by_capability.9 is not the fit on its stated record";
}

// The extra cost of a block-scaled FP8 GEMM launch on AMD GPUs: the median TPOT of the one-user
// MI300X runs of DeepSeek-V3.1 (7 such launches per MoE layer) and Qwen3-Coder-480B-FP8 (4), one
// parameter for both models, on a 1 us grid.
TEST(SimAccuracy, SglangAmdBlockFp8OverheadIsTheFittedValue) {
  VRAMPLAN_SKIP_REFIT_UNDER_ASAN();
  const FitDataRoot data;
  const auto& runs = sglang_amd_block_fp8_fit_records();
  const double fitted = argmin(grid(1, 100), [&](double v) {
    return squared_log_error(data.with_amd_block_fp8("block_fp8_gemm_us", v), "TPOT p50", runs);
  });
  // In a forward with prompt tokens (outside SGLang's CUDA graphs): the median TTFT, 10 us grid.
  const double fitted_prompt = argmin(grid(10, 1000), [&](double v) {
    return squared_log_error(data.with_amd_block_fp8("prompt_block_fp8_gemm_us", v), "TTFT p50", runs);
  });
  RecordProperty("fitted_block_fp8_gemm_us_amd", std::to_string(fitted));
  RecordProperty("fitted_prompt_block_fp8_gemm_us_amd", std::to_string(fitted_prompt));
  EXPECT_EQ(data.shipped_amd_block_fp8("block_fp8_gemm_us"), fitted)
      << "data/perf_defaults.json sglang block_fp8_gemm_us.amd is not the fit on its stated records";
  EXPECT_EQ(data.shipped_amd_block_fp8("prompt_block_fp8_gemm_us"), fitted_prompt)
      << "data/perf_defaults.json sglang prompt_block_fp8_gemm_us.amd is not the fit on its stated records";
}

}  // namespace
}  // namespace vramplan::test
