// `vramplan check` answers a script acts on: the verdict word, its exit code and the launch line
// must say the same as the plan behind them (findings of a user's probe, 2026-12-07).
#include <algorithm>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

// SGLang 0.4.0-0.4.6 takes mem_fraction_static 0.88 at TP 1 whatever the card; its own reserve
// estimates for a chunk of 8,192 prompt tokens (8192 x 1.5 MiB = 12,884,901,888 B) and for the
// CUDA graphs (160 x 2 MiB = 335,544,320 B) want more than the 12 % it leaves on an H100: it
// starts, and may run out of memory in a long prefill. MARGINAL (6), never FITS over the card.
TEST(CheckTrust, SglangOverTheCardWithItsOwnReservesIsMarginal) {
  const auto j = run_cli_json({"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "sglang@0.4.1"}, 6);
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(j["verdict"], "MARGINAL");
  EXPECT_EQ(j["limit"], "card");
  const auto& e = j["per_gpu"]["expected"];
  EXPECT_EQ(e["activation_bytes"].get<std::uint64_t>(), 12884901888u);
  // Held = weights + activation + overheads + pool; what it lacks is held - capacity.
  const std::uint64_t held = e["held_bytes"].get<std::uint64_t>();
  EXPECT_EQ(held, e["weights_bytes"].get<std::uint64_t>() + e["activation_bytes"].get<std::uint64_t>() +
                      e["overhead_bytes"].get<std::uint64_t>() + e["kv_pool_bytes"].get<std::uint64_t>());
  EXPECT_EQ(j["marginal"]["short_bytes"].get<std::uint64_t>(), held - e["capacity_bytes"].get<std::uint64_t>());
  EXPECT_NE(j["reason"].get<std::string>().find("over the card with its activation and CUDA-graph reserves"),
            std::string::npos)
      << j["reason"];
}

// The sweep decides that point as check does: listed MARGINAL, a miss under --conservative.
TEST(CheckTrust, SweepAgreesWithCheckOnSglangOverTheCard) {
  const auto j = run_cli_json({"sweep", "--engine", "sglang@0.4.1", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--tp", "1"});
  ASSERT_EQ(j["rows"].size(), 1u) << j.dump();
  EXPECT_EQ(j["rows"][0]["verdict"], "MARGINAL");
  const auto c = run_cli({"sweep", "--engine", "sglang@0.4.1", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--tp",
                          "1", "--conservative"});
  EXPECT_NE(c.out.find("MARGINAL only (--conservative): with its activation and CUDA-graph reserves SGLang holds "),
            std::string::npos)
      << c.out;
}

// The command starts what was planned: weights planned in another format than the checkpoint's
// get the engine's load-time conversion (vllm/engine/arg_utils.py --quantization, --dtype), or,
// where the engine has none (AWQ needs a calibrated checkpoint), a note that says so.
TEST(CheckTrust, LaunchLoadsTheWeightsThatWerePlanned) {
  auto with = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80"};
    if (std::find(extra.begin(), extra.end(), "sglang") == extra.end()) args.insert(args.end(), {"--max-model-len", "8192"});
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli_json(args);
  };
  auto argv_has = [](const nlohmann::json& j, const std::string& flag, const std::string& value) {
    const auto& argv = j["launch"]["argv"];
    for (std::size_t i = 0; i + 1 < argv.size(); ++i)
      if (argv[i] == flag && argv[i + 1] == value) return true;
    return false;
  };
  EXPECT_TRUE(argv_has(with({"--weights", "fp8"}), "--quantization", "fp8"));
  EXPECT_TRUE(argv_has(with({"--weights", "nf4"}), "--quantization", "bitsandbytes"));
  EXPECT_TRUE(argv_has(with({"--weights", "fp16"}), "--dtype", "float16"));
  EXPECT_TRUE(argv_has(with({"--engine", "sglang", "--context-length", "8192", "--weights", "fp8"}), "--quantization", "fp8"));
  // The flag as the user gave it is not doubled.
  const auto given = with({"--quantization", "fp8"});
  int count = 0;
  for (const auto& a : given["launch"]["argv"]) count += a == "--quantization";
  EXPECT_EQ(count, 1) << given["launch"].dump();
  const auto awq = with({"--weights", "awq"});
  EXPECT_FALSE(argv_has(awq, "--quantization", "awq"));
  EXPECT_NE(awq["launch"]["note"].get<std::string>().find("the plan is for awq-4bit-g128 weights: load a awq-4bit-g128 "
                                                          "checkpoint of the model"),
            std::string::npos)
      << awq["launch"];
  // The checkpoint's own format: nothing added.
  const auto own = with({"--weights", "bf16"});
  EXPECT_FALSE(argv_has(own, "--dtype", "bfloat16")) << own["launch"];
}

// Every command that prints a launch line loads the weights it planned: the rate answers of
// `sweep --rate` and `simulate --target-rate` too (they plan through the simulator, not check).
// A checkpoint that is already quantized (gpt-oss-20b's MXFP4 quantization_config) cannot be
// quantized again at load (vLLM refuses a --quantization that contradicts the checkpoint's
// quantization_config: vllm/config/model.py _verify_quantization), so it gets the note instead.
TEST(CheckTrust, EveryLaunchLineLoadsThePlannedWeights) {
  auto has_fp8 = [](const nlohmann::json& launch) {
    const auto& argv = launch["argv"];
    for (std::size_t i = 0; i + 1 < argv.size(); ++i)
      if (argv[i] == "--quantization" && argv[i + 1] == "fp8") return true;
    return false;
  };
  const auto sweep = run_cli_json({"sweep", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--tp", "1", "--weights",
                                   "fp8", "--rate", "5", "--slo", "p99_ttft<=2s", "--probe-requests", "300",
                                   "--max-model-len", "8192"});
  ASSERT_FALSE(sweep["rows"].empty()) << sweep.dump();
  EXPECT_TRUE(has_fp8(sweep["rows"][0]["launch"])) << sweep["rows"][0]["launch"];
  const auto sim = run_cli_json({"simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--weights", "fp8",
                                 "--target-rate", "20", "--slo", "p99_ttft<=2s", "--probe-requests", "300",
                                 "--max-model-len", "8192"});
  EXPECT_TRUE(has_fp8(sim["launch"])) << sim["launch"];
  const auto mxfp4 = run_cli_json({"check", "--model", "gpt-oss-20b", "--gpu", "h100-sxm-80", "--weights", "fp8",
                                   "--max-model-len", "8192"});
  EXPECT_FALSE(has_fp8(mxfp4["launch"])) << mxfp4["launch"];
  EXPECT_NE(mxfp4["launch"]["note"].get<std::string>().find("the plan is for fp8 weights: load a fp8 checkpoint"),
            std::string::npos)
      << mxfp4["launch"];
}

// A layout the rules refuse is no answer to "what would fit": vLLM runs no TP across MIG slices
// (data/compat tp-across-mig-slices), so an 8B model on 10 GB slices has no layout at all.
TEST(CheckTrust, SmallestLayoutSkipsLayoutsTheEngineRefuses) {
  const auto r = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "a100-sxm-80/1g.10gb", "--max-model-len", "8192"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out.find("the smallest layout that fits"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no layout of up to 8 x a100-sxm-80/1g.10gb fits"), std::string::npos) << r.out;
  const auto j = run_cli_json({"check", "--model", "llama-3.1-8b", "--gpu", "a100-sxm-80/1g.10gb", "--max-model-len", "8192",
                               "--limits"},
                              1);
  ASSERT_FALSE(j.empty());
  EXPECT_TRUE(j["limits"]["min_gpus"]["tp"].is_null()) << j["limits"]["min_gpus"].dump();
}

// The engine refuses the flags themselves: no card or layout starts them, so the verdict is
// UNSUPPORTED, not DOES NOT FIT (which a script reads as "try a larger card"). Falcon-7B's
// config.json has max_position_embeddings 2048 (vllm/config/model.py _get_and_verify_max_len).
TEST(CheckTrust, AFlagTheEngineRefusesIsUnsupported) {
  const auto j = run_cli_json({"check", "--model", "falcon-7b", "--gpu", "h100-sxm-80", "--max-model-len", "4096"}, 1);
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(j["verdict"], "UNSUPPORTED");
  EXPECT_EQ(j["compatibility"]["findings"][0]["rule"], "vllm-refuses-flags");
  EXPECT_EQ(j["line"].get<std::string>().rfind("UNSUPPORTED: User-specified max_model_len (4096) is greater than the "
                                               "derived max_model_len (max_position_embeddings=2048",
                                               0),
            0u)
      << j["line"];
}

// HF transformers has no length flag: check plans the length plan shows without --context
// (data/engines/hf.json default_context 4096), not the model's 131,072 positions.
TEST(CheckTrust, HfCheckAndPlanTakeTheSameDefaultLength) {
  const auto plan = run_cli_json({"plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "hf"});
  const auto check = run_cli_json({"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "hf"});
  ASSERT_FALSE(plan.empty());
  ASSERT_FALSE(check.empty());
  EXPECT_EQ(plan["engine_view"]["sequence_length"], 4096);
  EXPECT_EQ(check["workload"]["context"], 4096);
}

// A memory share below the default is the budget the weights must fit: the reason says it.
// 0.05 x 79.19 GiB (the H100's runtime total) = 3.96 GiB.
TEST(CheckTrust, TooSmallAMemoryShareIsNamedInTheReason) {
  const auto r = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--gpu-memory-utilization", "0.05"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("(the GPU has 79.19 GiB, of which --gpu-memory-utilization 0.05 gives vLLM 3.96 GiB)"),
            std::string::npos)
      << r.out;
}

// A sliding-window model's KV per sequence follows vLLM's step budget (its sliding layers keep the
// window plus a step's tokens), whose default follows the card: the sweep planned every card's
// points with the largest card's figure, so the A100-40GB point read DOES NOT FIT beside an H100
// and FITS alone. Each card's needs must be check's, whatever else is in --gpu.
TEST(CheckTrust, SweepVerdictOfACardDoesNotDependOnTheOtherCards) {
  const auto both = run_cli_json({"sweep", "--model", "gemma-3-27b", "--gpu", "a100-sxm-40,h100-sxm-80", "--tp", "2"});
  for (const char* gpu : {"a100-sxm-40", "h100-sxm-80"}) {
    const auto check = run_cli_json({"check", "--model", "gemma-3-27b", "--gpu", gpu, "--tp", "2"});
    bool found = false;
    for (const auto& row : both["rows"])
      if (row["gpu"] == gpu) {
        found = true;
        EXPECT_EQ(row["verdict"], check["verdict"]) << gpu;
        EXPECT_EQ(row["needed_bytes_per_gpu"], check["per_gpu"]["expected"]["needed_bytes"]) << gpu;
      }
    EXPECT_TRUE(found) << gpu << ": " << both.dump();
  }
}

// SGLang refuses a context_length below 2: the max-context search starts there instead of
// answering "0 tokens", and its answer fits while one more token does not.
TEST(CheckTrust, SglangMaxContextIsFound) {
  const auto j = run_cli_json({"check", "--engine", "sglang", "--model", "llama-3.1-8b", "--gpu", "l4", "--context-length",
                               "8192", "--limits"});
  ASSERT_FALSE(j.empty());
  const std::uint64_t max_context = j["limits"]["max_context"]["value"].get<std::uint64_t>();
  EXPECT_GT(max_context, 8192u) << j["limits"]["max_context"].dump();
  for (const auto& [context, verdict_fits] : {std::pair{max_context, true}, std::pair{max_context + 1, false}}) {
    const auto r = run_cli({"check", "--engine", "sglang", "--model", "llama-3.1-8b", "--gpu", "l4", "--context-length",
                            std::to_string(context), "--context", std::to_string(context), "--json"});
    const auto c = nlohmann::json::parse(r.out);
    EXPECT_EQ(c["verdict"] != "DOES NOT FIT", verdict_fits) << context << ": " << c["line"];
  }
}

// Every engine's running cap bounds the max batch, as vLLM's max_num_seqs did alone: SGLang's
// --max-running-requests, TensorRT-LLM's --max-batch-size. A batch beyond it is warned about.
TEST(CheckTrust, EveryEnginesRunningCapBoundsTheMaxBatch) {
  struct Case {
    std::vector<std::string> args;
    std::uint64_t cap;
    std::string setting;
  };
  const std::vector<Case> cases = {
      {{"--engine", "sglang", "--context-length", "8192", "--max-running-requests", "16"}, 16, "max_running_requests"},
      {{"--engine", "trtllm", "--max-seq-len", "8192", "--max-batch-size", "8"}, 8, "max_batch_size"},
      {{"--max-model-len", "8192", "--max-num-seqs", "8"}, 8, "max_num_seqs"}};
  for (const auto& c : cases) {
    std::vector<std::string> args = {"check", "--model", "llama-3.1-8b", "--gpu", "l4", "--context", "512", "--limits"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto j = run_cli_json(args);
    ASSERT_FALSE(j.empty()) << c.setting;
    EXPECT_EQ(j["limits"]["max_batch"]["value"], c.cap) << c.setting;
    EXPECT_TRUE(j["limits"]["max_batch"]["capped"].get<bool>()) << c.setting;
    EXPECT_NE(j["limits"]["max_batch"]["cap_reason"].get<std::string>().find(c.setting), std::string::npos) << c.setting;
  }
  // 2,000 sequences of 128 tokens fit vLLM's pool on an H100 (128 x 131,072 B = 16 MiB each), but it
  // runs 256 at once: the other 1,744 wait.
  const auto r = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "128", "--batch",
                          "2000", "--max-num-seqs", "256"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("warning: vLLM runs at most 256 sequences at once per instance (max_num_seqs): 1744 of the batch "
                       "wait in its queue"),
            std::string::npos)
      << r.out;
}

// llama.cpp splits -c over its -np slots: with -c 8192 one 8,192-token sequence fits a slot, two
// do not (4,096 cells each). The max batch was reported as 550 "sequences of 8192" while its
// probes ran ever shorter ones.
TEST(CheckTrust, LlamacppMaxBatchKeepsTheSequenceLength) {
  const auto j = run_cli_json({"check", "--engine", "llamacpp", "--model", "llama-3.1-8b", "--gpu", "l4", "--weights",
                               "gguf:Q4_K_M", "--ctx-size", "8192", "--limits"});
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(j["limits"]["max_batch"]["value"], 1u) << j["limits"]["max_batch"].dump();
  EXPECT_NE(j["limits"]["max_batch"]["breaks"].get<std::string>().find("sequences of 8192 tokens exceed the 4096 one "
                                                                         "llama.cpp slot holds"),
            std::string::npos)
      << j["limits"]["max_batch"].dump();
}

// An encoder's length is its learned positions (gte-large, BertModel: 512). check --context 4096
// had planned 512 and said FITS; vLLM refuses max_model_len 4096 at start-up as for a decoder.
TEST(CheckTrust, AnEncoderBeyondItsPositionsIsRefusedAsVllmDoes) {
  const auto j = run_cli_json({"check", "--model", "gte-large", "--gpu", "l4", "--context", "4096"}, 1);
  ASSERT_FALSE(j.empty());
  EXPECT_EQ(j["verdict"], "UNSUPPORTED");
  EXPECT_NE(j["line"].get<std::string>().find("max_model_len (4096) is greater than the derived max_model_len "
                                              "(max_position_embeddings=512"),
            std::string::npos)
      << j["line"];
  const auto within = run_cli_json({"check", "--model", "gte-large", "--gpu", "l4", "--context", "256"});
  EXPECT_EQ(within["verdict"], "FITS");
  EXPECT_EQ(within["launch"]["argv"][7], "--max-model-len") << within["launch"].dump();
  EXPECT_EQ(within["launch"]["argv"][8], "256") << within["launch"].dump();
}

// Errors name what the user typed: the length came from --max-model-len, not from a --context
// the user never gave; a config without max_position_embeddings asks for a length.
TEST(CheckTrust, LengthErrorsNameTheFlagThatSetTheLength) {
  const auto big = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "1000000000000000"});
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("--max-model-len: must be in 1..134217728, got 1000000000000000"), std::string::npos) << big.err;
  ScratchDir dir;
  auto config = nlohmann::json::parse(read_text(source_dir() / "models" / "llama-3.1-8b.json"));
  for (auto it = config.begin(); it != config.end();) it = it.key().starts_with("_") ? config.erase(it) : std::next(it);
  config.erase("max_position_embeddings");
  const std::string path = dir.write("nopos.json", config.dump()).string();
  const auto none = run_cli({"check", "--model", path, "--gpu", "h100-sxm-80"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("nopos gives no max_position_embeddings: give --max-model-len (or --context)"), std::string::npos)
      << none.err;
}

// A value listed twice is one point (l4,L4 is one card), and "checkpoint", what the rows call the
// checkpoint's own weights, is a --weights value too.
TEST(CheckTrust, SweepListsCountEachValueOnce) {
  const auto j = run_cli_json({"sweep", "--model", "llama-3.1-8b,llama-3.1-8b", "--gpu", "l4,l4,L4", "--tp", "1,1",
                               "--weights", "checkpoint,fp8,checkpoint", "--max-model-len", "8192"});
  ASSERT_FALSE(j.empty());
  ASSERT_EQ(j["rows"].size(), 2u) << j["rows"].dump();
  EXPECT_EQ(j["rows"][0]["weights"], "fp8");
  EXPECT_EQ(j["rows"][1]["weights"], "checkpoint");
}

}  // namespace
}  // namespace vramplan::test
