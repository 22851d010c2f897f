// `vramplan sweep`: the fast path agrees with `check` point for point; customer prices with lots;
// the multi-GPU comparison is one command.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/golden.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

// Llama-3.1-8B's published config.json (meta-llama/Llama-3.1-8B).
const char* kLlama8bNoRopeScaling = R"({"architectures":["LlamaForCausalLM"],"hidden_size":4096,"intermediate_size":14336,
"max_position_embeddings":131072,"model_type":"llama","num_attention_heads":32,"num_hidden_layers":32,
"num_key_value_heads":8,"rms_norm_eps":1e-05,"rope_theta":500000.0,"tie_word_embeddings":false,
"torch_dtype":"bfloat16","vocab_size":128256})";

// check's verdict from its exit code (README: 0 FITS, 6 MARGINAL, 1 DOES NOT FIT).
std::string verdict_of_exit(int code) { return code == 0 ? "FITS" : code == 6 ? "MARGINAL" : code == 1 ? "DOES NOT FIT" : "error"; }

// The sweep's verdict of a point: its row's, or DOES NOT FIT when it has no row.
std::string verdict_in(const std::map<std::string, std::string>& rows, const std::string& point) {
  const auto it = rows.find(point);
  return it == rows.end() ? "DOES NOT FIT" : it->second;
}

TEST(SweepCli, AgreesWithCheckOnEveryPoint) {
  ScratchDir dir;
  const auto model = dir.write("llama-3.1-8b.json", kLlama8bNoRopeScaling).string();
  const auto r = run_cli({"sweep", "--model", model, "--gpu", "l4,h100-sxm-80/3g.40gb,h100-sxm-80", "--tp", "1",
                          "--context", "4096,8193", "--batch", "1,16,64,200", "--top", "1000", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "vramplan.sweep/1");
  EXPECT_EQ(j["evaluations"], 3 * 2 * 4);
  std::map<std::string, std::string> fitting;  // point -> FITS / MARGINAL
  for (const auto& row : j["rows"])
    fitting[row["gpu"].get<std::string>() + "/" + std::to_string(row["context"].get<int>()) + "/" +
            std::to_string(row["batch"].get<int>())] = row["verdict"];
  for (const std::string gpu : {"l4", "h100-sxm-80/3g.40gb", "h100-sxm-80"})
    for (const std::string ctx : {"4096", "8193"})
      for (const std::string batch : {"1", "16", "64", "200"}) {
        const auto c = run_cli({"check", "--model", model, "--gpu", gpu, "--max-model-len", ctx, "--batch", batch});
        EXPECT_EQ(verdict_of_exit(c.exit_code), verdict_in(fitting, gpu + "/" + ctx + "/" + batch))
            << gpu << " " << ctx << " " << batch << ": " << c.out << c.err;
      }
}

TEST(SweepCli, LlamacppWithoutCudaGraphsUsesTheNoGraphStepOverhead) {
  // --llamacpp-cuda-graphs off selects the "llamacpp-nograph" step overhead (data/perf_defaults.json:
  // 0 per step + 94.9 us per layer, against 55.0 us with graphs) in plan, check --batch-range and
  // sweep alike (perf::step_overhead_entry of the engine plan). Llama-3.1-8B has 32 layers, so
  // every decode step is 32 x (94.9 - 55.0) us = 1.2768 ms longer. F16 weights: no block-quantized
  // mat-vec cap (SweepCli.LlamacppQuantizedDecodeUnderTheMmvqCapEverywhere checks that one).
  const auto run = [](std::vector<std::string> args, bool graphs) {
    args.insert(args.end(), {"--engine", "llamacpp", "--model", "llama-3.1-8b", "--weights", "gguf:F16", "--gpu",
                             "h100-sxm-80", "--llamacpp-cuda-graphs", graphs ? "on" : "off", "--json"});
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto sweep_tpot = [&](bool graphs) {
    const auto j = run({"sweep", "--context", "4096", "--batch", "1", "--tp", "1"}, graphs);
    EXPECT_EQ(j.at("rows").size(), 1u) << j.dump();
    return j.at("rows").at(0).at("tpot_s").get<double>();
  };
  const auto plan_tpot = [&](bool graphs) {
    return run({"plan", "-c", "4096", "--batch", "1", "--context", "4096"}, graphs)
        .at("performance").at("decode").at("tpot_s").at("expected").get<double>();
  };
  const auto range_tpot = [&](bool graphs) {
    const auto rows = run({"check", "-c", "4096", "--batch-range"}, graphs).at("batch_range").at("rows");
    EXPECT_FALSE(rows.empty());
    return std::make_pair(rows.at(0).at("batch").get<int>(), rows.at(0).at("tpot_s").at("expected").get<double>());
  };
  EXPECT_NEAR(sweep_tpot(false) - sweep_tpot(true), 32 * 39.9e-6, 1e-9);
  EXPECT_NEAR(plan_tpot(false) - plan_tpot(true), 32 * 39.9e-6, 1e-9);
  const auto [batch_off, range_off] = range_tpot(false);
  const auto [batch_on, range_on] = range_tpot(true);
  ASSERT_EQ(batch_off, batch_on);
  EXPECT_NEAR(range_off - range_on, 32 * 39.9e-6, 1e-9);
  // Sweep and plan time the same decode step (batch 1 at 4096 tokens).
  EXPECT_NEAR(sweep_tpot(false), plan_tpot(false), 0.005 * plan_tpot(false));
}

TEST(SweepCli, LlamacppQuantizedDecodeUnderTheMmvqCapEverywhere) {
  // Q4_K_M weights on an H100: llama.cpp decodes them through MMVQ, whose rate is capped by SM count
  // x clock below the HBM bandwidth (perf::decode_hardware). plan, check --batch-range and sweep
  // take their decode rates from the same function, so their batch-1 TPOTs at 4096 tokens agree
  // (until 2026-12-03 sweep and check used the uncapped bandwidth), and the cap is named in the basis.
  const auto run = [](std::vector<std::string> args) {
    args.insert(args.end(), {"--engine", "llamacpp", "--model", "llama-3.1-8b", "--weights", "gguf:Q4_K_M", "--gpu",
                             "h100-sxm-80", "--json"});
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto sweep = run({"sweep", "--context", "4096", "--batch", "1", "--tp", "1"});
  ASSERT_EQ(sweep.at("rows").size(), 1u) << sweep.dump();
  const double sweep_tpot = sweep.at("rows").at(0).at("tpot_s").get<double>();
  const auto plan = run({"plan", "-c", "4096", "--batch", "1", "--context", "4096"});
  const auto& decode = plan.at("performance").at("decode");
  const double plan_tpot = decode.at("tpot_s").at("expected").get<double>();
  const auto range = run({"check", "-c", "4096", "--context", "4096", "--batch-range"}).at("batch_range");
  ASSERT_FALSE(range.at("rows").empty());
  ASSERT_EQ(range.at("rows").at(0).at("batch").get<int>(), 1);
  const double range_tpot = range.at("rows").at(0).at("tpot_s").at("expected").get<double>();
  EXPECT_NEAR(sweep_tpot, plan_tpot, 0.005 * plan_tpot);
  EXPECT_NEAR(range_tpot, plan_tpot, 0.005 * plan_tpot);
  EXPECT_NE(range.at("basis").get<std::string>().find("llama.cpp MMVQ"), std::string::npos) << range.dump();
}

TEST(SweepCli, PipelineStagesAndReplicasAgreeWithCheck) {
  ScratchDir dir;
  const auto model = dir.write("llama-3.1-8b.json", kLlama8bNoRopeScaling).string();
  const auto r = run_cli({"sweep", "--model", model, "--gpu", "l4,h100-sxm-80", "--tp", "1", "--pp", "1,2,33",
                          "--replicas", "1,2", "--context", "8192", "--batch", "1,40,120", "--top", "1000", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // PP 33 > 32 layers is invalid (listed once, not evaluated): 2 GPUs x PP {1, 2} x R {1, 2} x 3 batches.
  EXPECT_EQ(j["evaluations"], 2 * 2 * 2 * 3);
  bool pp33_listed = false;
  for (const auto& m : j["not_fitting"])
    pp33_listed |= m["pp"] == 33 && m["why"].get<std::string>().find("exceeds the 32 decoder layers") != std::string::npos;
  EXPECT_TRUE(pp33_listed) << j["not_fitting"].dump();
  std::map<std::string, std::string> fitting;
  for (const auto& row : j["rows"]) {
    // GPUs = TP x PP x replicas; tokens/s = batch / TPOT of the busiest replica.
    EXPECT_EQ(row["gpus"], row["tp"].get<int>() * row["pp"].get<int>() * row["replicas"].get<int>());
    EXPECT_NEAR(row["tokens_per_s"].get<double>() * row["tpot_s"].get<double>(), row["batch"].get<double>(), 1e-6);
    // PP 2 at batch 1: one micro-batch for two stages, half of each round idle.
    if (row["pp"] == 2 && row["batch"] == 1) {
      EXPECT_DOUBLE_EQ(row["pipeline_bubble"].get<double>(), 0.5);
    }
    fitting[row["gpu"].get<std::string>() + "/" + std::to_string(row["pp"].get<int>()) + "/" +
            std::to_string(row["replicas"].get<int>()) + "/" + std::to_string(row["batch"].get<int>())] = row["verdict"];
  }
  for (const std::string gpu : {"l4", "h100-sxm-80"})
    for (const std::string pp : {"1", "2"})
      for (const std::string reps : {"1", "2"})
        for (const std::string batch : {"1", "40", "120"}) {
          const auto c = run_cli({"check", "--model", model, "--gpu", gpu, "--max-model-len", "8192", "-pp", pp,
                                  "--replicas", reps, "--batch", batch});
          EXPECT_EQ(verdict_of_exit(c.exit_code), verdict_in(fitting, gpu + "/" + pp + "/" + reps + "/" + batch))
              << gpu << " pp" << pp << " dp" << reps << " batch " << batch << ": " << c.out;
        }
}

TEST(SweepCli, CustomerPricesAndLots) {
  ScratchDir dir;
  const auto model = dir.write("llama-3.1-8b.json", kLlama8bNoRopeScaling).string();
  // B200 sold in lots of 2 or 8 at $5/GPU-hour: 1 GPU is billed as 2; 3 days = 72 h -> 2 x 5 x 72 = $720.
  const auto prices = dir.write("prices.json", R"({"schema":"vramplan.prices/1","prices":[
    {"gpu":"b200","usd_per_gpu_hour":5.0,"lot_sizes":[2,8],"as_of":"2026-11-30","source":"test quote"}]})");
  const auto r = run_cli({"sweep", "--model", model, "--gpu", "b200", "--tp", "1", "--context", "8192",
                          "--periods", "3d", "--prices", prices.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto row = nlohmann::json::parse(r.out)["rows"].at(0);
  EXPECT_EQ(row["billed_gpus"], 2);
  EXPECT_DOUBLE_EQ(row["cost_usd"][0].get<double>(), 720.0);
  // A malformed price file is an input-file error naming the field.
  const auto bad = dir.write("bad.json", R"({"schema":"vramplan.prices/1","prices":[{"gpu":"b200","usd_per_gpu_hour":"five"}]})");
  const auto e = run_cli({"sweep", "--model", model, "--gpu", "b200", "--prices", bad.string()});
  EXPECT_EQ(e.exit_code, 3);
  EXPECT_NE(e.err.find("usd_per_gpu_hour"), std::string::npos) << e.err;
  // Silently accepted before: no schema id, two prices for one card (the last won), a price whose
  // cost overflows to inf.
  const auto no_schema = dir.write("s.json", R"({"schema":"vramplan.gpus/1","prices":[{"gpu":"b200","usd_per_gpu_hour":5}]})");
  const auto s = run_cli({"sweep", "--model", model, "--gpu", "b200", "--prices", no_schema.string()});
  EXPECT_EQ(s.exit_code, 3);
  EXPECT_NE(s.err.find("expected \"vramplan.prices/1\""), std::string::npos) << s.err;
  const auto twice = dir.write("d.json", R"({"schema":"vramplan.prices/1","prices":[{"gpu":"b200","usd_per_gpu_hour":5},
    {"gpu":"b200","usd_per_gpu_hour":1}]})");
  const auto d = run_cli({"sweep", "--model", model, "--gpu", "b200", "--prices", twice.string()});
  EXPECT_EQ(d.exit_code, 3);
  EXPECT_NE(d.err.find("a second price for b200"), std::string::npos) << d.err;
  const auto huge = dir.write("h.json", R"({"schema":"vramplan.prices/1","prices":[{"gpu":"b200","usd_per_gpu_hour":1e308}]})");
  const auto h = run_cli({"sweep", "--model", model, "--gpu", "b200", "--tp", "1", "--context", "8192", "--prices", huge.string()});
  EXPECT_EQ(h.exit_code, 3);
  EXPECT_NE(h.err.find("usd_per_gpu_hour: at most 10000 USD per GPU-hour"), std::string::npos) << h.err;
  // A figure of twenty digits was accepted below the overflow: bounded too.
  const auto typo = dir.write("t.json", R"({"schema":"vramplan.prices/1","prices":[{"gpu":"b200","usd_per_gpu_hour":1e20}]})");
  EXPECT_EQ(run_cli({"sweep", "--model", model, "--gpu", "b200", "--prices", typo.string()}).exit_code, 3);
}

TEST(SweepCli, GpuComparisonInOneCommand) {
  ScratchDir dir;
  const auto model = dir.write("llama-3.1-8b.json", kLlama8bNoRopeScaling).string();
  const auto r = run_cli({"sweep", "--model", model, "--gpu", "h100-pcie-80,h100-sxm-80,h200,l40s,b200,h100-sxm-80/3g.40gb",
                          "--context", "8192", "--batch", "8", "--tp", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string gpu : {"h100-pcie-80", "h100-sxm-80", "h200", "l40s", "b200", "h100-sxm-80/3g.40gb"})
    EXPECT_NE(r.out.find(gpu), std::string::npos) << gpu;
  EXPECT_NE(r.out.find("6 fitting of 6 points evaluated"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace vramplan::test

namespace vramplan::test {
namespace {

// An encoder is planned on one GPU: the sweep's TP 1 layout runs and the others are misses with
// the reason (the whole sweep failed on "--tensor-parallel-size does not apply" until 2026-12-05).
TEST(SweepCli, PoolingModelSweepsItsOneGpuLayout) {
  const auto r = run_cli({"sweep", "--model", "bge-m3", "--gpu", "l4", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 1u) << j.dump();
  EXPECT_EQ(j["rows"][0]["tp"], 1);
  bool tp2_missed = false;
  for (const auto& m : j["not_fitting"])
    if (m["tp"] == 2)
      tp2_missed = m["why"] == "a pooling model is planned on one GPU: tensor / pipeline parallelism is not modelled for it";
  EXPECT_TRUE(tp2_missed) << j.dump();
}

// Falcon-7B's config.json has max_position_embeddings 2048, and vLLM refuses a longer
// --max-model-len before it profiles any memory (vllm/config/model.py _get_and_verify_max_len).
// check said so; the sweep ranked the same point FITS with a launch line vLLM would refuse, since
// it only took a refusal with an empty KV pool as one of every length (until 2026-12-07).
TEST(SweepCli, AContextBeyondTheModelsPositionsFitsNowhere) {
  const auto r = run_cli({"sweep", "--model", "falcon-7b", "--gpu", "l40s,h100-sxm-80", "--tp", "1", "--context", "4096",
                          "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rows"].size(), 0u) << j["rows"].dump();
  std::size_t refused = 0;
  for (const auto& m : j["not_fitting"])
    if (m["why"].get<std::string>().find("greater than the derived max_model_len (max_position_embeddings=2048") !=
        std::string::npos)
      ++refused;
  EXPECT_EQ(refused, 2u) << j["not_fitting"].dump();
  const auto c = run_cli({"check", "--model", "falcon-7b", "--gpu", "l40s", "--max-model-len", "4096"});
  EXPECT_EQ(c.exit_code, 1) << c.out;
  // At the model's own 2048 positions both cards fit.
  const auto ok = run_cli({"sweep", "--model", "falcon-7b", "--gpu", "l40s,h100-sxm-80", "--tp", "1", "--context", "2048",
                           "--json"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["rows"].size(), 2u) << ok.out;
}

TEST(SweepCli, EngineTensorParallelFlagSetsTheTpList) {
  // The sweep used to ignore --tensor-parallel-size (its own --tp list won).
  ScratchDir dir;
  const auto model = dir.write("llama-3.1-8b.json", kLlama8bNoRopeScaling).string();
  const auto r = run_cli({"sweep", "--model", model, "--gpu", "h100-sxm-80", "--tensor-parallel-size", "2", "--context",
                          "8192", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["rows"].empty());
  for (const auto& row : j["rows"]) EXPECT_EQ(row["tp"], 2);
  const auto both = run_cli({"sweep", "--model", model, "--gpu", "h100-sxm-80", "--tensor-parallel-size", "2", "--tp", "4"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--tensor-parallel-size 2 and --tp disagree"), std::string::npos) << both.err;
}

}  // namespace
}  // namespace vramplan::test

namespace vramplan::test {
namespace {

TEST(SweepCli, MigSlicesAreReplicasOnly) {
  // TP across MIG slices used to be planned; a slice is a separate device without P2P for NCCL.
  ScratchDir dir;
  const auto model = dir.write("llama-3.1-8b.json", kLlama8bNoRopeScaling).string();
  const auto r = run_cli({"sweep", "--model", model, "--gpu", "h100-sxm-80/3g.40gb", "--tp", "1,2", "--replicas", "1,2",
                          "--context", "4096", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  bool replicas_fit = false;
  for (const auto& row : j["rows"]) {
    EXPECT_EQ(row["tp"], 1);
    replicas_fit |= row["replicas"] == 2;
  }
  EXPECT_TRUE(replicas_fit);
  bool tp2_refused = false;
  for (const auto& m : j["not_fitting"])
    tp2_refused |= m["tp"] == 2 && m["why"].get<std::string>().find("no peer-to-peer path") != std::string::npos;
  EXPECT_TRUE(tp2_refused) << j["not_fitting"].dump();
  // check says the same, as a compatibility verdict (data/compat rule tp-across-mig-slices).
  const auto c = run_cli({"check", "--model", model, "--gpu", "h100-sxm-80/3g.40gb", "-tp", "2"});
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_EQ(c.out.rfind("UNSUPPORTED: MIG slices have no peer-to-peer path", 0), 0u) << c.out;
}

// Issue 15, item 7: every row shown starts with the command that runs it as planned (one replica):
// its TP, the context as the max length, and the engine's resolved limits; JSON as argv.
TEST(SweepCli, EveryRowShownCarriesItsLaunchCommand) {
  const auto r = run_cli({"sweep", "--model", "llama-3.1-8b", "--gpu", "l40s,h100-sxm-80", "--tp", "1,2", "--context", "8192",
                          "--batch", "8", "--replicas", "1,2", "--top", "5", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  expect_matches_schema(j, "sweep.schema.json");
  ASSERT_EQ(j.at("rows").size(), 5u);  // 8 fitting, --top 5
  for (const auto& row : j.at("rows")) {
    const auto argv = row.at("launch").at("argv").get<std::vector<std::string>>();
    ASSERT_GE(argv.size(), 3u) << row.dump();
    EXPECT_EQ(argv[0], "vllm");
    EXPECT_EQ(argv[2], "llama-3.1-8b");  // the model as given
    const auto value = [&](const std::string& flag) {
      const auto it = std::find(argv.begin(), argv.end(), flag);
      return it == argv.end() || it + 1 == argv.end() ? std::string() : *(it + 1);
    };
    EXPECT_EQ(value("--tensor-parallel-size"), std::to_string(row.at("tp").get<int>())) << row.dump();
    EXPECT_EQ(value("--max-model-len"), "8192") << row.dump();
    EXPECT_FALSE(value("--max-num-seqs").empty()) << row.dump();
    EXPECT_NE(row.at("launch").at("note").get<std::string>().find("catalogue id"), std::string::npos);
  }
  // The table lists each distinct command once, with the rows it starts.
  const auto t = run_cli({"sweep", "--model", "llama-3.1-8b", "--gpu", "l40s,h100-sxm-80", "--tp", "1,2", "--context", "8192",
                          "--batch", "8", "--replicas", "1,2", "--top", "5"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("launch (one replica each):\n  #1"), std::string::npos) << t.out;
}

TEST(SweepCli, MarkdownQuoteGolden) {
  // The static quote: the ranked configurations, then the command that starts each.
  const auto r = run_cli({"sweep", "--model", "llama-3.1-8b", "--gpu", "l40s,h100-sxm-80", "--tp", "1,2", "--context", "8192",
                          "--batch", "8", "--format", "markdown"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden(r.out, "sweep_quote.md");
}

}  // namespace
}  // namespace vramplan::test

namespace vramplan::test {
namespace {

TEST(SweepCli, CatalogueLotsBillB200InPairs) {
  // data/prices.json "lots": B200 is rented in lots of 2 (or 8-GPU nodes), without any --prices file.
  ScratchDir dir;
  const auto model = dir.write("llama-3.1-8b.json", kLlama8bNoRopeScaling).string();
  const auto r = run_cli({"sweep", "--model", model, "--gpu", "b200", "--tp", "1", "--context", "8192",
                          "--periods", "1d", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto row = nlohmann::json::parse(r.out)["rows"].at(0);
  EXPECT_EQ(row["gpus"], 1);
  EXPECT_EQ(row["billed_gpus"], 2);
  EXPECT_NE(row["price_basis"].get<std::string>().find("rented in lots of 2 or 8 GPUs"), std::string::npos)
      << row["price_basis"];
  // A customer price without lot_sizes keeps the catalogue's lots: 2 x $5 x 24 h = $240.
  const auto keep = dir.write("keep.json", R"({"schema":"vramplan.prices/1","prices":[{"gpu":"b200","usd_per_gpu_hour":5.0}]})");
  const auto k = run_cli({"sweep", "--model", model, "--gpu", "b200", "--tp", "1", "--context", "8192",
                          "--periods", "1d", "--prices", keep.string(), "--json"});
  ASSERT_EQ(k.exit_code, 0) << k.err;
  const auto krow = nlohmann::json::parse(k.out)["rows"].at(0);
  EXPECT_EQ(krow["billed_gpus"], 2);
  EXPECT_DOUBLE_EQ(krow["cost_usd"][0].get<double>(), 240.0);
  // lot_sizes [] says the customer rents single GPUs: billed 1, 1 x $5 x 24 h = $120.
  const auto single = dir.write("single.json",
                                R"({"schema":"vramplan.prices/1","prices":[{"gpu":"b200","usd_per_gpu_hour":5.0,"lot_sizes":[]}]})");
  const auto s = run_cli({"sweep", "--model", model, "--gpu", "b200", "--tp", "1", "--context", "8192",
                          "--periods", "1d", "--prices", single.string(), "--json"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const auto srow = nlohmann::json::parse(s.out)["rows"].at(0);
  EXPECT_EQ(srow["billed_gpus"], 1);
  EXPECT_DOUBLE_EQ(srow["cost_usd"][0].get<double>(), 120.0);
}

TEST(SweepCli, MigSliceHasAThroughputScaledFromItsCard) {
  ScratchDir dir;
  const auto model = dir.write("llama-3.1-8b.json", kLlama8bNoRopeScaling).string();
  const auto r = run_cli({"sweep", "--model", model, "--gpu", "h100-sxm-80/3g.40gb,h100-sxm-80", "--tp", "1",
                          "--context", "4096", "--batch", "8", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  double slice = 0, card = 0;
  const auto j = nlohmann::json::parse(r.out);  // kept alive for the loop
  for (const auto& row : j["rows"]) {
    ASSERT_TRUE(row["tokens_per_s"].is_number()) << row["gpu"];  // "unknown" before issue 17
    if (row["gpu"] == "h100-sxm-80/3g.40gb") {
      slice = row["tokens_per_s"].get<double>();
      EXPECT_EQ(row["throughput_scaled_from"],
                "MIG 3g.40gb scaled from the full h100-sxm-80: 3/7 of its SMs (tensor rate), 4/8 of its memory "
                "slices (bandwidth 3350 GB/s x 4/8)");
    } else {
      card = row["tokens_per_s"].get<double>();
      EXPECT_TRUE(row["throughput_scaled_from"].is_null());
    }
  }
  // Decode at batch 8 is bandwidth-bound: half the bandwidth, at most the card's rate and well
  // above a third of it (step overheads do not scale).
  EXPECT_GT(slice, 0.0);
  EXPECT_LT(slice, card);
  EXPECT_GT(slice, card / 3);
  const auto text = run_cli({"sweep", "--model", model, "--gpu", "h100-sxm-80/3g.40gb", "--tp", "1", "--context", "4096"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("est. tok/s of MIG slices, scaled from the full card:"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace vramplan::test
