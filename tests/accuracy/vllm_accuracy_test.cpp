// vLLM accuracy: every mapped start-up record planned through run_plan() (the code path of
// `vramplan plan`) and compared with what vLLM printed. Targets (issue 8): accuracy/vllm_targets.hpp.
// Excluded records and their reasons: data/vllm_record_models.json.
#include <gtest/gtest.h>

#include "accuracy/vllm_targets.hpp"

namespace vramplan::test {
namespace {

const std::vector<VllmComparison>& vllm_comparisons() {
  static const std::vector<VllmComparison> all = compare_all(load_vllm_records());
  return all;
}

TEST(VllmAccuracy, EveryRecordIsMappedOrExcludedWithAReason) {
  const auto set = load_vllm_records();
  EXPECT_EQ(set.cases.size() + set.excluded.size(), 27u);
  for (const auto& [id, reason] : set.excluded) EXPECT_GT(reason.size(), 20u) << id;
}

TEST(VllmAccuracy, WeightsWithinTargets) { expect_weights_within_targets(vllm_comparisons()); }

TEST(VllmAccuracy, KvBytesPerTokenExact) { EXPECT_GE(expect_kv_bytes_per_token_exact(vllm_comparisons()), 15); }

TEST(VllmAccuracy, KvCapacityWithinTargets) { expect_kv_capacity_within_targets(vllm_comparisons()); }

TEST(VllmAccuracy, ConcurrencyFollowsTheGroupRules) { expect_concurrency_follows_group_rules(vllm_comparisons()); }

}  // namespace
}  // namespace vramplan::test
