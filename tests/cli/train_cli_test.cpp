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
  // Allocator view: the largest freed forward block is the fp32 logits, 4096 x 128256 x 4 B =
  // 2,101,346,304 B, larger than every gradient (the embedding's, 128256 x 4096 x 2 B = 1,050,673,152 B),
  // so the step reuses it all and reserves what it allocates.
  EXPECT_EQ(j["peak_reserved_bytes"].get<std::uint64_t>(), peak);
}

TEST(TrainCli, PreviousGraphAddsTheHeldLogits) {
  // --previous-graph 100 on a bf16 LoRA: only the previous micro-batch's logits stay (autograd freed
  // the rest on backward): 100 tokens x 128256 vocab x 2 B = 25,651,200 B, in forward / backward.
  const auto r = run_cli({"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--method", "lora",
                          "--previous-graph", "100", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& c : j["per_gpu"])
    if (c["name"] == "previous_graph") {
      found = true;
      EXPECT_EQ(c["bytes"].get<std::uint64_t>(), 25'651'200u);
      EXPECT_EQ(c["phase"], "forward_backward");
    }
  EXPECT_TRUE(found);
}

TEST(TrainCli, VariableLengthsReserveMoreThanTheyAllocate) {
  // --length-median replays the caching allocator over variable-length steps (train/step_replay.hpp):
  // the peak reserved rises above the peak allocated, which the lengths do not change.
  const std::vector<std::string> base = {"train", "--model", "llama-2-7b", "--gpu", "a100-sxm-80", "--method", "lora",
                                         "--micro-batch", "2", "--seq-len", "512", "--grad-checkpointing", "full",
                                         "--format", "json"};
  const auto fixed = run_cli(base);
  auto args = base;
  for (const char* a : {"--length-median", "110", "--length-sigma", "0.579"}) args.emplace_back(a);
  const auto variable = run_cli(args);
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  ASSERT_EQ(variable.exit_code, 0) << variable.err;
  const auto f = nlohmann::json::parse(fixed.out), v = nlohmann::json::parse(variable.out);
  EXPECT_EQ(f["peak_allocated_bytes"], v["peak_allocated_bytes"]);
  EXPECT_GT(v["peak_reserved_bytes"].get<std::uint64_t>(), f["peak_reserved_bytes"].get<std::uint64_t>());
  EXPECT_NE(v["reserved_explain"].get<std::string>().find("caching-allocator replay"), std::string::npos);
}

TEST(TrainCli, ReservedExceedsAllocatedWhenGradientsOutgrowTheActivations) {
  // Llama-3.2-1B full, 8 x 512 tokens, loss in 8 chunks: the largest freed forward block is one
  // chunk's fp32 logits, 512 x 128256 x 4 B = 262,668,288 B. The tied embedding's gradient
  // (128256 x 2048 x 2 B = 525,336,576 B) and its foreach temporary (as large) fit no freed block and
  // get segments of their own; every other step tensor (at most 8192 x 2048 x 2 B) reuses
  // forward/backward's, which are larger in total (the peak is forward/backward's).
  const auto r = run_cli({"train", "--model", "llama-3.2-1b", "--gpu", "h100-sxm-80", "--micro-batch", "8", "--seq-len",
                          "512", "--loss-chunks", "8", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["peak_phase"], "forward_backward");
  EXPECT_EQ(j["peak_reserved_bytes"].get<std::uint64_t>(),
            j["peak_allocated_bytes"].get<std::uint64_t>() + 2 * 525'336'576ull) << j["reserved_explain"];
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
  for (const char* part : {"weights", "master_weights", "optimizer_states", "gathered_units", "activations", "Peak allocated:", "Peak reserved:"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
}

TEST(TrainCli, RefusesImpossibleSettings) {
  EXPECT_EQ(run_cli({"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--optimizer", "adamax"}).exit_code, 2);
  EXPECT_EQ(run_cli({"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--offload", "params"}).exit_code, 2);
  // torchtitan's op-level policy is modelled for dense SwiGLU blocks with flash attention only.
  EXPECT_EQ(run_cli({"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--grad-checkpointing", "selective-op",
                     "--attention", "eager"}).exit_code, 2);
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

namespace vramplan::test {
namespace {

// The limits object: valid against the schema, each limit on its boundary (limit fits, limit + 1
// does not, checked with `train` itself), and --global-batch's accumulation.
TEST(TrainCli, LimitsSitOnTheirBoundaries) {
  // LoRA on Llama-3.2-1B, 24 GB card; the shape given per call.
  auto with = [&](const std::string& micro, const std::string& seq, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> a = {"train", "--model", "llama-3.2-1b", "--gpu", "rtx-4090", "--method", "lora",
                                  "--micro-batch", micro, "--seq-len", seq, "--format", "json"};
    a.insert(a.end(), extra.begin(), extra.end());
    const auto r = run_cli(a);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto j = with("2", "2048");
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs/schemas/train.schema.json"));
  const auto bad = schema_violations(j, schema);
  EXPECT_TRUE(bad.empty()) << bad.front();
  const auto& l = j["limits"];
  EXPECT_TRUE(l["grad_accum"].is_null());
  const auto mb = l["max_micro_batch"]["value"].get<std::uint64_t>();
  ASSERT_GT(mb, 0u);
  EXPECT_TRUE(with(std::to_string(mb), "2048")["fits"].get<bool>());
  EXPECT_FALSE(with(std::to_string(mb + 1), "2048")["fits"].get<bool>());
  const auto seq = l["max_seq_len"]["value"].get<std::uint64_t>();
  ASSERT_FALSE(l["max_seq_len"]["capped"].get<bool>());
  EXPECT_TRUE(with("2", std::to_string(seq))["fits"].get<bool>());
  EXPECT_FALSE(with("2", std::to_string(seq + 1))["fits"].get<bool>());
  // 100 sequences at micro-batch 2 on one GPU: 50 steps, no rounding; the plan uses them.
  const auto g = with("2", "2048", {"--global-batch", "100"});
  EXPECT_TRUE(schema_violations(g, schema).empty());
  EXPECT_EQ(g["limits"]["grad_accum"]["steps"], 50);
  EXPECT_FALSE(g["limits"]["grad_accum"]["rounded"].get<bool>());
  EXPECT_EQ(g["setup"]["grad_accum"], 50);
  // 101: ceil(101 / 2) = 51 steps, 102 sequences.
  const auto odd = with("2", "2048", {"--global-batch", "101"});
  EXPECT_EQ(odd["limits"]["grad_accum"]["effective_global_batch"], 102);
  EXPECT_TRUE(odd["limits"]["grad_accum"]["rounded"].get<bool>());
  EXPECT_EQ(odd["limits"]["min_gpus"]["gpus"], 1);
}

TEST(TrainCli, MinGpusNamesWhatDoesNotShard) {
  // 70B full fine-tuning at 8 x 8192 tokens without recomputation: the activations alone exceed
  // an H100, so no FSDP size helps.
  const auto r = run_cli({"train", "--model", "llama-3.1-70b", "--gpu", "h100-sxm-80", "--sharding", "fsdp", "--gpus", "8",
                          "--micro-batch", "8", "--seq-len", "8192", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = nlohmann::json::parse(r.out)["limits"]["min_gpus"];
  EXPECT_TRUE(m["gpus"].is_null());
  EXPECT_NE(m["why_none"].get<std::string>().find("activations"), std::string::npos) << m["why_none"];
  const auto text = run_cli({"train", "--model", "llama-3.1-70b", "--gpu", "h100-sxm-80", "--sharding", "fsdp", "--gpus", "8",
                             "--grad-checkpointing", "full", "--seq-len", "4096"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* s : {"Limits (", "max micro-batch at 4,096 tokens", "max sequence length at micro-batch 1",
                        "min GPUs with sharding zero3: "})
    EXPECT_NE(text.out.find(s), std::string::npos) << s << "\n" << text.out;
}

std::uint64_t part_bytes(const nlohmann::json& j, const std::string& name) {
  for (const auto& c : j["per_gpu"])
    if (c["name"] == name) return c["bytes"].get<std::uint64_t>();
  return 0;
}

TEST(TrainCli, AdafactorTemporariesAreOneTensorsWorth) {
  // transformers' Adafactor.step loops tensor by tensor: the temporaries of the largest, the
  // embedding / lm_head of Llama-3.1-8B (128,256 x 4,096 = 525,336,576 values), alive at once in
  // fp32: pure bf16 grad.float() + p.float() + update and its successor = 4 x 525,336,576 x 4 B
  // = 8,405,385,216 B (7.83 GiB; it had been grad**2 for the whole model, 4 x 8,030,261,248 B =
  // 29.92 GiB). amp (fp32 grads and params, no upcast copies): 2 x 525,336,576 x 4 = 4,202,692,608 B.
  const auto bf16 = run_cli({"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--optimizer", "adafactor", "--format", "json"});
  ASSERT_EQ(bf16.exit_code, 0) << bf16.err;
  const auto j = nlohmann::json::parse(bf16.out);
  EXPECT_EQ(part_bytes(j, "step_temporaries"), 8'405'385'216ull);
  EXPECT_EQ(part_bytes(j, "optimizer_states"), 12'609'536u);  // fp32 rows + cols (model_states_test)
  const auto amp = run_cli({"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--optimizer", "adafactor",
                            "--precision", "amp", "--format", "json"});
  ASSERT_EQ(amp.exit_code, 0) << amp.err;
  EXPECT_EQ(part_bytes(nlohmann::json::parse(amp.out), "step_temporaries"), 4'202'692'608ull);
}

TEST(TrainCli, SequenceBeyondRotaryPositionsWarns) {
  // Llama-2-7B has max_position_embeddings 4096 and RoPE: 8192 tokens is context extension, legal,
  // so the plan runs and says so, in the text and in JSON.
  const std::vector<std::string> args = {"train", "--model", "llama-2-7b", "--gpu", "h100-sxm-80", "--seq-len", "8192",
                                         "--grad-checkpointing", "full"};
  const auto text = run_cli(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("warning: --seq-len 8192 exceeds llama-2-7b's max_position_embeddings 4096"), std::string::npos)
      << text.out;
  auto json_args = args;
  json_args.insert(json_args.end(), {"--format", "json"});
  const auto j = nlohmann::json::parse(run_cli(json_args).out);
  ASSERT_EQ(j["warnings"].size(), 1u);
  const auto in_range = nlohmann::json::parse(
      run_cli({"train", "--model", "llama-2-7b", "--gpu", "h100-sxm-80", "--seq-len", "4096", "--format", "json"}).out);
  EXPECT_TRUE(in_range["warnings"].empty());
}

TEST(TrainCli, TextHeaderNamesTheRecomputationAsJsonDoes) {
  const std::vector<std::string> args = {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--grad-checkpointing", "selective-op"};
  const auto text = run_cli(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("recompute selective-op)"), std::string::npos) << text.out.substr(0, text.out.find('\n'));
  auto json_args = args;
  json_args.insert(json_args.end(), {"--format", "json"});
  EXPECT_EQ(nlohmann::json::parse(run_cli(json_args).out)["setup"]["recompute"], "selective-op");
}

}  // namespace
}  // namespace vramplan::test
