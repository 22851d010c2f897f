// vLLM 0.6 - 0.10 accuracy (issue 17 item 1): every record of data/vllm_legacy_logs.jsonl (V0
// engine and the first V1 releases, public GitHub pastes) re-planned through run_plan() with its
// version, GPU and flags, and compared with what vLLM printed. Target: KV capacity median
// |error| <= 2 %, every record within 5 %. Configs and exclusions: data/vllm_legacy_models.json.
#include <map>

#include <gtest/gtest.h>

#include "accuracy/vllm_legacy_records.hpp"

namespace vramplan::test {
namespace {

const std::vector<VllmLegacyComparison>& legacy_comparisons() {
  static const std::vector<VllmLegacyComparison> all = compare_all_legacy(load_vllm_legacy_records());
  return all;
}

TEST(VllmLegacyAccuracy, EveryRecordIsMappedOrExcludedWithAReason) {
  const auto set = load_vllm_legacy_records();
  EXPECT_EQ(set.cases.size() + set.excluded.size(), 7u);
  EXPECT_GE(set.cases.size(), 6u);
  for (const auto& [id, reason] : set.excluded) EXPECT_GT(reason.size(), 20u) << id;
  for (const auto& c : set.cases) {
    EXPECT_FALSE(c.record.at("source").get<std::string>().empty()) << c.id;
    EXPECT_FALSE(c.record.at("version_basis").get<std::string>().empty()) << c.id;
    EXPECT_FALSE(c.record.at("log_lines").empty()) << c.id;
  }
}

// Each record's version selects the profile of its release (data/engines/vllm.json ranges).
TEST(VllmLegacyAccuracy, EachVersionPlansWithItsReleaseProfile) {
  const std::map<std::string, std::string> expected = {
      {"0.6.4", "0.6.4"}, {"0.6.4.post1", "0.6.4"}, {"0.6.5", "0.6.5"}, {"0.7.2", "0.6.5"}, {"0.9.2", "0.9.1"}};
  for (const auto& x : legacy_comparisons()) EXPECT_EQ(x.profile, expected.at(x.version)) << x.id;
}

TEST(VllmLegacyAccuracy, KvCapacityWithinTargets) {
  std::vector<double> errors;
  for (const auto& x : legacy_comparisons()) {
    errors.push_back(x.error_pct());
    EXPECT_LE(std::fabs(x.error_pct()), 5.0) << x.id << ": " << x.basis << " predicted " << x.capacity_pred
                                             << ", reported " << x.capacity_rep;
  }
  EXPECT_LE(median_abs(errors), 2.0);
}

// Weights where the log prints them ("Loading model weights took" / "Model loading took"): the
// plain-dtype target of the V1 records, 0.5 %.
TEST(VllmLegacyAccuracy, WeightsWithinTargets) {
  int checked = 0;
  for (const auto& x : legacy_comparisons()) {
    if (!x.weights_rep) continue;
    EXPECT_LE(std::fabs(pct(x.weights_pred, *x.weights_rep)), 0.5) << x.id << ": " << x.weights_pred << " vs " << *x.weights_rep;
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

// Where one worker's pool and block count are both printed, pool / predicted block size must give
// the block count to within the 0.005 GiB print rounding: checks KV bytes per token exactly.
TEST(VllmLegacyAccuracy, KvBytesPerTokenExact) {
  int checked = 0;
  for (const auto& x : legacy_comparisons()) {
    if (x.basis != "blocks" || !x.kv_rep_gib) continue;
    const double implied = *x.kv_rep_gib * static_cast<double>(kGiB) / static_cast<double>(x.block_bytes);
    const double slack = 0.005 * static_cast<double>(kGiB) / static_cast<double>(x.block_bytes) + 1;
    EXPECT_LE(std::fabs(implied - x.capacity_rep), slack) << x.id << " block " << x.block_bytes;
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

// vLLM refused two of these starts (max_model_len above the KV capacity); the planner refuses
// them in V0's words (worker.py raise_if_cache_size_invalid) and accepts the others.
TEST(VllmLegacyAccuracy, RefusalsAsVllmDid) {
  for (const auto& x : legacy_comparisons()) {
    EXPECT_EQ(!x.fits, x.refused) << x.id << ": " << x.reason;
    if (x.refused) {
      EXPECT_NE(x.reason.find("is larger than the maximum number of tokens that can be stored in KV cache"), std::string::npos)
          << x.reason;
    }
  }
}

// V0's profile-run batch (vllm/config.py SchedulerConfig): below 32K the whole context, above it
// chunked prefill with 2048 tokens (0.6.5+); max_num_seqs 256.
TEST(VllmLegacyAccuracy, V0SchedulerDefaultsFollowTheContextLength) {
  // record -> max_num_batched_tokens, max_num_seqs the planner derives (no flag gives them)
  const std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> expected = {
      {"gh-vllm-10517-llama31-8b-3090-20k", {20000, 256}},        // whole context (< 32K)
      {"gh-vllm-10360-qwen25-32b-awq-a6000", {4096, 256}},        // max(4096, 2048)
      {"gh-vllm-pr10511-llama3-8b-h100-tp1", {8192, 256}},        // the config's 8192
      {"gh-vllm-13061-r1-distill-qwen14b-4090-tp2", {2048, 256}}, // 131072 > 32K: chunked, 2048 (0.6.5+)
      {"tokenkaki-qwen3-8b-a100-40gb", {2048, 256}},              // V1 0.9: an A100 is in the small class
  };
  for (const auto& x : legacy_comparisons()) {
    const auto it = expected.find(x.id);
    if (it == expected.end()) continue;
    EXPECT_EQ(x.max_num_batched_tokens, it->second.first) << x.id;
    EXPECT_EQ(x.max_num_seqs, it->second.second) << x.id;
  }
}

}  // namespace
}  // namespace vramplan::test
