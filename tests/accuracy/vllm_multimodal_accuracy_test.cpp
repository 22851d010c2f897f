// vLLM start-up records of vision-language models (issue 17 item 2). The Mistral-Small-3.2 record
// (llmd-doc-v011-mistral-small-32-24b in data/vllm_startup_logs.jsonl) stays out of the KV-capacity
// targets (data/vllm_record_models.json gives why: its activation peak); its weights and KV layout
// are checked here, planned through run_plan() as `vramplan plan` would.
#include <gtest/gtest.h>

#include "accuracy/vllm_targets.hpp"

namespace vramplan::test {
namespace {

VllmComparison mistral_small_32() {
  std::ifstream in(accuracy_data() / "vllm_startup_logs.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    auto rec = nlohmann::json::parse(line);
    if (rec.at("id") != "llmd-doc-v011-mistral-small-32-24b") continue;
    VllmCase c{rec, "llmd-doc-v011-mistral-small-32-24b",
               (accuracy_data() / "models" / "mistralai__Mistral-Small-3.1-24B-Instruct-2503.json").string(),
               std::nullopt, "3.1 config: same architecture"};
    return compare_vllm(c);
  }
  ADD_FAILURE() << "record not found";
  return {};
}

TEST(VllmMultimodalAccuracy, MistralSmall32WeightsIncludeThePixtralTower) {
  // 24,011,361,280 parameters x 2 B = 44.72 GiB of tensors (+ caching-allocator blocks); logged 44.76 GiB.
  // Without the tower (text model only) the plan was 43.9 GiB, 1.8 % low.
  const auto x = mistral_small_32();
  ASSERT_TRUE(x.weights_rep.has_value());
  EXPECT_LT(std::fabs(pct(x.weights_pred, *x.weights_rep)), 0.5) << x.weights_pred << " vs " << *x.weights_rep;
}

TEST(VllmMultimodalAccuracy, MistralSmall32KvLayoutMatchesTheLog) {
  // 40 layers x 2 (K, V) x 8 KV heads x 128 x 2 B = 163,840 B per token; block 128 tokens:
  // the log's 1,444 blocks hold 184,832 tokens.
  const auto x = mistral_small_32();
  EXPECT_EQ(x.block_bytes / x.block_size, 163840u);
  // The KV pool with the logged activation peak in place of the predicted one: vLLM's budget less
  // the same weights and non-torch memory. What remains after that swap is within the 1 % target;
  // the activation itself is not (see data/vllm_record_models.json).
  ASSERT_TRUE(x.act_rep.has_value() && x.kv_rep.has_value());
  const double kv_with_logged_activation = x.kv_pred + (x.act_pred - *x.act_rep);
  EXPECT_LT(std::fabs(pct(kv_with_logged_activation, *x.kv_rep)), 1.0)
      << "kv " << x.kv_pred << " act " << x.act_pred << " vs logged " << *x.act_rep << ", kv " << *x.kv_rep;
}

TEST(VllmMultimodalAccuracy, Llama32VisionWeightsMatchPublicLogs) {
  // tests/accuracy/data/vllm_vl_weight_logs.jsonl: "Loading model weights took" lines of public
  // issues (URLs in the file). 10,670,220,835 parameters x 2 B = 19.87 GiB of tensors; vLLM also
  // holds its rope cos/sin cache. The weights do not depend on the GPU, so an H100 is planned.
  std::ifstream in(accuracy_data() / "vllm_vl_weight_logs.jsonl");
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto r = nlohmann::json::parse(line);
    SCOPED_TRACE(r.at("id").get<std::string>());
    memory::PlanRequest q;
    q.model = r.at("config").get<std::string>();
    q.gpu = "h100-sxm-80";
    q.engine = "vllm@" + r.at("vllm_version").get<std::string>();
    q.args["tensor-parallel-size"] = std::to_string(r.at("tp").get<int>());
    q.args["max-model-len"] = "8192";
    const auto outcome = memory::run_plan(q, DataRoot{source_dir()});
    const double predicted = outcome.plan.engine_view.at("weights_gib");
    const double reported = r.at("weights_gib");
    EXPECT_LT(std::fabs(pct(predicted, reported)), 0.5) << predicted << " vs " << reported;
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

}  // namespace
}  // namespace vramplan::test
