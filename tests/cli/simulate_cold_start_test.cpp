// `vramplan simulate --cold-start` through the real executable: the stalls it reports, its schema,
// and the one-line refusals (docs/simulator.md#cold-start).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "exit_codes.hpp"
#include "support/cli_env.hpp"
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

// `args` with the value of `flag` (one mixtral() gives) replaced.
std::vector<std::string> with(std::vector<std::string> args, const std::string& flag, const std::string& value) {
  *(std::find(args.begin(), args.end(), flag) + 1) = value;
  return args;
}

// `args` without `flag` and its value.
std::vector<std::string> without(std::vector<std::string> args, const std::string& flag) {
  const auto at = std::find(args.begin(), args.end(), flag);
  args.erase(at, at + 2);
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
  EXPECT_EQ(sglang.exit_code, cli::kExitUsage);
  EXPECT_NE(sglang.err.find("--engine vllm only"), std::string::npos) << sglang.err;
  const CliResult hf = run_cli({"simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "hf", "--rate",
                                "1", "--requests", "20", "--input-len", "100", "--output-len", "10", "--cold-start"});
  EXPECT_EQ(hf.exit_code, cli::kExitUsage);
  EXPECT_EQ(hf.err, "vramplan: error: simulate: --cold-start is modelled for --engine vllm only "
                    "(docs/simulator.md#cold-start: what hf compiles at first use is not)\n");
  // Every capacity search is refused with the same line (plan/capacity_report.cpp).
  const std::string many = "vramplan: error: --cold-start applies to one run of a freshly started server, not to "
                           "--find-max-rate, --target-rate or --workers\n";
  for (const auto& args : {mixtral({"--cold-start", "--slo", "p99_ttft<=1s", "--find-max-rate"}),
                           mixtral({"--cold-start", "--slo", "p99_ttft<=1s", "--target-rate", "20"}),
                           // an offline job: everything at t = 0, so no arrival process
                           with(without(mixtral({"--cold-start", "--workers", "2"}), "--arrivals"), "--rate", "inf")}) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, cli::kExitUsage) << args.back();
    EXPECT_EQ(r.err, many) << args.back();
  }
}

// A data root (VRAMPLAN_DATA): a copy of the repository's data/ (models/ linked: only
// data/cold_start.json changes), whose cold_start.json each test writes or removes.
class ColdStartDataRoot {
 public:
  ColdStartDataRoot() {
    namespace fs = std::filesystem;
    fs::copy(source_dir() / "data", dir_.path() / "data", fs::copy_options::recursive);
    fs::create_directory_symlink(source_dir() / "models", dir_.path() / "models");
    fs::remove(file());
  }
  std::filesystem::path file() const { return dir_.path() / "data" / "cold_start.json"; }
  void write(const std::string& body) const { dir_.write("data/cold_start.json", body); }
  CliResult run(const std::string& cold_start = "--cold-start") const {
    return run_cli(with(mixtral({cold_start}), "--requests", "20"), {{}, {{"VRAMPLAN_DATA", dir_.path().string()}}});
  }

 private:
  ScratchDir dir_;
};

TEST(SimulateColdStartCli, MalformedCompileFileIsAOneLineInputFileError) {
  // Found by the CLI's own data-root override; the message names the file and the field.
  const ColdStartDataRoot root;
  for (const std::string body : {R"({"vllm": {"compile_s": -1}})", R"({"vllm": {"compile_s": "1.2"}})", R"({"vllm": 5})",
                                 R"([1, 2])", "{}"}) {
    root.write(body);
    const CliResult r = root.run();
    EXPECT_EQ(r.exit_code, cli::kExitInputFile) << body;
    EXPECT_EQ(r.err, "vramplan: error: " + root.file().string() +
                         ": /vllm/compile_s: a non-negative number of seconds is required\n") << body;
  }
  root.write(R"({"vllm":)");
  const CliResult r = root.run();
  EXPECT_EQ(r.exit_code, cli::kExitInputFile);
  EXPECT_EQ(r.err, "vramplan: error: " + root.file().string() + ": invalid JSON at line 1, column 9\n");
}

TEST(SimulateColdStartCli, MissingCompileFileIsAnIoError) {
  const ColdStartDataRoot root;
  const CliResult r = root.run();
  EXPECT_EQ(r.exit_code, cli::kExitIo);
  EXPECT_EQ(r.err, "vramplan: error: " + root.file().string() + ": no such file\n");
  // Without --cold-start the file is never read.
  EXPECT_EQ(root.run("--quiet").exit_code, cli::kExitOk);
}

}  // namespace
}  // namespace vramplan::test
