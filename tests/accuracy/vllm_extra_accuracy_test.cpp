// vLLM accuracy on records beyond the shared set: start-up logs from the same llm-d-planner sweep
// (vLLM 0.19.0, H100 80GB) that the shared file does not carry, transcribed into
// data/vllm_extra_logs.jsonl (sources in each record) and planned through the same run_plan() path
// and the same targets (accuracy/vllm_targets.hpp) as the shared records. Configs and exclusions:
// data/vllm_extra_models.json.
#include <gtest/gtest.h>

#include "accuracy/vllm_targets.hpp"

namespace vramplan::test {
namespace {

const std::vector<VllmComparison>& vllm_extra_comparisons() {
  static const std::vector<VllmComparison> all = compare_all(load_vllm_extra_records());
  return all;
}

TEST(VllmExtraAccuracy, EveryRecordIsMappedOrExcludedWithAReason) {
  const auto set = load_vllm_extra_records();
  EXPECT_EQ(set.cases.size() + set.excluded.size(), 14u);
  EXPECT_GE(set.cases.size(), 11u);
  for (const auto& [id, reason] : set.excluded) EXPECT_GT(reason.size(), 20u) << id;
}

TEST(VllmExtraAccuracy, WeightsWithinTargets) { expect_weights_within_targets(vllm_extra_comparisons()); }

// These records carry tokens but no block count: the check goes through the planner's
// KV groups and block size (reported_blocks), so it still pins KV bytes per token.
TEST(VllmExtraAccuracy, KvBytesPerTokenExact) { EXPECT_GE(expect_kv_bytes_per_token_exact(vllm_extra_comparisons()), 11); }

TEST(VllmExtraAccuracy, KvCapacityWithinTargets) { expect_kv_capacity_within_targets(vllm_extra_comparisons()); }

TEST(VllmExtraAccuracy, ConcurrencyFollowsTheGroupRules) { expect_concurrency_follows_group_rules(vllm_extra_comparisons()); }

// llm-d-planner's microsoft-phi-2 run at --max-model-len 8192 (…--8192.FAILED.log, same commit) stopped
// at start-up: "User-specified max_model_len (8192) is greater than the derived max_model_len
// (max_position_embeddings=2048.0 ...)". phi-2 has no rope scaling, so the planner refuses it too,
// while the 2048 run of the same model plans (the record above).
TEST(VllmExtraAccuracy, Phi2BeyondItsPositionsIsRefusedAsVllmDid) {
  const auto set = load_vllm_extra_records();
  const auto it = std::find_if(set.cases.begin(), set.cases.end(), [](const VllmCase& c) { return c.id == "llmd-v019-phi2-2048"; });
  ASSERT_NE(it, set.cases.end());
  auto q = vllm_request(*it);
  EXPECT_TRUE(memory::run_plan(q, DataRoot{source_dir()}).plan.fits);
  q.args["max-model-len"] = "8192";
  const auto refused = memory::run_plan(q, DataRoot{source_dir()}).plan;
  EXPECT_FALSE(refused.fits);
  EXPECT_NE(refused.reason.find("User-specified max_model_len (8192) is greater than the derived max_model_len "
                                "(max_position_embeddings=2048"),
            std::string::npos)
      << refused.reason;
}

}  // namespace
}  // namespace vramplan::test
