// SGLang's state pool for Mamba2 hybrids (the Qwen3-Next path, sglang_hybrid_test.cpp; Falcon-H1 in every layer):
// mamba_cache_per_req = Mamba layers x (conv state in bf16 + SSM state in float32), both split
// over TP with the groups replicated up to it (configs/mamba_utils.py Mamba2StateShape.create,
// mamba2_state_dtype; model_runner_kv_cache_mixin.py handle_max_mamba_cache).
#include <gtest/gtest.h>

#include "support/engine_plans.hpp"
#include "support/test_support.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/model/catalogue.hpp"

namespace vramplan::memory {
namespace {

MemoryPlan sglang_mamba_plan(const std::string& id, const std::string& tp) {
  const auto model = load_catalogue_model(test::source_root(), id);
  return test::plan_engine("sglang", model, test::gpu_target(Bytes::from_gib(79.2)),
                           {{"tp-size", tp}, {"mem-fraction-static", "0.85"}, {"max-mamba-cache-size", "100"}});
}

TEST(SglangMambaHybrid, Nemotron3NanoStatePerRequest) {
  // TP 2, 23 Mamba layers: conv 3 x 6144 / 2 = 9,216 values x 2 B = 18,432 B; SSM 64 / 2 x 64 x 128
  // = 262,144 values x 4 B = 1,048,576 B -> 1,067,008 B x 23 = 24,541,184 B per request.
  const auto p = sglang_mamba_plan("nemotron-3-nano-30b-a3b", "2");
  EXPECT_EQ(p.engine_view.at("mamba_cache_per_req").get<std::uint64_t>(), 24541184u);
  EXPECT_EQ(test::component(p.kv_cache, "kv_cache.recurrent_state").bytes.count(), 101ull * 24541184ull);  // + MambaPool's padding row
}

TEST(SglangMambaHybrid, GraniteTinyReplicatesItsGroup) {
  // TP 2, 36 Mamba layers, 1 group replicated to 2: conv 3 x (3072 + 2 x 2 x 128) / 2 = 5,376 x 2 B
  // = 10,752 B; SSM 24 x 64 x 128 = 196,608 x 4 B = 786,432 B -> 797,184 B x 36 = 28,698,624 B.
  const auto p = sglang_mamba_plan("granite-4.0-h-tiny", "2");
  EXPECT_EQ(p.engine_view.at("mamba_cache_per_req").get<std::uint64_t>(), 28698624u);
}

TEST(SglangMambaHybrid, FalconH1StateInEveryLayer) {
  // configs/falcon_h1.py FalconH1Config: full_attention_layer_ids and linear_layer_ids are both every
  // layer; mamba2_cache_params replicates the 1 group to TP. Falcon-H1-7B, TP 2, 44 layers:
  // conv 3 x (3072 + 2 x 2 x 256) / 2 = 6,144 x 2 B = 12,288 B; SSM 24 / 2 x 128 x 256 = 393,216 x 4 B
  // = 1,572,864 B -> 1,585,152 B x 44 = 69,746,688 B per request.
  const auto p = sglang_mamba_plan("falcon-h1-7b", "2");
  EXPECT_EQ(p.engine_view.at("mamba_cache_per_req").get<std::uint64_t>(), 69746688u);
  EXPECT_EQ(test::component(p.kv_cache, "kv_cache.recurrent_state").bytes.count(), 101ull * 69746688ull);
}

TEST(SglangMambaHybrid, Nemotron3SuperLatentProjectionsOnEveryRank) {
  // NemotronHMoE's fc1_latent_proj / fc2_latent_proj are ReplicatedLinear (SGLang models/nemotron_h.py,
  // vLLM nemotron_h.py): each of 4 ranks holds all 1024 x 4096 x 2 B = 8,388,608 B, while the
  // routed experts' w13 splits its 2688 rows: 512 x 2688 x 1024 x 2 B / 4 = 704,643,072 B.
  const auto model = load_catalogue_model(test::source_root(), "nemotron-3-super-120b-a12b");
  int seen = 0;
  for (const auto& t : model.tensors) {
    if (t.layer != 1) continue;
    const std::uint64_t bytes = t.elements() * 2;
    if (t.role == TensorRole::FfnLatentDown || t.role == TensorRole::FfnLatentUp) {
      EXPECT_EQ(bytes, 8388608u) << t.name;
      EXPECT_EQ(tensor_rank_bytes(model, t, bytes, 4, 1), 8388608u) << t.name;
      ++seen;
    }
    if (t.role == TensorRole::FfnUpExps) {
      EXPECT_EQ(tensor_rank_bytes(model, t, bytes, 4, 1), 704643072u) << t.name;
      ++seen;
    }
  }
  EXPECT_EQ(seen, 3);
  // The state of a request: 40 Mamba layers at TP 4, conv 3 x 10,240 / 4 = 7,680 x 2 B = 15,360 B;
  // SSM 128 / 4 x 64 x 128 = 262,144 x 4 B = 1,048,576 B -> 1,063,936 B x 40 = 42,557,440 B.
  const auto p = sglang_mamba_plan("nemotron-3-super-120b-a12b", "4");
  EXPECT_EQ(p.engine_view.at("mamba_cache_per_req").get<std::uint64_t>(), 42557440u);
}

}  // namespace
}  // namespace vramplan::memory
