// Properties of memory plans over a few thousand random valid Llama-style configurations (a fixed
// seed, so a failure reproduces): monotonicity (more context never needs less memory, more TP
// never more weight bytes per GPU, a wider weight or KV format never fewer bytes, a larger card
// never turns FITS into DOES NOT FIT), invariants (the components sum to the total, headroom =
// capacity - total, a fitting vLLM plan holds the KV for its max-model-len) and the plan JSON
// against docs/schemas/plan.schema.json.
#include <gtest/gtest.h>

#include <random>

#include <nlohmann/json.hpp>

#include "support/catalogs.hpp"
#include "support/json_schema.hpp"
#include "support/sanitizer.hpp"
#include "support/test_support.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/plan_request.hpp"
#include "vramplan/model/hf_config.hpp"
#include "vramplan/plan/plan_output.hpp"
#include "vramplan/sim/serving_plan.hpp"

namespace vramplan::memory {
namespace {

// Issue 14 asked for a few thousand random configurations: 2000 in the Release suite; under ASan the
// same properties over the first 500 of the same seeded stream (the 2000 took ~65 s there, the
// sanitized suite's longest test).
constexpr int kConfigs = VRAMPLAN_UNDER_ASAN ? 500 : 2000;
constexpr std::uint64_t kSeed = 20261201;

// A random valid Llama-style config.json: heads x head_dim = hidden, KV heads dividing the heads.
nlohmann::json random_config(std::mt19937_64& rng) {
  auto pick = [&](std::initializer_list<std::uint64_t> values) {
    return *(values.begin() + std::uniform_int_distribution<std::size_t>(0, values.size() - 1)(rng));
  };
  const std::uint64_t heads = pick({4, 8, 16, 32, 64}), head_dim = pick({64, 128});
  std::uint64_t kv_heads = heads;
  while (kv_heads > 1 && std::uniform_int_distribution<int>(0, 1)(rng)) kv_heads /= 2;
  const std::uint64_t hidden = heads * head_dim;
  return {{"architectures", {"LlamaForCausalLM"}},
          {"model_type", "llama"},
          {"hidden_size", hidden},
          {"intermediate_size", hidden * std::uniform_int_distribution<std::uint64_t>(2, 4)(rng)},
          {"num_hidden_layers", std::uniform_int_distribution<std::uint64_t>(1, 48)(rng)},
          {"num_attention_heads", heads},
          {"num_key_value_heads", kv_heads},
          {"vocab_size", std::uniform_int_distribution<std::uint64_t>(1000, 160000)(rng)},
          {"max_position_embeddings", pick({4096, 8192, 32768})},
          {"tie_word_embeddings", std::uniform_int_distribution<int>(0, 1)(rng) == 1},
          {"torch_dtype", "bfloat16"}};
}

struct Engines {
  std::unique_ptr<Engine> vllm = make_engine("vllm", test::source_dir() / "data");
  std::unique_ptr<Engine> hf = make_engine("hf", test::source_dir() / "data");
};

MemoryPlan plan(const Engine& e, const ModelSpec& m, Bytes gpu, Workload w, EngineArgs args = {},
                std::optional<std::string> weights = std::nullopt) {
  return e.plan(PlanInput{m, test::quant_catalog(), GpuTarget{"custom", "custom", gpu, 1, "9.0", "", std::nullopt}, w, std::move(args),
                          std::move(weights)});
}

Bytes sum(const std::vector<Component>& parts) {
  Bytes b;
  for (const auto& c : parts) b += c.bytes;
  return b;
}

TEST(PlanProperties, MonotonicityAndInvariantsOverRandomConfigs) {
  const Engines engines;
  std::mt19937_64 rng(kSeed);
  const Bytes h100 = Bytes::from_gib(79.19);  // h100-sxm-80's runtime total (data/gpus.json)
  int fitting = 0;
  for (int k = 0; k < kConfigs; ++k) {
    const nlohmann::json config = random_config(rng);
    const ModelSpec m = model_from_hf_config(config, "random-" + std::to_string(k) + ".json");
    SCOPED_TRACE(config.dump());
    const std::uint64_t len = config["max_position_embeddings"];

    // vLLM at its defaults: invariants.
    const MemoryPlan p = plan(*engines.vllm, m, h100, {1, len});
    EXPECT_EQ(p.total_bytes(), sum(p.weights) + sum(p.kv_cache) + sum(p.activation) + sum(p.overhead));
    EXPECT_EQ(p.headroom_bytes(), static_cast<std::int64_t>(p.gpu_total.count()) - static_cast<std::int64_t>(p.total_bytes().count()));
    if (p.fits) {
      ++fitting;
      EXPECT_LE(p.total_bytes(), p.gpu_total);
      ASSERT_TRUE(p.kv.capacity_tokens.has_value());
      EXPECT_GE(*p.kv.capacity_tokens, len);  // vLLM refuses to start without room for one max-model-len sequence
    }

    // A larger card never turns FITS into DOES NOT FIT (same flags, twice the memory).
    if (p.fits) {
      EXPECT_TRUE(plan(*engines.vllm, m, h100 * 2, {1, len}).fits);
    }

    // More TP never more weight bytes per GPU (TP sizes dividing the KV heads).
    Bytes previous = p.weights_bytes();
    for (std::uint64_t tp = 2; tp <= 8 && config["num_key_value_heads"].get<std::uint64_t>() % tp == 0; tp *= 2) {
      const Bytes at_tp = plan(*engines.vllm, m, h100, {1, len}, {{"tensor-parallel-size", std::to_string(tp)}}).weights_bytes();
      EXPECT_LE(at_tp, previous) << "tp " << tp;
      previous = at_tp;
    }

    // A wider weight or KV format never fewer bytes: bf16 >= fp8 weights, bf16 >= fp8 KV per token.
    EXPECT_GE(p.weights_bytes(), plan(*engines.vllm, m, h100, {1, len}, {}, "fp8").weights_bytes());
    EXPECT_GE(p.kv.bytes_per_token, plan(*engines.vllm, m, h100, {1, len}, {{"kv-cache-dtype", "fp8"}}).kv.bytes_per_token);

    // More context never needs less memory (HF transformers allocates per request).
    const MemoryPlan short_ctx = plan(*engines.hf, m, h100, {1, 512});
    const MemoryPlan long_ctx = plan(*engines.hf, m, h100, {1, 2048});
    EXPECT_LE(short_ctx.total_bytes(), long_ctx.total_bytes());
    if (::testing::Test::HasFailure()) return;  // one configuration's report is enough
  }
  EXPECT_GT(fitting, kConfigs / 2);  // the properties above were exercised on fitting plans
}

TEST(PlanProperties, PlanJsonIsSchemaValidForRandomConfigs) {
  const auto schema = nlohmann::json::parse(test::read_text(test::source_dir() / "docs" / "schemas" / "plan.schema.json"));
  std::mt19937_64 rng(kSeed + 1);
  test::ScratchDir dir;
  for (int k = 0; k < 100; ++k) {  // run_plan reads the catalogues each time: 100 documents
    const auto path = dir.write("config-" + std::to_string(k) + ".json", random_config(rng).dump());
    PlanRequest r;
    r.model = path.string();
    r.gpu = k % 2 ? "h100-sxm-80" : "l40s";
    const auto doc = plan::plan_json(sim::run_serving_plan(r, test::source_root()));
    const auto violations = test::schema_violations(doc, schema);
    ASSERT_TRUE(violations.empty()) << violations.front();
  }
}

}  // namespace
}  // namespace vramplan::memory
