// The checkpoint's MTP layer as a speculative draft (memory/mtp_draft.hpp) and vLLM's
// --speculative-config (memory/vllm_speculative.hpp, vllm_engine.cpp), as read in the vllm 0.19.0
// wheel. SGLang's side is in sglang_speculative_test.cpp.
#include "vramplan/memory/mtp_draft.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "support/catalogs.hpp"
#include "mtp_fixtures.hpp"
#include "support/engine_plans.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/model/catalogue.hpp"

namespace vramplan::memory {
namespace {

TEST(MtpDraft, WeightsSplitTheLayerAndKeepEhProjWhole) {
  // W(tp) = whole + split / tp, so whole = (8 W(8) - W(1)) / 7 up to the integer division: eh_proj
  // in bf16, 7,168 x 14,336 x 2 B = 205,520,896 B, plus enorm, hnorm and shared_head.norm,
  // 3 x 7,168 x 2 B = 43,008 B: 205,563,904 B on every rank.
  const ResolvedWeights rw = resolve_weights(test::deepseek_r1_with_mtp(), test::quant_catalog(), {});
  const double w1 = static_cast<double>(mtp_draft_weight_bytes(test::deepseek_r1_with_mtp(), rw, 1));
  const double w8 = static_cast<double>(mtp_draft_weight_bytes(test::deepseek_r1_with_mtp(), rw, 8));
  EXPECT_NEAR((8 * w8 - w1) / 7, 205'563'904.0, 8.0);
  // The rest is one MoE decoder layer: more than its 256 routed experts' fp8 bytes (256 x 3 x
  // 7,168 x 2,048 = 11.27 GB), far less than the 37 GB a copy of the embedding and head would add.
  EXPECT_GT(w1 - 205'563'904.0, 256.0 * 3 * 7168 * 2048);
  EXPECT_LT(w1, 256.0 * 3 * 7168 * 2048 * 1.2);
  EXPECT_EQ(mtp_draft_unsupported(test::deepseek_r1_with_mtp().arch), "");
}

TEST(VllmSpeculative, TheDraftLayerJoinsThePoolAndItsWeightsShrinkIt) {
  const EngineArgs tp8{{"tensor-parallel-size", "8"}};
  EngineArgs mtp = tp8;
  mtp["speculative-config"] = R"({"method": "mtp", "num_speculative_tokens": 2})";
  const auto plain = test::plan_engine("vllm@0.19", test::deepseek_r1_with_mtp(), test::mtp_test_card(), tp8);
  const auto spec = test::plan_engine("vllm@0.19", test::deepseek_r1_with_mtp(), test::mtp_test_card(), mtp);
  // 61 + 1 MLA layers x (512 + 64) x 2 B = 71,424 B a token; a 16-token block 1,142,784 B.
  EXPECT_EQ(plain.kv.bytes_per_token, 70'272u);
  EXPECT_EQ(spec.kv.bytes_per_token, 71'424u);
  EXPECT_EQ(spec.engine_view.at("kv_block_bytes").get<std::uint64_t>(), 1'142'784u);
  // The draft's weights come off the pool (the profile run's other terms do not move).
  const double draft = static_cast<double>(test::component(spec.weights, "weights.draft").bytes.count());
  const double pool_drop = (plain.engine_view.at("kv_cache_gib").get<double>() - spec.engine_view.at("kv_cache_gib").get<double>()) *
                           static_cast<double>(kGiB);
  EXPECT_NEAR(pool_drop, draft, 2e-4 * static_cast<double>(kGiB));  // the view rounds to 1e-4 GiB
  EXPECT_EQ(spec.engine_view.at("speculative_method"), "mtp");
  EXPECT_EQ(spec.engine_view.at("num_speculative_tokens").get<std::uint64_t>(), 2u);
  EXPECT_TRUE(spec.engine_view.at("async_scheduling").get<bool>());  // stays on for mtp
}

TEST(VllmSpeculative, RefusesWhatItDoesNotModel) {
  const auto message = [&](const std::string& engine, EngineArgs a, const ModelSpec& m = test::deepseek_r1_with_mtp()) {
    try {
      test::plan_engine(engine, m, test::mtp_test_card(), std::move(a));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const auto with = [](const std::string& json) { return EngineArgs{{"tensor-parallel-size", "8"}, {"speculative-config", json}}; };
  EXPECT_NE(message("vllm@0.19", with("nope")).find("expected a JSON object"), std::string::npos);
  EXPECT_NE(message("vllm@0.19", with(R"({"method": "eagle3", "model": "x"})")).find("not modelled"), std::string::npos);
  EXPECT_NE(message("vllm@0.19", with(R"({"method": "mtp", "model": "x", "num_speculative_tokens": 1})")).find("separate draft"),
            std::string::npos);
  EXPECT_NE(message("vllm@0.19", with(R"({"method": "deepseek_mtp"})")).find("num_speculative_tokens"), std::string::npos);
  EXPECT_NE(message("vllm@0.19", with(R"({"method": "mtp", "num_speculative_tokens": 0})")).find(">= 1"), std::string::npos);
  EXPECT_NE(message("vllm@0.6.5", with(R"({"method": "mtp", "num_speculative_tokens": 1})")).find("from vLLM 0.19"), std::string::npos);
  // 0.11 kept a copy of the LM head in the MTP layer (deepseek_mtp.py compute_logits): not modelled.
  EXPECT_NE(message("vllm@0.11", with(R"({"method": "mtp", "num_speculative_tokens": 1})")).find("from vLLM 0.19"), std::string::npos);
  EngineArgs pp = with(R"({"method": "mtp", "num_speculative_tokens": 1})");
  pp["pipeline-parallel-size"] = "2";
  EXPECT_NE(message("vllm@0.19", pp).find("pipeline parallelism"), std::string::npos);
  const ModelSpec flash = load_catalogue_model(test::source_root(), "glm-4.7-flash");  // no num_nextn_predict_layers
  EngineArgs one = with(R"({"method": "mtp", "num_speculative_tokens": 1})");
  one["tensor-parallel-size"] = "1";
  EXPECT_NE(message("vllm@0.19", one, flash).find("has no MTP layer"), std::string::npos);
}

}  // namespace
}  // namespace vramplan::memory
