// SGLang speculative decoding with the checkpoint's MTP layer as the draft
// (memory/sglang_speculative.hpp, sglang_engine.cpp): flags, defaults and the draft's memory, as
// read in the sglang 0.5.6.post1 / 0.5.9 / 0.5.10 wheels.
#include "vramplan/memory/sglang_speculative.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "mtp_fixtures.hpp"
#include "support/engine_plans.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/model/catalogue.hpp"

namespace vramplan::memory {
namespace {

const EngineArgs kTp8{{"tp-size", "8"}};

EngineArgs with(EngineArgs a, const std::string& k, const std::string& v) {
  a[k] = v;
  return a;
}

TEST(SglangSpeculative, DefaultsOfAnMtpDraft) {
  const auto plain = test::plan_engine("sglang@0.5.9", test::deepseek_r1_with_mtp(), test::mtp_test_card(), kTp8);
  const auto spec = test::plan_engine("sglang@0.5.9", test::deepseek_r1_with_mtp(), test::mtp_test_card(), with(kTp8, "speculative-algorithm", "NEXTN"));
  // server_args.py reserve_sum on 143,051.3 MiB: 512 + 8192 x 1.5 + 512 x 2 + 8 x 128 = 14,848 MiB
  // (above the 10,240 floor); mem_fraction_static = round3((143,051.3 - 14,848) / 143,051.3) =
  // 0.896 without a draft, round3((143,051.3 - 14,848 - 2,048) / 143,051.3) = 0.882 with one.
  const double mib = 150e9 / 1048576.0;
  EXPECT_EQ(plain.engine_view.at("chunked_prefill_size").get<std::uint64_t>(), 8192u);
  EXPECT_EQ(plain.engine_view.at("cuda_graph_max_bs").get<std::uint64_t>(), 512u);
  EXPECT_DOUBLE_EQ(plain.engine_view.at("mem_fraction_static").get<double>(), std::round((mib - 14848) / mib * 1000) / 1000);
  EXPECT_DOUBLE_EQ(spec.engine_view.at("mem_fraction_static").get<double>(),
                   std::round((mib - 14848 - 2048) / mib * 1000) / 1000);
  EXPECT_DOUBLE_EQ(spec.engine_view.at("mem_fraction_static").get<double>(), 0.882);
  // 0.5.10 reserves 4,096 MiB: round3((143,051.3 - 18,944) / 143,051.3) = 0.868.
  const auto newer = test::plan_engine("sglang@0.5.10", test::deepseek_r1_with_mtp(), test::mtp_test_card(), with(kTp8, "speculative-algorithm", "EAGLE"));
  EXPECT_DOUBLE_EQ(newer.engine_view.at("mem_fraction_static").get<double>(), 0.868);
  // NEXTN runs as EAGLE with (3, 1, 4); 48 running requests; no overlap scheduler, no mixed chunks.
  EXPECT_EQ(spec.engine_view.at("speculative_algorithm"), "EAGLE");
  EXPECT_EQ(spec.engine_view.at("speculative_num_steps").get<std::uint64_t>(), 3u);
  EXPECT_EQ(spec.engine_view.at("speculative_eagle_topk").get<std::uint64_t>(), 1u);
  EXPECT_EQ(spec.engine_view.at("speculative_num_draft_tokens").get<std::uint64_t>(), 4u);
  EXPECT_EQ(spec.engine_view.at("max_running_requests").get<std::uint64_t>(), 48u);
  EXPECT_FALSE(spec.engine_view.at("overlap_schedule").get<bool>());
  EXPECT_TRUE(plain.engine_view.at("overlap_schedule").get<bool>());
  const auto asked = test::plan_engine("sglang@0.5.9", test::deepseek_r1_with_mtp(), test::mtp_test_card(),
                                       with(with(kTp8, "speculative-algorithm", "EAGLE"), "max-running-requests", "64"));
  EXPECT_EQ(asked.engine_view.at("max_running_requests").get<std::uint64_t>(), 64u);
}

TEST(SglangSpeculative, TheDraftTakesItsWeightsAndOneLayerPoolFromTheHeadroom) {
  const auto plain = test::plan_engine("sglang@0.5.9", test::deepseek_r1_with_mtp(), test::mtp_test_card(), kTp8);
  const auto spec = test::plan_engine("sglang@0.5.9", test::deepseek_r1_with_mtp(), test::mtp_test_card(), with(kTp8, "speculative-algorithm", "EAGLE"));
  // The target's pool is sized as without a draft, at the lower fraction: the same bytes per token.
  EXPECT_EQ(spec.kv.bytes_per_token, plain.kv.bytes_per_token);
  EXPECT_LT(*spec.kv.capacity_tokens, *plain.kv.capacity_tokens);
  // The draft's pool: as many tokens, one MLA layer of (512 + 64) x 2 B = 1,152 B each.
  EXPECT_EQ(test::component(spec.kv_cache, "kv_cache.draft").bytes.count(), *spec.kv.capacity_tokens * 1152u);
  // The draft's weights: the MTP layer without its embedding and head copies, more than one routed
  // layer's share (256 experts x 3 x 7,168 x 2,048 fp8 bytes / 8 ranks = 1.41 GB) and less than twice it.
  const double draft = static_cast<double>(test::component(spec.weights, "weights.draft").bytes.count());
  EXPECT_GT(draft, 256.0 * 3 * 7168 * 2048 / 8);
  EXPECT_LT(draft, 2 * 256.0 * 3 * 7168 * 2048 / 8);
  EXPECT_TRUE(spec.fits);
  EXPECT_EQ(spec.weights_bytes() - plain.weights_bytes(), Bytes(static_cast<std::uint64_t>(draft)));
}

TEST(SglangSpeculative, ADraftThatDoesNotFitTheHeadroomFailsThePlan) {
  // mem_fraction_static 0.904 on the 139.70 GiB card: 0.904 x (139.70 - 0.50 context) = 125.84 GiB
  // for weights + pool, + 11.44 GiB prefill reserve + 0.95 GiB graphs + 0.50 context = 138.73 GiB,
  // 0.97 GiB under the card without a draft; the draft's 1.53 GiB of weights alone do not fit there.
  EngineArgs a = with(kTp8, "mem-fraction-static", "0.904");
  const auto plain = test::plan_engine("sglang@0.5.9", test::deepseek_r1_with_mtp(), test::mtp_test_card(), a);
  EXPECT_TRUE(plain.fits) << plain.reason;
  const auto spec = test::plan_engine("sglang@0.5.9", test::deepseek_r1_with_mtp(), test::mtp_test_card(),
                                      with(a, "speculative-algorithm", "EAGLE"));
  EXPECT_FALSE(spec.fits);
  EXPECT_NE(spec.reason.find("the draft"), std::string::npos) << spec.reason;
}

TEST(SglangSpeculative, Releases056GrewThePoolPastItsBudget) {
  // 0.5.6.post1 init_memory_pool: + 48 x (3 x 1 + 4) + 100 = 436 tokens, in both pools.
  const auto plain = test::plan_engine("sglang@0.5.6.post1", test::deepseek_r1_with_mtp(), test::mtp_test_card(), kTp8);
  const auto spec = test::plan_engine("sglang@0.5.6.post1", test::deepseek_r1_with_mtp(), test::mtp_test_card(), with(kTp8, "speculative-algorithm", "EAGLE"));
  const auto same_fraction = test::plan_engine(
      "sglang@0.5.6.post1", test::deepseek_r1_with_mtp(), test::mtp_test_card(),
      with(with(kTp8, "speculative-algorithm", "EAGLE"), "mem-fraction-static",
           std::to_string(plain.engine_view.at("mem_fraction_static").get<double>())));
  EXPECT_EQ(*same_fraction.kv.capacity_tokens, *plain.kv.capacity_tokens + 436u);
  EXPECT_EQ(test::component(same_fraction.kv_cache, "kv_cache.draft").bytes.count(),
            (*plain.kv.capacity_tokens + 436u) * 1152u);
  EXPECT_LT(*spec.kv.capacity_tokens, *same_fraction.kv.capacity_tokens);  // the default reserve grew by 2 GiB
}

TEST(SglangSpeculative, UserSettingsAndRefusals) {
  const auto mine = test::plan_engine("sglang@0.5.9", test::deepseek_r1_with_mtp(), test::mtp_test_card(),
                                      {{"tp-size", "8"}, {"speculative-algorithm", "EAGLE"}, {"speculative-num-steps", "2"},
                                       {"speculative-eagle-topk", "1"}, {"speculative-num-draft-tokens", "5"}});
  // With top-k 1 SGLang verifies steps + 1 tokens whatever was asked.
  EXPECT_EQ(mine.engine_view.at("speculative_num_draft_tokens").get<std::uint64_t>(), 3u);
  const auto refused = [&](const EngineArgs& a, const std::string& engine = "sglang@0.5.9") {
    try {
      test::plan_engine(engine, test::deepseek_r1_with_mtp(), test::mtp_test_card(), a);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
      return std::string(e.what());
    }
    ADD_FAILURE() << "accepted";
    return std::string();
  };
  EXPECT_NE(refused(with(kTp8, "speculative-algorithm", "EAGLE3")).find("not modelled"), std::string::npos);
  EXPECT_NE(refused(with(kTp8, "speculative-algorithm", "MEDUSA")).find("expected EAGLE"), std::string::npos);
  EXPECT_NE(refused(with(kTp8, "speculative-num-steps", "3")).find("needs --speculative-algorithm"), std::string::npos);
  EXPECT_NE(refused(with(with(kTp8, "speculative-algorithm", "EAGLE"), "speculative-num-steps", "3"))
                .find("--speculative-eagle-topk"),
            std::string::npos);
  EXPECT_NE(refused(with(with(kTp8, "speculative-algorithm", "EAGLE"), "speculative-draft-model-path", "/d"))
                .find("separate draft checkpoint"),
            std::string::npos);
  EXPECT_NE(refused(with(kTp8, "speculative-algorithm", "EAGLE"), "sglang@0.4.6").find("0.5.3 to 0.5.13"), std::string::npos);
  // 0.5.14 moved the rules (arg_groups/speculative_hook.py) and dropped the reserve: not read, refused,
  // as is an unversioned "sglang" (the newest release).
  EXPECT_NE(refused(with(kTp8, "speculative-algorithm", "EAGLE"), "sglang@0.5.14").find("sglang@0.5.13"), std::string::npos);
  EXPECT_NE(refused(with(kTp8, "speculative-algorithm", "EAGLE"), "sglang").find("sglang@0.5.13"), std::string::npos);
  // A listed architecture whose config gives no MTP layer (the catalogue's GLM-4.7-Flash copy has no
  // num_nextn_predict_layers), and an architecture SGLang drafts for from no MTP layer (Kimi-K2.5).
  const auto message = [&](const char* id) {
    const ModelSpec m = load_catalogue_model(test::source_root(), id);
    try {
      test::plan_engine("sglang@0.5.9", m, test::mtp_test_card(), {{"tp-size", "8"}, {"quantization", "fp8"}, {"speculative-algorithm", "EAGLE"}});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("glm-4.7-flash").find("has no MTP layer"), std::string::npos) << message("glm-4.7-flash");
  EXPECT_NE(message("kimi-k2.5").find("not modelled with a draft"), std::string::npos) << message("kimi-k2.5");
}

}  // namespace
}  // namespace vramplan::memory
