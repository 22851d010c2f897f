// memory::resolve_plan / run_plan (memory/plan_request.hpp): a request that carries its model
// already loaded is planned on it, as trial plans every cell of one model.
#include "vramplan/memory/plan_request.hpp"

#include <memory>

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/model/load.hpp"

namespace vramplan::memory {
namespace {

PlanRequest llama_8b_on_h100() {
  PlanRequest r;
  r.model = "llama-3.1-8b";
  r.gpu = "h100-sxm-80";
  r.args = {{"max-model-len", "8192"}};
  return r;
}

TEST(PlanRequest, PlansTheModelItCarriesWithoutLoadingIt) {
  const PlanRequest fresh = llama_8b_on_h100();
  PlanRequest carried = fresh;
  carried.loaded_model = std::make_shared<const ModelSpec>(load_model(fresh.model, test::source_root()));
  carried.model = "no-such-model";  // would be an unknown-name error if it were loaded
  const PlanOutcome a = run_plan(fresh, test::source_root()), b = run_plan(carried, test::source_root());
  EXPECT_EQ(b.model.id, a.model.id);
  EXPECT_EQ(b.plan.total_bytes(), a.plan.total_bytes());
  EXPECT_EQ(b.plan.kv.capacity_tokens, a.plan.kv.capacity_tokens);
  // The outcome's model is the carried spec itself.
  ModelSpec renamed = *carried.loaded_model;
  renamed.id = "renamed";
  carried.loaded_model = std::make_shared<const ModelSpec>(renamed);
  EXPECT_EQ(run_plan(carried, test::source_root()).model.id, "renamed");
}

}  // namespace
}  // namespace vramplan::memory
