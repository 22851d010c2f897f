// SGLang's attention backend choice and the page size it forces (memory/sglang_attention.hpp;
// sglang 0.5.6.post1 server_args.py _handle_model_specific_adjustments and
// _handle_attention_backend_compatibility).
#include <gtest/gtest.h>

#include <string>

#include "support/engine_plans.hpp"
#include "support/test_models.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/sglang_attention.hpp"

namespace vramplan::memory {
namespace {

ModelArch attention_arch(const std::string& architecture, std::uint64_t kv_lora_rank = 0) {
  ModelArch a;
  a.architecture = architecture;
  a.kv_lora_rank = kv_lora_rank;
  return a;
}

std::uint64_t page_of(const ModelArch& a, int cc_major, const EngineArgs& args = {}) {
  return sglang_attention(a, cc_major, args, 1).page_size;
}

TEST(SglangAttention, BlackwellDefaultsForcePages) {
  // MHA on compute capability 10: trtllm_mha, 64-token pages.
  const SglangAttention mha = sglang_attention(attention_arch("Qwen3MoeForCausalLM"), 10, {}, 1);
  EXPECT_EQ(mha.backend, "trtllm_mha");
  EXPECT_EQ(mha.page_size, 64u);
  // DeepseekV3ForCausalLM: trtllm_mla (model-specific), 64.
  EXPECT_EQ(page_of(attention_arch("DeepseekV3ForCausalLM", 512), 10), 64u);
  // Another MLA model (GLM-4.7-Flash's Glm4MoeLiteForCausalLM): flashinfer, the default page.
  EXPECT_EQ(page_of(attention_arch("Glm4MoeLiteForCausalLM", 512), 10), 1u);
  // Qwen3-Next: triton (model-specific), the default page.
  EXPECT_EQ(page_of(attention_arch("Qwen3NextForCausalLM"), 10), 1u);
}

TEST(SglangAttention, OtherGpusKeepTheDefaultPage) {
  const ModelArch llama = attention_arch("LlamaForCausalLM");
  EXPECT_EQ(page_of(llama, 9), 1u);   // fa3
  EXPECT_EQ(page_of(llama, 8), 1u);   // flashinfer
  EXPECT_EQ(page_of(llama, 12), 1u);  // capability 12: not modelled, the default
  EXPECT_EQ(page_of(llama, 0), 1u);   // ROCm (aiter) or a custom GPU: no compute capability
  EXPECT_EQ(sglang_attention(llama, 9, {}, 1).why, "");
}

TEST(SglangAttention, GivenBackendsAndPageSizes) {
  const ModelArch mha = attention_arch("Qwen3MoeForCausalLM");
  const ModelArch mla = attention_arch("DeepseekV3ForCausalLM", 512);
  EXPECT_EQ(page_of(mha, 10, {{"attention-backend", "triton"}}), 1u);
  EXPECT_EQ(page_of(mha, 10, {{"page-size", "32"}}), 32u);  // trtllm_mha takes 16, 32, 64
  EXPECT_EQ(page_of(mha, 10, {{"page-size", "8"}}), 64u);   // ... and sets 64 otherwise
  EXPECT_EQ(page_of(mla, 10, {{"page-size", "16"}}), 64u);  // trtllm_mla takes 32 or 64
  EXPECT_EQ(page_of(mla, 9, {{"attention-backend", "flashmla"}}), 64u);
  EXPECT_EQ(page_of(mla, 10, {{"attention-backend", "cutlass_mla"}}), 128u);
  EXPECT_EQ(page_of(mha, 10, {{"decode-attention-backend", "trtllm_mha"}}), 64u);
  EXPECT_EQ(page_of(mha, 10, {{"attention-backend", "fa4"}}), 128u);
  EXPECT_EQ(page_of(mla, 10, {{"attention-backend", "fa4"}, {"page-size", "8"}}), 8u);  // MHA models only
  EXPECT_EQ(sglang_attention(mha, 9, {}, 4).page_size, 4u);  // the data's default when nothing sets one
  test::error_message([&] { page_of(mha, 10, {{"page-size", "0"}}); }, ErrorKind::Usage);
}

TEST(SglangAttention, PlanRoundsTheBlackwellPoolToWholePages) {
  // The Llama-3.1-8B shape on a GPU of compute capability 10: 64-token pages, the pool a
  // multiple of 64 tokens and the choice among the notes; on 9.0 the same pool is not rounded.
  const auto b200 = test::plan_engine("sglang", test::dense_model({}),
                                      test::gpu_target(Bytes(80000000000u), "NVIDIA B200", 1, "10.0"),
                                      {{"mem-fraction-static", "0.8"}});
  EXPECT_EQ(b200.engine_view.at("page_size").get<std::uint64_t>(), 64u);
  EXPECT_EQ(*b200.kv.capacity_tokens, 361223ull / 64u * 64u);  // SglangEngine's 361,223, rounded down
  bool noted = false;
  for (const auto& n : b200.notes) noted = noted || n.find("trtllm_mha") != std::string::npos;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace vramplan::memory
