// `vramplan check`: every exit code, the one-line verdict, JSON, MIG and multi-GPU layouts, and the
// Markdown golden file (regenerate: VRAMPLAN_UPDATE_GOLDEN=1 build/bin/vramplan_tests
// --gtest_filter='CheckCli.*Golden*'; review the diff before committing it).
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/golden.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

// Llama-3.1-70B's published config.json (meta-llama/Llama-3.1-70B-Instruct), written to a scratch
// folder so the test does not depend on the model catalogue. KV/token = 2 x 80 x 8 x 128 x 2 B
// = 327,680 B; 163,840 B per GPU at TP 2.
const char* kLlama70b = R"({"architectures":["LlamaForCausalLM"],"hidden_size":8192,"intermediate_size":28672,
"max_position_embeddings":131072,"model_type":"llama","num_attention_heads":64,"num_hidden_layers":80,
"num_key_value_heads":8,"rms_norm_eps":1e-05,"rope_scaling":{"factor":8.0,"low_freq_factor":1.0,
"high_freq_factor":4.0,"original_max_position_embeddings":8192,"rope_type":"llama3"},"rope_theta":500000.0,
"tie_word_embeddings":false,"torch_dtype":"bfloat16","vocab_size":128256})";

// Llama-3.1-8B (meta-llama/Llama-3.1-8B): 32 layers, 8 KV heads -> 131,072 B per token.
const char* kLlama8b = R"({"architectures":["LlamaForCausalLM"],"hidden_size":4096,"intermediate_size":14336,
"max_position_embeddings":131072,"model_type":"llama","num_attention_heads":32,"num_hidden_layers":32,
"num_key_value_heads":8,"rms_norm_eps":1e-05,"rope_scaling":{"factor":8.0,"low_freq_factor":1.0,
"high_freq_factor":4.0,"original_max_position_embeddings":8192,"rope_type":"llama3"},"rope_theta":500000.0,
"tie_word_embeddings":false,"torch_dtype":"bfloat16","vocab_size":128256})";

struct Models {
  ScratchDir dir;
  std::string llama70b = dir.write("llama-3.1-70b.json", kLlama70b).string();
  std::string llama8b = dir.write("llama-3.1-8b.json", kLlama8b).string();
};

const Models& models() {
  static const Models m;
  return m;
}

TEST(CheckCli, FitsExitsZeroWithOneLine) {
  const auto r = run_cli({"check", "--model", models().llama70b, "--gpu", "h200", "-tp", "2", "--max-model-len", "8192"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // The verdict names both quantities: what the workload needs and what vLLM holds (its pool).
  EXPECT_EQ(r.out.rfind("FITS h200 x2 tp2: needs ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(" GiB per GPU, vLLM holds "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" of 139.8 GiB; KV pool "), std::string::npos) << r.out;
  // The verdict, what it was decided on (the default --headroom said), which model file, and the
  // command that starts it as checked, with its note: a config file under another name than
  // config.json is no directory a server loads, so a placeholder stands in its place.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 5);
  EXPECT_NE(r.out.find("\nmodel llama-3.1-70b from the config.json "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nlaunch: vllm serve <checkpoint-dir> --tensor-parallel-size 2 --max-model-len 8192 "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("'" + models().llama70b + "' is a config file, which no server loads"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\ndecided on the expected values and on the upper bounds of data/accuracy_bounds.json (FITS); "
                       "--headroom 0.0% of the card kept spare in the KV pool (default)\n"),
            std::string::npos)
      << r.out;
}

TEST(CheckCli, DoesNotFitExitsOneAndNamesWhatBreaks) {
  // 64 x 8192 tokens x 163,840 B = 80.00 GiB of KV per GPU: far over the pool of two H100s.
  const auto r = run_cli({"check", "--model", models().llama70b, "--gpu", "h100-sxm-80", "-tp", "2",
                          "--max-model-len", "8192", "--batch", "64"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("DOES NOT FIT h100-sxm-80 x2 tp2: KV cache for 64 sequences of 8192 tokens needs 80.00 GiB; "),
            std::string::npos)
      << r.out;
}

TEST(CheckCli, BadInputExitCodes) {
  const auto& m = models();
  // 2: usage (bad --headroom, invalid TP with the reason).
  EXPECT_EQ(run_cli({"check", "--model", m.llama8b, "--gpu", "h100", "--headroom", "lots"}).exit_code, 2);
  const auto tp3 = run_cli({"check", "--model", m.llama70b, "--gpu", "h100", "-tp", "3"});
  EXPECT_EQ(tp3.exit_code, 2);
  EXPECT_NE(tp3.err.find("attention heads (64) must be divisible by TP 3"), std::string::npos) << tp3.err;
  // 3: malformed model file.
  ScratchDir dir;
  const auto bad = dir.write("config.json", "{\"hidden_size\": ");
  EXPECT_EQ(run_cli({"check", "--model", bad.string(), "--gpu", "h100"}).exit_code, 3);
  // 4: unknown GPU.
  EXPECT_EQ(run_cli({"check", "--model", m.llama8b, "--gpu", "h900"}).exit_code, 4);
  // 5: model file missing.
  EXPECT_EQ(run_cli({"check", "--model", (dir.path() / "missing.json").string(), "--gpu", "h100"}).exit_code, 5);
}

TEST(CheckCli, JsonCarriesTheDecision) {
  const auto r = run_cli({"check", "--model", models().llama8b, "--gpu", "h100-sxm-80", "--max-model-len", "8192",
                          "--batch", "16", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "vramplan.check/1");
  EXPECT_TRUE(j["fits"].get<bool>());
  EXPECT_EQ(j["verdict"], "FITS");
  // 16 sequences x 8192 tokens x 131,072 B = 16 GiB (512 blocks of 16 tokens each, no rounding).
  EXPECT_EQ(j["per_gpu"]["expected"]["kv_needed_bytes"].get<std::uint64_t>(), 16ull << 30);
  EXPECT_EQ(j["workload"]["per_sequence_kv_bytes"].get<std::uint64_t>(), 8192ull * 131072);
  const auto& e = j["per_gpu"]["expected"];
  const std::uint64_t non_kv = e["weights_bytes"].get<std::uint64_t>() + e["activation_bytes"].get<std::uint64_t>() +
                               e["overhead_bytes"].get<std::uint64_t>();
  EXPECT_EQ(e["needed_bytes"].get<std::uint64_t>(), non_kv + e["kv_needed_bytes"].get<std::uint64_t>());
  // vLLM holds its whole pool: more than the 16 sequences need.
  EXPECT_GE(e["held_bytes"].get<std::uint64_t>(), non_kv + e["kv_pool_bytes"].get<std::uint64_t>() - (1u << 20));
  EXPECT_GT(e["held_bytes"].get<std::uint64_t>(), e["needed_bytes"].get<std::uint64_t>());
  EXPECT_GE(j["per_gpu"]["upper_bound"]["needed_bytes"].get<std::uint64_t>(), e["needed_bytes"].get<std::uint64_t>());
  EXPECT_TRUE(j["marginal"].is_null());
  EXPECT_TRUE(j["warnings"].is_array());
}

TEST(CheckCli, BlockRoundingOfTheContext) {
  // 8193 tokens occupy 513 blocks of 16 = 8208 tokens: 8208 x 131,072 = 1,075,838,976 B.
  const auto r = run_cli({"check", "--model", models().llama8b, "--gpu", "h100-sxm-80", "--max-model-len", "8193",
                          "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["workload"]["per_sequence_kv_bytes"].get<std::uint64_t>(), 1075838976u);
}

TEST(CheckCli, MigSliceAndReplicas) {
  // Llama-3.1-8B bf16 (~15 GiB) on an H100 3g.40gb slice.
  const auto mig = run_cli({"check", "--model", models().llama8b, "--gpu", "h100-sxm-80/3g.40gb", "--max-model-len",
                            "8192"});
  EXPECT_EQ(mig.exit_code, 0) << mig.err << mig.out;
  EXPECT_EQ(mig.out.rfind("FITS h100-sxm-80/3g.40gb x1: ", 0), 0u) << mig.out;
  // Two TP-2 replicas: 4 GPUs; 32 sequences split 16 per replica.
  const auto dp = run_cli({"check", "--model", models().llama70b, "--gpu", "h200", "-tp", "2", "--replicas", "2",
                           "--max-model-len", "8192", "--batch", "32", "--json"});
  ASSERT_EQ(dp.exit_code, 0) << dp.err;
  const auto j = nlohmann::json::parse(dp.out);
  EXPECT_EQ(j["layout"]["gpus"], 4);
  EXPECT_EQ(j["workload"]["batch_per_replica"], 16);
  EXPECT_EQ(j["line"].get<std::string>().rfind("FITS h200 x4 tp2 dp2: ", 0), 0u);
}

TEST(CheckCli, LimitsAreConsistentWithCheck) {
  const auto r = run_cli({"check", "--model", models().llama8b, "--gpu", "h100-sxm-80", "--max-model-len", "8192",
                          "--limits", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto max_batch = j["limits"]["max_batch"]["value"].get<std::uint64_t>();
  ASSERT_GT(max_batch, 1u);
  // The search's answer fits on the expected values (as vLLM's own max concurrency; it may be
  // MARGINAL on the upper bounds, hence --accept-marginal); one more sequence does not.
  const auto at = run_cli({"check", "--model", models().llama8b, "--gpu", "h100-sxm-80", "--max-model-len", "8192",
                           "--batch", std::to_string(max_batch), "--accept-marginal"});
  const auto over = run_cli({"check", "--model", models().llama8b, "--gpu", "h100-sxm-80", "--max-model-len", "8192",
                             "--batch", std::to_string(max_batch + 1)});
  EXPECT_EQ(at.exit_code, 0) << at.out;
  EXPECT_EQ(over.exit_code, 1) << over.out;
  EXPECT_EQ(j["limits"]["min_gpus"]["gpus"], 1);
}

// Kimi-K2 (about 1 TB of FP8 weights) needs 16 H100s. Beyond one 8-GPU host the search takes TP
// within the host first: tp8 pp2 fits before tp16 is tried, whose all-reduces would cross the network
// twice a layer (vLLM's multi-node advice: TP per node, PP across nodes).
TEST(CheckCli, MinGpusBeyondAHostKeepsTensorParallelismInsideIt) {
  const auto r = run_cli({"check", "--model", "kimi-k2-instruct", "--gpu", "h100-sxm-80", "--max-model-len", "8192",
                          "--limits", "--max-gpus", "16", "--json"});
  ASSERT_EQ(r.exit_code, 1) << r.err;  // one GPU does not fit
  const auto m = nlohmann::json::parse(r.out)["limits"]["min_gpus"];
  EXPECT_EQ(m["gpus"], 16);
  EXPECT_EQ(m["tp"], 8);
  EXPECT_EQ(m["pp"], 2);
  // A check of that layout spans two hosts; one of tp8 stays in one.
  const auto two = run_cli({"check", "--model", "kimi-k2-instruct", "--gpu", "h100-sxm-80", "--max-model-len", "8192",
                            "-tp", "8", "-pp", "2", "--json"});
  EXPECT_EQ(nlohmann::json::parse(two.out)["layout"]["hosts_per_replica"], 2) << two.err;
  const auto one = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "8192",
                            "-tp", "8", "--replicas", "2", "--json"});
  EXPECT_EQ(nlohmann::json::parse(one.out)["layout"]["hosts_per_replica"], 1) << one.err;
  // In a cluster of 4-GPU hosts (--node-gpus 4) the tp8 replica spans two, and the smallest layout
  // for Kimi-K2 keeps TP inside a host: tp4 pp4.
  const auto four = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "8192",
                             "-tp", "8", "--node-gpus", "4", "--json"});
  EXPECT_EQ(nlohmann::json::parse(four.out)["layout"]["hosts_per_replica"], 2) << four.err;
  const auto small_hosts = run_cli({"check", "--model", "kimi-k2-instruct", "--gpu", "h100-sxm-80", "--max-model-len",
                                    "8192", "--limits", "--max-gpus", "16", "--node-gpus", "4", "--json"});
  const auto m4 = nlohmann::json::parse(small_hosts.out)["limits"]["min_gpus"];
  EXPECT_EQ(m4["gpus"], 16) << small_hosts.err;
  EXPECT_EQ(m4["tp"], 4);
  EXPECT_EQ(m4["pp"], 4);
  // At 9 GPUs (more than a host), tp1 pp9 is tried before tp9.
  std::vector<std::pair<int, int>> order;
  for (const auto& t : m["tried"]) order.emplace_back(t["tp"].get<int>(), t["pp"].get<int>());
  const auto at = [&](std::pair<int, int> p) { return std::find(order.begin(), order.end(), p) - order.begin(); };
  EXPECT_LT(at({1, 9}), at({9, 1}));
  EXPECT_LT(at({8, 1}), at({4, 2}));  // within one host the order is unchanged: tp8 before tp4 pp2
}

// llama.cpp gives each of its -np sequences n_ctx / n_seq_max cells: -c 4096 -np 8 runs sequences
// of 4096 / 8 = 512 tokens, and the verdict counts those (it said "8 sequences of 4096").
TEST(CheckCli, LlamaCppSequencesAreTheirSlotsLength) {
  auto r = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "llamacpp", "--weights",
                    "gguf:Q4_K_M", "-c", "4096", "-np", "8"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" = 8 sequences of 512\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sequences of 512 tokens: llama.cpp splits --ctx-size over its -np sequences"), std::string::npos);
  // A --context longer than a slot is a batch the server fails: it does not fit.
  r = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "llamacpp", "--weights",
               "gguf:Q4_K_M", "-c", "4096", "-np", "8", "--context", "1024"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("sequences of 1024 tokens exceed the 512 one llama.cpp slot holds (--ctx-size 4096 split over 8 "
                       "sequences, -np)"), std::string::npos) << r.out;
  // Slots are padded to 256 cells: -c 1000 pads to 1024, / 3 sequences = 341, padded to 512 a slot.
  r = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "llamacpp", "--weights",
               "gguf:Q4_K_M", "-c", "1000", "-np", "3", "--context", "900"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("exceed the 512 one llama.cpp slot holds (--ctx-size 1000 split over 3 sequences, -np)"),
            std::string::npos) << r.out;
}

TEST(CheckCli, CpuOnlyLlamaCppRun) {
  // --gpu cpu plans host memory for llama.cpp, as `vramplan plan` does; it needs the memory size.
  auto r = run_cli({"check", "--model", models().llama8b, "--gpu", "cpu", "--engine", "llamacpp", "--gpu-memory",
                    "32GiB", "--weights", "gguf:Q4_K_M", "--limits"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("FITS cpu x1: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("llama.cpp holds 23.9 of 32.0 GiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("smallest card: not searched (host memory)"), std::string::npos) << r.out;
  r = run_cli({"check", "--model", models().llama8b, "--gpu", "cpu", "--engine", "llamacpp", "--weights", "gguf:Q4_K_M"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gpu cpu needs --gpu-memory"), std::string::npos) << r.err;
  r = run_cli({"check", "--model", models().llama8b, "--gpu", "cpu", "--gpu-memory", "32GiB"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gpu cpu is a CPU-only llama.cpp run; vllm runs on GPUs"), std::string::npos) << r.err;
}

TEST(CheckCli, Llama70bOnTwoH100sAt8kIsMarginalNotRefused) {
  // vLLM starts this (the llm-d 70-72B-on-H100-SXM5 case: its pool holds ~9.7k tokens); it used to be
  // DOES NOT FIT for a default 10 % headroom on top of vLLM's own 90 %. One 8192-token sequence
  // (1.25 GiB at 163,840 B/token) fits the expected 1.5 GiB pool, not the pool left on the upper
  // bounds of the non-KV components (weights +0.13, activation +0.10, non-torch +0.11 GiB).
  const std::vector<std::string> base = {"check", "--model", models().llama70b, "--gpu", "h100-sxm-80", "-tp", "2",
                                         "--max-model-len", "8192"};
  const auto r = run_cli(base);
  EXPECT_EQ(r.exit_code, 6) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("MARGINAL h100-sxm-80 x2 tp2: needs ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("= 1 sequence of 8192; on the upper bounds the KV pool is "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" = 0 sequences of 8192 ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" short)"), std::string::npos) << r.out;
  auto with = [&](const std::string& flag) {
    auto a = base;
    a.push_back(flag);
    return run_cli(a);
  };
  EXPECT_EQ(with("--accept-marginal").exit_code, 0);
  EXPECT_EQ(with("--conservative").exit_code, 1);
  auto both = base;
  both.insert(both.end(), {"--conservative", "--accept-marginal"});
  EXPECT_EQ(run_cli(both).exit_code, 2);
  const auto j = nlohmann::json::parse(with("--json").out);
  EXPECT_EQ(j["verdict"], "MARGINAL");
  EXPECT_GT(j["marginal"]["short_bytes"].get<std::int64_t>(), 0);
  EXPECT_EQ(j["marginal"]["sequences_expected"], 1);
  EXPECT_EQ(j["marginal"]["sequences_upper_bound"], 0);
}

TEST(CheckCli, MaxModelLenBeyondThePositionsIsRefusedAsVllmDoes) {
  // Llama-3.1 uses rope_type llama3, which vLLM does not scale (config/model.py
  // _get_and_verify_max_len): 131072 positions is the limit; check said FITS before.
  const auto r = run_cli({"check", "--model", models().llama8b, "--gpu", "h200", "--max-model-len", "200000"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("User-specified max_model_len (200000) is greater than the derived max_model_len "
                       "(max_position_embeddings=131072"),
            std::string::npos)
      << r.out;
}

TEST(CheckCli, ConflictingOrStrayArgumentsAreRefused) {
  // --tp and --tensor-parallel-size are one flag: different values used to let the first win.
  auto r = run_cli({"check", "--model", models().llama70b, "--gpu", "h200", "--tp", "2", "--tensor-parallel-size", "4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--tensor-parallel-size is given twice with different values"), std::string::npos) << r.err;
  EXPECT_EQ(run_cli({"check", "--model", models().llama70b, "--gpu", "h200", "--tp", "2", "--tensor-parallel-size", "2",
                     "--max-model-len", "8192"})
                .exit_code,
            0);
  // "--tp 2 4": the 4 used to be dropped silently.
  r = run_cli({"check", "--model", models().llama70b, "--gpu", "h200", "--tp", "2", "4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unexpected argument '4'"), std::string::npos) << r.err;
}

TEST(CheckCli, ReasonsArePhrasedForPlanning) {
  // Weights 6x the card: the engine's advice ("Try increasing gpu_memory_utilization") is no plan;
  // the reason names the weights per GPU and the smallest layout of that card that fits.
  const auto r = run_cli({"check", "--model", models().llama70b, "--gpu", "l4", "--max-model-len", "8192"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out.rfind("DOES NOT FIT l4 x1: weights alone need 131.", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(" per GPU at TP 1 (the GPU has 22.03 GiB); the smallest layout that fits is tp8 (8 x l4)"),
            std::string::npos)
      << r.out;
}

TEST(CheckCli, AmdFiguresAreMarkedUnvalidated) {
  const auto r = run_cli({"check", "--model", models().llama8b, "--gpu", "mi300x", "--max-model-len", "8192", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_NE(j["warnings"][0].get<std::string>().find("fitted on NVIDIA H100 logs: unvalidated on AMD GPUs"),
            std::string::npos);
}

TEST(CheckCli, NanLatencyTargetIsRefused) {
  const auto r = run_cli({"check", "--model", models().llama8b, "--gpu", "h100-sxm-80", "--batch-range", "--max-tpot", "nan"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("--max-tpot / --max-ttft must be a positive number of ms"), std::string::npos) << r.err;
}

TEST(CheckCli, SizesAndLengthsThatWereSilentlyAccepted) {
  // custom:80 was 80 bytes; a bare number below 1 GiB now asks for a unit.
  auto r = run_cli({"check", "--model", models().llama8b, "--gpu", "custom:80"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("custom GPU memory '80' is 80 bytes: give a unit, e.g. 80GB or 79.19GiB"), std::string::npos) << r.err;
  EXPECT_EQ(run_cli({"check", "--model", models().llama8b, "--gpu", "custom:80GB", "--max-model-len", "8192"}).exit_code, 0);
  // 200 GiB on an 80 GB card was accepted; it has 80 GiB of HBM at most.
  r = run_cli({"check", "--model", models().llama8b, "--gpu", "h100-sxm-80", "--gpu-memory", "200GiB"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("GPU memory 200.00 GiB is more than h100-sxm-80 has (80 GB marketed, at most 80.00 GiB)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(run_cli({"check", "--model", models().llama8b, "--gpu", "h100-sxm-80", "--gpu-memory", "79.22GiB",
                     "--max-model-len", "8192"})
                .exit_code,
            0);
  // --context 0 blamed --max-model-len.
  r = run_cli({"check", "--model", models().llama8b, "--gpu", "h100-sxm-80", "--context", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--context must be >= 1"), std::string::npos) << r.err;
}

TEST(CheckCli, EveryCommandAsksForAUnitOnABareGpuMemory) {
  // --gpu-memory 80 is 80 bytes: plan, simulate, trial and train share check's refusal (they read
  // the size through the same parser).
  const std::string expected = "--gpu-memory '80' is 80 bytes: give a unit, e.g. 80GB or 79.19GiB";
  for (const std::string command : {"check", "plan", "simulate", "trial", "train"}) {
    const auto r = run_cli({command, "--model", models().llama8b, "--gpu", "h100-sxm-80", "--gpu-memory", "80"});
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.out;
    EXPECT_NE(r.err.find(expected), std::string::npos) << command << ": " << r.err;
  }
}

TEST(CheckCli, BatchRangeIsAboutTheWorkloadNotTheMaxLength) {
  // Llama-3.1-8B on an H100 used to recommend "batch 2-3": every row held 131072-token sequences
  // (the model's max length). The engine keeps that length for memory; the rows now hold the
  // workload's 1024 + 256 tokens: 80 blocks of 16 x 131,072 B = 160 MiB each, a few hundred of
  // them in the ~54 GiB pool.
  const auto r = run_cli({"check", "--model", models().llama8b, "--gpu", "h100-sxm-80", "--batch-range", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto range = nlohmann::json::parse(r.out)["batch_range"];
  EXPECT_GT(range["high"].get<std::uint64_t>(), 100u);
  EXPECT_NE(range["workload"].get<std::string>().find("1024 prompt + 256 output tokens per sequence (--input-len / "
                                                       "--output-len, defaults); the engine keeps its max length 131072"),
            std::string::npos)
      << range["workload"];
  const auto both = run_cli({"check", "--model", models().llama8b, "--gpu", "h100-sxm-80", "--batch-range", "--context",
                             "4096", "--input-len", "512"});
  EXPECT_EQ(both.exit_code, 2);
}

TEST(CheckCli, MarkdownGolden) {
  const auto r = run_cli({"check", "--model", models().llama70b, "--gpu", "h200", "-tp", "2", "--max-model-len",
                          "8192", "--batch", "16", "--batch-range", "--format", "markdown"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The scratch path of the model differs per run (the launch command names it); the model id
  // (file stem) does not.
  std::string out = r.out;
  const std::string scratch = models().dir.path().string();
  for (std::size_t at; (at = out.find(scratch)) != std::string::npos;) out.replace(at, scratch.size(), "SCRATCH");
  expect_golden(out, "check_quote.md");
}

// ---- the batch range at a rate (issue 15, item 6) ------------------------------------------

std::vector<std::string> at_rate_args(std::vector<std::string> extra) {
  std::vector<std::string> a = {"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "8192",
                                "--batch-range", "--input-len", "512", "--output-len", "128", "--probe-requests", "1000"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

TEST(CheckCli, BatchRangeAtARateFindsTheLargestCapMeetingTheTargets) {
  // An 11 ms p99 TPOT binds below the memory limit (13 ms did until vLLM 0.14+'s step overhead
  // lost its per-step host term; the memory limit now meets 13 ms).
  const auto r = run_cli(at_rate_args({"--rate", "20", "--slo", "p99_ttft<=5s,p99_tpot<=11ms", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  expect_matches_schema(j, "check.schema.json");
  const auto& range = j.at("batch_range");
  const auto& a = range.at("at_rate");
  EXPECT_EQ(a.at("cap_flag"), "--max-num-seqs");
  EXPECT_EQ(a.at("slo_basis"), "--slo");
  ASSERT_TRUE(a.at("max_cap").is_number()) << a.dump();
  const std::uint64_t best = a.at("max_cap");
  // Every probe at the answer meets; the next one tried above it does not (the search's contract).
  std::uint64_t previous = 0;
  bool above_checked = false;
  for (const auto& p : a.at("probes")) {
    const std::uint64_t cap = p.at("cap");
    EXPECT_GT(cap, previous);  // ascending, no cap twice
    previous = cap;
    if (cap == best) {
      EXPECT_TRUE(p.at("met").get<bool>()) << p.dump();
    }
    if (cap > best && !above_checked) {
      EXPECT_FALSE(p.at("met").get<bool>()) << p.dump();
      EXPECT_EQ(cap, best + 1) << "bisection stops next to the answer";
      above_checked = true;
    }
  }
  // The answer is below the memory limit here (TPOT binds), and has a row of its own.
  EXPECT_LT(best, range.at("memory_max").get<std::uint64_t>());
  EXPECT_TRUE(above_checked);
  bool row_at_best = false;
  for (const auto& row : range.at("rows")) {
    if (row.at("verdict") == "DOES NOT FIT") {
      EXPECT_TRUE(row.at("at_rate").is_null());
      continue;
    }
    ASSERT_TRUE(row.at("at_rate").is_object()) << row.dump();
    EXPECT_EQ(row.at("at_rate").at("cap"), row.at("batch"));  // one replica: the cap is the batch
    row_at_best |= row.at("batch") == best;
  }
  EXPECT_TRUE(row_at_best);
  // The command at the answer carries it.
  EXPECT_EQ(range.at("launch_cap"), best);
  const auto argv = range.at("launch").at("argv").get<std::vector<std::string>>();
  const auto flag = std::find(argv.begin(), argv.end(), "--max-num-seqs");
  ASSERT_NE(flag, argv.end());
  EXPECT_EQ(*(flag + 1), std::to_string(best));
  // And the configuration as checked has its own.
  EXPECT_EQ(j.at("launch").at("argv").at(0), "vllm");
}

TEST(CheckCli, BatchRangeAtARateWithoutTargetsOnlyAsksNotOverloaded) {
  // 1 request/s of 512 + 128 tokens is far below what any cap serves: nothing binds, the answer
  // is the largest cap the memory allows.
  const auto r = run_cli(at_rate_args({"--rate", "1", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& a = j.at("batch_range").at("at_rate");
  EXPECT_TRUE(a.at("slo").empty());
  EXPECT_EQ(a.at("max_cap"), j.at("batch_range").at("memory_max"));
  EXPECT_TRUE(a.at("above").is_null());
  // --max-ttft / --max-tpot stand in as p99 targets when --slo is not given.
  const auto t = run_cli(at_rate_args({"--rate", "1", "--max-tpot", "30", "--json"}));
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const auto tj = nlohmann::json::parse(t.out);
  EXPECT_EQ(tj.at("batch_range").at("at_rate").at("slo"), nlohmann::json::array({"p99_tpot<=30ms"}));
}

TEST(CheckCli, BatchRangeAtARateSaysWhatHeldAnOverloadedCap) {
  // 20 requests/s of 2,048 + 256 tokens on one L40S: ~3.3/s is what it serves at any cap, so no
  // cap keeps up. Small caps are held by the running limit itself; the largest by the 2,048-token
  // step budget its prompts share (the engine is compute-bound). The answer names that, as each
  // probe's queue_held_by does.
  const auto r = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "l40s", "--max-model-len", "8192", "--batch-range",
                          "--input-len", "2048", "--output-len", "256", "--probe-requests", "1000", "--rate", "20", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  expect_matches_schema(j, "check.schema.json");
  const auto& a = j.at("batch_range").at("at_rate");
  EXPECT_TRUE(a.at("max_cap").is_null()) << a.dump();
  const auto& probes = a.at("probes");
  ASSERT_GT(probes.size(), 2u);
  EXPECT_EQ(probes.front().at("cap"), 1);
  EXPECT_EQ(probes.front().at("queue_held_by"), "running_limit");
  EXPECT_EQ(probes.back().at("queue_held_by"), "token_budget") << probes.back().dump();
  // What each overloaded cap serves, below the 20 offered: the largest ~3.3/s.
  for (const auto& p : probes) {
    EXPECT_TRUE(p.at("overloaded").get<bool>()) << p.dump();
    EXPECT_LT(p.at("served_per_s").get<double>(), 20.0) << p.dump();
  }
  EXPECT_GT(probes.back().at("served_per_s").get<double>(), 2.5) << probes.back().dump();
  EXPECT_LT(probes.back().at("served_per_s").get<double>(), 4.5) << probes.back().dump();
  const auto t = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "l40s", "--max-model-len", "8192", "--batch-range",
                          "--input-len", "2048", "--output-len", "256", "--probe-requests", "1000", "--rate", "20"});
  // Its p99 TTFT only grows with the simulated run: the cell says what the cap serves instead.
  EXPECT_NE(t.out.find(" overloaded: serves "), std::string::npos) << t.out;
  // JSON's `above` is the same failure as the text's: at the largest cap when none meets (it named
  // cap 1 until 2026-12-07).
  EXPECT_EQ(a.at("above"), "at " + std::to_string(probes.back().at("cap").get<int>()) +
                               ": overloaded, the queue held most by the step token budget");
  EXPECT_NE(t.out.find("meeting the targets at this rate: none (at " + std::to_string(probes.back().at("cap").get<int>()) +
                       ": overloaded, the queue held most by the step token budget)"),
            std::string::npos)
      << t.out;
}

TEST(CheckCli, BatchRangeAtARateTableAndSummary) {
  const auto r = run_cli(at_rate_args({"--rate", "20", "--slo", "p99_ttft<=5s,p99_tpot<=13ms"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("burst TTFT ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("at 20 req/s: p99 TTFT / TPOT ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("largest --max-num-seqs meeting the targets at this rate: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("launch at the largest cap meeting the targets at the rate"), std::string::npos) << r.out;
}

TEST(CheckCli, BatchRangeAtARateBadInput) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--rate", "5"}, "--rate applies to the batch range"},
      {at_rate_args({"--slo", "p99_ttft<=2s"}), "--slo applies to the batch range at a rate"},
      {at_rate_args({"--rate", "inf"}), "positive, finite number of requests/s"},
      {at_rate_args({"--rate", "0"}), "--rate"},
      {at_rate_args({"--rate", "5", "--slo", "p99_ttft<2s"}), "--slo"},
      {{"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--batch-range", "--rate", "5", "--probe-requests", "10"},
       "--probe-requests: at least 100"},
      {{"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--batch-range", "--context", "4096", "--rate", "5"},
       "--context describes a static batch"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.out;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

TEST(CheckCli, RateMarkdownGolden) {
  // The quote with a rate: the load and targets in the configuration table, the batch table with
  // its burst and at-rate columns, the answer, and the commands that start the engine.
  const auto r = run_cli(at_rate_args({"--rate", "20", "--slo", "p99_ttft<=5s,p99_tpot<=13ms", "--format", "markdown"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_golden(r.out, "check_rate_quote.md");
}

}  // namespace
}  // namespace vramplan::test
