// `vramplan reconcile` end to end through the real executable.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/json_schema.hpp"
#include "support/test_support.hpp"

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
  const auto other = dir.write("other.log", "[TensorRT-LLM][INFO] Max KV cache pages per sequence: 2048\n");
  const auto r = run_cli({"reconcile", "--log", other.string()});
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.err, "vramplan: error: " + other.string() +
                       ":1: not a line of a vLLM, SGLang or llama.cpp start-up log (the formats reconcile reads): "
                       "'[TensorRT-LLM][INFO] Max KV cache pages per sequence: 2048'\n");
  const auto quiet = dir.write("quiet.log", "INFO 04-22 00:03:36 [config/model.py:549] Resolved architecture: X\n");
  const auto j = run_cli_json({"reconcile", "--log", quiet.string()}, 7);
  EXPECT_EQ(j.at("error").at("kind"), "unrecognised-log");
  EXPECT_EQ(run_cli({"reconcile"}).exit_code, 2);  // --log is required
  EXPECT_EQ(run_cli({"reconcile", "--log", (dir.path() / "absent.log").string()}).exit_code, 5);
}

}  // namespace
}  // namespace vramplan::test
