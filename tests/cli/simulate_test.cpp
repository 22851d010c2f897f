// `vramplan simulate` end to end through the real executable: flags, JSON schema fields, the
// timeline file, determinism, and one-line errors with distinct exit codes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/json_schema.hpp"
#include "support/golden.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

CliResult simulate(std::vector<std::string> extra) {
  std::vector<std::string> args = {"simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "8192"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args);
}

nlohmann::json simulate_json(std::vector<std::string> extra) {
  extra.push_back("--json");
  const CliResult r = simulate(extra);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// `vramplan simulate` with `base` (its own model, GPU and workload) and then `extra`, as JSON.
nlohmann::json simulate_run(std::vector<std::string> base, const std::vector<std::string>& extra) {
  base.insert(base.begin(), "simulate");
  base.insert(base.end(), extra.begin(), extra.end());
  base.push_back("--json");
  const CliResult r = run_cli(base);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

double median_tpot_ms(const nlohmann::json& j) { return j.at("latency_ms").at("tpot").at("p50").get<double>(); }

TEST(SimulateCli, ReportsTheContractFields) {
  const auto j = simulate_json({"--rate", "5", "--requests", "2000", "--input-len", "512", "--output-len", "128", "--seed", "7"});
  EXPECT_EQ(j.at("schema"), "vramplan.simulate/1");
  EXPECT_EQ(j.at("requests").at("arrived"), 2000);
  EXPECT_EQ(j.at("requests").at("completed"), 2000);
  EXPECT_EQ(j.at("requests").at("rejected"), 0);
  for (const char* k : {"ttft", "tpot", "itl", "e2e", "queue"})
    for (const char* q : {"mean", "p50", "p90", "p99"}) EXPECT_TRUE(j.at("latency_ms").at(k).contains(q)) << k << q;
  // 5 req/s x 128 output tokens: the engine keeps up, so output throughput ~ 640 tok/s.
  EXPECT_NEAR(j.at("throughput").at("output_tokens_per_s").get<double>(), 640.0, 40.0);
  EXPECT_EQ(j.at("verdict").at("state"), "stable");
  // The pool and limits are the plan's: vLLM on H100 with 8k context.
  EXPECT_EQ(j.at("engine_rules").at("block_tokens"), 16);
  EXPECT_GT(j.at("engine_rules").at("kv_blocks").get<std::uint64_t>(), 20000u);
  const double held = j.at("memory").at("held_gib").get<double>(), peak = j.at("memory").at("peak_gib").get<double>();
  EXPECT_LE(peak, held);  // vLLM holds its whole pool; what is in use at the peak is less
  EXPECT_GT(peak, j.at("memory").at("non_kv_gib").get<double>());
}

TEST(SimulateCli, VllmAsyncSchedulingOffRunsTheSerialStep) {
  // One request (512 prompt tokens, one step) on an idle engine: both rules take it at once, so
  // its TTFT is its prompt step. The step differs by the host term: async ("vllm": 0 per step +
  // 26.0 us per layer) against serial ("vllm-sync": 0.65 ms + 55.1 us per layer,
  // data/perf_defaults.json). Llama-3.1-8B, 32 layers: 0.65 ms + 32 x 29.1 us = 1.5812 ms more.
  const auto run = [](std::vector<std::string> extra) {
    extra.insert(extra.end(), {"--rate", "1", "--requests", "1", "--input-len", "512", "--output-len", "4"});
    return simulate_json(extra);
  };
  const auto async_on = run({});
  const auto serial = run({"--no-async-scheduling"});
  const auto pre014 = run({"--engine", "vllm@0.13"});  // the release's default: serial
  const double on_ms = async_on.at("latency_ms").at("ttft").at("mean").get<double>();
  EXPECT_NEAR(serial.at("latency_ms").at("ttft").at("mean").get<double>() - on_ms, 1.5812, 1e-4);
  EXPECT_NEAR(pre014.at("latency_ms").at("ttft").at("mean").get<double>() - on_ms, 1.5812, 0.05);
  const auto basis_has = [](const nlohmann::json& j, const std::string& s) {
    for (const auto& line : j.at("engine_rules").at("basis"))
      if (line.get<std::string>().find(s) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(basis_has(async_on, "async scheduling (the default from 0.14)"));
  EXPECT_TRUE(basis_has(serial, "serial scheduling"));
  EXPECT_TRUE(basis_has(pre014, "serial scheduling"));
}

// Every document the command writes is valid against its published schema.
void expect_valid(const nlohmann::json& doc, const std::string& schema_file) {
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs" / "schemas" / schema_file));
  const auto violations = schema_violations(doc, schema);
  EXPECT_TRUE(violations.empty()) << schema_file << ": " << (violations.empty() ? "" : violations.front());
}

TEST(SimulateCli, DocumentsMatchTheirSchemas) {
  expect_valid(simulate_json({"--rate", "5", "--requests", "300", "--input-len", "512", "--output-len", "64",
                              "--slo", "p99_ttft<=1s", "--timeout", "30s"}),
               "simulate.schema.json");
  expect_valid(simulate_json({"--input-len", "512", "--output-len", "64", "--slo", "p99_ttft<=1s", "--find-max-rate",
                              "--target-rate", "20", "--probe-requests", "200"}),
               "simulate.schema.json");
  expect_valid(simulate_json({"--rate", "inf", "--requests", "200", "--input-len", "512", "--output-len", "64", "--workers", "2"}),
               "simulate.schema.json");
  const CliResult t = run_cli({"trial", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--lengths", "short", "--batches", "1,2", "--json"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  expect_valid(nlohmann::json::parse(t.out), "trial.schema.json");
}

TEST(SimulateCli, SameSeedSameOutputDifferentSeedDifferent) {
  const CliResult r1 = simulate({"--rate", "8", "--requests", "500", "--seed", "3", "--json"});
  const CliResult r2 = simulate({"--rate", "8", "--requests", "500", "--seed", "3", "--json"});
  const CliResult r3 = simulate({"--rate", "8", "--requests", "500", "--seed", "4", "--json"});
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  EXPECT_EQ(r1.out, r2.out);
  EXPECT_NE(r1.out, r3.out);
}

TEST(SimulateCli, OverloadIsReported) {
  // An offered load far beyond one H100's capacity for 2k-token prompts: the queue grows.
  const auto j = simulate_json({"--rate", "200", "--requests", "6000", "--input-len", "2048", "--output-len", "256"});
  EXPECT_EQ(j.at("verdict").at("state"), "overloaded");
  EXPECT_GT(j.at("verdict").at("queue_growth_per_s").get<double>(), 10.0);
  // Something held the queue, and the text says what raises it in vLLM's flags.
  ASSERT_FALSE(j.at("held_back").at("most").is_null());
  const CliResult t = simulate({"--rate", "200", "--requests", "6000", "--input-len", "2048", "--output-len", "256"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const std::string most = j.at("held_back").at("most");
  const std::string flag = most == "kv_pool" ? "--gpu-memory-utilization" : most == "running_limit" ? "--max-num-seqs" : "--max-num-batched-tokens";
  EXPECT_NE(t.out.find("to serve more: "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find(flag), std::string::npos) << t.out;
  // The JSON timeline's held seconds so far grow to the run's: the last sample, taken at or before
  // the end, holds at most the run's figure and, sampled every simulated second of a run of
  // ~40 s whose queue never drains, within the last second's step of it.
  ScratchDir dir;
  const auto path = (dir.path() / "t.json").string();
  ASSERT_EQ(simulate({"--rate", "200", "--requests", "6000", "--input-len", "2048", "--output-len", "256", "--timeline", path})
                .exit_code, 0);
  const auto samples = nlohmann::json::parse(read_text(path));
  ASSERT_GT(samples.size(), 10u);
  expect_valid(samples, "timeline.schema.json");
  const std::string key = "held_" + most + "_s";
  double before = 0;
  for (const auto& x : samples) {
    EXPECT_GE(x.at(key).get<double>(), before) << x.dump();
    before = x.at(key).get<double>();
  }
  const double run = j.at("held_back").at(most + "_s").get<double>();
  EXPECT_LE(before, run + 1e-6);
  EXPECT_GT(before, run - 1.0);
  // A window without a first token has a null TTFT, not a zero.
  for (const auto& x : samples) EXPECT_TRUE(x.at("ttft_p99_s").is_null() || x.at("ttft_p99_s").get<double>() > 0) << x.dump();
}

TEST(SimulateCli, AnOverloadWithALongDrainIsOverloaded) {
  // 20 requests/s of 2,048-token prompts on one L40S with two running at most: ~0.3 served a
  // second, so the 3,000 requests sent in 150 s take ~9,000 s. The verdict reads the queue over
  // the second half of the arrivals (75-150 s) from its fixed-size record; thinned by index, that
  // record had kept one point of the first 100 s, the middle of the window read as t = 0.14 s,
  // when the queue had just drained, and the run came out "inconclusive" (and `check --rate`
  // offered --max-num-seqs 2 as not overloading the engine).
  const CliResult r = run_cli({"simulate", "--model", "llama-3.1-8b", "--gpu", "l40s", "--max-model-len", "8192", "--rate", "20",
                               "--requests", "3000", "--input-len", "2048", "--output-len", "256", "--max-num-seqs", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("verdict").at("state"), "overloaded") << j.at("verdict").dump();
  EXPECT_GT(j.at("verdict").at("queue_growth_per_s").get<double>(), 15.0);
  EXPECT_LT(j.at("verdict").at("served_per_s").get<double>(), 1.0);
}

TEST(SimulateCli, HfRunsStaticBatchesOfBatch) {
  // HF generate() runs --batch sequences to completion before the next batch starts (issue 12:
  // "static batches of --batch"). 8 requests of 256 / 32 tokens all queued at t = 0 on one H100:
  // with --batch 4 they run as two batches of 4, never more than 4 at once, and the rest wait on
  // the running limit; with the default batch of 1, eight batches of one, each slower to finish.
  const auto run = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "hf", "--rate",
                                     "inf", "--requests", "8", "--input-len", "256", "--output-len", "32", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto four = run({"--batch", "4"}), one = run({});
  EXPECT_EQ(four.at("engine_rules").at("static_batch"), 4);
  EXPECT_EQ(one.at("engine_rules").at("static_batch"), 1);
  EXPECT_EQ(four.at("requests").at("completed"), 8);
  EXPECT_DOUBLE_EQ(four.at("running").at("max").get<double>(), 4.0);
  EXPECT_EQ(four.at("held_back").at("most"), "running_limit");
  EXPECT_LT(four.at("duration_s").get<double>(), one.at("duration_s").get<double>());
}

TEST(SimulateCli, ARateBehindAConcurrencyLimitSaysTheClientSetThePace) {
  // benchmark_serving's --request-rate 50 with --max-concurrency 16: one H100 serves 16 users of
  // 1,024 / 256 tokens at ~7 requests/s, so nearly every request waits at the client for a free
  // user. The engine's queue cannot grow past 16, but the run is not "stable at 50/s": the verdict
  // says the client bound it and at what rate it sent. At 2/s the users are rarely all busy: an
  // open loop, judged on its queue.
  const auto bound = simulate_json({"--rate", "50", "--concurrency", "16", "--requests", "2000", "--input-len", "1024",
                                    "--output-len", "256"});
  EXPECT_EQ(bound.at("verdict").at("state"), "closed-loop");
  const std::string why = bound.at("verdict").at("explanation");
  EXPECT_NE(why.find("at most 16 outstanding bound the client"), std::string::npos) << why;
  EXPECT_NE(why.find("requests due at 49"), std::string::npos) << why;
  const double sent = bound.at("throughput").at("requests_per_s").get<double>();
  EXPECT_LT(sent, 10.0);
  const auto open = simulate_json({"--rate", "2", "--concurrency", "16", "--requests", "2000", "--input-len", "1024",
                                   "--output-len", "256"});
  EXPECT_EQ(open.at("verdict").at("state"), "stable");
}

TEST(SimulateCli, AClosedLoopWithADurationEnds) {
  // Eight users for 30 simulated seconds: the users stop sending at 30 s and the run ends when the
  // last request sent finishes (it ran without end before 2026-12-05).
  const auto j = simulate_json({"--concurrency", "8", "--duration", "30s", "--input-len", "512", "--output-len", "128"});
  const auto arrived = j.at("requests").at("arrived").get<std::uint64_t>();
  EXPECT_GT(arrived, 8u);
  EXPECT_EQ(j.at("requests").at("completed").get<std::uint64_t>(), arrived);
  EXPECT_EQ(j.at("verdict").at("state"), "closed-loop");
}

TEST(SimulateCli, SaysWhichEngineProfileItRan) {
  // A version outside any profile's range is planned on the nearest one: the header and the
  // JSON say which, and that 0.28+ covers it.
  const CliResult r = simulate({"--engine", "vllm@99.9", "--rate", "1", "--requests", "5", "--input-len", "100", "--output-len", "10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string first = r.out.substr(0, r.out.find('\n'));
  EXPECT_NE(first.find("profile (versions 0.28+)"), std::string::npos) << first;
  const auto j = simulate_json({"--rate", "1", "--requests", "5", "--input-len", "100", "--output-len", "10"});
  EXPECT_NE(j.at("engine_profile").get<std::string>().find("assumed because no version was given"), std::string::npos)
      << j.at("engine_profile");
}

TEST(SimulateCli, TimelineIsWrittenAsCsv) {
  ScratchDir dir;
  const auto path = (dir.path() / "t.csv").string();
  const CliResult r = simulate({"--rate", "5", "--requests", "200", "--timeline", path, "--sample-every", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = read_text(path);
  const std::string header =
      "t_s,running,waiting,completed,preemptions,kv_blocks_used,kv_blocks_cached,kv_usage,memory_gib,"
      "ttft_p50_s,ttft_p99_s,tpot_p50_s,tpot_p99_s,held_kv_pool_s,held_running_limit_s,held_token_budget_s\n";
  EXPECT_EQ(csv.rfind(header, 0), 0u);
  EXPECT_GT(std::count(csv.begin(), csv.end(), '\n'), 10);
  // Every row has the header's 16 fields; a window with no first token leaves its TTFT empty, and
  // over 200 requests at 5/s some 2 s windows have first tokens.
  std::istringstream rows(csv.substr(header.size()));
  std::size_t with_ttft = 0, without = 0;
  for (std::string row; std::getline(rows, row);) {
    std::vector<std::string> fields;
    std::istringstream cells(row + ",");
    for (std::string f; std::getline(cells, f, ',');) fields.push_back(f);
    ASSERT_EQ(fields.size(), 16u) << row;
    (fields[9].empty() ? without : with_ttft) += 1;
    EXPECT_EQ(fields[9].empty(), fields[10].empty()) << row;  // p50 and p99 of one window
    EXPECT_FALSE(fields[13].empty()) << row;                  // held seconds: always a number
  }
  EXPECT_GT(with_ttft, 0u);
  // The extension in any case, as a trace's: T.CSV is a CSV timeline too.
  const auto upper = (dir.path() / "T.CSV").string();
  ASSERT_EQ(simulate({"--rate", "5", "--requests", "20", "--timeline", upper}).exit_code, 0);
  EXPECT_EQ(read_text(upper).rfind("t_s,running,", 0), 0u);
}

TEST(SimulateCli, DpAttentionRunsItsRanksInLockstep) {
  // Qwen3-30B-A3B on 4 x H100 as SGLang's DP attention of 4 ranks (one GPU each): the plan's pool
  // and limits are one rank's, the run spans all four, and its timeline sums them.
  ScratchDir dir;
  const auto path = (dir.path() / "dp.csv").string();
  const CliResult r = run_cli({"simulate", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm-80", "--engine", "sglang@0.5.9",
                               "--tp", "4", "--dp", "4", "--enable-dp-attention", "--rate", "8", "--requests", "400",
                               "--input-len", "512", "--output-len", "128", "--timeline", path, "--sample-every", "5",
                               "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  expect_valid(j, "simulate.schema.json");
  EXPECT_EQ(j.at("engine_rules").at("dp_attention_ranks").get<std::uint64_t>(), 4u);
  EXPECT_EQ(j.at("requests").at("completed").get<std::uint64_t>(), 400u);
  EXPECT_EQ(j.at("verdict").at("state"), "stable");
  EXPECT_NE(j.at("verdict").at("explanation").get<std::string>().find("of 4 SGLang DP-attention ranks"), std::string::npos);
  const std::string csv = read_text(path);
  EXPECT_GT(std::count(csv.begin(), csv.end(), '\n'), 5);
  // Replicas of such a server behind a router are not modelled: --target-rate says so.
  const CliResult t = run_cli({"simulate", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm-80", "--engine", "sglang@0.5.9",
                               "--tp", "4", "--dp", "4", "--enable-dp-attention", "--input-len", "512", "--output-len", "128",
                               "--slo", "p99_ttft<=1s", "--find-max-rate", "--target-rate", "100", "--probe-requests", "200"});
  EXPECT_EQ(t.exit_code, 2) << t.out;
  EXPECT_NE(t.err.find("a server of SGLang DP-attention ranks"), std::string::npos) << t.err;
}

TEST(SimulateCli, DpAttentionWithEagleGathersEveryForward) {
  // DeepSeek-V3 on 8 x H200 as 8 DP-attention ranks of one GPU, EAGLE from its MTP layer (3 steps,
  // 4 draft tokens, 3 kept a verify), 16 users of 1,000 / 500 tokens. Each iteration's forwards
  // (target verify, 2 single-token drafts, the draft extend) gather all ranks' tokens, and the
  // ranks never mix prompt and decode batches. An iteration costs more than a plain step but
  // keeps 3 tokens: the TPOT falls (2026-12-07: 10.9 against 18.4 ms median).
  const std::vector<std::string> base = {"--model", "deepseek-v3", "--gpu", "h200", "--engine", "sglang@0.5.9", "--tp", "8",
                                         "--dp", "8", "--enable-dp-attention", "--concurrency", "16", "--requests", "160",
                                         "--input-len", "1000", "--output-len", "500"};
  const auto plain = simulate_run(base, {});
  const auto spec = simulate_run(base, {"--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
                                        "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
                                        "--spec-accept-length", "3"});
  expect_valid(spec, "simulate.schema.json");
  EXPECT_EQ(spec.at("requests").at("completed").get<std::uint64_t>(), 160u);
  EXPECT_LT(median_tpot_ms(spec), median_tpot_ms(plain));
  EXPECT_GT(3 * median_tpot_ms(spec), median_tpot_ms(plain));
  EXPECT_NE(spec.dump().find("never mix prompt and decode batches"), std::string::npos);
}

TEST(SimulateCli, VllmDataParallelEnginesDraftInLockstep) {
  // DeepSeek-V3 on 8 x H200 as vLLM 0.19's 8 data-parallel engines with expert parallelism and
  // the MTP drafter (k = 1, 1.8 tokens kept a verify), 16 users: the target's and the drafter's
  // forwards step in lockstep over the engines; an idle engine's dummy runs 2 tokens. The step
  // keeps 1.8 tokens for less than 1.8 plain steps (2026-12-07: TPOT 14.1 against 18.6 ms median).
  const std::vector<std::string> base = {"--model", "deepseek-v3", "--gpu", "h200", "--engine", "vllm@0.19",
                                         "--data-parallel-size", "8", "--enable-expert-parallel", "--max-model-len", "8192",
                                         "--concurrency", "16", "--requests", "160", "--input-len", "1000", "--output-len", "500"};
  const auto plain = simulate_run(base, {});
  const auto spec = simulate_run(base, {"--speculative-config", R"({"method": "mtp", "num_speculative_tokens": 1})",
                                        "--spec-accept-length", "1.8"});
  expect_valid(spec, "simulate.schema.json");
  EXPECT_EQ(spec.at("requests").at("completed").get<std::uint64_t>(), 160u);
  EXPECT_LT(median_tpot_ms(spec), median_tpot_ms(plain));
  EXPECT_GT(1.8 * median_tpot_ms(spec), median_tpot_ms(plain));
}

TEST(SimulateCli, SglangPipelineStagesRunAsMicroBatches) {
  // Llama-3.1-70B on 8 x H100 under SGLang 0.5.9, TP 8 against TP 4 x PP 2, 32 users of 1,000 /
  // 300 tokens: both plan about the same pool (the same bytes a GPU), and the pipeline's decode
  // round of two micro-batches through stages of half the layers at TP 4 and its prompts crossing
  // both stages one after the other make it the slower layout (2026-12-07: TPOT 24.6 against
  // 16.7 ms median, throughput 3.73 against 5.57 req/s).
  const std::vector<std::string> base = {"--model", "llama-3.1-70b", "--gpu", "h100-sxm-80", "--engine", "sglang@0.5.9",
                                         "--context-length", "8192", "--concurrency", "32", "--requests", "320",
                                         "--input-len", "1000", "--output-len", "300"};
  const auto tp8 = simulate_run(base, {"--tp", "8"});
  const auto pp2 = simulate_run(base, {"--tp", "4", "--pp-size", "2"});
  expect_valid(pp2, "simulate.schema.json");
  EXPECT_EQ(pp2.at("requests").at("completed").get<std::uint64_t>(), 320u);
  EXPECT_GT(median_tpot_ms(pp2), median_tpot_ms(tp8));
  EXPECT_LT(pp2.at("throughput").at("requests_per_s").get<double>(), tp8.at("throughput").at("requests_per_s").get<double>());
}

// Two 8-GPU H100 hosts serving Llama-3.1-70B to one user: at TP 16 every one of the 160
// all-reduces of a decode step crosses the network (45 us each against 10 us on NVLink,
// docs/performance.md "Across hosts"), about 5.6 ms more a token, so TP 8 x PP 2 (two hand-offs a
// token between the hosts) decodes faster, as vLLM's multi-node advice has it: 12.56 against
// 10.30 ms (2026-12-07). On one NVLink fabric TP 16 came out the faster: 12.56 - 160 x 35 us = 6.96 ms.
TEST(SimulateCli, TensorParallelismAcrossHostsPaysTheNetwork) {
  const std::vector<std::string> base = {"--model", "llama-3.1-70b", "--gpu", "h100-sxm-80", "--engine", "vllm@0.19",
                                         "--max-model-len", "4096", "--concurrency", "1", "--requests", "3",
                                         "--input-len", "256", "--output-len", "64"};
  const auto tpot = [&](const std::vector<std::string>& layout) { return median_tpot_ms(simulate_run(base, layout)); };
  const double tp16 = tpot({"--tensor-parallel-size", "16"});
  const double tp8_pp2 = tpot({"--tensor-parallel-size", "8", "--pipeline-parallel-size", "2"});
  EXPECT_GT(tp16, tp8_pp2 + 1.0) << tp16 << " ms against " << tp8_pp2 << " ms";
  // A cluster whose hosts hold 16 GPUs on one NVLink fabric (--node-gpus 16): TP 16 never leaves
  // it and is the faster layout, 6.96 ms.
  const double tp16_one_host = tpot({"--tensor-parallel-size", "16", "--node-gpus", "16"});
  EXPECT_LT(tp16_one_host + 1.0, tp8_pp2) << tp16_one_host << " ms against " << tp8_pp2 << " ms";
  // A slower network costs TP 16 across hosts more: 100 against the DGX H100's 400 Gb/s.
  EXPECT_GT(tpot({"--tensor-parallel-size", "16", "--network-gbit", "100"}), tp16);
}

TEST(SimulateCli, VllmDataParallelEnginesStepTogether) {
  // Qwen3-30B-A3B on 4 x H100 as vLLM 0.19 serves it with --data-parallel-size 4
  // --enable-expert-parallel: four engines of one GPU, each with the plan's pool and limits,
  // routed by 4 x waiting + running, in lockstep; plan and check say the lockstep is simulate's.
  const CliResult r = run_cli({"simulate", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm-80", "--engine", "vllm@0.19",
                               "--data-parallel-size", "4", "--enable-expert-parallel", "--max-model-len", "8192",
                               "--rate", "8", "--requests", "400", "--input-len", "512", "--output-len", "128", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  expect_valid(j, "simulate.schema.json");
  const auto& dp = j.at("engine_rules").at("data_parallel");
  EXPECT_EQ(dp.at("engines").get<int>(), 4);
  EXPECT_EQ(dp.at("dispatch"), "4-waiting-plus-running");
  EXPECT_EQ(dp.at("wave_sync_steps").get<int>(), 32);
  EXPECT_EQ(j.at("engine_rules").at("dp_attention_ranks").get<int>(), 1);
  EXPECT_EQ(j.at("requests").at("completed").get<std::uint64_t>(), 400u);
  EXPECT_EQ(j.at("verdict").at("state"), "stable");
  EXPECT_NE(j.at("verdict").at("explanation").get<std::string>().find("of 4 vLLM data-parallel engines"), std::string::npos);
  const std::string launch = j.at("launch").dump();
  EXPECT_NE(launch.find("--data-parallel-size"), std::string::npos) << launch;
  EXPECT_NE(launch.find("--enable-expert-parallel"), std::string::npos) << launch;
  const CliResult c = run_cli({"check", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm-80", "--engine", "vllm@0.19",
                               "--data-parallel-size", "4", "--enable-expert-parallel", "--max-model-len", "8192"});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("h100-sxm-80 x4 dp4"), std::string::npos) << c.out;
  const CliResult cj = run_cli({"check", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm-80", "--engine", "vllm@0.19",
                                "--data-parallel-size", "4", "--enable-expert-parallel", "--max-model-len", "8192", "--json"});
  ASSERT_EQ(cj.exit_code, 0) << cj.err;
  const auto layout = nlohmann::json::parse(cj.out).at("layout");
  expect_valid(nlohmann::json::parse(cj.out), "check.schema.json");
  EXPECT_EQ(layout.at("data_parallel").get<int>(), 4);
  EXPECT_EQ(layout.at("tp").get<int>(), 1);
  EXPECT_EQ(layout.at("gpus").get<int>(), 4);
  // The quote names the engines: two replicas of the four-engine server, each on its own 4 GPUs.
  const CliResult md = run_cli({"check", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm-80", "--engine", "vllm@0.19",
                                "--data-parallel-size", "4", "--enable-expert-parallel", "--max-model-len", "8192",
                                "--replicas", "2", "--format", "md"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("| layout | tp1 dp4 x 2 replicas |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("(each on its own 4 GPUs)"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("on 8 x NVIDIA H100"), std::string::npos) << md.out;
  // A dense model's engines run on their own from 0.14, dealt round-robin up to 0.26 (they publish
  // no counts).
  const CliResult d = run_cli({"simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "vllm@0.19",
                               "--data-parallel-size", "2", "--max-model-len", "8192", "--rate", "4", "--requests", "200",
                               "--input-len", "512", "--output-len", "64", "--json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const auto dj = nlohmann::json::parse(d.out);
  expect_valid(dj, "simulate.schema.json");
  EXPECT_EQ(dj.at("engine_rules").at("data_parallel").at("lockstep"), false);
  EXPECT_EQ(dj.at("engine_rules").at("data_parallel").at("dispatch"), "round-robin");
  EXPECT_EQ(dj.at("requests").at("completed").get<std::uint64_t>(), 200u);
}

TEST(SimulateCli, VllmMultiStepStreamsOneChunkARound) {
  // vLLM 0.6.0 with --num-scheduler-steps 10 (max_model_len 4096 keeps chunked prefill off): the
  // JSON names the rounds, and the median ITL is a round of ten steps, several times the TPOT.
  const CliResult r = run_cli({"simulate", "--model", "llama-3.1-8b", "--gpu", "a100-sxm-80", "--engine", "vllm@0.6.0",
                               "--max-model-len", "4096", "--num-scheduler-steps", "10", "--rate", "4", "--requests",
                               "300", "--input-len", "sharegpt", "--output-len", "sharegpt", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  expect_valid(j, "simulate.schema.json");
  const auto& m = j.at("engine_rules").at("multi_step");
  EXPECT_EQ(m.at("round_steps").get<int>(), 10);
  EXPECT_EQ(m.at("streams"), "per-round");
  const auto& lat = j.at("latency_ms");
  EXPECT_GT(lat.at("itl").at("p50").get<double>(), 5 * lat.at("tpot").at("p50").get<double>());
  EXPECT_TRUE(j.at("launch").dump().find("--num-scheduler-steps") != std::string::npos) << j.at("launch").dump();
  // The table says so.
  const CliResult table = run_cli({"simulate", "--model", "llama-3.1-8b", "--gpu", "a100-sxm-80", "--engine", "vllm@0.6.0",
                                   "--max-model-len", "4096", "--num-scheduler-steps", "10", "--rate", "4", "--requests", "50"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("multi-step scheduling: decode rounds of 10 steps"), std::string::npos) << table.out;
  // Without the flag: no rounds.
  const auto plain = nlohmann::json::parse(run_cli({"simulate", "--model", "llama-3.1-8b", "--gpu", "a100-sxm-80", "--engine",
                                                    "vllm@0.6.0", "--max-model-len", "4096", "--rate", "4", "--requests",
                                                    "50", "--json"}).out);
  EXPECT_TRUE(plain.at("engine_rules").at("multi_step").is_null());
}

TEST(SimulateCli, FindMaxRateThenReplicasForATargetLoad) {
  const auto j = simulate_json({"--input-len", "512", "--output-len", "128", "--slo", "p99_ttft<=1s,p99_tpot<=50ms",
                                "--find-max-rate", "--target-rate", "30", "--probe-requests", "300"});
  const auto& m = j.at("capacity").at("max_rate");
  ASSERT_TRUE(m.at("found").get<bool>()) << m.dump();
  const double rate = m.at("rate_per_s").get<double>();
  // What bound the answer is a probe above it that failed (before 2026-12-08 the search stopped
  // under the offline run's average, never probed, and said "bound by overloaded" regardless):
  // with 300 requests a probe a little above it is "inconclusive", its batch still filling.
  std::size_t above = 0;
  for (const auto& p : m.at("probes"))
    if (p.at("rate_per_s").get<double>() > rate) {
      ++above;
      EXPECT_FALSE(p.at("met").get<bool>()) << p.dump();
    }
  EXPECT_GE(above, 1u);
  EXPECT_FALSE(m.at("binding").is_null());
  EXPECT_EQ(j.at("verdict").at("state"), "stable");  // the run at the answer
  EXPECT_GE(m.at("probes").size(), 3u);
  const auto& r = j.at("capacity").at("replicas");
  // At least ceil(30 / rate) replicas, each serving its share within the targets.
  EXPECT_GE(r.at("replicas").get<double>(), std::ceil(30 / rate - 1e-9));
  EXPECT_TRUE(r.at("met").get<bool>());
  EXPECT_TRUE(j.at("slo").at("met").get<bool>());
}

TEST(SimulateCli, OfflineJobOnWorkers) {
  const auto j = simulate_json({"--rate", "inf", "--requests", "2000", "--input-len", "512", "--output-len", "128",
                                "--workers", "2", "--margin", "24h"});
  expect_valid(j, "simulate.schema.json");
  const auto& o = j.at("capacity").at("offline");
  EXPECT_EQ(o.at("workers"), 2);
  EXPECT_EQ(o.at("period"), "3d");  // minutes of work + 24 h margin: the shortest default period
  // The run shown is the slowest worker's share, 2000 / 2 = 1000 requests (round-robin), whose
  // time (first arrival at 0 to its end) is the makespan; until 2026-12-08 it was one engine
  // given all 2000, which read as the job.
  EXPECT_EQ(o.at("slowest_worker_requests"), 1000);
  EXPECT_EQ(j.at("requests").at("arrived"), 1000);
  EXPECT_EQ(j.at("workload").at("requests"), 1000);
  EXPECT_NEAR(j.at("duration_s").get<double>(), o.at("makespan_s").get<double>(), 1e-6);
  EXPECT_EQ(j.at("verdict").at("state"), "offline");
  // --margin 0 is no margin (it was refused as "expected a duration > 0" though the job takes 0).
  const auto none = simulate_json({"--rate", "inf", "--requests", "200", "--input-len", "512", "--output-len", "128",
                                   "--workers", "2", "--margin", "0"});
  EXPECT_EQ(none.at("capacity").at("offline").at("margin_hours"), 0.0);
  const CliResult t = simulate({"--rate", "inf", "--requests", "2000", "--input-len", "512", "--output-len", "128",
                                "--workers", "2"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("requests: 1000 arrived, 1000 completed"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("(the run above is the slowest worker's share: 1000 of the 2000 requests)"), std::string::npos) << t.out;
}

TEST(SimulateCli, ArrivalsFarFasterThanTheEngineAreOverloaded) {
  // 2,000 requests at 1e6/s arrive within ~2 ms, less than one step: before 2026-12-08 the
  // verdict read the second half of the arrivals alone (0 s, nothing completed in it), said
  // "stable" and the targets "met"; at 1e5/s "inconclusive" (vLLM's async scheduling formed the
  // second step's batch before any of them came, so the queue "drained" once), and at 1e4/s it
  // gave a growth of 303.8/s. The engine serves a few tens a second, so the number in the system
  // grows at about the arrival rate.
  for (const char* rate : {"1e6", "1e5", "1e4"}) {
    const auto j = simulate_json({"--rate", rate, "--requests", "2000", "--slo", "p99_tpot<=300ms,p99_ttft<=20s"});
    const auto& v = j.at("verdict");
    EXPECT_EQ(v.at("state"), "overloaded") << rate << ": " << v.dump();
    const double arrived_per_s = std::strtod(rate, nullptr);
    const double served = v.at("served_per_s").get<double>();
    EXPECT_GT(served, 10.0) << rate;
    EXPECT_LT(served, 200.0) << rate;
    // Growth = arrival rate - service rate; the arrival rate of 1999 Poisson gaps is within
    // 7 % of the rate asked for (3 x its relative spread 1 / sqrt(1999) = 2.2 %).
    EXPECT_NEAR(v.at("queue_growth_per_s").get<double>() + served, arrived_per_s, 0.07 * arrived_per_s) << rate;
    EXPECT_FALSE(j.at("slo").at("met").get<bool>()) << rate;
    EXPECT_TRUE(j.at("slo").at("overloaded").get<bool>()) << rate;
  }
}

TEST(SimulateCli, AverageNumbersInTheSystemFollowLittlesLaw) {
  // The running and waiting means are over time, idle gaps included: one request at a time at
  // 0.596/s of 512 / 128 tokens (~1.26 s each, ~75 % load). Before 2026-12-08 the steps alone were
  // weighed: running mean 1.0 and waiting 0.498, where Little's law gives L = 0.595 x 1.258 = 0.749.
  const auto j = simulate_json({"--rate", "0.596", "--requests", "20000", "--max-num-seqs", "1", "--input-len", "512",
                                "--output-len", "128"});
  const double in_system = j.at("running").at("mean").get<double>() + j.at("waiting").at("mean").get<double>();
  // lambda x W, W the mean end-to-end time, lambda the arrivals over the run (first arrival to its
  // end, the last completion).
  const double lambda = 20000 / j.at("duration_s").get<double>();
  const double w = j.at("latency_ms").at("e2e").at("mean").get<double>() / 1e3;
  EXPECT_NEAR(in_system / (lambda * w), 1.0, 0.01) << in_system << " vs " << lambda * w;
  EXPECT_LT(j.at("running").at("mean").get<double>(), 0.8);
  EXPECT_LT(j.at("kv_usage").at("mean").get<double>(), j.at("kv_usage").at("max").get<double>() * 0.8);
}

TEST(SimulateCli, ALightLoadOnALargeModelIsStable) {
  // Llama-3.1-70B on 4 x H100 at 2 requests/s: 6.6 running on average of 1024, at most 2 waiting,
  // TTFT ~50 ms. Before 2026-12-08 a rise of the number in the system by a few over the second
  // half of the arrivals (over 2 % of the arrival rate) read "inconclusive: the running batch was
  // still filling"; it is within the count's noise.
  const auto j = simulate_run({"--model", "llama-3.1-70b", "--gpu", "h100-sxm-80", "--max-model-len", "8192", "--tp", "4",
                               "--rate", "2", "--requests", "500"},
                              {});
  EXPECT_EQ(j.at("verdict").at("state"), "stable") << j.at("verdict").dump();
}

TEST(SimulateCli, OneOrTwoRequestsCannotTellStability) {
  for (const std::vector<std::string>& w : {std::vector<std::string>{"--rate", "5", "--requests", "1"},
                                            std::vector<std::string>{"--rate", "5", "--duration", "0.0001"},
                                            std::vector<std::string>{"--rate", "5", "--requests", "2"}}) {
    const auto j = simulate_json(w);
    EXPECT_EQ(j.at("verdict").at("state"), "inconclusive") << j.at("verdict").dump();
    EXPECT_EQ(j.at("verdict").at("explanation").get<std::string>().find("offline"), std::string::npos);
  }
}

TEST(SimulateCli, LlamaCppTruncationsAreSaidInTextAndMarkdown) {
  // -np 4 of a 4096-token context: slots of 1024 cells; prompts of 900..1100 tokens
  // asking for 200 stop at the slot's size (or do not fit it at all).
  const std::vector<std::string> base = {"--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "llamacpp", "--weights",
                                         "gguf:Q4_K_M", "-c", "4096", "--np", "4", "--rate", "2", "--requests", "30", "--input-len",
                                         "uniform:900..1100", "--output-len", "200"};
  const auto j = simulate_run(base, {});
  const int truncated = j.at("requests").at("truncated").get<int>();
  ASSERT_GT(truncated, 0);
  const auto run = [&base](std::vector<std::string> extra) {
    std::vector<std::string> args = {"simulate"};
    args.insert(args.end(), base.begin(), base.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
  };
  const CliResult t = run({});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find(" (" + std::to_string(truncated) + " of them truncated: prompt + output outgrew the slot's "),
            std::string::npos) << t.out;
  const CliResult m = run({"--format", "markdown"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find(", " + std::to_string(truncated) + " of them truncated at the slot's size"), std::string::npos) << m.out;
}

TEST(SimulateCli, HfOverloadNamesTheBatchFlag) {
  // HF generate() one sequence at a time at 5 requests/s: overloaded, held by the running limit,
  // and its remedy is simulate's own --batch (it named no flag before 2026-12-08).
  const CliResult r = run_cli({"simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "hf", "--rate", "5",
                               "--requests", "300", "--input-len", "256", "--output-len", "64"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("verdict: overloaded"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("to serve more: a larger running cap (--batch)"), std::string::npos) << r.out;
}

TEST(SimulateCli, TimeoutHelpSaysNothingIsCancelled) {
  const CliResult r = run_cli({"simulate", "--help-all"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cancelled"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("times out"), std::string::npos) << r.out;
}

TEST(SweepSloCli, RanksLayoutsByTheCostOfServingTheLoad) {
  const CliResult r = run_cli({"sweep", "--model", "llama-3.1-8b", "--gpu", "l40s,h100-sxm-80", "--tp", "1", "--context", "8192",
                               "--rate", "10", "--slo", "p99_ttft<=2s", "--input-len", "512", "--output-len", "128",
                               "--probe-requests", "300", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("schema"), "vramplan.sweep-slo/1");
  expect_valid(j, "sweep-slo.schema.json");
  ASSERT_EQ(j.at("rows").size(), 2u) << j.dump();
  EXPECT_EQ(j.at("simulated_layouts"), 2);
  // Cheapest first.
  const auto& rows = j.at("rows");
  EXPECT_LE(rows[0].at("cost_usd")[0].get<double>(), rows[1].at("cost_usd")[0].get<double>());
  for (const auto& row : rows) EXPECT_GE(row.at("replicas").get<int>(), 1);
}

// Every request refused (prompts longer than the context): the table says no latency was
// measured instead of printing zeros, which read as instant answers; the JSON's counts are 0.
TEST(SimulateCli, NoCompletedRequestHasNoLatencyTable) {
  const CliResult r = run_cli({"simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "1024",
                               "--rate", "1", "--requests", "10", "--input-len", "2000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("rejected 10: prompt + output tokens exceed max_model_len 1024\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("latency: no request completed, so there is none to measure\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("latency (ms)"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(run_cli({"simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len",
                                                "1024", "--rate", "1", "--requests", "10", "--input-len", "2000", "--json"}).out);
  EXPECT_EQ(j.at("latency_ms").at("ttft").at("count"), 0);
}

TEST(SimulateCli, LlamaCppSlotsWithEveryLayerOnTheGpu) {
  // -c 8192 -np 4: four slots of 2048 cells. A 1900-token prompt asking for 256 tokens stops at
  // 148 (prompt + output reaches the slot, finish_reason "length"); 3000 tokens do not fit a slot.
  const CliResult r = run_cli({"simulate", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--engine", "llamacpp",
                               "--weights", "gguf:Q4_K_M", "-c", "8192", "-np", "4", "-ngl", "99", "-fa", "on",
                               "--rate", "0.5", "--requests", "200", "--input-len", "uniform:1000..3000",
                               "--output-len", "256", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("engine_rules").at("slot_tokens"), 2048);
  EXPECT_EQ(j.at("engine_rules").at("max_seqs"), 4);
  EXPECT_GT(j.at("requests").at("truncated").get<int>(), 0);
  EXPECT_GT(j.at("requests").at("rejected").get<int>(), 0);
  EXPECT_EQ(j.at("requests").at("arrived"), 200);
  // With layers left on the CPU there is no one-GPU step time: refused with the reason.
  const CliResult partial = run_cli({"simulate", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--engine", "llamacpp",
                                     "--weights", "gguf:Q4_K_M", "-c", "8192", "-ngl", "10", "--rate", "1", "--requests", "10"});
  EXPECT_EQ(partial.exit_code, 2) << partial.err;
  EXPECT_NE(partial.err.find("partial offload"), std::string::npos) << partial.err;
}

TEST(SweepSloCli, MarkdownQuoteGolden) {
  // The quote a user pastes: load, targets, router, ranked layouts with replicas and costs, the
  // command that starts the cheapest, the rejected layouts with their reasons.
  const CliResult r = run_cli({"sweep", "--model", "llama-3.1-8b", "--gpu", "l40s,h100-sxm-80", "--tp", "1,2", "--context",
                               "8192", "--rate", "10", "--slo", "p99_ttft<=2s,p99_tpot<=50ms", "--input-len", "512",
                               "--output-len", "128", "--probe-requests", "300", "--format", "markdown"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto golden = source_dir() / "tests/golden/sweep_slo_quote.md";
  if (std::getenv("VRAMPLAN_UPDATE_GOLDEN")) {
    std::ofstream(golden, std::ios::binary) << r.out;
    GTEST_SKIP() << "golden file rewritten: " << golden;
  }
  EXPECT_EQ(r.out, read_text(golden)) << golden << " (VRAMPLAN_UPDATE_GOLDEN=1 rewrites it)";
}

TEST(SimulateCli, BadInputGetsOneLineAndADistinctExitCode) {
  const CliResult no_rate = simulate({"--requests", "10"});
  EXPECT_EQ(no_rate.exit_code, 2) << no_rate.err;
  EXPECT_NE(no_rate.err.find("--rate"), std::string::npos);
  const CliResult zero = simulate({"--rate", "0", "--requests", "10"});
  EXPECT_EQ(zero.exit_code, 2) << zero.err;
  const CliResult bad_len = simulate({"--rate", "1", "--requests", "10", "--input-len", "uniform:5..2"});
  EXPECT_EQ(bad_len.exit_code, 2) << bad_len.err;
  EXPECT_NE(bad_len.err.find("--input-len"), std::string::npos);
  // A configuration the engine would not start: exit 1 with the plan's reason.
  const CliResult no_fit = run_cli({"simulate", "--model", "llama-3.1-70b", "--gpu", "l40s", "--rate", "1", "--requests", "10"});
  EXPECT_EQ(no_fit.exit_code, 1) << no_fit.err;
  // vLLM's own advice (raise gpu_memory_utilization) cannot help when the weights alone outgrow the
  // card: 70.55 B parameters x 2 B = 131.45 GiB against the L40S's 44.42 GiB.
  EXPECT_NE(no_fit.err.find("; weights alone need 131.45 GiB per GPU at TP 1 (the GPU has 44.42 GiB): shard them "
                            "with --tp; 'vramplan check' with the same flags names the smallest layout that fits"),
            std::string::npos) << no_fit.err;
  // Where a setting can start it (the weights fit), the engine's reason stands alone.
  const CliResult kv_short = run_cli({"simulate", "--model", "llama-3.1-8b", "--gpu", "l4", "--rate", "1", "--requests",
                                      "10", "--gpu-memory-utilization", "0.6"});
  EXPECT_EQ(kv_short.exit_code, 1) << kv_short.err;
  EXPECT_EQ(kv_short.err.find("weights alone"), std::string::npos) << kv_short.err;
  // A trace row the engine can never serve is bad input, named by file and line.
  ScratchDir dir;
  const auto trace = dir.write("t.jsonl",
                               "{\"arrival_s\": 0, \"input_tokens\": 100, \"output_tokens\": 10}\n"
                               "{\"arrival_s\": 1, \"input_tokens\": 8100, \"output_tokens\": 100}\n");
  const CliResult long_row = simulate({"--trace", trace.string()});
  EXPECT_EQ(long_row.exit_code, 3) << long_row.err;
  EXPECT_NE(long_row.err.find("t.jsonl:2"), std::string::npos) << long_row.err;
  EXPECT_NE(long_row.err.find("input_tokens + output_tokens: 8200 exceeds the engine's max_model_len 8192"),
            std::string::npos) << long_row.err;
  const CliResult no_slo = simulate({"--find-max-rate"});
  EXPECT_EQ(no_slo.exit_code, 2) << no_slo.err;
  EXPECT_NE(no_slo.err.find("--slo"), std::string::npos);
  const CliResult bad_slo = simulate({"--find-max-rate", "--slo", "p99_ttft<2s"});
  EXPECT_EQ(bad_slo.exit_code, 2) << bad_slo.err;
}

// Issue 15, item 8: the offline job as a quote — the job, the workers, the targets, the
// duration with its margin and rental period, the latency, and the command that starts each worker.
TEST(SimulateCli, OfflineJobMarkdownQuoteGolden) {
  const CliResult r = simulate({"--rate", "inf", "--requests", "2000", "--input-len", "512", "--output-len", "128",
                                "--workers", "2", "--margin", "24h", "--slo", "p99_e2e<=60s", "--format", "markdown"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden(r.out, "offline_quote.md");
}

TEST(SimulateCli, MarkdownQuoteSaysOnlyWhatWasAsked) {
  // A replica answer: the load and targets, the replicas and their cost, no offline job.
  const CliResult r = simulate({"--input-len", "512", "--output-len", "128", "--slo", "p99_ttft<=2s,p99_tpot<=50ms",
                                "--target-rate", "30", "--probe-requests", "300", "--format", "markdown"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| load (--target-rate) | 30 requests/s, Poisson arrivals |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| latency targets (--slo) | p99_ttft<=2s, p99_tpot<=50ms |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("**Max rate per replica within the targets: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("**Replicas for 30 requests/s: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Offline job"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("```sh\nvllm serve llama-3.1-8b --tensor-parallel-size 1 --max-model-len 8192"), std::string::npos) << r.out;
}

TEST(SimulateCli, SpeculativeDecodingTakesTheAcceptLengthFromTheUser) {
  // SGLang EAGLE from DeepSeek-R1's MTP layer: without --spec-accept-length a usage error names
  // it (the mean tokens a verify keeps depends on the model and the text: never guessed).
  const std::vector<std::string> sglang = {"simulate", "--model", "deepseek-r1", "--gpu", "h200", "--engine", "sglang@0.5.9",
                                           "--tp-size", "8", "--speculative-algorithm", "EAGLE", "--concurrency", "4",
                                           "--rate", "inf", "--requests", "40", "--input-len", "512", "--output-len", "256"};
  const CliResult r = run_cli(sglang);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--spec-accept-length"), std::string::npos) << r.err;
  // With it, the run completes, and the rules say how a step runs.
  std::vector<std::string> with = sglang;
  with.insert(with.end(), {"--spec-accept-length", "3", "--json"});
  const CliResult ok = run_cli(with);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const auto j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j["requests"]["completed"], 40);
  EXPECT_NE(j.dump().find("speculative decoding (EAGLE, 3 steps, top-k 1, 4 draft tokens)"), std::string::npos);
  EXPECT_EQ(j["engine_rules"]["speculative"], (nlohmann::json{{"verify_tokens", 4}, {"draft_forwards", 2}, {"accept_length", 3.0}}));
  expect_valid(j, "simulate.schema.json");
  // Keeping more tokens a step makes decoding faster: TPOT at L = 3 below TPOT at L = 1.5.
  std::vector<std::string> slow = sglang;
  slow.insert(slow.end(), {"--spec-accept-length", "1.5", "--json"});
  const CliResult s = run_cli(slow);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_LT(j["latency_ms"]["tpot"]["p50"].get<double>(),
            nlohmann::json::parse(s.out)["latency_ms"]["tpot"]["p50"].get<double>());
  // vLLM mtp: an accept length past 1 + k is refused.
  const CliResult v = run_cli({"simulate", "--model", "deepseek-r1", "--gpu", "h200", "--engine", "vllm@0.19", "--tensor-parallel-size", "8",
                               "--speculative-config", R"({"method":"mtp","num_speculative_tokens":1})", "--rate", "1",
                               "--requests", "10", "--spec-accept-length", "2.5"});
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_NE(v.err.find("between 1 and 2"), std::string::npos) << v.err;
}

TEST(SimulateCli, EveryCommandThatSimulatesTakesTheAcceptLength) {
  // check --batch-range --rate simulates each cap with the draft and verify steps; the flag
  // without the rate view, a sweep without --rate or a report without --simulate is a mistake.
  const std::vector<std::string> eagle = {"--model", "deepseek-r1", "--gpu", "h200", "--engine", "sglang@0.5.9", "--tp-size", "8",
                                          "--speculative-algorithm", "EAGLE"};
  std::vector<std::string> check = {"check"};
  check.insert(check.end(), eagle.begin(), eagle.end());
  std::vector<std::string> rate = check;
  rate.insert(rate.end(), {"--batch-range", "--rate", "2", "--probe-requests", "200", "--spec-accept-length", "3"});
  const CliResult ok = run_cli(rate);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("largest --max-running-requests meeting the targets at this rate"), std::string::npos) << ok.out;
  check.insert(check.end(), {"--spec-accept-length", "3"});
  const CliResult alone = run_cli(check);
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("add --batch-range --rate R"), std::string::npos) << alone.err;
  const CliResult sweep = run_cli({"sweep", "--model", "deepseek-r1", "--gpu", "h200", "--tp", "8", "--spec-accept-length", "3"});
  EXPECT_EQ(sweep.exit_code, 2);
  EXPECT_NE(sweep.err.find("add --rate R --slo T"), std::string::npos) << sweep.err;
}

}  // namespace
}  // namespace vramplan::test
