// `vramplan sweep --mode train`: the vramplan.train-sweep/1 document, its ranking by the run's
// cost, agreement with `train` for the same layout, and the bounded search space.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/json_schema.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

nlohmann::json train_sweep_doc(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"sweep", "--mode", "train", "--model", "llama-3.2-1b", "--gpu", "h100-sxm-80,rtx-4090",
                                   "--gpus", "1,2", "--sharding", "none,zero3", "--grad-checkpointing", "none,full",
                                   "--seq-len", "4096", "--micro-batch", "4", "--tokens", "1B", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(TrainSweepCli, RanksFittingLayoutsByRunCostAndListsTheRest) {
  const auto j = train_sweep_doc({});
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs/schemas/train-sweep.schema.json"));
  EXPECT_TRUE(schema_violations(j, schema).empty()) << schema_violations(j, schema).front();
  // 2 GPUs x 2 counts x 2 shardings x 2 recomputations, each either a row or a miss.
  EXPECT_EQ(j["evaluations"], 16);
  EXPECT_EQ(j["rows"].size() + j["not_fitting"].size(), 16u);
  EXPECT_GT(j["rows"].size(), 0u);
  EXPECT_GT(j["not_fitting"].size(), 0u);  // the 24 GB card without recomputation
  double last = 0;
  std::map<std::string, double> usd_per_gpu_hour;
  for (const auto& row : j["rows"]) {
    const double cost = row["cost_usd"].get<double>(), hours = row["hours"].get<double>();
    EXPECT_GE(cost, last);
    last = cost;
    EXPECT_NEAR(hours, 1e9 / row["tokens_per_s"].get<double>() / 3600, 1e-9 * hours);
    // One price per GPU: cost / (billed GPUs x hours) is the same for every row of a card.
    const double price = cost / (row["billed_gpus"].get<double>() * hours);
    const auto [it, fresh] = usd_per_gpu_hour.emplace(row["gpu"], price);
    if (!fresh) {
      EXPECT_NEAR(it->second, price, 1e-9 * price);
    }
    EXPECT_LE(row["peak_allocated_bytes"].get<std::uint64_t>(), row["capacity_bytes"].get<std::uint64_t>());
  }
  for (const auto& miss : j["not_fitting"])
    EXPECT_NE(miss["why"].get<std::string>().find("peak allocated"), std::string::npos) << miss["why"];
}

TEST(TrainSweepCli, ARowIsWhatTrainSaysForThatLayout) {
  const auto j = train_sweep_doc({});
  const auto& row = j["rows"][0];
  const auto t = run_cli({"train", "--model", "llama-3.2-1b", "--gpu", row["gpu"], "--gpus", std::to_string(row["gpus"].get<int>()),
                          "--sharding", row["sharding"], "--grad-checkpointing", row["recompute"], "--seq-len", "4096",
                          "--micro-batch", "4", "--tokens", "1B", "--format", "json"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const auto p = nlohmann::json::parse(t.out);
  EXPECT_EQ(p["peak_allocated_bytes"], row["peak_allocated_bytes"]);
  EXPECT_DOUBLE_EQ(p["run"]["hours"]["expected"].get<double>(), row["hours"].get<double>());
  EXPECT_EQ(p["run"]["rental"]["period"], row["rental_period"]);
}

TEST(TrainSweepCli, TextShowsTheTableTheBoundAndTheMisses) {
  const auto r = run_cli({"sweep", "--mode", "train", "--model", "llama-3.2-1b", "--gpu", "h100-sxm-80,rtx-4090", "--gpus", "1,2",
                          "--seq-len", "4096", "--micro-batch", "4", "--tokens", "1B"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"cheapest run first", "$ run", "layouts (search bounded at 4096)", "not fitting:", "rtx-4090 x1 none"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

TEST(TrainSweepCli, RefusesAnUnboundedSpaceAndAMissingRunLength) {
  // 64 counts (the most one list flag takes) over every card: 40 x 64 x 2 x 2 = 10,240 layouts.
  std::string counts = "1";
  for (int n = 2; n <= 64; ++n) counts += "," + std::to_string(n);
  const auto big = run_cli({"sweep", "--mode", "train", "--model", "llama-3.2-1b", "--gpus", counts, "--tokens", "1B"});
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("more than the 4096"), std::string::npos) << big.err;
  const auto long_list = run_cli({"sweep", "--mode", "train", "--model", "llama-3.2-1b", "--gpus", counts + ",65", "--tokens", "1B"});
  EXPECT_EQ(long_list.exit_code, 2);
  EXPECT_EQ(long_list.err, "vramplan: error: --gpus: at most 64 entries, got 65\n");
  const auto no_tokens = run_cli({"sweep", "--mode", "train", "--model", "llama-3.2-1b", "--gpu", "h100-sxm-80"});
  EXPECT_EQ(no_tokens.exit_code, 2);
  EXPECT_NE(no_tokens.err.find("--tokens"), std::string::npos) << no_tokens.err;
  EXPECT_EQ(run_cli({"sweep", "--mode", "pretrain", "--model", "llama-3.2-1b"}).exit_code, 2);
}

}  // namespace
}  // namespace vramplan::test
