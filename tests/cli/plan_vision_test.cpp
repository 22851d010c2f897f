// `vramplan plan` on a catalogue vision-language model: the tower is in the weights and vLLM's
// encoder profiling (memory/vllm_encoder_profile.hpp) is a named part of the activation peak.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

TEST(PlanVisionCli, Qwen25Vl7bCarriesItsTowerAndEncoderProfile) {
  const auto r = run_cli({"plan", "--model", "qwen2.5-vl-7b", "--gpu", "h100-sxm-80", "--max-model-len", "8192", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.at("fits").get<bool>());
  // 28 layers x 2 x 4 KV heads x 128 x 2 B.
  EXPECT_EQ(j.at("kv").at("bytes_per_token"), 57344);
  const auto& act = j.at("per_gpu").at("breakdown").at("activation");
  const auto mm = std::find_if(act.begin(), act.end(), [](const nlohmann::json& c) {
    return c.at("name") == "activation.mm_encoder_profile";
  });
  ASSERT_NE(mm, act.end()) << act.dump();
  // One image of 16384 embeddings (the encoder budget, raised to one item): (65536 x 1176 pixel
  // values + 16384 x 3584) x 2 B = 271,581,184 B (tests/unit/memory/vllm_encoder_profile_test.cpp).
  EXPECT_EQ(mm->at("bytes").get<std::uint64_t>(), 271581184u);
  // The weights hold the 676,550,144-parameter tower: 8,292,166,656 x 2 B of tensors at least.
  EXPECT_GE(j.at("per_gpu").at("weights_bytes").get<std::uint64_t>(), 2u * 8292166656u);
}

}  // namespace
}  // namespace vramplan::test
