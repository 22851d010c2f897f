// Re-runs the fit of SGLang's MoE-layer overheads (data/perf_defaults.json step_overhead.sglang
// moe_layer_us / prompt_moe_layer_us) on the serving records it names, through the simulator:
// each grid value is written into a copy of the data folder and the six one-user SGLang cookbook
// runs are re-simulated. The shipped values must be the grid's least-squares ones.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "accuracy/serving_records.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

// A data folder equal to the shipped one except for SGLang's two MoE terms (microseconds).
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
  DataRoot with(double moe_layer_us, double prompt_moe_layer_us) const {
    nlohmann::json d = defaults_;
    auto& e = d["step_overhead"]["engines"]["sglang"];
    e["moe_layer_us"] = {{"min", moe_layer_us}, {"expected", moe_layer_us}, {"max", moe_layer_us}};
    e["prompt_moe_layer_us"] = {
        {"min", prompt_moe_layer_us}, {"expected", prompt_moe_layer_us}, {"max", prompt_moe_layer_us}};
    std::ofstream(dir_.path() / "data" / "perf_defaults.json") << d.dump(1);
    return DataRoot{dir_.path()};
  }
  double shipped(const char* key) const {
    return defaults_["step_overhead"]["engines"]["sglang"][key]["expected"].get<double>();
  }

 private:
  ScratchDir dir_;
  nlohmann::json defaults_;
};

// Sum over the fit records of ln(predicted / measured)^2 of `metric`.
double squared_log_error(const DataRoot& root, const char* metric) {
  // Read once: the fit re-simulates the same records at every grid value.
  static const nlohmann::json setup = serving_setup();
  static const std::vector<nlohmann::json> records = serving_records();
  double sum = 0;
  for (const auto& r : records) {
    const std::string id = r.at("id");
    if (!is_fit_record(id)) continue;
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

TEST(SimAccuracy, SglangMoeOverheadIsTheFittedValue) {
  const FitDataRoot data;
  const double moe = data.shipped("moe_layer_us"), prompt = data.shipped("prompt_moe_layer_us");
  const double fitted_moe =
      argmin(grid(5, 100), [&](double v) { return squared_log_error(data.with(v, prompt), "TPOT p50"); });
  const double fitted_prompt =
      argmin(grid(50, 3000), [&](double v) { return squared_log_error(data.with(moe, v), "TTFT p50"); });
  RecordProperty("fitted_moe_layer_us", std::to_string(fitted_moe));
  RecordProperty("fitted_prompt_moe_layer_us", std::to_string(fitted_prompt));
  EXPECT_EQ(moe, fitted_moe) << "data/perf_defaults.json sglang moe_layer_us is not the fit on its stated records";
  EXPECT_EQ(prompt, fitted_prompt)
      << "data/perf_defaults.json sglang prompt_moe_layer_us is not the fit on its stated records";
}

}  // namespace
}  // namespace vramplan::test
