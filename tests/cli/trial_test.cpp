// `vramplan trial`: the batch trial ladder end to end, its CSV round trip and the comparison.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>

#include "support/json_schema.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

TEST(TrialCli, EachGroupStopsAtItsFirstLimit) {
  // HF transformers holds every sequence's KV and activations itself: Llama-3.1-8B in bf16 on a
  // 24 GB card runs a short prompt at a few sequences and runs out of memory as the batch grows.
  const CliResult r = run_cli({"trial", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--engine", "hf", "--lengths",
                               "256,4096", "--output-len", "128", "--batches", "1,2,4,8,16,32,64,128", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("schema"), "vramplan.trial/1");
  std::map<std::string, std::vector<nlohmann::json>> groups;
  for (const auto& c : j.at("cells")) groups[c.at("group")].push_back(c);
  ASSERT_EQ(groups.size(), 2u);
  for (const auto& [name, cells] : groups) {
    // Every cell before the last completed its whole batch without an error; the last is the limit.
    for (std::size_t i = 0; i + 1 < cells.size(); ++i) {
      EXPECT_TRUE(cells[i].at("error").is_null()) << name << cells[i].dump();
      EXPECT_EQ(cells[i].at("completed"), cells[i].at("batch"));
    }
    EXPECT_NE(cells.back().at("error").get<std::string>().find("out of memory"), std::string::npos) << name;
    // Longer inputs hit the limit at a smaller batch.
  }
  EXPECT_LE(groups["4096"].size(), groups["256"].size());
  // Time and memory grow with the batch.
  const auto& shorts = groups["256"];
  for (std::size_t i = 1; i + 1 < shorts.size(); ++i)
    EXPECT_GE(shorts[i].at("held_gib").get<double>(), shorts[i - 1].at("held_gib").get<double>());
}

// The "limit" group is the longest request the engine serves: SGLang takes prompt + output below
// --context-length (max_model_len = context_length - 1), so 8192 - 1 - 256 = 7,935 prompt tokens,
// not 7,936 (which it refused at every batch).
TEST(TrialCli, SglangLimitGroupIsTheLongestRequestItServes) {
  const auto j = run_cli_json({"trial", "--engine", "sglang", "--model", "llama-3.1-8b", "--gpu", "l4", "--context-length",
                               "8192", "--lengths", "limit", "--batches", "1,2"});
  ASSERT_FALSE(j.empty());
  for (const auto& c : j.at("cells")) {
    EXPECT_EQ(c.at("input_tokens"), 7935) << c.dump();
    EXPECT_TRUE(c.at("error").is_null()) << c.dump();
    EXPECT_EQ(c.at("completed"), c.at("batch")) << c.dump();
  }
}

TEST(TrialCli, APoolEngineSaysWhatQueuedPartOfTheBatch) {
  // vLLM keeps Llama-3.1-8B's KV in a pool of 12,382 blocks of 16 tokens on an L40S at a 32,768-token
  // context (`vramplan plan`: "KV capacity 198112 tokens, max concurrency 6.05"). A `limit` input
  // (32,512 + 256 = 32,768 tokens, 2,048 blocks) takes a sixth of it, so a batch of 16 runs 6 at
  // once and the rest wait: for the KV pool, and for the 2,048-token step budget that each
  // 32,512-token prompt spends in 16 chunked steps. A batch of 4 fits the pool: only the budget.
  const CliResult r = run_cli({"trial", "--model", "llama-3.1-8b", "--gpu", "l40s", "--engine", "vllm@0.19",
                               "--max-model-len", "32768", "--lengths", "limit", "--batches", "1,4,16", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs" / "schemas" / "trial.schema.json"));
  EXPECT_EQ(schema_violations(j, schema), std::vector<std::string>{});
  const auto& cells = j.at("cells");
  ASSERT_EQ(cells.size(), 3u);
  // Batch 1: nothing waits.
  EXPECT_EQ(cells[0].at("max_running"), 1);
  EXPECT_TRUE(cells[0].at("queued_by").at("most").is_null());
  EXPECT_EQ(cells[0].at("queued_by").at("token_budget").get<double>(), 0.0);
  // Batch 4: all four at once, the budget alone.
  EXPECT_EQ(cells[1].at("max_running"), 4);
  EXPECT_EQ(cells[1].at("queued_by").at("most"), "token_budget");
  EXPECT_EQ(cells[1].at("queued_by").at("kv_pool").get<double>(), 0.0);
  // Batch 16: floor(12,382 / 2,048) = 6 at once, and the pool held some of them.
  EXPECT_EQ(cells[2].at("max_running"), 6);
  EXPECT_EQ(cells[2].at("completed"), 16);
  EXPECT_GT(cells[2].at("queued_by").at("kv_pool").get<double>(), 0.0);
  const CliResult t = run_cli({"trial", "--model", "llama-3.1-8b", "--gpu", "l40s", "--engine", "vllm@0.19",
                               "--max-model-len", "32768", "--lengths", "limit", "--batches", "16"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("KV pool"), std::string::npos) << t.out;
}

TEST(TrialCli, CsvRoundTripComparesPredictedWithMeasured) {
  const CliResult r = run_cli({"trial", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--lengths", "typical",
                               "--batches", "1,2", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("group,input_tokens,output_tokens,batch,completed,total_s,held_gib,in_use_gib,error,"
                        "measured_completed,measured_total_s,measured_peak_gib,measured_error\n", 0), 0u);
  // Fill the measured columns of the first row: 1 completed in 4.0 s at 70 GiB.
  std::string csv = r.out;
  const std::size_t row1 = csv.find('\n') + 1;
  const std::size_t end1 = csv.find('\n', row1);
  csv.replace(end1 - 4, 4, ",1,4.0,70,");
  ScratchDir dir;
  const auto path = dir.write("trial.csv", csv);
  const CliResult c = run_cli({"trial", "--compare", path.string(), "--json"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const auto j = nlohmann::json::parse(c.out);
  ASSERT_EQ(j.at("rows").size(), 2u);
  EXPECT_EQ(j.at("rows")[0].at("measured").at("completed"), 1);
  EXPECT_DOUBLE_EQ(j.at("rows")[0].at("measured").at("total_s").get<double>(), 4.0);
  EXPECT_TRUE(j.at("rows")[1].at("measured").at("total_s").is_null());
  // The same file with CRLF line ends (a spreadsheet's or Python csv's) reads the same.
  std::string crlf;
  for (const char ch : csv) crlf += ch == '\n' ? std::string("\r\n") : std::string(1, ch);
  const CliResult w = run_cli({"trial", "--compare", dir.write("trial-crlf.csv", crlf).string(), "--json"});
  ASSERT_EQ(w.exit_code, 0) << w.err;
  EXPECT_EQ(nlohmann::json::parse(w.out).at("rows"), j.at("rows"));
  // A damaged file names the file, the line and the column.
  const auto bad = dir.write("bad.csv", csv.substr(0, row1) + "typical,1024,256,1,1,x,1,1,,,,,\n");
  const CliResult e = run_cli({"trial", "--compare", bad.string()});
  EXPECT_EQ(e.exit_code, 3) << e.err;
  EXPECT_NE(e.err.find("bad.csv"), std::string::npos);
  EXPECT_NE(e.err.find("line 2"), std::string::npos);
  EXPECT_NE(e.err.find("total_s"), std::string::npos);
  // 1e300 tokens was cast to a uint64 (undefined behaviour) and 1e300 seconds printed as 300 digits:
  // every figure is at most 1e15, and a count a whole number (1.5 requests was read as 1).
  for (const auto& [v, why] : std::vector<std::pair<std::string, std::string>>{
           {"1e300", "is not a number from 0 to 1e15"}, {"1.5", "is not a whole number"}}) {
    const auto big = dir.write("big.csv", csv.substr(0, row1) + "typical," + v + ",256,1,1,1,1,1,,,,,\n");
    const CliResult b = run_cli({"trial", "--compare", big.string()});
    EXPECT_EQ(b.exit_code, 3) << v << ": " << b.out << b.err;
    EXPECT_NE(b.err.find("line 2: input_tokens: '" + v + "' " + why), std::string::npos) << b.err;
  }
  const auto slow = dir.write("slow.csv", csv.substr(0, row1) + "typical,1024,256,1,1,1e300,1,1,,,,,\n");
  EXPECT_NE(run_cli({"trial", "--compare", slow.string()}).err.find("line 2: total_s: '1e300' is not a number from 0 to 1e15"),
            std::string::npos);
  // The file's text is shown, never sent: an escape sequence in a column comes out as \x1b.
  const auto escaped = dir.write("esc.csv", csv.substr(0, row1) + "typical,1024,256,1,1,1,1,1,,,,,\x1b[31mred\n");
  const CliResult t = run_cli({"trial", "--compare", escaped.string()});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.out.find('\x1b'), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("\\x1b[31mred"), std::string::npos) << t.out;
}

}  // namespace
}  // namespace vramplan::test
