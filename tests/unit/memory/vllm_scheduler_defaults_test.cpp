// vLLM's default scheduler limits per engine generation (memory/vllm_scheduler_defaults.hpp):
// V0 0.6 - 0.7 by context length, V1 by GPU class; and what they do to a plan.
#include <gtest/gtest.h>

#include "support/engine_plans.hpp"
#include "support/test_models.hpp"
#include "support/test_support.hpp"
#include "vramplan/memory/engine_data.hpp"
#include "vramplan/memory/vllm_scheduler_defaults.hpp"

namespace vramplan::memory {
namespace {

EngineProfileData vllm_profile(const char* version) {
  return EngineProfileData::load(test::source_dir() / "data", "vllm", version);
}

TEST(VllmSchedulerDefaults, V0ProfilesTheWholeContextBelow32K) {
  const ModelArch arch = test::dense_model({}).arch;  // Llama-3.1-8B shapes, no sliding window
  // vllm/config.py SchedulerConfig (0.6.5+): no chunked prefill -> max(max_model_len, 2048).
  const auto s = v0_scheduler_defaults(vllm_profile("0.7.3"), arch, 20000, false, {});
  EXPECT_FALSE(s.chunked_prefill);
  EXPECT_EQ(s.max_num_batched_tokens, 20000u);
  EXPECT_EQ(s.max_num_seqs, 256u);
  EXPECT_EQ(v0_scheduler_defaults(vllm_profile("0.7.3"), arch, 1024, false, {}).max_num_batched_tokens, 2048u);
  // 32768 is not "> 32K": still one batch.
  EXPECT_EQ(v0_scheduler_defaults(vllm_profile("0.7.3"), arch, 32768, false, {}).max_num_batched_tokens, 32768u);
}

TEST(VllmSchedulerDefaults, V0ChunksLongContextsUnlessLoraOrAFlagSaysOtherwise) {
  const ModelArch arch = test::dense_model({}).arch;
  // arg_utils.py create_engine_config: max_model_len > 32768 -> chunked prefill; the budget is
  // 2048 from 0.6.5 (config.py), 512 in 0.6.0 - 0.6.4.
  EXPECT_EQ(v0_scheduler_defaults(vllm_profile("0.6.5"), arch, 131072, false, {}).max_num_batched_tokens, 2048u);
  EXPECT_EQ(v0_scheduler_defaults(vllm_profile("0.6.4"), arch, 131072, false, {}).max_num_batched_tokens, 512u);
  EXPECT_EQ(v0_scheduler_defaults(vllm_profile("0.6.2"), arch, 131072, false, {}).max_num_batched_tokens, 512u);
  // With LoRA the long-context rule does not apply: the whole context, 131072 tokens.
  EXPECT_EQ(v0_scheduler_defaults(vllm_profile("0.6.5"), arch, 131072, true, {}).max_num_batched_tokens, 131072u);
  EXPECT_EQ(v0_scheduler_defaults(vllm_profile("0.6.5"), arch, 131072, false, {{"no-enable-chunked-prefill", "true"}})
                .max_num_batched_tokens,
            131072u);
  EXPECT_TRUE(v0_scheduler_defaults(vllm_profile("0.6.5"), arch, 8192, false, {{"enable-chunked-prefill", "true"}}).chunked_prefill);
}

TEST(VllmSchedulerDefaults, V1KeepsA100sInTheSmallClassFrom09) {
  memory::GpuTarget a100{"a100-sxm-80", "NVIDIA A100-SXM4-80GB", Bytes::from_gib(79.15), 1, "8.0", "", std::nullopt};
  // vllm/engine/arg_utils.py: 0.8.5 has no A100 exception (>= 70 GiB -> 1024 / 8192), 0.9.0 has.
  EXPECT_EQ(v1_scheduler_defaults(vllm_profile("0.8.5"), a100, {}).max_num_seqs, 1024u);
  EXPECT_EQ(v1_scheduler_defaults(vllm_profile("0.8.5"), a100, {}).max_num_batched_tokens, 8192u);
  EXPECT_EQ(v1_scheduler_defaults(vllm_profile("0.9.0"), a100, {}).max_num_seqs, 256u);
  EXPECT_EQ(v1_scheduler_defaults(vllm_profile("0.9.0"), a100, {}).max_num_batched_tokens, 2048u);
}

TEST(VllmSchedulerDefaults, V1GivesGpusOf160GibTheirOwnClassFrom028) {
  // get_batch_defaults from 0.28: device_memory >= 160 GiB (B200, 178.35 GiB) -> 1024 / 16384;
  // 0.27 keeps them in the >= 70 GiB class (1024 / 8192). An H200 (139.8 GiB) stays there.
  memory::GpuTarget b200{"b200", "NVIDIA B200", Bytes::from_gib(178.35), 1, "10.0", "", std::nullopt};
  memory::GpuTarget h200{"h200", "NVIDIA H200", Bytes::from_gib(139.8), 1, "9.0", "", std::nullopt};
  EXPECT_EQ(v1_scheduler_defaults(vllm_profile("0.28"), b200, {}).max_num_batched_tokens, 16384u);
  EXPECT_EQ(v1_scheduler_defaults(vllm_profile("0.28"), b200, {}).max_num_seqs, 1024u);
  EXPECT_EQ(v1_scheduler_defaults(vllm_profile("0.27.1"), b200, {}).max_num_batched_tokens, 8192u);
  EXPECT_EQ(v1_scheduler_defaults(vllm_profile("0.34.0"), h200, {}).max_num_batched_tokens, 8192u);
}

TEST(VllmSchedulerDefaults, AV0PlanRefusesInV0sWords) {
  // Llama-3.1-8B on a 23.58 GiB GPU at 0.9, max_model_len 29000 (vLLM issue 10517): the whole
  // context is profiled, the pool holds about 1457 blocks x 16 = 23312 tokens < 29000.
  const auto p = test::plan_engine("vllm@0.6.4", test::dense_model({}), test::gpu_target(Bytes::from_gib(23.58), "NVIDIA GeForce RTX 3090"),
                                   {{"max-model-len", "29000"}});
  EXPECT_FALSE(p.fits);
  EXPECT_EQ(p.reason.rfind("The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache (", 0),
            0u)
      << p.reason;
  EXPECT_EQ(p.engine_view.at("max_num_batched_tokens"), 29000);
  EXPECT_EQ(p.engine_view.at("enable_prefix_caching"), false);  // V0 default
}

}  // namespace
}  // namespace vramplan::memory
