// SGLang's attention backend choice and the page size it forces (memory/sglang_attention.hpp;
// sglang 0.5.6.post1 - 0.5.9 server_args.py _handle_model_specific_adjustments and
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

const SglangRelease kSglang056 = SglangRelease::parse("0.5.6.post1", false);

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

TEST(SglangAttention, Gemma4TakesTritonEverywhere) {
  // 0.5.11 _handle_model_specific_adjustments: triton for Gemma4ForConditionalGeneration when no
  // backend is given, on Hopper and Blackwell alike (no trtllm_mha, so no 64-token pages).
  const ModelArch gemma4 = attention_arch("Gemma4ForConditionalGeneration");
  for (const int cc : {9, 10}) {
    const SglangAttention a = sglang_attention(gemma4, cc, {}, 1);
    EXPECT_EQ(a.backend, "triton") << cc;
    EXPECT_EQ(a.page_size, 1u) << cc;
  }
  EXPECT_EQ(sglang_attention(gemma4, 9, {{"attention-backend", "fa3"}}, 1).backend, "fa3");  // given: kept
}

TEST(SglangAttention, OtherGpusKeepTheDefaultPage) {
  const ModelArch llama = attention_arch("LlamaForCausalLM");
  EXPECT_EQ(page_of(llama, 9), 1u);   // fa3
  EXPECT_EQ(page_of(llama, 8), 1u);   // flashinfer
  EXPECT_EQ(page_of(llama, 12), 1u);  // capability 12: flashinfer from 0.5.7 (is_sm100_supported)
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
  // fa4 sets 128-token pages as an MHA model's prefill backend; as the attention backend it sets
  // none from 0.5.8 (and is refused before, below).
  EXPECT_EQ(page_of(mha, 10, {{"prefill-attention-backend", "fa4"}}), 128u);
  EXPECT_EQ(page_of(mla, 10, {{"prefill-attention-backend", "fa4"}, {"page-size", "8"}}), 8u);  // MHA models only
  EXPECT_EQ(page_of(mha, 10, {{"attention-backend", "fa4"}}), 1u);
  EXPECT_EQ(sglang_attention(mha, 9, {}, 4).page_size, 4u);  // the data's default when nothing sets one
  test::error_message([&] { page_of(mha, 10, {{"page-size", "0"}}); }, ErrorKind::Usage);
}

TEST(SglangAttention, PrefillAndDecodeBackendsAndTheGenericDefault) {
  const ModelArch mha = attention_arch("Qwen3MoeForCausalLM");
  // A decode backend alone leaves --attention-backend unset: the generic default still runs and
  // its trtllm_mha forces the pages.
  EXPECT_EQ(page_of(mha, 10, {{"decode-attention-backend", "triton"}}), 64u);
  // Prefill and decode alike override it: triton everywhere, the default page.
  EXPECT_EQ(page_of(mha, 10, {{"prefill-attention-backend", "triton"}, {"decode-attention-backend", "triton"}}), 1u);
  // trtllm_mha as the prefill backend alone forces the pages too.
  EXPECT_EQ(page_of(mha, 10, {{"attention-backend", "triton"}, {"prefill-attention-backend", "trtllm_mha"}}), 64u);
  // A backend setting given turns the model-specific choice off: DeepSeek-V3 with a decode backend
  // only gets the generic MLA choice (flashinfer), the default page.
  EXPECT_EQ(page_of(attention_arch("DeepseekV3ForCausalLM", 512), 10, {{"decode-attention-backend", "flashinfer"}}), 1u);
  // gpt-oss: trtllm_mha by its model-specific rule.
  EXPECT_EQ(sglang_attention(attention_arch("GptOssForCausalLM"), 10, {}, 1).backend, "trtllm_mha");
}

TEST(SglangAttention, SpeculativeDecodingChangesTheBlackwellDefault) {
  const ModelArch mha = attention_arch("Qwen3MoeForCausalLM");
  // EAGLE with top-k 2: not trtllm_mha (is_no_spec_infer_or_topk_one), flashinfer's page 1.
  EXPECT_EQ(page_of(mha, 10, {{"speculative-algorithm", "EAGLE"}, {"speculative-eagle-topk", "2"}}), 1u);
  // Top-k 1 with a page size above one given: not either; the given page stands.
  EXPECT_EQ(page_of(mha, 10, {{"speculative-algorithm", "EAGLE"}, {"speculative-eagle-topk", "1"}, {"page-size", "16"}}), 16u);
  // Top-k 1 alone: trtllm_mha.
  EXPECT_EQ(page_of(mha, 10, {{"speculative-algorithm", "EAGLE"}, {"speculative-eagle-topk", "1"}}), 64u);
  // EAGLE without a top-k: flashinfer from 0.5.7, trtllm_mha in 0.5.6.
  const EngineArgs eagle = {{"speculative-algorithm", "EAGLE"}};
  EXPECT_EQ(sglang_attention(mha, 10, eagle, 1).page_size, 1u);
  EXPECT_EQ(sglang_attention(mha, 10, eagle, 1, kSglang056).page_size, 64u);
}

TEST(SglangAttention, WhatServerArgsRefuses) {
  const ModelArch mha = attention_arch("LlamaForCausalLM");
  // 0.5.6 on capability 12 (RTX 5090, RTX PRO 6000): its own default, trtllm_mha, then refused.
  const SglangAttention sm120 = sglang_attention(mha, 12, {}, 1, kSglang056);
  EXPECT_EQ(sm120.refusal,
            "TRTLLM MHA backend is only supported on Blackwell GPUs (SM100). Please use a different backend. "
            "(server_args.py _handle_attention_backend_compatibility; SGLang's own default on this GPU: pass "
            "--attention-backend)");
  EXPECT_EQ(sglang_attention(mha, 12, {{"attention-backend", "flashinfer"}}, 1, kSglang056).refusal, "");
  EXPECT_NE(sglang_attention(mha, 9, {{"attention-backend", "trtllm_mha"}}, 1).refusal, "");
  // fa4 as the attention backend: refused before 0.5.8.
  EXPECT_NE(sglang_attention(mha, 10, {{"attention-backend", "fa4"}}, 1, kSglang056).refusal, "");
  EXPECT_EQ(sglang_attention(mha, 10, {{"attention-backend", "fa4"}}, 1).refusal, "");
}

TEST(SglangAttention, WhichModelsRunAiterOnRocm) {
  EXPECT_TRUE(sglang_rocm_runs_aiter(attention_arch("Qwen3MoeForCausalLM"), {}, 8));  // MHA: aiter
  EXPECT_FALSE(sglang_rocm_runs_aiter(attention_arch("Qwen3MoeForCausalLM"), {{"attention-backend", "triton"}}, 8));
  EXPECT_TRUE(sglang_rocm_runs_aiter(attention_arch("Qwen3MoeForCausalLM"),
                                     {{"prefill-attention-backend", "aiter"}, {"decode-attention-backend", "aiter"}}, 8));
  EXPECT_FALSE(sglang_rocm_runs_aiter(attention_arch("GptOssForCausalLM"), {}, 1));  // triton by its own rule
  // MLA: aiter at 16 or 128 KV heads a rank. DeepSeek-V3 (128) at TP 8: 16; Kimi-K2.5 (64) at TP 8: 8.
  ModelArch mla = attention_arch("DeepseekV3ForCausalLM", 512);
  mla.num_kv_heads = 128;
  EXPECT_TRUE(sglang_rocm_runs_aiter(mla, {}, 8));
  EXPECT_TRUE(sglang_rocm_runs_aiter(mla, {}, 1));
  EXPECT_FALSE(sglang_rocm_runs_aiter(mla, {}, 4));  // 32
  mla.num_kv_heads = 64;
  EXPECT_FALSE(sglang_rocm_runs_aiter(mla, {}, 8));
  mla.index_topk = 2048;  // DeepSeek sparse attention: nsa
  EXPECT_FALSE(sglang_rocm_runs_aiter(mla, {}, 4));
}

TEST(SglangAttention, AiterAboveAnEightThousandTokenContextScalesTheFraction) {
  // The Llama-3.1-8B test shape on a 192 GB AMD card with --mem-fraction-static 0.8: 0.8 x 0.85 =
  // 0.68 above 8,192 tokens of context from 0.5.5; at 8,192 and in 0.4 the fraction stands.
  memory::GpuTarget mi300x = test::gpu_target(Bytes(205822885888u), "AMD Instinct MI300X", 1, "");
  mi300x.vendor = "amd";
  const auto fraction = [&](const std::string& engine, const std::string& context) {
    const auto p = test::plan_engine(engine, test::dense_model({}), mi300x,
                                     {{"mem-fraction-static", "0.8"}, {"context-length", context}});
    return p.engine_view.at("mem_fraction_static").get<double>();
  };
  EXPECT_NEAR(fraction("sglang@0.5.7", "131072"), 0.68, 1e-12);
  EXPECT_DOUBLE_EQ(fraction("sglang@0.5.7", "8192"), 0.8);
  EXPECT_DOUBLE_EQ(fraction("sglang@0.4.7", "131072"), 0.8);
}

TEST(SglangAttention, AiterHoldsADecodeWorkspacePerRequestSlot) {
  memory::GpuTarget mi300x = test::gpu_target(Bytes(205822885888u), "AMD Instinct MI300X", 1, "");
  mi300x.vendor = "amd";
  const auto workspace = [&](EngineArgs args) -> std::uint64_t {
    args.emplace("context-length", "32768");
    args.emplace("max-running-requests", "100");
    const auto p = test::plan_engine("sglang@0.5.7", test::dense_model({}), mi300x, args);
    for (const auto& c : p.overhead)
      if (c.name == "overhead.aiter_workspace") return c.bytes.count();
    return 0;
  };
  // 100 request slots x 32 heads x 32768 / 256 = 128 partitions x (128 x 4 + 8) B = 212,992,000 B.
  EXPECT_EQ(workspace({}), 212992000u);
  EXPECT_EQ(workspace({{"attention-backend", "triton"}}), 0u);
  // Not on an NVIDIA card.
  const auto h100 = test::plan_engine("sglang@0.5.7", test::dense_model({}), test::gpu_target(Bytes(80000000000u)),
                                      {{"context-length", "32768"}, {"max-running-requests", "100"}});
  for (const auto& c : h100.overhead) EXPECT_NE(c.name, "overhead.aiter_workspace");
}

TEST(SglangAttention, APlanOfARefusedBackendDoesNotStart) {
  const auto p = test::plan_engine("sglang@0.5.6", test::dense_model({}),
                                   test::gpu_target(Bytes(32000000000u), "NVIDIA GeForce RTX 5090", 1, "12.0"),
                                   {{"mem-fraction-static", "0.8"}});
  EXPECT_FALSE(p.fits);
  EXPECT_TRUE(p.refuses_configuration);
  EXPECT_EQ(p.reason.rfind("TRTLLM MHA backend is only supported on Blackwell GPUs (SM100).", 0), 0u) << p.reason;
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
