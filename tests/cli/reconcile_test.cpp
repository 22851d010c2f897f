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

// vLLM PR #10511's log (December 2024) prints no release: the plan takes the default profile and
// the table says so, since the figures depend on it; a given version says nothing.
TEST(ReconcileCli, AVersionlessLogSaysWhichProfileItWasPlannedOn) {
  const auto log = reconcile_vllm_fixture("gh-vllm-pr10511-llama3-8b-h100-tp1.log");
  const auto r = run_cli({"reconcile", "--log", log, "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80"});
  EXPECT_NE(r.out.find("(the log names no vllm version: planned on the 0.19 profile; give --engine vllm@<version> for "
                       "another)"),
            std::string::npos)
      << r.out;
  const auto v = run_cli({"reconcile", "--log", log, "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "vllm@0.6.5"});
  EXPECT_EQ(v.out.find("names no vllm version"), std::string::npos) << v.out;
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

// SGLang: the log's free memory before loading (and its CUDA graphs, when printed) go into the
// calibration; the printed re-plan sizes the pool from them. The RTX 3090 record had a desktop on
// the card: 22.76 GiB free before loading where the profile plans 23.08 (-4.75 % KV tokens, the
// record's stated reason). With the logged figure the pool is 22.76 x 0.88 - 14.3934 (the planned
// weights, 14.39 logged) = 5.6354 GiB / 57,344 B per token (Qwen2.5-7B: 28 layers x 2 x 4 KV heads x
// 128 x 2 B) = 105,521 tokens (page size 1) against 105,531 logged (+0.01 %).
TEST(ReconcileCli, UpdateCalibrationForSglangReproducesTheLoggedPool) {
  ScratchDir dir;
  const auto cal = (dir.path() / "deploy.json").string();
  const auto j = run_cli_json({"reconcile", "--log", fixture("logs/sglang/my-deepseek-r1-distill-qwen7b-rtx3090-tp1.log").string(),
                               "--model", "qwen2.5-7b", "--gpu", "rtx-3090", "--engine", "sglang@0.4.2",
                               "--update-calibration", cal});
  const auto& entry = j.at("calibration_updated").at("deployment");
  EXPECT_EQ(entry.at("engine"), "sglang");
  EXPECT_EQ(entry.at("figures").at("free_before_load_bytes"), Bytes::from_gib(22.76).count());
  EXPECT_FALSE(entry.at("figures").contains("cuda_graph_bytes"));  // this log prints no capture line
  const std::string replan = j.at("calibration_updated").at("replan");
  std::vector<std::string> args;
  std::istringstream words(replan.substr(9));
  for (std::string w; words >> w;) args.push_back(w);
  const auto plan = run_cli_json(args);
  const double tokens = plan.at("engine_view").at("max_total_num_tokens");
  EXPECT_EQ(tokens, 105521) << replan;
  EXPECT_NEAR(tokens, 105531, 105531 * 0.001) << replan;  // the logged pool, within 0.1 %
  EXPECT_NEAR(plan.at("engine_view").at("free_before_load_gib").get<double>(), 22.76, 1e-9);
  const std::string memory = plan.at("calibration").at("memory");
  EXPECT_NE(memory.find("from calibration " + cal), std::string::npos) << memory;
}

// TensorRT-LLM: #4275's log prints the free memory the pool was sized from (17.83 GiB; the plan's
// 20.81 left out the runtime and decoder buffers: -14.3 % KV tokens). With it in the calibration the
// budget is 0.9 x 17.83 GiB = 17,230,298,726 B / 65,536 B per token (Llama-3.1-8B, FP8 KV: 32 layers
// x 2 x 8 KV heads x 128 x 1 B) = 262,913 tokens, rounded up to 8,217 blocks of 32 = 262,944
// tokens, against 263,008 logged (8,219 blocks; the two-decimal print of 17.83 is worth +-73 tokens).
TEST(ReconcileCli, UpdateCalibrationForTrtllmReproducesTheLoggedPool) {
  ScratchDir dir;
  const auto cal = (dir.path() / "deploy.json").string();
  const auto j = run_cli_json({"reconcile", "--log", fixture("logs/trtllm/gh-trtllm-4275-llama3.1-8b-fp8-rtx5090-engine.log").string(),
                               "--model", "llama-3.1-8b-instruct", "--gpu", "rtx-5090", "--engine", "trtllm@0.19",
                               "--engine-arg", "quantization=fp8", "--engine-arg", "kv-cache-dtype=fp8", "--update-calibration", cal});
  const auto& entry = j.at("calibration_updated").at("deployment");
  EXPECT_EQ(entry.at("engine"), "trtllm");
  EXPECT_EQ(entry.at("figures").at("free_for_kv_bytes"), Bytes::from_gib(17.83).count());
  const std::string replan = j.at("calibration_updated").at("replan");
  std::vector<std::string> args;
  std::istringstream words(replan.substr(9));
  for (std::string w; words >> w;) args.push_back(w);
  const auto plan = run_cli_json(args);
  EXPECT_EQ(plan.at("engine_view").at("max_tokens"), 262944) << replan;
  EXPECT_EQ(plan.at("engine_view").at("kv_blocks"), 8217) << replan;
}

// llama.cpp (and ollama's runner) size their buffers from the flags the log states, by the formulas
// the plan uses: there is no deployment figure to write, and reconcile says why (exit 2, no file).
TEST(ReconcileCli, UpdateCalibrationOnALlamacppLogSaysItsBuffersAreSizedByFormula) {
  ScratchDir dir;
  const auto r = run_cli({"reconcile", "--log", fixture("logs/llamacpp/open_llama_7b_v2-q4_k-ctx512.log").string(), "--model",
                          fixture("logs/llamacpp/open_llama_7b_v2").string(), "--gpu", "v100-16", "--update-calibration",
                          (dir.path() / "c.json").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("the KV buffer is exact"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "c.json"));
}

// A log that states none of the engine's deployment figures (SGLang: the Qwen3-235B record prints
// only its pool) is a usage error naming the lines it would need, and writes nothing.
TEST(ReconcileCli, UpdateCalibrationNeedsALoggedDeploymentFigure) {
  ScratchDir dir;
  const auto r = run_cli({"reconcile", "--log", fixture("logs/sglang/vllm21348-qwen3-235b-fp8-4xh100-tp4.log").string(),
                          "--model", "qwen3-235b-a22b-fp8", "--gpu", "h100-sxm-80", "--engine", "sglang@0.4.9",
                          "--update-calibration", (dir.path() / "c.json").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("the log states none of free memory before loading, CUDA graphs"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "c.json"));
}

}  // namespace
}  // namespace vramplan::test
