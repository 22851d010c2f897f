// `vramplan report`: the page it writes holds the sweep's answer (same recommendation, same
// costs), one chart per kind asked for, no script and nothing loaded from elsewhere; text from a
// user's files is escaped; a bad --out is a one-line error with exit 5 (docs/errors.md).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "support/json_schema.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ReportCli, PageCarriesTheSweepsRecommendationAndCosts) {
  ScratchDir dir;
  const auto out = dir.path() / "quote.html";
  const std::vector<std::string> sweep_args = {"--model", "llama-3.1-8b", "--gpu", "l40s,h100-sxm-80", "--max-model-len", "8192",
                                               "--context", "8192", "--batch", "1,16"};
  std::vector<std::string> args = {"report"};
  args.insert(args.end(), sweep_args.begin(), sweep_args.end());
  args.insert(args.end(), {"--out", out.string()});
  const CliResult r = run_cli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + out.string()), std::string::npos) << r.out;
  const std::string html = read_text(out);
  ASSERT_FALSE(html.empty());

  std::vector<std::string> sargs = {"sweep"};
  sargs.insert(sargs.end(), sweep_args.begin(), sweep_args.end());
  const auto sweep = run_cli_json(sargs);
  ASSERT_FALSE(sweep["rows"].empty());
  const auto& best = sweep["rows"][0];
  // The recommended layout is the sweep's first row, with its cost for each period.
  EXPECT_NE(html.find("<tr><th>GPU</th><td>" + best["gpu"].get<std::string>() + "</td></tr>"), std::string::npos);
  for (std::size_t k = 0; k < sweep["periods"].size(); ++k) {
    char usd[64];
    std::snprintf(usd, sizeof usd, "USD %.0f", best["cost_usd"][k].get<double>());
    EXPECT_NE(html.find("<tr><th>cost for " + sweep["periods"][k]["label"].get<std::string>() + "</th><td>" + usd),
              std::string::npos) << usd;
  }
  // Memory chart (one), throughput, TPOT and TTFT vs batch: 4 drawings; 2 GPU options x 3 bars.
  EXPECT_EQ(count_of(html, "<svg "), 4u);
  EXPECT_EQ(count_of(html, "<line class=\"limit\""), 2u);
  for (const char* section : {"Inputs", "Recommended layout", "Alternatives from the sweep", "Memory per GPU option",
                              "Batch range of the recommended layout", "Accuracy basis and upper bounds"})
    EXPECT_NE(html.find(std::string(">") + section + "</h2>"), std::string::npos) << section;
  EXPECT_NE(html.find("accuracy_bounds.json"), std::string::npos);
  // Self-contained: no script, nothing that makes a browser fetch (the browser test checks too).
  for (const char* fetch : {"<script", "<link", "<img", "<iframe", "src=", "href=\"http", "url(", "@import"})
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
}

TEST(ReportCli, SimulationAndTrainingAddTheirSections) {
  ScratchDir dir;
  const auto out = dir.path() / "full.html";
  const CliResult r = run_cli({"report", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "8192", "--tp", "1",
                               "--simulate", "--rate", "4", "--requests", "300", "--input-len", "512", "--output-len", "128",
                               "--train", "lora", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read_text(out);
  EXPECT_NE(html.find(">Simulated serving run</h2>"), std::string::npos);
  EXPECT_NE(html.find(">Training plan</h2>"), std::string::npos);
  // 4 serving charts + KV usage, running / waiting, TTFT and TPOT over time + training = 9.
  EXPECT_EQ(count_of(html, "<svg "), 9u);
  EXPECT_NE(html.find("TTFT p99"), std::string::npos);
  // 4 requests/s of 512-token prompts on one H100: each joins the next step (its 2,048-token budget
  // holds a prompt and the running decodes), so nothing held the queue.
  EXPECT_NE(html.find("never: every request joined the first step formed after it was sent"), std::string::npos);
}

TEST(ReportCli, AnOverloadedRunChartsWhatHeldTheQueue) {
  // 40 requests/s of 2,048-token prompts on one H100 is far beyond what vLLM serves (the CLI's
  // overload test runs 200/s): sent requests wait, and the report draws what held them per window.
  ScratchDir dir;
  const auto out = dir.path() / "held.html";
  const CliResult r = run_cli({"report", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "8192", "--tp", "1",
                               "--simulate", "--rate", "40", "--requests", "2000", "--input-len", "2048", "--output-len", "256",
                               "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read_text(out);
  // 4 serving charts + KV usage, running / waiting, TTFT, TPOT and what held the queue = 9.
  EXPECT_EQ(count_of(html, "<svg "), 9u);
  EXPECT_NE(html.find("What held sent requests in the queue"), std::string::npos);
  EXPECT_EQ(html.find("never: every request joined"), std::string::npos);
}

// --train qlora quantizes the frozen base as train's QLoRA does (nf4-dq): report takes no
// --base-format, and had failed with "QLoRA needs a quantized base" until 2026-12-05.
TEST(ReportCli, QloraTrainsOnTheDefaultQuantizedBase) {
  ScratchDir dir;
  const auto out = dir.path() / "q.html";
  const CliResult r = run_cli({"report", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "8192", "--tp", "1",
                               "--train", "qlora", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_text(out).find(">Training plan</h2>"), std::string::npos);
}

TEST(ReportCli, JsonNamesTheFileItWrote) {
  ScratchDir dir;
  const auto out = dir.path() / "q.html";
  const auto j = run_cli_json({"report", "--model", "llama-3.1-8b", "--gpu", "l40s", "--max-model-len", "8192", "--out", out.string()});
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs" / "schemas" / "report.schema.json"));
  EXPECT_TRUE(schema_violations(j, schema).empty()) << j.dump();
  EXPECT_EQ(j["out"], out.string());
  EXPECT_EQ(j["bytes"].get<std::size_t>(), read_text(out).size());
}

TEST(ReportCli, NamesFromUserFilesAreEscaped) {
  ScratchDir dir;
  const auto model = dir.path() / "m<b onmouseover=x>&";
  std::filesystem::create_directories(model);
  std::filesystem::copy_file(fixture("hf/tiny-llama/config.json"), model / "config.json");
  const auto out = dir.path() / "q.html";
  const CliResult r = run_cli({"report", "--model", model.string(), "--gpu", "l4", "--max-model-len", "2048", "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read_text(out);
  EXPECT_EQ(html.find("<b onmouseover"), std::string::npos);
  EXPECT_NE(html.find("m&lt;b onmouseover=x&gt;&amp;"), std::string::npos);
}

TEST(ReportCli, UnwritableOutIsAOneLineIoError) {
  const CliResult r = run_cli({"report", "--model", "llama-3.1-8b", "--gpu", "l40s", "--out", "/nonexistent-dir/q.html"});
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_EQ(r.err, "vramplan: error: --out: cannot write /nonexistent-dir/q.html\n");
  const CliResult no_out = run_cli({"report", "--model", "llama-3.1-8b", "--gpu", "l40s"});
  EXPECT_EQ(no_out.exit_code, 2);
  EXPECT_EQ(no_out.err, "vramplan: error: report: --out FILE is required (the HTML page is written there)\n");
  const CliResult rate = run_cli({"report", "--model", "llama-3.1-8b", "--gpu", "l40s", "--rate", "3", "--out", "/tmp/x.html"});
  EXPECT_EQ(rate.exit_code, 2);
  EXPECT_EQ(rate.err, "vramplan: error: --rate applies to the simulated run: add --simulate\n");
}

}  // namespace
}  // namespace vramplan::test
