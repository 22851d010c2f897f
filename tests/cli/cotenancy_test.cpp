// `vramplan check --tenant ... --tenant ...`: several vLLM instances on one H100 or on its MIG
// slices. Hand arithmetic: with --enforce-eager (no CUDA-graph pool on top of the budget) a vLLM
// instance holds floor(T x utilization) minus the part of its KV pool that does not fill a whole
// block. T = the H100's reported total, 79.19 GiB (data/gpus.json). KV blocks: Llama-3.1-8B
// 16 tokens x 131,072 B = 2 MiB; Qwen2.5-7B 16 x 57,344 B = 896 KiB.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// held in [floor(T x u) - block + 1, floor(T x u)].
void expect_vllm_held(const nlohmann::json& tenant, double total, double util, double block) {
  const double budget = std::floor(total * util);
  const double held = tenant.at("held_bytes").get<double>();
  EXPECT_LE(held, budget) << tenant.dump();
  EXPECT_GT(held, budget - block) << tenant.dump();
}

TEST(CotenancyCli, TwoVllmInstancesSplitTheCardByUtilization) {
  // 0.4 + 0.4: each holds ~0.4 x 79.19 = 31.68 GiB; together 63.35 GiB, headroom 20.0 % >= 10 %.
  // Tenant 2 starts with ~79.19 - 31.68 = 47.51 GiB free >= ceil(0.4 x T) = 31.68 GiB.
  const auto j = run_cli_json({"check", "--gpu", "h100-sxm-80", "--tenant",
                           "model=llama-3.1-8b,engine=vllm,gpu-memory-utilization=0.4,max-model-len=8192,enforce-eager",
                           "--tenant", "model=qwen2.5-7b,engine=vllm,gpu-memory-utilization=0.4,max-model-len=8192,enforce-eager"},
                          0);
  EXPECT_EQ(j["schema"], "vramplan.check-tenants/1");
  const double total = j["devices"][0]["reported_total_bytes"].get<double>();
  EXPECT_NEAR(total / kGiB, 79.19, 0.005);
  expect_vllm_held(j["tenants"][0], total, 0.4, 2.0 * 1024 * 1024);
  expect_vllm_held(j["tenants"][1], total, 0.4, 917504.0);
  const double held1 = j["tenants"][0]["held_bytes"].get<double>();
  EXPECT_EQ(j["tenants"][1]["free_at_start_bytes"].get<double>(), total - held1);
  EXPECT_EQ(j["devices"][0]["held_bytes"].get<double>(), held1 + j["tenants"][1]["held_bytes"].get<double>());
  EXPECT_NEAR(j["devices"][0]["headroom_fraction"].get<double>(), 1 - 2 * 0.4, 0.0001);
  // Both engines size from the TOTAL, not from what is free.
  EXPECT_EQ(j["tenants"][1]["sized_from_bytes"].get<double>(), total);
  EXPECT_EQ(j["line"].get<std::string>().rfind("FITS h100-sxm-80, 2 tenants: 63.", 0), 0u) << j["line"];
  EXPECT_NE(j["line"].get<std::string>().find("/79.2 GiB held, headroom 20.0%"), std::string::npos) << j["line"];
}

TEST(CotenancyCli, OverSubscribedUtilizationIsRefusedWithVllmsReason) {
  // 0.6 + 0.5: tenant 1 holds floor(0.6 x T) less under one 2 MiB block, so tenant 2 finds
  // 0.4 x 79.19 = 31.676 GiB (+ < 2 MiB) free < ceil(0.5 x 79.19 GiB) = 39.595 GiB; vLLM prints
  // round(x, 2): "(31.68/79.19 GiB)" and "(0.5, 39.6 GiB)".
  const auto r = run_cli({"check", "--gpu", "h100-sxm-80",
                          "--tenant", "model=llama-3.1-8b,gpu-memory-utilization=0.6,max-model-len=8192,enforce-eager",
                          "--tenant", "model=qwen2.5-7b,gpu-memory-utilization=0.5,max-model-len=8192,enforce-eager"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("DOES NOT FIT h100-sxm-80, 2 tenants: tenant 2 (qwen2.5-7b, vllm): Free memory on device cuda:0 "
                       "(31.68/79.19 GiB) on startup is less than desired GPU memory utilization (0.5, 39.6 GiB). "
                       "Decrease GPU memory utilization or reduce GPU memory used by other processes."),
            std::string::npos)
      << r.out;
}

TEST(CotenancyCli, MigLayoutOneTenantPerSlice) {
  // 3g.40gb reports 39.50 GiB (data/gpus.json). At utilization 0.85 a vLLM instance holds
  // ~0.85 x 39.50 = 33.58 GiB: headroom 15.0 % per slice, so 10 % passes and 20 % fails.
  const std::vector<std::string> tenants = {
      "--tenant", "model=llama-3.1-8b,max-model-len=8192,gpu-memory-utilization=0.85,enforce-eager",
      "--tenant", "model=qwen2.5-7b,max-model-len=8192,gpu-memory-utilization=0.85,enforce-eager"};
  std::vector<std::string> args = {"check", "--gpu", "h100-sxm-80", "--mig-layout", "3g.40gb,3g.40gb"};
  args.insert(args.end(), tenants.begin(), tenants.end());
  const auto j = run_cli_json(args, 0);
  ASSERT_EQ(j["devices"].size(), 2u);
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(j["devices"][d]["gpu"], "h100-sxm-80/3g.40gb");
    const double total = j["devices"][d]["reported_total_bytes"].get<double>();
    EXPECT_EQ(total, 39.5 * kGiB);
    // Each slice has one tenant: it starts with the whole slice free.
    EXPECT_EQ(j["tenants"][d]["free_at_start_bytes"].get<double>(), total);
    EXPECT_NEAR(j["devices"][d]["headroom_fraction"].get<double>(), 1 - 0.85, 0.0001);
  }
  args.insert(args.end(), {"--headroom", "20%"});
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("DOES NOT FIT h100-sxm-80 MIG 3g.40gb,3g.40gb, 2 tenants: slice 1 (3g.40gb): headroom 15.0% "
                       "is below the required 20.0%"),
            std::string::npos)
      << r.out;
}

TEST(CotenancyCli, MigLayoutsTheCardCannotHoldAreUsageErrors) {
  const std::vector<std::string> tenants = {"--tenant", "model=llama-3.2-1b", "--tenant", "model=llama-3.2-1b",
                                            "--tenant", "model=llama-3.2-1b"};
  const auto with = [&](const std::string& layout) {
    std::vector<std::string> a = {"check", "--gpu", "h100-sxm-80", "--mig-layout", layout};
    a.insert(a.end(), tenants.begin(), tenants.end());
    return run_cli(a);
  };
  // H100 80GB: 3g.40gb max_instances 2 (NVIDIA MIG user guide, data/gpus.json).
  auto r = with("3g.40gb,3g.40gb,3g.40gb");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("MIG layout 3g.40gb,3g.40gb,3g.40gb is invalid for h100-sxm-80: 3 x 3g.40gb, the card holds "
                       "at most 2"),
            std::string::npos)
      << r.err;
  // Memory slices 4/8 + 4/8 + 1/8 = 9/8 of the card.
  r = with("4g.40gb,3g.40gb,1g.10gb");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the slices take 9/8 of the card's memory"), std::string::npos) << r.err;
  // One slice for three tenants.
  r = with("7g.80gb");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--mig-layout has 1 slices for 3 tenants"), std::string::npos) << r.err;
  // A card without MIG.
  r = run_cli({"check", "--gpu", "l40s", "--mig-layout", "1g.10gb,1g.10gb", "--tenant", "model=llama-3.2-1b",
               "--tenant", "model=llama-3.2-1b"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST(CotenancyCli, ATeiEmbedderBesideAVllmInstance) {
  // TEI allocates what its warm-up batch needs from the memory free at start (no pool to fill):
  // it has a start-up rule like llama.cpp's and hf's (it was an internal error until 2026-12-05).
  const auto j = run_cli_json({"check", "--gpu", "h100-sxm-80", "--tenant", "model=bge-m3,engine=tei", "--tenant",
                               "model=qwen3-8b,gpu-memory-utilization=0.8,max-model-len=8192"});
  ASSERT_EQ(j.at("tenants").size(), 2u) << j.dump();
  EXPECT_EQ(j.at("tenants").at(0).at("engine"), "tei");
}

TEST(CotenancyCli, TenantSpecErrorsNameTheTenant) {
  auto r = run_cli({"check", "--gpu", "h100-sxm-80", "--tenant", "model=llama-3.2-1b,no-such-flag=1", "--tenant",
                    "model=llama-3.2-1b"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tenant 1 (llama-3.2-1b, vllm): vllm has no option --no-such-flag"), std::string::npos) << r.err;
  r = run_cli({"check", "--gpu", "h100-sxm-80", "--tenant", "engine=vllm", "--tenant", "model=llama-3.2-1b"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("model=M is required"), std::string::npos) << r.err;
  r = run_cli({"check", "--gpu", "h100-sxm-80", "--model", "llama-3.2-1b", "--tenant", "model=llama-3.2-1b",
               "--tenant", "model=llama-3.2-1b"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_cli({"check", "--gpu", "h100-sxm-80", "--tenant", "model=llama-3.2-1b,tp=2", "--tenant", "model=llama-3.2-1b"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("on one GPU each"), std::string::npos) << r.err;
}

TEST(CotenancyCli, TenantsFile) {
  ScratchDir dir;
  const auto file = dir.write("tenants.json", R"({"schema": "vramplan.tenants/1", "tenants": [
    {"model": "llama-3.1-8b", "engine": "vllm",
     "flags": {"gpu-memory-utilization": 0.4, "max-model-len": 8192, "enforce-eager": true}},
    {"model": "qwen2.5-7b", "flags": {"gpu-memory-utilization": "0.4", "max-model-len": "8192", "enforce-eager": true}}]})");
  const auto r = run_cli({"check", "--gpu", "h100-sxm-80", "--tenants", file.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // As TwoVllmInstancesSplitTheCardByUtilization.
  EXPECT_EQ(r.out.rfind("FITS h100-sxm-80, 2 tenants: 63.", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("headroom 20.0%"), std::string::npos) << r.out;
  const auto bad = dir.write("bad.json", R"({"schema": "vramplan.tenants/1", "tenants": [{"engine": "vllm"}]})");
  const auto b = run_cli({"check", "--gpu", "h100-sxm-80", "--tenants", bad.string()});
  EXPECT_EQ(b.exit_code, 3) << b.err;
  EXPECT_NE(b.err.find("/tenants/0"), std::string::npos) << b.err;
}

// Three-valued as check: an HF tenant (no budget: it holds its non-KV excess on top) followed by a
// vLLM tenant whose gpu_memory_utilization asks for just less than what the HF tenant leaves on
// the expected values. On the upper bounds the HF tenant holds 0.88 GiB more (the hf activation
// margin, data/accuracy_bounds.json), so vLLM's start-up check refuses: MARGINAL, exit 6; 0 with
// --accept-marginal, 1 with --conservative.
TEST(CotenancyCli, MarginalWhenTheUpperBoundsOfAnEarlierTenantLeaveTooLittle) {
  const std::string hf = "model=llama-3.1-8b,engine=hf,batch=1,context=2048";
  const std::string qwen = "model=qwen2.5-7b,max-model-len=8192,enforce-eager,gpu-memory-utilization=";
  // A first run finds what the HF tenant holds (H) and what it holds on the upper bounds (U).
  const auto probe = run_cli_json({"check", "--gpu", "h100-sxm-80", "--tenant", hf, "--tenant", qwen + "0.3"}, 0);
  const double total = probe["devices"][0]["reported_total_bytes"].get<double>();
  const double held = probe["tenants"][0]["held_bytes"].get<double>();
  const double upper = probe["tenants"][0]["upper_held_bytes"].get<double>();
  EXPECT_EQ(probe["verdict"], "FITS") << probe.dump();
  EXPECT_NEAR((upper - held) / kGiB, 0.88, 0.005) << "the HF tenant holds its activation margin on top";
  EXPECT_EQ(probe["tenants"][1]["upper_free_at_start_bytes"].get<double>(), total - upper);
  // Utilization between the two free amounts: ceil(T x u) <= T - H (starts), > T - U (refused).
  const double u = (total - held - 0.44 * kGiB) / total;
  char util[32];
  std::snprintf(util, sizeof util, "%.6f", u);
  const std::vector<std::string> args = {"check", "--gpu", "h100-sxm-80", "--tenant", hf, "--tenant", qwen + util};
  const auto j = run_cli_json(args, 6);
  EXPECT_EQ(j["verdict"], "MARGINAL") << j.dump();
  EXPECT_TRUE(j["fits"].get<bool>());
  EXPECT_EQ(j["devices"][0]["verdict"], "MARGINAL");
  EXPECT_EQ(j["tenants"][0]["verdict"], "FITS");
  EXPECT_EQ(j["tenants"][1]["verdict"], "MARGINAL");
  EXPECT_TRUE(j["tenants"][1]["started"].get<bool>()) << "it starts on the expected values";
  const std::string line = j["line"];
  EXPECT_EQ(line.rfind("MARGINAL h100-sxm-80, 2 tenants: fits on the expected values (", 0), 0u) << line;
  EXPECT_NE(line.find("not on the upper bounds: tenant 2 (qwen2.5-7b, vllm): on the upper bounds of the tenants before "
                      "it"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("Free memory on device cuda:0"), std::string::npos) << line;
  auto accept = args;
  accept.push_back("--accept-marginal");
  EXPECT_EQ(run_cli(accept).exit_code, 0);
  auto conservative = args;
  conservative.push_back("--conservative");
  const auto c = run_cli_json(conservative, 1);
  EXPECT_EQ(c["verdict"], "MARGINAL");
  EXPECT_FALSE(c["fits"].get<bool>());
}

}  // namespace
}  // namespace vramplan::test
