// Gemma 4 on the engines: the V slot vLLM and SGLang build for the attention_k_eq_v layers
// (gemma4.py / gemma4_causal.py load k_proj into it as well), the engines that do not, and vLLM's
// pool of two page sizes (kv_cache_utils.py unify_kv_cache_spec_page_size).
#include <gtest/gtest.h>

#include "support/engine_plans.hpp"
#include "support/test_support.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/plan_request.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/model/catalogue.hpp"

namespace vramplan::memory {
namespace {

const ModelSpec& gemma4_moe() {
  static const ModelSpec m = load_catalogue_model(test::source_root(), "gemma-4-26b-a4b");
  return m;
}

std::uint64_t layer_weights(const MemoryPlan& p) { return test::component(p.weights, "weights.layers").bytes.count(); }

TEST(Gemma4Engines, VllmAndSglangHoldAValueSlotForKEqVLayers) {
  // 5 full layers x k_proj of 2 KV heads x 512 x 2816 hidden x 2 B = 28,835,840 B more than the
  // checkpoint's decoder layers, on vLLM and SGLang alike; transformers uses K itself.
  const auto gpu = test::gpu_target(Bytes::from_gib(139));
  const auto vllm = test::plan_engine("vllm", gemma4_moe(), gpu, {});
  const auto sglang = test::plan_engine("sglang", gemma4_moe(), gpu, {});
  const auto hf = test::plan_engine("hf", gemma4_moe(), gpu, {});
  EXPECT_EQ(layer_weights(vllm), layer_weights(hf) + 28'835'840u);
  EXPECT_EQ(layer_weights(sglang), layer_weights(hf) + 28'835'840u);
  EXPECT_NE(test::component(vllm.weights, "weights.layers").explain.find("V slots of 5 attention_k_eq_v layers"),
            std::string::npos);
  // TP 4: the sliding layers' 8 KV heads split 2 a rank (a quarter of k_proj), the full layers'
  // 2 global KV heads are replicated, one a rank (half of k_proj).
  const auto& m = gemma4_moe();
  for (const auto& t : m.tensors) {
    if (t.name == "model.language_model.layers.0.self_attn.k_proj.weight") {
      EXPECT_EQ(tensor_rank_bytes(m, t, 11'534'336, 4, 64), 2'883'584u);  // 8 x 256 x 2816 x 2 B / 4
    }
    if (t.name == "model.language_model.layers.5.self_attn.k_proj.weight") {
      EXPECT_EQ(tensor_rank_bytes(m, t, 5'767'168, 4, 64), 2'883'584u);  // 2 x 512 x 2816 x 2 B / 2
    }
  }
}

TEST(Gemma4Engines, VllmPoolUnifiesTwoPageSizes) {
  // TP 1, block 16: sliding pages 16 x 8,192 B, full pages 16 x 4,096 -> 32-token full blocks;
  // 6 groups of 5 layers, a block of 16 x 8,192 x 5 = 655,360 B.
  const auto p = test::plan_engine("vllm", gemma4_moe(), test::gpu_target(Bytes::from_gib(139)), {{"max-model-len", "8192"}});
  EXPECT_EQ(p.engine_view.at("kv_cache_groups"), 6);
  EXPECT_EQ(p.engine_view.at("kv_block_bytes"), 655360);
  // The printed token capacity: num_blocks // groups x the smallest block size (16).
  const auto blocks = p.engine_view.at("gpu_blocks").get<std::uint64_t>();
  EXPECT_EQ(*p.kv.capacity_tokens, blocks / 6 * 16);
}

compat::Support gemma4_support(const std::string& engine) {
  PlanRequest r;
  r.model = "gemma-4-31b";
  r.gpu = "h200";
  r.engine = engine;
  return run_plan(r, test::source_root()).compat.support;
}

TEST(Gemma4Engines, CompatibilityReadsTheReleaseAskedFor) {
  // data/compat/architectures.json: Gemma 4 from SGLang 0.5.11 and vLLM 0.19. The rules compare the
  // release asked for, not the profile that plans it (0.5.9 and 0.5.11 share the 0.5 profile).
  EXPECT_EQ(gemma4_support("sglang@0.5.9"), compat::Support::Unsupported);
  EXPECT_EQ(gemma4_support("sglang@0.5.11"), compat::Support::Supported);
  EXPECT_EQ(gemma4_support("vllm@0.18.1"), compat::Support::Unsupported);
  EXPECT_EQ(gemma4_support("vllm@0.19.0"), compat::Support::Supported);
}

}  // namespace
}  // namespace vramplan::memory
