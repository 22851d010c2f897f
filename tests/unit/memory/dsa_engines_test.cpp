// DeepSeek sparse attention in the engine profiles (vllm_engine.cpp, sglang_engine.cpp): the
// block / page size the engines force and SGLang's KV dtype default for these models.
#include <gtest/gtest.h>

#include "support/engine_plans.hpp"
#include "support/test_support.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/model/catalogue.hpp"

namespace vramplan::memory {
namespace {

const ModelSpec& glm5() {
  static const ModelSpec spec = load_catalogue_model(test::source_root(), "glm-5");
  return spec;
}

// A GPU large enough for GLM-5 in fp8 at TP 8 (the figures below do not depend on its size).
GpuTarget card(const std::string& cc) { return test::gpu_target(Bytes(180'000'000'000ull), "test card", 8, cc); }

// vllm/platforms/cuda.py check_and_update_config: 64-token blocks for sparse MLA, whatever
// --block-size asked; the block of 64 tokens holds 64 x 100,152 B (bf16, 78 layers).
TEST(DsaEngines, VllmRunsSparseAttentionOn64TokenBlocks) {
  const auto p = test::plan_engine("vllm", glm5(), card("9.0"), {{"tensor-parallel-size", "8"}, {"quantization", "fp8"}, {"block-size", "16"}});
  EXPECT_EQ(p.engine_view.at("block_size").get<std::uint64_t>(), 64u);
  EXPECT_EQ(p.kv.bytes_per_token, 100'152u);
  bool noted = false;
  for (const auto& n : p.notes) noted |= n.find("--block-size 16 ignored") != std::string::npos;
  EXPECT_TRUE(noted);
  // --kv-cache-dtype fp8 stores the latent as fp8_ds_mla: 78 x (656 + 132) = 61,464 B.
  const auto f = test::plan_engine("vllm", glm5(), card("9.0"), {{"tensor-parallel-size", "8"}, {"quantization", "fp8"}, {"kv-cache-dtype", "fp8"}});
  EXPECT_EQ(f.kv.bytes_per_token, 61'464u);
}

// SGLang 0.5.9 server_args.py: "auto" is fp8_e4m3 from compute capability 10 (B200) and bf16
// below (H200); pages of 64 tokens on CUDA, of 1 on ROCm.
TEST(DsaEngines, SglangPicksTheCacheDtypeByComputeCapability) {
  const auto h200 = test::plan_engine("sglang", glm5(), card("9.0"), {{"tp-size", "8"}, {"quantization", "fp8"}});
  EXPECT_EQ(h200.kv.bytes_per_token, 100'152u);
  EXPECT_EQ(h200.engine_view.at("page_size").get<std::uint64_t>(), 64u);
  EXPECT_EQ(*h200.kv.capacity_tokens % 64u, 0u);
  const auto b200 = test::plan_engine("sglang", glm5(), card("10.0"), {{"tp-size", "8"}, {"quantization", "fp8"}});
  EXPECT_EQ(b200.kv.bytes_per_token, 61'464u);
  // An explicit choice wins.
  const auto asked = test::plan_engine("sglang", glm5(), card("10.0"),
                                       {{"tp-size", "8"}, {"quantization", "fp8"}, {"kv-cache-dtype", "bf16"}});
  EXPECT_EQ(asked.kv.bytes_per_token, 100'152u);
  GpuTarget amd = card("");
  amd.vendor = "amd";
  const auto rocm = test::plan_engine("sglang", glm5(), amd, {{"tp-size", "8"}, {"quantization", "fp8"}});
  EXPECT_EQ(rocm.engine_view.at("page_size").get<std::uint64_t>(), 1u);
}

// SGLang overrides --page-size for these models as vLLM overrides --block-size, and says so.
TEST(DsaEngines, SglangNotesTheOverriddenPageSize) {
  auto noted = [](const MemoryPlan& p, const std::string& text) {
    for (const auto& n : p.notes)
      if (n.find(text) != std::string::npos) return true;
    return false;
  };
  const auto asked = test::plan_engine("sglang", glm5(), card("10.0"), {{"tp-size", "8"}, {"quantization", "fp8"}, {"page-size", "16"}});
  EXPECT_EQ(asked.engine_view.at("page_size").get<std::uint64_t>(), 64u);
  EXPECT_TRUE(noted(asked, "--page-size 16 ignored: SGLang runs DeepSeek sparse attention on 64-token pages on CUDA"));
  const auto same = test::plan_engine("sglang", glm5(), card("10.0"), {{"tp-size", "8"}, {"quantization", "fp8"}, {"page-size", "64"}});
  EXPECT_FALSE(noted(same, "--page-size"));
}

}  // namespace
}  // namespace vramplan::memory
