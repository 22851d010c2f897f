// `vramplan train`: the vramplan.train/1 document (its parts add up per phase), the issue's QLoRA
// example, the text rendering and the refusals.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/json_schema.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

TEST(TrainCli, JsonPartsAddUpToThePeak) {
  const auto r = run_cli({"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--micro-batch", "2", "--seq-len",
                          "2048", "--grad-checkpointing", "full", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "vramplan.train/1");
  EXPECT_EQ(j["measured_quantity"], "allocated");
  EXPECT_EQ(j["params"]["trainable"], 8'030'261'248ull);
  std::map<std::string, std::uint64_t> phase;
  for (const auto& c : j["per_gpu"]) phase[c["phase"].get<std::string>()] += c["bytes"].get<std::uint64_t>();
  const auto peak = phase["resident"] + std::max(phase["forward_backward"], phase["optimizer_step"]);
  EXPECT_EQ(j["peak_allocated_bytes"].get<std::uint64_t>(), peak);
  // Pure bf16 AdamW: weights 2P + states 4P resident; the step adds grads 2P + foreach temp 2P.
  EXPECT_EQ(phase["resident"], 6 * 8'030'261'248ull);
  EXPECT_EQ(j["peak_phase"], "optimizer_step");
}

TEST(TrainCli, OutputHasEveryKeyTheSchemaRequires) {
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs/schemas/train.schema.json"));
  const auto r = run_cli({"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--method", "lora", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& key : schema["required"]) EXPECT_TRUE(j.contains(key.get<std::string>())) << key;
  for (const auto& key : schema["properties"]["setup"]["required"]) EXPECT_TRUE(j["setup"].contains(key.get<std::string>())) << key;
  for (const auto& key : schema["properties"]["setup"]["properties"]["adapter"]["required"])
    EXPECT_TRUE(j["setup"]["adapter"].contains(key.get<std::string>())) << key;
  for (const auto& part : j["per_gpu"])
    for (const char* key : {"name", "phase", "bytes", "gib", "explain"}) EXPECT_TRUE(part.contains(key)) << key;
}

TEST(TrainCli, IssueQloraExampleFitsA4090AndShowsPagedStatesApart) {
  const auto r = run_cli({"train", "--model", "llama-3.1-8b", "--method", "qlora", "--lora-rank", "16", "--lora-targets",
                          "all-linear", "--gpu", "rtx-4090", "--micro-batch", "2", "--seq-len", "2048",
                          "--grad-checkpointing", "full", "--optimizer", "paged-adamw-8bit", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["params"]["trainable"], 41'943'040u);
  EXPECT_TRUE(j["fits"].get<bool>());
  ASSERT_EQ(j["unified_memory"].size(), 1u);
  EXPECT_EQ(j["unified_memory"][0]["name"], "optimizer_states");
  EXPECT_EQ(j["setup"]["adapter"]["base_format"], "nf4-dq");
}

TEST(TrainCli, TextNamesEveryComponentAndTheVerdict) {
  const auto r = run_cli({"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--sharding", "fsdp", "--gpus", "8",
                          "--precision", "mixed"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {"weights", "master_weights", "optimizer_states", "gathered_units", "activations", "Peak allocated:"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
}

TEST(TrainCli, RefusesImpossibleSettings) {
  EXPECT_EQ(run_cli({"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--optimizer", "adamax"}).exit_code, 2);
  EXPECT_EQ(run_cli({"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--offload", "params"}).exit_code, 2);
  EXPECT_EQ(run_cli({"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--gpus", "3", "--tp", "2"}).exit_code, 2);
  EXPECT_EQ(run_cli({"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--method", "qlora", "--base-format",
                     "bf16"}).exit_code, 2);
}


// A run's duration and rental: 8 x H100 full fine-tuning of 15 B tokens.
TEST(TrainCli, RunDurationAndRentalPeriod) {
  const auto r = run_cli({"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--gpus", "8", "--sharding", "fsdp",
                          "--micro-batch", "2", "--seq-len", "4096", "--grad-checkpointing", "full", "--tokens", "15B",
                          "--periods", "3d,7d,30d", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs/schemas/train.schema.json"));
  EXPECT_TRUE(schema_violations(j, schema).empty());
  EXPECT_DOUBLE_EQ(j["run"]["tokens"].get<double>(), 15e9);
  // tokens / (tokens per second) in hours, and the 24 h default margin on top picks the period.
  const double hours = 15e9 / j["speed"]["tokens_per_s"]["expected"].get<double>() / 3600;
  EXPECT_NEAR(j["run"]["hours"]["expected"].get<double>(), hours, 1e-6);
  EXPECT_NEAR(j["run"]["gpu_hours"].get<double>(), 8 * hours, 1e-6);
  EXPECT_NEAR(j["run"]["rental"]["needed_hours"].get<double>(), hours + 24, 1e-6);
  EXPECT_EQ(j["run"]["rental"]["period"], hours + 24 <= 72 ? "3d" : hours + 24 <= 168 ? "7d" : "30d");
  EXPECT_TRUE(j["run"]["rental"]["usd"].is_number());  // h100-sxm-80 has catalogue quotes
  const auto text = run_cli({"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--epochs", "2",
                             "--dataset-tokens", "50M"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("run of 100 M tokens"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("tokens/s on 1 GPU"), std::string::npos) << text.out;
}

TEST(TrainCli, RefusesBadRunLengths) {
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--tokens", "abc"}, {"--tokens", "-5"}, {"--tokens", "1e400"}, {"--tokens", "3Q"},
        {"--tokens", "1B", "--epochs", "2", "--dataset-tokens", "1B"}, {"--epochs", "2"}, {"--epochs", "0", "--dataset-tokens", "1B"}}) {
    std::vector<std::string> args = {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << extra[0] << " " << extra[1] << ": " << r.err;
  }
}

}  // namespace
}  // namespace vramplan::test
