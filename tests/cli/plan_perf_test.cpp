// `vramplan plan` performance section and calibration end to end, through the real executable.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "support/json_schema.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

// `vramplan plan --json` for Llama-3.1-8B; `gpu` and `engine` default to h200 and vllm.
nlohmann::json plan(std::vector<std::string> extra, const std::string& gpu = "h200", const std::string& engine = "vllm") {
  std::vector<std::string> args = {"plan", "--model", "llama-3.1-8b", "--gpu", gpu, "--engine", engine, "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

std::string calib_fixture() { return fixture("calib/h200-synthetic.json").string(); }

TEST(PlanPerfCli, BatchOneDecodeTtftAndKnee) {
  const auto j = plan({"--batch", "1"});
  const auto& p = j.at("performance");
  ASSERT_TRUE(p.at("available").get<bool>()) << p.dump();
  EXPECT_EQ(p.at("batch"), 1);
  EXPECT_EQ(p.at("prompt_tokens"), 1024);  // perf::kDefaultPromptTokens
  EXPECT_EQ(p.at("decode_context"), 1024);
  EXPECT_FALSE(p.at("calibrated").get<bool>());
  EXPECT_NE(p.at("basis").get<std::string>().find("datasheet 4800 GB/s x 0.8"), std::string::npos);
  // Batch 1 is memory-bound: TPOT ~ streamed weights / (4800 GB/s x 0.8) + the step overhead. The
  // streamed weights are the per-GPU weights less the embedding gather (~15 GB of bf16): ~3.9 ms;
  // the overhead (data/perf_defaults.json step_overhead) of vllm (0.19: asynchronous scheduling,
  // no per-step term) for 32 layers is 32 x 26.1 us = 0.84 ms: 4.7-4.8 ms.
  const auto& d = p.at("decode");
  const double tpot = d.at("tpot_s").at("expected").get<double>();
  EXPECT_GT(tpot, 0.0045);
  EXPECT_LT(tpot, 0.0050);
  // vLLM 0.11 schedules serially ("vllm-sync"): 0.65 ms + 32 x 55.6 us = 2.43 ms, 6.2-6.4 ms.
  const double serial = plan({"--batch", "1"}, "h200", "vllm@0.11")["performance"]["decode"]["tpot_s"]["expected"].get<double>();
  EXPECT_GT(serial, 0.0060);
  EXPECT_LT(serial, 0.0066);
  EXPECT_NEAR(d.at("tokens_per_s").at("expected").get<double>(), 1 / tpot, 1e-6 / tpot);
  const auto& t = p.at("ttft_s");
  EXPECT_LE(t.at("low").get<double>(), t.at("expected").get<double>());
  EXPECT_LE(t.at("expected").get<double>(), t.at("high").get<double>());
  // The knee runs to the memory-limited concurrency: KV capacity / decode context.
  const auto& c = p.at("throughput_vs_batch");
  EXPECT_EQ(c.at("max_batch").get<std::uint64_t>(), j.at("kv").at("capacity_tokens").get<std::uint64_t>() / 1024);
  EXPECT_GE(c.at("knee_batch").get<std::uint64_t>(), c.at("half_batch").get<std::uint64_t>());
  EXPECT_LE(c.at("knee_batch").get<std::uint64_t>(), c.at("max_batch").get<std::uint64_t>());
  EXPECT_EQ(j.at("calibration").at("selected"), "none");
}

TEST(PlanPerfCli, BatchAndPromptFlagsAreUsed) {
  const auto one = plan({"--batch", "1", "--prompt-len", "512"});
  const auto many = plan({"--batch", "64", "--prompt-len", "2048"});
  EXPECT_EQ(many.at("performance").at("batch"), 64);
  EXPECT_EQ(many.at("performance").at("prompt_tokens"), 2048);
  // More sequences per step: more tokens per second, a longer step.
  EXPECT_GT(many["performance"]["decode"]["tokens_per_s"]["expected"].get<double>(),
            10 * one["performance"]["decode"]["tokens_per_s"]["expected"].get<double>());
  EXPECT_GT(many["performance"]["ttft_s"]["expected"].get<double>(), one["performance"]["ttft_s"]["expected"].get<double>());
}

TEST(PlanPerfCli, UnknownGpuRatesAreNullWithAReason) {
  const auto j = plan({}, "custom:80GiB");
  const auto& p = j.at("performance");
  EXPECT_FALSE(p.at("available").get<bool>());
  EXPECT_TRUE(p.at("decode").is_null());
  EXPECT_TRUE(p.at("ttft_s").is_null());
  EXPECT_NE(p.at("reason").get<std::string>().find("no memory bandwidth known"), std::string::npos);
}

TEST(PlanPerfCli, CalibrationFeedsThePerformanceSideAndSaysSo) {
  const auto j = plan({"--calibration", calib_fixture()});
  const auto& p = j.at("performance");
  EXPECT_TRUE(p.at("calibrated").get<bool>());
  // Fixture: read_bandwidth_gbps 4400, achieved_tflops.bf16 700.
  const std::string basis = p.at("basis").get<std::string>();
  EXPECT_NE(basis.find("(4400 GB/s)"), std::string::npos) << basis;
  EXPECT_NE(basis.find("(700 TFLOPS)"), std::string::npos) << basis;
  EXPECT_EQ(j.at("calibration").at("selected"), "--calibration");
  EXPECT_EQ(j.at("calibration").at("file"), calib_fixture());
  // 4400 GB/s measured beats 4800 x 0.8 = 3840 GB/s: a faster decode than uncalibrated.
  const auto plain = plan({});
  EXPECT_LT(p["decode"]["tpot_s"]["expected"].get<double>(), plain["performance"]["decode"]["tpot_s"]["expected"].get<double>());
}

TEST(PlanPerfCli, CalibrationFeedsTheMemorySideWhereTheEngineUsesIt) {
  // SGLang takes the CUDA context from the calibration (524288000 B = 500 MiB in the fixture).
  const auto j = plan({"--calibration", calib_fixture()}, "h200", "sglang");
  EXPECT_NE(j.at("calibration").at("memory").get<std::string>().find("500.00 MiB from the calibration"), std::string::npos)
      << j.at("calibration").dump();
  // vLLM's non-torch figure does not use it, and the output says defaults.
  EXPECT_EQ(plan({"--calibration", calib_fixture()}).at("calibration").at("memory"), "documented defaults (engine data files)");
}

TEST(PlanPerfCli, EmitRehearsalWritesTheProbeInput) {
  ScratchDir dir;
  const auto file = dir.path() / "rehearsal.json";
  const auto j = plan({"--max-model-len", "8192", "--emit-rehearsal", file.string()});
  std::ifstream in(file);
  ASSERT_TRUE(in.good());
  const auto r = nlohmann::json::parse(in);
  EXPECT_EQ(r.at("schema"), "vramplan.rehearsal/1");
  EXPECT_EQ(r.at("weights_bytes"), j.at("per_gpu").at("weights_bytes"));
  EXPECT_EQ(r.at("kv_blocks"), j.at("engine_view").at("gpu_blocks"));
  // One vLLM block: 16 tokens x 131072 B/token (2 x 32 layers x 8 kv heads x 128 x 2 B) = 2 MiB.
  EXPECT_EQ(r.at("kv_block_bytes"), 2097152);
  EXPECT_EQ(r.at("activation_workspace_bytes"), j.at("per_gpu").at("activation_bytes"));
  // Llama-3.1-8B layer GEMMs at vLLM's 8192-token budget: qkv N = (32 + 2 x 8) x 128 = 6144.
  ASSERT_EQ(r.at("gemms").size(), 4u);
  EXPECT_EQ(r["gemms"][0]["n"], 6144);
  EXPECT_EQ(r["gemms"][0]["k"], 4096);
  EXPECT_EQ(r["gemms"][0]["m"], 8192);
  EXPECT_EQ(r["gemms"][2]["n"], 2 * 14336);
}

TEST(PlanPerfCli, MigSliceThroughputIsScaledFromTheFullCard) {
  // Before issue 17 a MIG slice said "performance: unknown" (no TFLOPS per profile). 3g.40gb of an
  // H100 SXM: 3/7 of its 794.5 bf16 TFLOPS matmul ceiling, 4/8 of 3350 GB/s = 1675 GB/s. Batch 1 is memory-bound: the
  // ~15.0 GB of streamed bf16 weights (BatchOneDecodeTtftAndKnee: ~3.9 ms at 4800 x 0.8 GB/s) take
  // 15.0 / (1675 x 0.8) = 11.2 ms, plus the 0.84 ms vllm step overhead of 32 layers: ~12.0 ms.
  const auto j = plan({"--batch", "1", "--max-model-len", "8192"}, "h100-sxm-80/3g.40gb");
  const auto& p = j.at("performance");
  ASSERT_TRUE(p.at("available").get<bool>()) << p.dump();
  const std::string basis = p.at("basis").get<std::string>();
  EXPECT_EQ(basis.rfind("MIG 3g.40gb scaled from the full h100-sxm-80: 3/7 of its SMs (tensor rate), 4/8 of its "
                        "memory slices (bandwidth 3350 GB/s x 4/8)",
                        0),
            0u)
      << basis;
  EXPECT_NE(basis.find("datasheet 1675 GB/s x 0.8"), std::string::npos) << basis;
  // The tensor rate: the card's measured matmul ceiling (794.5 bf16 TFLOPS, data/gpus.json) x 3/7 = 340.5.
  EXPECT_NE(basis.find("tensor bf16 (3/7 of the card's 794.5): measured matmul ceiling (MAMF) 340.5 TFLOPS"),
            std::string::npos)
      << basis;
  const double tpot = p.at("decode").at("tpot_s").at("expected").get<double>();
  EXPECT_GT(tpot, 0.0117);
  EXPECT_LT(tpot, 0.0125);
  const auto text = run_cli({"plan", "--model", "llama-3.1-8b", "--gpu", "h100/3g.40gb", "--max-model-len", "8192"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.find("performance: unknown"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("basis    MIG 3g.40gb scaled from the full h100-sxm-80"), std::string::npos) << text.out;
}

TEST(PlanPerfCli, TableShowsPerformanceLines) {
  const auto r = run_cli({"plan", "--model", "llama-3.1-8b", "--gpu", "h200"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"performance (uncalibrated", "decode   batch 1", "TTFT     prompt 1024", "knee     batch", "basis    ",
                        "calibration: none"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

// llama.cpp partial offload (perf/host_offload.hpp): the CPU layers are read at --host-bandwidth.
TEST(PlanPerfCli, LlamacppPartialOffloadReadsTheCpuLayersAtHostBandwidth) {
  auto tpot = [](const std::string& ngl) {
    const auto r = run_cli({"plan", "--engine", "llamacpp", "--model", "llama-2-7b", "--weights", "gguf:Q4_0", "--gpu",
                            "rtx-3090", "-c", "640", "-ngl", ngl, "--host-bandwidth", "30", "--batch", "1", "--context",
                            "64", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto p = nlohmann::json::parse(r.out).at("performance");
    EXPECT_TRUE(p.at("available").get<bool>()) << p.dump();
    return p.at("decode").at("tpot_s").at("expected").get<double>();
  };
  // -ngl 16 of 32 layers: blk.0-15 and the output stay on the host. Llama-2-7B Q4_0 (18 B per
  // 32 weights; output Q6_K, 210 B per 256): a layer is 4 x 4096^2 + 3 x 4096 x 11008 =
  // 202,375,168 weights x 18/32 = 113,836,032 B + 2 norms x 16,384 B = 113,868,800 B; 16 of them
  // 1,821,900,800 B; output 4096 x 32000 x 210/256 = 107,520,000 B; output_norm 16,384 B: on the
  // host 1,929,437,184 B. Each costs 1/30e9 instead of 1/(936e9 x 0.8) s per byte:
  // 1.929437e9 x (3.33333e-11 - 1.33547e-12) = 61.74 ms more per token; the KV of the host layers
  // (64 tokens x 16 layers x 2 x 4096 x 2 B = 16.8 MB) another 0.54 ms: 62.3 ms.
  EXPECT_NEAR(tpot("16") - tpot("99"), 0.0623, 0.0006);
}

TEST(PlanPerfCli, SpeculativeDecodeAtTheAcceptLengthGiven) {
  // SGLang EAGLE from DeepSeek-R1's MTP layer (3 steps, 4 draft tokens): with --spec-accept-length
  // 3 the plan adds decode as the simulator steps it. A step (verify + draft) keeps 3 tokens, so
  // TPOT is the step / 3 and batch 1 makes 3 tokens a step; without the flag the figure is null.
  const std::vector<std::string> eagle = {"plan", "--model", "deepseek-r1", "--gpu", "h200", "--engine", "sglang@0.5.9",
                                          "--tp-size", "8", "--speculative-algorithm", "EAGLE", "--json"};
  std::vector<std::string> given = eagle;
  given.insert(given.end(), {"--spec-accept-length", "3"});
  const auto r = run_cli(given);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& p = j.at("performance");
  const auto& s = p.at("speculative_decode");
  ASSERT_TRUE(s.is_object()) << p.dump();
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs" / "schemas" / "plan.schema.json"));
  const auto violations = schema_violations(j, schema);
  EXPECT_TRUE(violations.empty()) << violations.front();
  EXPECT_EQ(s.at("verify_tokens"), 4);
  EXPECT_DOUBLE_EQ(s.at("accept_length").get<double>(), 3.0);
  for (const char* k : {"low", "expected", "high"}) {
    const double step = s.at("step_s").at(k).get<double>();
    EXPECT_DOUBLE_EQ(s.at("tpot_s").at(k).get<double>(), step / 3) << k;
  }
  EXPECT_DOUBLE_EQ(s.at("tokens_per_s").at("expected").get<double>(), 3 / s.at("step_s").at("expected").get<double>());
  // A verify of 4 tokens plus the draft costs more than one plain decode step, but less than 3.
  const double plain = p.at("decode").at("tpot_s").at("expected").get<double>();
  EXPECT_GT(s.at("step_s").at("expected").get<double>(), plain);
  EXPECT_LT(s.at("tpot_s").at("expected").get<double>(), plain);
  const auto without = run_cli(eagle);
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_TRUE(nlohmann::json::parse(without.out).at("performance").at("speculative_decode").is_null());
  given.back() = "5";  // more than the 4 tokens a verify runs
  EXPECT_EQ(run_cli(given).exit_code, 2);
}

}  // namespace
}  // namespace vramplan::test
