// `vramplan reconcile` end to end through the real executable.
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/json_schema.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/bytes.hpp"

namespace vramplan::test {
namespace {

std::string reconcile_vllm_fixture(const char* name) { return fixture(std::string("logs/vllm/") + name).string(); }

TEST(ReconcileCli, JsonMatchesItsSchema) {
  const auto j = run_cli_json({"reconcile", "--log", reconcile_vllm_fixture("qwen3-8b.log")});
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs/schemas/reconcile.schema.json"));
  const auto violations = schema_violations(j, schema);
  EXPECT_TRUE(violations.empty()) << (violations.empty() ? "" : violations.front());
  EXPECT_EQ(j.at("planned_as").at("model"), "qwen3-8b");
  EXPECT_EQ(j.at("log").at("engine_version"), "0.19.0");
  EXPECT_EQ(j.at("components").size(), 7u);
}

TEST(ReconcileCli, TableShowsLogPlanAndVerdict) {
  const auto r = run_cli({"reconcile", "--log", reconcile_vllm_fixture("llama-3.1-8b-tp1.log"), "--gpu", "h100-sxm-80"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"planned as: --model llama-3.1-8b-instruct", "KV cache (GiB)", "58.11", "within",
                        "components outside their bound"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

TEST(ReconcileCli, UnrecognisedLogsExitSeven) {
  ScratchDir dir;
  const auto other = dir.write("other.log", "INFO:     Uvicorn running on http://0.0.0.0:8000\n");
  const auto r = run_cli({"reconcile", "--log", other.string()});
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.err, "vramplan: error: " + other.string() +
                       ":1: not a line of a vLLM, SGLang, llama.cpp, ollama or TensorRT-LLM start-up log (the formats reconcile reads): "
                       "'INFO:     Uvicorn running on http://0.0.0.0:8000'\n");
  const auto quiet = dir.write("quiet.log", "INFO 04-22 00:03:36 [config/model.py:549] Resolved architecture: X\n");
  const auto j = run_cli_json({"reconcile", "--log", quiet.string()}, 7);
  EXPECT_EQ(j.at("error").at("kind"), "unrecognised-log");
  EXPECT_EQ(run_cli({"reconcile"}).exit_code, 2);  // --log is required
  EXPECT_EQ(run_cli({"reconcile", "--log", (dir.path() / "absent.log").string()}).exit_code, 5);
}

// The round trip of docs/reconcile.md: the deployment figures of a vLLM log go into a calibration
// file, and the plan command reconcile prints for it reproduces the logged KV pool. The log
// (llama-3.1-8b-tp1.log) states non-torch 0.25, activation peak 1.89 and graphs 0.91 GiB; with
// them the pool is 0.95 x 79.19 - 14.99 - 1.89 - 0.25 = 58.10 GiB (58.11 logged): within 0.1 %.
TEST(ReconcileCli, UpdateCalibrationReproducesTheLoggedKvPool) {
  ScratchDir dir;
  const auto cal = (dir.path() / "deploy.json").string();
  const auto j = run_cli_json({"reconcile", "--log", reconcile_vllm_fixture("llama-3.1-8b-tp1.log"), "--gpu", "h100-sxm-80",
                               "--update-calibration", cal});
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs/schemas/reconcile.schema.json"));
  const auto violations = schema_violations(j, schema);
  EXPECT_TRUE(violations.empty()) << (violations.empty() ? "" : violations.front());
  const auto& entry = j.at("calibration_updated").at("deployment");
  EXPECT_EQ(entry.at("model"), "llama-3.1-8b-instruct");
  EXPECT_EQ(entry.at("gpu"), "h100-sxm-80");
  EXPECT_EQ(entry.at("figures").at("non_torch_bytes"), Bytes::from_gib(0.25).count());
  EXPECT_EQ(entry.at("figures").at("activation_peak_bytes"), Bytes::from_gib(1.89).count());
  EXPECT_EQ(entry.at("figures").at("cuda_graph_bytes"), Bytes::from_gib(0.91).count());
  // The printed command, run as printed.
  const std::string replan = j.at("calibration_updated").at("replan");
  ASSERT_EQ(replan.rfind("vramplan plan ", 0), 0u) << replan;
  std::vector<std::string> args;
  std::istringstream words(replan.substr(9));
  for (std::string w; words >> w;) args.push_back(w);
  const auto plan = run_cli_json(args);
  const double kv = plan.at("engine_view").at("kv_cache_gib");
  EXPECT_NEAR(kv, 58.11, 58.11 * 0.001) << replan;
  const std::string memory = plan.at("calibration").at("memory");
  EXPECT_NE(memory.find("from calibration " + cal), std::string::npos) << memory;
  // Without the file the modelled figures give the plan of reconcile's table (58.09 GiB).
  EXPECT_NE(plan.at("notes").dump().find("llama-3.1-8b-tp1.log"), std::string::npos);
  // A second run updates the entry in place.
  run_cli_json({"reconcile", "--log", reconcile_vllm_fixture("llama-3.1-8b-tp1.log"), "--gpu", "h100-sxm-80",
                "--update-calibration", cal});
  EXPECT_EQ(nlohmann::json::parse(read_text(cal)).at("deployment").size(), 1u);
}

TEST(ReconcileCli, UpdateCalibrationTakesVllmLogsOnly) {
  ScratchDir dir;
  const auto r = run_cli({"reconcile", "--log", fixture("logs/sglang/docs-llama31-8b-h100-tp1.log").string(), "--gpu",
                          "h100-sxm-80", "--engine", "sglang@0.4.1", "--update-calibration", (dir.path() / "c.json").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--update-calibration takes vLLM logs only"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "c.json"));
}

}  // namespace
}  // namespace vramplan::test
