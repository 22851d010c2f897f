// `vramplan plan` end to end through the real executable.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

std::string llama8b() { return (source_dir() / "tests/accuracy/data/models/meta-llama__Llama-3.1-8B.json").string(); }

TEST(PlanCli, JsonCarriesTheSchemaFields) {
  const auto r = run_cli({"plan", "--model", llama8b(), "--gpu", "h100-sxm-80", "--gpu-memory", "79.19GiB",
                          "--gpu-memory-utilization", "0.95", "--max-model-len", "8192", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("schema"), "vramplan.plan/1");
  EXPECT_EQ(j.at("engine"), "vllm");
  EXPECT_EQ(j.at("engine_version"), "0.19");
  EXPECT_EQ(j.at("gpu").at("count"), 1);
  EXPECT_EQ(j.at("kv").at("bytes_per_token"), 131072);  // 2 x 32 x 8 x 128 x 2 B
  EXPECT_TRUE(j.at("fits").get<bool>());
  const auto& g = j.at("per_gpu");
  EXPECT_EQ(g.at("total_bytes").get<std::uint64_t>(),
            g.at("weights_bytes").get<std::uint64_t>() + g.at("kv_cache_bytes").get<std::uint64_t>() +
                g.at("activation_bytes").get<std::uint64_t>() + g.at("overhead_bytes").get<std::uint64_t>());
  for (const char* k : {"weights_gib", "non_torch_gib", "activation_peak_gib", "kv_cache_gib", "kv_cache_tokens", "gpu_blocks"})
    EXPECT_TRUE(j.at("engine_view").contains(k)) << k;
}

TEST(PlanCli, DoesNotFitIsAResultNotAnError) {
  const auto r = run_cli({"plan", "--model", llama8b(), "--gpu", "custom:16GiB", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j.at("fits").get<bool>());
  EXPECT_NE(j.at("reason").get<std::string>().find("gpu_memory_utilization"), std::string::npos);
}

TEST(PlanCli, VllmFlagAliasesAndVersions) {
  const auto r = run_cli({"plan", "--model", llama8b(), "--gpu", "h100-sxm-80", "--engine", "vllm@0.11", "-tp", "2",
                          "--max-model-len", "8192", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("engine_version"), "0.11");
  EXPECT_EQ(j.at("gpu").at("count"), 2);
}

TEST(PlanCli, BadInputsAreTypedErrors) {
  EXPECT_EQ(run_cli({"plan", "--model", llama8b(), "--gpu", "h100-sxm-80", "--engine", "x"}).exit_code, 4);
  EXPECT_EQ(run_cli({"plan", "--model", llama8b(), "--gpu", "h100-sxm-80", "--gpu-memory-utilization", "2"}).exit_code, 2);
  EXPECT_EQ(run_cli({"plan", "--gpu", "h100-sxm-80"}).exit_code, 2);
}

TEST(PlanCli, OtherEnginesPlanToo) {
  for (const char* e : {"sglang", "trtllm", "hf"}) {
    const auto r = run_cli({"plan", "--model", llama8b(), "--gpu", "h100-sxm-80", "--engine", e, "--context", "8192", "--json"});
    ASSERT_EQ(r.exit_code, 0) << e << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("engine"), e);
    EXPECT_GT(j.at("kv").at("capacity_tokens").get<std::uint64_t>(), 100000u) << e;
  }
}

}  // namespace
}  // namespace vramplan::test
