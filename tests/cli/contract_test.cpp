// What a script can rely on (probe D, 2026-12-08): reconcile's planned_as, model contradictions,
// undefined percentages and line counts; output-format contradictions; error / version objects
// against their schemas; explain's verdict; report's batch table equal to check --batch-range's;
// --prompt-len beyond the engine's length; C1 controls in messages; headroom in the verdict line;
// mxfp4 on a dense model.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/json_schema.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

std::string contract_log(const char* name) { return fixture(std::string("logs/") + name).string(); }

nlohmann::json contract_schema(const char* file) {
  return nlohmann::json::parse(read_text(source_dir() / "docs" / "schemas" / file));
}

void expect_valid(const nlohmann::json& doc, const char* schema_file) {
  const auto violations = schema_violations(doc, contract_schema(schema_file));
  EXPECT_TRUE(violations.empty()) << schema_file << ": " << (violations.empty() ? "" : violations.front());
}

TEST(ReconcileContract, PlannedAsNamesTheWeights) {
  const std::string log = contract_log("vllm/llama-3.1-8b-tp1.log");
  const auto r = run_cli({"reconcile", "--log", log, "--weights", "fp8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string planned = r.out.substr(r.out.find("planned as:"), r.out.find('\n', r.out.find("planned as:")) - r.out.find("planned as:"));
  EXPECT_NE(planned.find(" --weights fp8 "), std::string::npos) << planned;
  const auto j = run_cli_json({"reconcile", "--log", log, "--weights", "fp8"});
  EXPECT_EQ(j.at("planned_as").at("weights"), "fp8");
  expect_valid(j, "reconcile.schema.json");
  // Without --weights the log's checkpoint is planned: no weights field.
  EXPECT_FALSE(run_cli_json({"reconcile", "--log", log}).at("planned_as").contains("weights"));
}

TEST(ReconcileContract, AContradictedModelIsNamed) {
  // The log names meta-llama/Llama-3.1-8B-Instruct (32 layers, FFN 14336, vocabulary 128256);
  // Qwen3-8B has 36 layers, FFN 12288, vocabulary 151936 (models/*.json).
  const std::string log = contract_log("vllm/llama-3.1-8b-tp1.log");
  const auto r = run_cli({"reconcile", "--log", log, "--model", "qwen3-8b"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("model: the log names 'meta-llama/Llama-3.1-8B-Instruct' (catalogue llama-3.1-8b-instruct: layers 32, "
                       "intermediate size 14336, vocabulary 128256); --model qwen3-8b has layers 36, intermediate size "
                       "12288, vocabulary 151936: another model than the log's"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("weights: likely cause: another model than the log's"), std::string::npos) << r.out;
  const auto j = run_cli_json({"reconcile", "--log", log, "--model", "qwen3-8b"});
  ASSERT_EQ(j.at("model_mismatch").size(), 1u);
  expect_valid(j, "reconcile.schema.json");
  // The log's own model, or --model of the same architecture: nothing to say.
  EXPECT_FALSE(run_cli_json({"reconcile", "--log", log}).contains("model_mismatch"));
  EXPECT_FALSE(run_cli_json({"reconcile", "--log", log, "--model", "llama-3.1-8b"}).contains("model_mismatch"));
}

TEST(ReconcileContract, ALlamaCppLogStatesItsArchitecture) {
  // open_llama 7B v2: n_head_kv 32, n_ff 11008 at lines 13 and 15 (n_vocab at line 9 first);
  // Llama-3.1-8B has 8 KV heads and an FFN of 14336. n_embd 4096, n_head 32 and n_layer 32 agree.
  const std::string log = contract_log("llamacpp/open_llama_7b_v2-q4_k-ctx512.log");
  const auto r = run_cli({"reconcile", "--log", log, "--gpu", "v100-16", "--model", "llama-3.1-8b"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("model: the log states n_head_kv 32, n_ff 11008 (model params 6.74 B) at line 9; --model "
                       "llama-3.1-8b has n_head_kv 8, n_ff 14336"),
            std::string::npos)
      << r.out;
  const auto own = run_cli_json({"reconcile", "--log", log, "--gpu", "v100-16", "--model",
                                 fixture("logs/llamacpp/open_llama_7b_v2").string()});
  EXPECT_FALSE(own.contains("model_mismatch")) << own.dump(1);
}

TEST(ReconcileContract, APlannedZeroHasNoPercentageAndTheMisfitIsSaid) {
  // Llama-3.1-70B's 131 GiB of bf16 weights on the log's 79.19 GiB card: no KV cache planned.
  const std::string log = contract_log("vllm/llama-3.1-8b-tp1.log");
  const auto j = run_cli_json({"reconcile", "--log", log, "--model", "llama-3.1-70b"});
  expect_valid(j, "reconcile.schema.json");
  EXPECT_EQ(j.at("planned_as").at("fits"), false);
  EXPECT_FALSE(j.at("planned_as").at("does_not_fit").get<std::string>().empty());
  std::size_t zero_rows = 0;
  for (const auto& row : j.at("components")) {
    if (row.at("planned").get<double>() != 0) {
      EXPECT_TRUE(row.at("difference_pct").is_number()) << row.dump();
      continue;
    }
    ++zero_rows;
    EXPECT_TRUE(row.at("difference_pct").is_null()) << row.dump();
  }
  EXPECT_GE(zero_rows, 2u);  // KV cache and KV tokens
  const auto r = run_cli({"reconcile", "--log", log, "--model", "llama-3.1-70b"});
  EXPECT_NE(r.out.find("\nthe planned configuration does not fit: "), std::string::npos) << r.out;
  // The KV cache row (planned 0) has no percentage: "-" where "+0.00 %" was.
  const auto kv = r.out.find("KV cache (GiB)");
  ASSERT_NE(kv, std::string::npos) << r.out;
  const std::string kv_row = r.out.substr(kv, r.out.find('\n', kv) - kv);
  EXPECT_EQ(kv_row.find('%'), std::string::npos) << kv_row;
  EXPECT_NE(kv_row.find(" - "), std::string::npos) << kv_row;
}

TEST(ReconcileContract, RecognisedLinesNeverExceedTheLines) {
  // llama-3.1-8b-tp1.log: 10 lines, each stating a figure or a setting; "Memory profiling takes"
  // gives two figures on one line (11 "lines read" before 2026-12-08).
  const auto j = run_cli_json({"reconcile", "--log", contract_log("vllm/llama-3.1-8b-tp1.log")});
  EXPECT_EQ(j.at("log").at("lines"), 10);
  EXPECT_EQ(j.at("log").at("lines_recognised"), 10);
  for (const char* name : {"vllm/llama-3.1-8b-tp2.log", "vllm/llama-3.1-8b-pp2.log", "vllm/qwen3-8b.log"}) {
    const auto k = run_cli_json({"reconcile", "--log", contract_log(name)});
    EXPECT_LE(k.at("log").at("lines_recognised").get<int>(), k.at("log").at("lines").get<int>()) << name;
  }
}

TEST(OutputFormatContract, TwoFormatsAreRefused) {
  const auto plan = run_cli({"plan", "--model", "llama-3.1-8b", "--gpu", "l40s", "--format", "table", "--json"});
  EXPECT_EQ(plan.exit_code, 2);
  EXPECT_EQ(plan.err, "vramplan: error: --json and --format table ask for two output formats: give one\n");
  // The error object is still JSON, as --json promises.
  expect_valid(nlohmann::json::parse(plan.out), "error.schema.json");
  // --format json --json agree: no contradiction.
  EXPECT_EQ(run_cli({"version", "--format", "json", "--json"}).exit_code, 0);
  const auto trial = run_cli({"trial", "--model", "llama-3.1-8b", "--gpu", "l40s", "--format", "csv", "--json"});
  EXPECT_EQ(trial.exit_code, 2);
  EXPECT_EQ(trial.err, "vramplan: error: --format csv and --json ask for two output formats: give one\n");
  // trial's help names csv; plan's unknown-format error lists what plan writes.
  EXPECT_NE(run_cli({"trial", "--help"}).out.find("output format: table, json or csv"), std::string::npos);
  EXPECT_EQ(run_cli({"plan", "--model", "llama-3.1-8b", "--gpu", "l40s", "--format", "xml"}).err,
            "vramplan: error: --format: unknown format 'xml' (table, json)\n");
  EXPECT_EQ(run_cli({"trial", "--model", "llama-3.1-8b", "--gpu", "l40s", "--format", "xml"}).err,
            "vramplan: error: --format: unknown format 'xml' (table, json, csv)\n");
}

TEST(SchemaContract, ErrorAndVersionObjectsMatchTheirSchemas) {
  const auto version = run_cli_json({"version"});
  expect_valid(version, "version.schema.json");
  for (const auto& [args, code] : std::vector<std::pair<std::vector<std::string>, int>>{
           {{"plan", "--model", "no-such-model", "--gpu", "l40s"}, 4},
           {{"plan", "--model", "llama-3.1-8b", "--gpu", "l40s", "--batch", "0"}, 2},
           {{"reconcile", "--log", "/nonexistent/x.log"}, 5}}) {
    const auto j = run_cli_json(args, code);
    expect_valid(j, "error.schema.json");
    EXPECT_EQ(j.at("exit_code"), code);
  }
  // The schema's kinds are the exit-code table's (planner/cli/exit_codes.cpp): unknown-name is one.
  const auto kinds = contract_schema("error.schema.json").at("properties").at("error").at("properties").at("kind").at("enum");
  for (const char* k : {"usage", "input-file", "unknown-name", "io", "internal", "unrecognised-log"})
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), k), kinds.end()) << k;
}

TEST(SchemaContract, ExplainStatesItsVerdictBesideFits) {
  // Llama-3.1-70B on 2 x H100 at 8k: MARGINAL (docs/decisions.md); fits is check's decision, true
  // for MARGINAL unless --conservative, and the verdict tells them apart.
  const std::vector<std::string> args = {"explain", "--model", "llama-3.1-70b", "--gpu", "h100-sxm-80", "-tp", "2",
                                         "--max-model-len", "8192"};
  const auto j = run_cli_json(args);
  expect_valid(j, "explain.schema.json");
  EXPECT_EQ(j.at("verdict"), "MARGINAL");
  EXPECT_EQ(j.at("fits"), true);
  auto conservative = args;
  conservative.push_back("--conservative");
  EXPECT_EQ(run_cli_json(conservative).at("fits"), false);
  const auto schema = contract_schema("explain.schema.json");
  for (const char* field : {"verdict", "warnings"})
    EXPECT_TRUE(schema.at("properties").contains(field)) << field;
}

TEST(PlanContract, APromptBeyondTheEngineLengthIsRefused) {
  const auto r = run_cli({"plan", "--model", "llama-3.1-8b", "--gpu", "l40s", "--max-model-len", "8192", "--prompt-len", "8193"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "vramplan: error: --prompt-len 8193 exceeds the engine's maximum length 8192 (--max-model-len)\n");
  EXPECT_EQ(run_cli({"plan", "--model", "llama-3.1-8b", "--gpu", "l40s", "--max-model-len", "8192", "--prompt-len", "8192"})
                .exit_code,
            0);
}

TEST(PlanContract, NoCommandIsOneErrorLine) {
  const auto r = run_cli({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "vramplan: error: no command given: usage: vramplan <command> [options]; 'vramplan --help' lists the commands\n");
  EXPECT_TRUE(r.out.empty());
}

TEST(PlanContract, C1ControlsAreEscapedInMessagesAndText) {
  const auto r = run_cli({"plan", "--model", "\xc2\x9b" "31mred", "--gpu", "h100-sxm-80"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.err.find("\xc2\x9b"), std::string::npos);
  EXPECT_NE(r.err.find("'\\xc2\\x9b31mred'"), std::string::npos) << r.err;
  // A model directory whose name is not UTF-8: plan's text names it escaped.
  ScratchDir dir;
  const auto folder = dir.path() / "caf\xe9-model";
  std::filesystem::create_directory(folder);
  std::filesystem::copy_file(source_dir() / "models" / "llama-3.2-1b.json", folder / "config.json");
  const auto p = run_cli({"plan", "--model", folder.string(), "--gpu", "l40s", "--max-model-len", "4096"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.out.find("caf\xe9"), std::string::npos);
  EXPECT_NE(p.out.find("caf\\xe9"), std::string::npos) << p.out.substr(0, 400);
}

TEST(CheckContract, TheVerdictLineSaysTheSequencesAreAfterTheHeadroom) {
  // --headroom 30% of the L40S's 44.42 GiB keeps ceil(0.3 x 44.42 GiB) = 13.33 GiB spare.
  const auto r = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "l40s", "--max-model-len", "8192", "--headroom", "0.3"});
  const std::string line = r.out.substr(0, r.out.find('\n'));
  EXPECT_NE(line.find(" beside the 13.33 GiB --headroom 30.0% keeps spare"), std::string::npos) << line;
  EXPECT_NE(run_cli({"check", "--help-all"}).out.find("spare KV pool required, as a share of"),
            std::string::npos);
}

TEST(CheckContract, Mxfp4OnADenseModelIsNoMarlinFallback) {
  // mxfp4 quantizes no tensor of Llama-3.1-8B (no experts): served in bf16, no Marlin padding.
  const auto j = run_cli_json({"plan", "--model", "llama-3.1-8b", "--gpu", "l40s", "--weights", "mxfp4", "--max-model-len", "8192"});
  const auto& compat = j.at("compatibility");
  EXPECT_EQ(compat.at("verdict"), "supported") << compat.dump(1);
  EXPECT_EQ(compat.dump().find("marlin"), std::string::npos) << compat.dump(1);
  // On a model with MXFP4 experts the rule holds (gpt-oss-20b on an L40S, compute capability 8.9).
  const auto moe = run_cli_json({"plan", "--model", "gpt-oss-20b", "--gpu", "l40s", "--max-model-len", "8192"});
  EXPECT_NE(moe.at("compatibility").dump().find("vllm-mxfp4-marlin-ampere"), std::string::npos)
      << moe.at("compatibility").dump(1);
}

}  // namespace
}  // namespace vramplan::test
