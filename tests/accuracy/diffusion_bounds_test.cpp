// The diffusion check's upper bound (data/diffusion.json upper_bound) recomputed from the accuracy
// records (tests/accuracy/data/diffusion_measured.jsonl, docs/accuracy-diffusion.md): per pipeline
// class, the largest under-prediction of a compared `peak` record (measured / planned allocated
// peak - 1), rounded up to 0.1 %; 'default' is the largest of all classes. The file must hold
// exactly these figures and name the record each comes from, so the margin is never tuned.
#include <cmath>
#include <fstream>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "accuracy/accuracy_doc.hpp"
#include "accuracy/diffusion_record.hpp"
#include "vramplan/diffusion/diffusion_plan.hpp"

namespace vramplan::test {
namespace {

struct DiffusionBoundWorst {
  double relative = 0;
  std::string record;
};

TEST(DiffusionBounds, UpperBoundIsTheLargestUnderPredictionOfTheRecords) {
  std::ifstream in(source_dir() / "tests" / "accuracy" / "data" / "diffusion_measured.jsonl");
  std::map<std::string, DiffusionBoundWorst> worst;  // pipeline class -> its largest under-prediction
  DiffusionBoundWorst overall;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const auto r = nlohmann::json::parse(line);
    if (!r.value("compared", true) || r.at("quantity") != "peak") continue;
    const diffusion::DiffusionRequest req = diffusion_request_of(r);
    const auto plan = diffusion::plan_diffusion(req, source_root());
    const double under = r.at("measured_gib").get<double>() / plan.allocated_peak.gib() - 1.0;
    // Rounded up to 0.1 % (a bound, never below the record).
    const double rounded = std::ceil(under * 1000.0 - 1e-9) / 1000.0;
    DiffusionBoundWorst& w = worst[plan.pipeline.class_name];
    if (rounded > w.relative) w = {rounded, r.at("id").get<std::string>()};
    if (rounded > overall.relative) overall = {rounded, r.at("id").get<std::string>()};
  }
  ASSERT_GE(worst.size(), 4u);
  const auto data = nlohmann::json::parse(std::ifstream(source_dir() / "data" / "diffusion.json"));
  const auto& ub = data.at("upper_bound");
  nlohmann::json expected = {{"pipelines", nlohmann::json::object()},
                             {"default", {{"relative", overall.relative}, {"record", overall.record}}}};
  for (const auto& [cls, w] : worst) expected["pipelines"][cls] = {{"relative", w.relative}, {"record", w.record}};
  for (const auto& [cls, w] : worst) {
    ASSERT_TRUE(ub.at("pipelines").contains(cls)) << cls << "; expected " << expected.dump();
    EXPECT_NEAR(ub.at("pipelines").at(cls).at("relative").get<double>(), w.relative, 1e-9) << cls << "; expected " << expected.dump();
    EXPECT_EQ(ub.at("pipelines").at(cls).at("record"), w.record) << cls;
  }
  EXPECT_EQ(ub.at("pipelines").size(), worst.size()) << expected.dump();
  EXPECT_NEAR(ub.at("default").at("relative").get<double>(), overall.relative, 1e-9) << expected.dump();
  EXPECT_EQ(ub.at("default").at("record"), overall.record);
}

}  // namespace
}  // namespace vramplan::test
