// `vramplan simulate --cold-start` through the real executable: the stalls it reports, its schema,
// and the one-line refusals (docs/simulator.md#cold-start).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "support/json_schema.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

// Mixtral-8x7B at TP 2 with the blis runs' flags, 600-token prompts at 5 req/s.
std::vector<std::string> mixtral(std::vector<std::string> extra) {
  std::vector<std::string> args = {"simulate", "--model", "mixtral-8x7b", "--gpu", "h100-sxm-80", "--engine", "vllm",
                                   "--tensor-parallel-size", "2", "--max-model-len", "4096",
                                   "--max-num-batched-tokens", "2048", "--max-num-seqs", "128", "--rate", "5",
                                   "--arrivals", "constant", "--input-len", "600", "--output-len", "100",
                                   "--requests", "500"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(SimulateColdStartCli, ReportsTheFirstUseStallsAndMatchesTheSchema) {
  const auto cold = run_cli_json(mixtral({"--cold-start"}));
  const auto warm = run_cli_json(mixtral({}));
  const auto& c = cold.at("step_time").at("cold_start");
  // Steps of 600 prompt tokens + a few decodes run beyond the captured graphs (256 tokens):
  // at least one new variant compiles.
  EXPECT_GE(c.at("first_uses").get<int>(), 1);
  EXPECT_EQ(c.at("graph_tokens"), 256);  // min(2 x 128, 512, 2048)
  EXPECT_DOUBLE_EQ(c.at("stalled_s").get<double>(), c.at("first_uses").get<double>() * c.at("compile_s").get<double>());
  EXPECT_FALSE(warm.at("step_time").contains("cold_start"));
  EXPECT_GT(cold.at("latency_ms").at("ttft").at("max").get<double>(),
            warm.at("latency_ms").at("ttft").at("max").get<double>());
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs" / "schemas" / "simulate.schema.json"));
  const auto violations = schema_violations(cold, schema);
  EXPECT_TRUE(violations.empty()) << (violations.empty() ? "" : violations.front());
}

TEST(SimulateColdStartCli, RefusedWhereItIsNotModelled) {
  const CliResult sglang = run_cli({"simulate", "--model", "mixtral-8x7b", "--gpu", "h100-sxm-80", "--engine", "sglang",
                                    "--tp-size", "2", "--rate", "5", "--requests", "100", "--input-len", "600",
                                    "--output-len", "100", "--cold-start"});
  EXPECT_NE(sglang.exit_code, 0);
  EXPECT_NE(sglang.err.find("--engine vllm only"), std::string::npos) << sglang.err;
  const CliResult search = run_cli(mixtral({"--cold-start", "--slo", "p99_ttft<=1s", "--find-max-rate"}));
  EXPECT_NE(search.exit_code, 0);
  EXPECT_NE(search.err.find("--cold-start applies to one run"), std::string::npos) << search.err;
}

}  // namespace
}  // namespace vramplan::test
