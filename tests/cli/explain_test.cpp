// `vramplan explain`: every component with its formula, the KV per token of Llama-3.1-70B, and
// the fit arithmetic adding up.
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

TEST(ExplainCli, KvPerTokenAndFitArithmetic) {
  ScratchDir dir;
  const auto model = dir.write("llama-3.1-70b.json", R"({"architectures":["LlamaForCausalLM"],"hidden_size":8192,
"intermediate_size":28672,"max_position_embeddings":131072,"model_type":"llama","num_attention_heads":64,
"num_hidden_layers":80,"num_key_value_heads":8,"rms_norm_eps":1e-05,"rope_theta":500000.0,
"tie_word_embeddings":false,"torch_dtype":"bfloat16","vocab_size":128256})");
  const auto r = run_cli({"explain", "--model", model.string(), "--gpu", "h200", "--max-model-len", "8192",
                          "--batch", "4", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "vramplan.explain/1");
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& item : j["items"]) {
    EXPECT_FALSE(item["formula"].get<std::string>().empty()) << item["name"];
    by_name[item["name"].get<std::string>()] = item;
  }
  // KV/token = 2 x 80 layers x 8 kv_heads x 128 x 2 B = 327,680 B (TP 1).
  EXPECT_EQ(by_name.at("kv_per_token")["bytes"], 327680);
  EXPECT_NE(by_name.at("kv_per_token")["formula"].get<std::string>().find("327,680 B"), std::string::npos);
  // 4 sequences x 8192 tokens x 327,680 B = 10,737,418,240 B.
  EXPECT_EQ(by_name.at("kv_needed")["bytes"], 10737418240ull);
  std::uint64_t parts = 0;
  for (const auto& item : j["items"])
    if ((item["section"] == "weights" || item["section"] == "activation" || item["section"] == "overhead") &&
        item["name"].get<std::string>().rfind("margin ", 0) != 0)
      parts += item["bytes"].get<std::uint64_t>();
  EXPECT_EQ(by_name.at("needed")["bytes"].get<std::uint64_t>(), parts + 10737418240ull);
  // Each non-KV margin appears once, with the record it came from.
  EXPECT_NE(by_name.at("margin weights*")["formula"].get<std::string>().find("llmd-v019-dsv2-lite-chat"), std::string::npos);
  // 70B bf16 on one H200: the weights alone exceed vLLM's budget of 0.9 x 138.88 GiB.
  EXPECT_EQ(j["verdict"], "DOES NOT FIT");
}

// An unsupported configuration sizes nothing (check's UNSUPPORTED): explain has no table and
// exits as check does (1), with the reason, instead of an all-zero table (rc 0 until 2026-12-05).
TEST(ExplainCli, UnsupportedConfigurationHasNoTable) {
  const auto r = run_cli({"explain", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "tei"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(r.err.rfind("vramplan: error: explain: no memory is sized for an unsupported configuration: UNSUPPORTED: tei 1.9 "
                        "has no LlamaForCausalLM in its model registry", 0), 0u) << r.err;
}

}  // namespace
}  // namespace vramplan::test
