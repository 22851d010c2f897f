// DeepSeek sparse attention in the engine profiles (vllm_engine.cpp, sglang_engine.cpp): the
// block / page size the engines force and SGLang's KV dtype default for these models.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/engine_plans.hpp"
#include "support/test_support.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/sglang_dsa.hpp"
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

// An NVIDIA card of compute capability `cc` (the release rules key on the vendor).
GpuTarget nvidia(const std::string& cc) {
  GpuTarget g = card(cc);
  g.vendor = "nvidia";
  return g;
}

// Tokens SGLang's pool holds: the budget (kv_pool_gib) over the release's cell size, in whole
// 64-token pages.
std::uint64_t pool_tokens(const MemoryPlan& p, std::uint64_t cell) {
  const double pool = p.engine_view.at("kv_pool_gib").get<double>() * 1073741824.0;
  return static_cast<std::uint64_t>(pool / static_cast<double>(cell)) / 64 * 64;
}

// The release rules of memory/sglang_dsa.hpp, read from SGLang's PyPI wheels 0.5.3-0.5.23, on
// GLM-5 (78 layers, each with its own indexer: 132 B a token):
//  - from 0.5.10 an fp8 cache on compute capability 10+ runs the trtllm NSA backend, which keeps
//    the latent as plain fp8: 78 x (576 + 132) = 55,224 B a token, budgeted as allocated;
//  - 0.5.9 allocates fp8_ds_mla rows, 78 x (656 + 132) = 61,464 B, but sizes the pool with
//    78 x (576 + 132) = 55,224 B a token: 11 % more tokens than its budget pays for;
//  - 0.5.17 on a Hopper card with an fp8 cache (fp8_ds_mla) budgets what it allocates.
TEST(DsaEngines, SglangPoolByRelease) {
  const EngineArgs fp8{{"tp-size", "8"}, {"quantization", "fp8"}};
  const auto newest = test::plan_engine("sglang", glm5(), nvidia("10.0"), fp8);
  EXPECT_EQ(newest.kv.bytes_per_token, 55'224u);
  EXPECT_EQ(*newest.kv.capacity_tokens, pool_tokens(newest, 55'224));
  const auto v059 = test::plan_engine("sglang@0.5.9", glm5(), nvidia("10.0"), fp8);
  EXPECT_EQ(v059.kv.bytes_per_token, 61'464u);
  EXPECT_EQ(*v059.kv.capacity_tokens, pool_tokens(v059, 55'224));
  // The pool then holds tokens x 61,464 B: more than its share of mem_fraction_static.
  EXPECT_EQ(test::component(v059.kv_cache, "kv_cache").bytes.count(), *v059.kv.capacity_tokens * 61'464u);
  EXPECT_GT(test::component(v059.kv_cache, "kv_cache").bytes.gib(), v059.engine_view.at("kv_pool_gib").get<double>());
  EXPECT_TRUE(std::any_of(v059.notes.begin(), v059.notes.end(),
                          [](const std::string& n) { return n.find("sizes the pool with 55,224 B") != std::string::npos; }));
  EngineArgs hopper_fp8 = fp8;
  hopper_fp8["kv-cache-dtype"] = "fp8";
  const auto v0517 = test::plan_engine("sglang@0.5.17", glm5(), nvidia("9.0"), hopper_fp8);
  EXPECT_EQ(v0517.kv.bytes_per_token, 61'464u);
  EXPECT_EQ(*v0517.kv.capacity_tokens, pool_tokens(v0517, 61'464));
}

// 0.5.3 (before .post1) forces mem_fraction_static 0.8 for these models and leaves the indexer out
// of the cell size: 78 x 576 = 44,928 B a token of the 61,464 it allocates.
TEST(DsaEngines, Sglang053BudgetsTheLatentAlone) {
  const auto p = test::plan_engine("sglang@0.5.3", glm5(), nvidia("10.0"),
                                   {{"tp-size", "8"}, {"quantization", "fp8"}, {"mem-fraction-static", "0.9"}});
  EXPECT_DOUBLE_EQ(p.engine_view.at("mem_fraction_static").get<double>(), 0.8);
  EXPECT_EQ(p.kv.bytes_per_token, 61'464u);
  EXPECT_EQ(*p.kv.capacity_tokens, pool_tokens(p, 44'928));
  // 0.5.3.post1 counts the indexer: 78 x (576 + 132).
  const auto post1 = test::plan_engine("sglang@0.5.3.post1", glm5(), nvidia("10.0"), {{"tp-size", "8"}, {"quantization", "fp8"}});
  EXPECT_EQ(*post1.kv.capacity_tokens, pool_tokens(post1, 55'224));
}

// Release strings as the rules compare them: a two-part or non-numeric one is the newest release.
TEST(DsaEngines, SglangReleasesAsTheRulesReadThem) {
  EXPECT_TRUE(SglangRelease::parse("0.5", false).at_least({0, 5, 17}));
  EXPECT_TRUE(SglangRelease::parse("nightly", false).at_least({0, 5, 17}));
  EXPECT_TRUE(SglangRelease::parse("0.5.9", true).at_least({0, 5, 17}));  // no version given
  EXPECT_FALSE(SglangRelease::parse("0.5.16", false).at_least({0, 5, 17}));
  EXPECT_TRUE(SglangRelease::parse("0.5.3rc2", false).before_053_post1);
  EXPECT_FALSE(SglangRelease::parse("0.5.3.post1", false).before_053_post1);
  // ROCm pages: 64 tokens before 0.5.8, 1 from it (server_args.py).
  EXPECT_EQ(sglang_dsa_pool(SglangRelease::parse("0.5.7", false), "amd", 0).page_size, 64u);
  EXPECT_EQ(sglang_dsa_pool(SglangRelease::parse("0.5.8", false), "amd", 0).page_size, 1u);
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
