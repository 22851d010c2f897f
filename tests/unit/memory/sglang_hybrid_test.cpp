// SGLang's hybrid pools for Qwen3-Next: a per-request state pool split off rest_memory by
// mamba_full_memory_ratio, the full-attention token pool from what is left, and
// max_running_requests capped by the state slots (model_runner_kv_cache_mixin.py
// handle_max_mamba_cache; configs/mamba_utils.py Mamba2CacheParams).
#include <gtest/gtest.h>

#include <cmath>

#include "support/engine_plans.hpp"
#include "support/test_support.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/model/catalogue.hpp"

namespace vramplan::memory {
namespace {

MemoryPlan qwen3_next_sglang(EngineArgs args, const std::string& engine = "sglang@0.5.9") {
  static const ModelSpec model = load_catalogue_model(test::source_root(), "qwen3-next-80b-a3b");
  args.emplace("tp-size", "2");
  args.emplace("mem-fraction-static", "0.85");
  return test::plan_engine(engine, model, test::gpu_target(Bytes::from_gib(178)), std::move(args));
}

TEST(SglangHybrid, StatePoolIsSplitOffBeforeTheTokenPool) {
  const auto p = qwen3_next_sglang({});
  // TP 2, 36 recurrent layers: conv 3 x 8192 / 2 = 12,288 values x 2 B (bf16) = 24,576 B; SSM
  // 32 x 128 x 128 / 2 = 262,144 values x 4 B (fp32) = 1,048,576 B -> 1,073,152 B x 36 = 38,633,472 B.
  const std::uint64_t per_req = 38633472u;
  EXPECT_EQ(p.engine_view.at("mamba_cache_per_req").get<std::uint64_t>(), per_req);
  const auto slots = p.engine_view.at("max_mamba_cache_size").get<std::uint64_t>();
  const auto state = test::component(p.kv_cache, "kv_cache.recurrent_state").bytes.count();
  EXPECT_EQ(state, (slots + 1) * per_req);  // MambaPool's size + 1 rows (mem_cache/memory_pool.py)
  // slots = (slots x per_req + token pool) x 0.9 / 1.9 // per_req: before 0.5.17 the padding row is
  // not taken off rest_memory.
  const double kv_pool = p.engine_view.at("kv_pool_gib").get<double>() * static_cast<double>(kGiB);
  const double rest = kv_pool + static_cast<double>(slots * per_req);
  EXPECT_NEAR(static_cast<double>(slots), std::floor(rest * 0.9 / 1.9 / static_cast<double>(per_req)), 1.0);
  // Token pool: full-attention layers only, 12 x 2 x 1 kv head x 256 x 2 B = 12,288 B per token.
  const auto tokens = *p.kv.capacity_tokens;
  EXPECT_EQ(tokens, static_cast<std::uint64_t>(kv_pool) / 12288u);
  // Running requests: the request pool (2048..4096) capped by slots // 3 (radix cache on).
  EXPECT_EQ(p.engine_view.at("max_running_requests").get<std::uint64_t>(), std::min<std::uint64_t>(slots / 3, 4096));
}

TEST(SglangHybrid, MaxMambaCacheSizeFixesTheSlots) {
  const auto p = qwen3_next_sglang({{"max-mamba-cache-size", "300"}});
  EXPECT_EQ(p.engine_view.at("max_mamba_cache_size").get<std::uint64_t>(), 300u);
  EXPECT_EQ(test::component(p.kv_cache, "kv_cache.recurrent_state").bytes.count(), 301ull * 38633472ull);
  EXPECT_EQ(p.engine_view.at("max_running_requests").get<std::uint64_t>(), 100u);  // 300 // 3
  const auto no_radix = qwen3_next_sglang({{"max-mamba-cache-size", "300"}, {"disable-radix-cache", "true"}});
  EXPECT_EQ(no_radix.engine_view.at("max_running_requests").get<std::uint64_t>(), 300u);  // // 1
}

TEST(SglangHybrid, WithoutTheRadixCacheTheRunningRequestsSizeTheSlots) {
  // --disable-radix-cache with --max-running-requests 200: 200 slots in every release (0.5.9+:
  // "Use explicitly set max_running_requests when radix cache is disabled").
  const auto set = qwen3_next_sglang({{"disable-radix-cache", "true"}, {"max-running-requests", "200"}}, "sglang@0.5.9");
  EXPECT_EQ(set.engine_view.at("max_mamba_cache_size").get<std::uint64_t>(), 200u);
  EXPECT_EQ(test::component(set.kv_cache, "kv_cache.recurrent_state").bytes.count(), 201ull * 38633472ull);
  // Neither set: 512 up to 0.5.8, the memory-ratio split from 0.5.9.
  const auto old = qwen3_next_sglang({{"disable-radix-cache", "true"}}, "sglang@0.5.8");
  EXPECT_EQ(old.engine_view.at("max_mamba_cache_size").get<std::uint64_t>(), 512u);
  const auto split = qwen3_next_sglang({{"disable-radix-cache", "true"}}, "sglang@0.5.9");
  EXPECT_EQ(split.engine_view.at("max_mamba_cache_size").get<std::uint64_t>(),
            qwen3_next_sglang({}, "sglang@0.5.9").engine_view.at("max_mamba_cache_size").get<std::uint64_t>());
}

TEST(SglangHybrid, NewerReleasesChargeThePaddingRowAndTheExtraBuffer) {
  // 0.5.17+: the budget holds the padding row too, (K + 1) x per_req = rest x 0.9 / 1.9; 0.5.14+:
  // Qwen3-Next keeps the overlap scheduler with the "extra_buffer" radix strategy, so running
  // requests are capped by slots // 5 (_calculate_mamba_ratio: 3 + 2 ping-pong states).
  const auto p = qwen3_next_sglang({{"max-mamba-cache-size", "300"}}, "sglang@0.5.17");
  EXPECT_EQ(p.engine_view.at("max_running_requests").get<std::uint64_t>(), 60u);  // 300 // 5
  const auto no_overlap = qwen3_next_sglang({{"max-mamba-cache-size", "300"}, {"disable-overlap-schedule", "true"}},
                                            "sglang@0.5.17");
  EXPECT_EQ(no_overlap.engine_view.at("max_running_requests").get<std::uint64_t>(), 100u);  // no_buffer: // 3
  const auto older = qwen3_next_sglang({}, "sglang@0.5.9"), newer = qwen3_next_sglang({}, "sglang@0.5.17");
  const std::uint64_t per_req = 38633472u;
  const auto k_old = older.engine_view.at("max_mamba_cache_size").get<std::uint64_t>();
  const auto k_new = newer.engine_view.at("max_mamba_cache_size").get<std::uint64_t>();
  EXPECT_EQ(k_old - k_new, 1u);  // the same budget less one row
  EXPECT_EQ(test::component(newer.kv_cache, "kv_cache.recurrent_state").bytes.count(), (k_new + 1) * per_req);
}

}  // namespace
}  // namespace vramplan::memory
