// Engine rules found by user probe C (and D#11): one rule per command, the engine's own defaults and
// refusals. Each expectation is worked by hand in its comment.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

nlohmann::json json_of(const CliResult& r) { return nlohmann::json::parse(r.out); }

// llama.cpp 3f545bec: common_params::n_ctx = 0 ("context the model was trained with"), so without
// -c plan, check, explain and sweep all plan Llama-3.1-8B's 131072 cells (PAD256 leaves it).
// KV = 131072 cells x 32 layers x (K + V) 2 x 8 kv heads x 128 x 2 B (f16) = 17,179,869,184 B.
TEST(LlamacppProbeRules, DefaultContextIsTheTrainingContextInEveryCommand) {
  const std::vector<std::string> base{"--model", "llama-3.1-8b", "--gpu", "a100-sxm-40/3g.20gb", "--engine",
                                      "llamacpp", "--weights", "gguf:Q4_K_M"};
  std::vector<std::string> plan{"plan"};
  plan.insert(plan.end(), base.begin(), base.end());
  plan.push_back("--json");
  const auto p = run_cli(plan);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const auto j = json_of(p);
  EXPECT_EQ(j["kv"]["capacity_tokens"], 131072);
  EXPECT_EQ(j["per_gpu"]["kv_cache_bytes"], 17179869184ULL);
  EXPECT_FALSE(j["fits"].get<bool>());  // 16 GiB of KV + 4.6 GiB of weights > 19.62 GiB
  std::vector<std::string> check{"check"};
  check.insert(check.end(), base.begin(), base.end());
  const auto c = run_cli(check);
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;  // the same answer: DOES NOT FIT
  EXPECT_EQ(c.out.rfind("DOES NOT FIT", 0), 0u) << c.out;
}

// -ngl 10 of 32 layers, -c 4096: the KV row is the 10 offloaded layers' part,
// 10 x 4096 x 2 x 8 x 128 x 2 B = 167,772,160 B (K 80.00 MiB + V 80.00 MiB); 22 layers (352 MiB) on the host.
TEST(LlamacppProbeRules, PartialOffloadKvTextDescribesTheGpuPart) {
  const auto r = run_cli({"plan", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--engine", "llamacpp", "--weights",
                          "gguf:Q4_K_M", "-ngl", "10", "-c", "4096", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = json_of(r);
  EXPECT_EQ(j["per_gpu"]["kv_cache_bytes"], 167772160ULL);
  const std::string explain = j["kv"]["explain"];
  EXPECT_NE(explain.find("10 of 32 layers on CUDA0 x 4096 cells x 1 streams: K 80.00 MiB (f16), V 80.00 MiB (f16); "
                         "the other 22 layers' KV (352.00 MiB) in host memory"),
            std::string::npos)
      << explain;
}

// server_args.py _handle_gpu_memory_settings (0.5.3 - 0.5.20): with chunking off the reserve is
// max(max_prefill_tokens 16384, 2048) x 1.5 MiB, the same as --chunked-prefill-size 16384, so the
// two give the same default mem_fraction_static; activation.reserve = 16384 x 1.5 MiB = 25,769,803,776 B.
TEST(SglangProbeRules, UnchunkedPrefillReservesMaxPrefillTokens) {
  const auto plan = [](const std::string& chunk) {
    // 0.5.9: before the piecewise prefill graphs (0.5.10+), whose reserve counts sizes up to the
    // chunk and so differs between the two.
    return run_cli({"plan", "--model", "llama-3.1-8b", "--gpu", "l40s", "--engine", "sglang@0.5.9", "--context-length",
                    "8192", "--chunked-prefill-size", chunk, "--json"});
  };
  const auto off = plan("-1"), on = plan("16384");
  ASSERT_EQ(off.exit_code, 0) << off.err;
  ASSERT_EQ(on.exit_code, 0) << on.err;
  const auto a = json_of(off), b = json_of(on);
  EXPECT_EQ(a["engine_view"]["mem_fraction_static"], b["engine_view"]["mem_fraction_static"]);
  // (44.4 GiB - 24 GiB - graphs - 0.6 GiB) / 44.4 GiB: well under half, not the 0.917 of no reserve.
  EXPECT_LT(a["engine_view"]["mem_fraction_static"].get<double>(), 0.5);
  bool found = false;
  for (const auto& c : a["per_gpu"]["breakdown"]["activation"])
    if (c["name"] == "activation.reserve") {
      found = true;
      EXPECT_EQ(c["bytes"], 25769803776ULL);
    }
  EXPECT_TRUE(found) << a["per_gpu"]["breakdown"]["activation"];
}

// --chunked-prefill-size 65536 on an 80 GB card: the default rule reserves 512 + 65536 x 1.5 = 98,816
// MiB and more, beyond the card's ~81,000 MiB: f <= 0, SGLang's pool is empty ("Not enough memory"):
// DOES NOT FIT (exit 1), not a usage error about a flag the user never gave.
TEST(SglangProbeRules, DefaultFractionAtOrBelowZeroIsDoesNotFit) {
  const auto r = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "sglang",
                          "--context-length", "8192", "--chunked-prefill-size", "65536"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("DOES NOT FIT", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("default mem_fraction_static computed for this card"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("--mem-fraction-static must be in (0, 1)"), std::string::npos) << r.err;
}

// SGLang on MI300X at 8192: the expected total is over the card (check: MARGINAL, exit 6), so plan
// does not say "fits: yes".
TEST(SglangProbeRules, PlanOverTheCardIsNotFitsYes) {
  const std::vector<std::string> base{"--model", "llama-3.1-8b", "--gpu", "mi300x", "--engine", "sglang",
                                      "--context-length", "8192"};
  std::vector<std::string> plan{"plan"}, check{"check"};
  plan.insert(plan.end(), base.begin(), base.end());
  check.insert(check.end(), base.begin(), base.end());
  const auto p = run_cli(plan), c = run_cli(check);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const auto j = run_cli([&] { auto v = plan; v.push_back("--json"); return v; }());
  if (json_of(j)["per_gpu"]["headroom_bytes"].get<std::int64_t>() < 0) {
    EXPECT_EQ(p.out.find("fits: yes"), std::string::npos) << p.out;
    EXPECT_NE(p.out.find("fits: marginal"), std::string::npos) << p.out;
    EXPECT_EQ(c.exit_code, 6) << c.out;
  } else {
    EXPECT_NE(p.out.find("fits: yes"), std::string::npos) << p.out;
  }
}

// vllm/config/cache.py BlockSize: 7 and 100000 are in no release's literal; 32 is in all.
TEST(VllmProbeRules, BlockSizeOutsideTheLiteralIsUnsupported) {
  for (const char* bs : {"7", "100000"}) {
    const auto r = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "l40s", "--max-model-len", "8192", "--block-size", bs});
    EXPECT_EQ(r.exit_code, 1) << bs << r.out << r.err;
    EXPECT_EQ(r.out.rfind("UNSUPPORTED: --block-size " + std::string(bs), 0), 0u) << r.out;
    EXPECT_NE(r.out.find("[vllm-refuses-flags;"), std::string::npos) << r.out;
  }
  const auto ok = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "l40s", "--max-model-len", "8192", "--block-size", "32"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
}

// docs/engines.md "Flags accepted without effect": vLLM's --seed as SGLang's --random-seed.
TEST(VllmProbeRules, SeedIsAcceptedWithoutEffect) {
  const auto r = run_cli({"plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "8192", "--seed", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--seed (sampling seed)"), std::string::npos) << r.err;
}

// vLLM reads enable_expert_parallel in FusedMoE layers only: on a dense model it starts, with a warning.
TEST(VllmProbeRules, ExpertParallelOnADenseModelIsNoted) {
  const auto r = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "8192",
                          "--enable-expert-parallel"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("LlamaForCausalLM has no routed experts"), std::string::npos) << r.out << r.err;
}

// TensorRT-LLM support matrix: no FP8 on Ampere (A100, compute capability 8.0).
TEST(TrtllmProbeRules, Fp8KvOnAmpereIsUnsupported) {
  const auto r = run_cli({"check", "--model", "llama-3.1-8b", "--engine", "trtllm", "--max-seq-len", "8192", "--gpu",
                          "a100-sxm-80", "--kv-cache-dtype", "fp8"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[trtllm-fp8-kv-ada;"), std::string::npos) << r.out;
}

// STATIC_BATCH: the memory holds, the batching is not modelled, and check says so.
TEST(TrtllmProbeRules, StaticBatchIsSaidNotModelled) {
  const auto r = run_cli({"check", "--model", "llama-3.1-8b", "--engine", "trtllm", "--max-seq-len", "8192", "--gpu",
                          "h100-sxm-80", "--capacity-scheduler-policy", "STATIC_BATCH"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("STATIC_BATCH: not modelled beyond memory"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace vramplan::test
