// What --model reads, through the real executable: an incomplete checkpoint is refused, a split
// GGUF is read whole, a bare name is a catalogue id (and the output says which source was read),
// a quantized config is sized by its quantization_config, and a scheme that quantizes nothing
// says so.
#include <gtest/gtest.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "support/cli_env.hpp"
#include "support/gguf_split_writer.hpp"
#include "support/safetensors_writer.hpp"
#include "support/test_support.hpp"

namespace vramplan {
namespace {

std::string tiny_llama_config_text() { return test::read_text(test::fixture("hf/tiny-llama/config.json")); }

// tiny-llama (hidden 64, vocab 256, 2 layers) with only its token embedding in the files:
// {256, 64} bf16 = 32,768 B. Missing: 2 x 9 per-layer tensors + final norm + lm_head = 20.
void write_incomplete_checkpoint(const test::ScratchDir& dir) {
  dir.write("ckpt/config.json", tiny_llama_config_text());
  dir.write("ckpt/model.safetensors", test::build_safetensors({{"model.embed_tokens.weight", "BF16", {256, 64}, 32768}}));
}

TEST(ModelInput, PlanAndCheckRefuseACheckpointMissingATensorInspectShowsIt) {
  test::ScratchDir dir;
  write_incomplete_checkpoint(dir);
  const std::string ckpt = (dir.path() / "ckpt").string();
  const std::string message = "vramplan: error: " + ckpt +
                              ": tensor 'model.layers.0.input_layernorm.weight' of config.json is in no safetensors "
                              "file (20 tensors missing); vLLM refuses such a checkpoint (\"weights were not "
                              "initialized from checkpoint\"); 'vramplan inspect' lists what the files hold\n";
  for (const auto& cmd : {"plan", "check"}) {
    const auto r = test::run_cli({cmd, "--model", ckpt, "--gpu", "h100-sxm-80"});
    EXPECT_EQ(r.exit_code, 3) << cmd << r.out;  // malformed input file
    EXPECT_EQ(r.err, message) << cmd;
  }
  const auto j = test::run_cli_json({"inspect", "--model", ckpt});
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_NE(j["warnings"][0].get<std::string>().find("20 tensor(s) the config describes are not in the safetensors files"),
            std::string::npos);
  EXPECT_EQ(j["weight_bytes"], 32768);  // what the files hold
}

TEST(ModelInput, ASplitGgufIsPlannedFromEverySplit) {
  test::ScratchDir dir;
  const auto whole = test::llama_like_gguf();
  const auto parts = test::split_gguf(whole, {0, 10});
  const auto first = dir.write("m-00001-of-00002.gguf", test::build_gguf(parts[0]).bytes);
  dir.write("m-00002-of-00002.gguf", test::build_gguf(parts[1]).bytes);
  const auto single = dir.write("whole.gguf", test::build_gguf(whole).bytes);

  // 964,224 B of tensors in all (tests/unit/io/gguf_split_test.cpp); the first split alone holds
  // 10 of the 21 tensors.
  const auto inspected = test::run_cli_json({"inspect", "--model", first.string()});
  EXPECT_EQ(inspected["weight_bytes"], 964224);
  EXPECT_EQ(inspected["tensor_count"], 21);
  const std::vector<std::string> plan = {"plan", "--engine", "llamacpp", "--gpu", "h100-sxm-80", "--model"};
  auto a = plan, b = plan;
  a.push_back(first.string());
  b.push_back(single.string());
  const auto split_plan = test::run_cli_json(a);
  const auto single_plan = test::run_cli_json(b);
  EXPECT_EQ(split_plan["per_gpu"]["weights_bytes"], single_plan["per_gpu"]["weights_bytes"]);
  EXPECT_EQ(split_plan["per_gpu"]["total_bytes"], single_plan["per_gpu"]["total_bytes"]);
}

TEST(ModelInput, ABareNameIsACatalogueIdEvenBesideADirectoryOfThatName) {
  test::ScratchDir dir;
  dir.write("llama-3.1-8b/config.json", tiny_llama_config_text());  // a tiny model named like the catalogue's 8B
  const test::CliEnv here{dir.path(), {}};
  const std::vector<std::string> check = {"check", "--gpu", "h100-sxm-80", "--max-model-len", "512", "--json", "--model"};
  auto bare = check, path = check;
  bare.push_back("llama-3.1-8b");
  path.push_back("./llama-3.1-8b");
  const auto catalogue = nlohmann::json::parse(test::run_cli(bare, here).out);
  EXPECT_EQ(catalogue["model_source"]["kind"], "catalogue");
  EXPECT_EQ(catalogue["model_source"]["read_from"], "catalogue entry models/llama-3.1-8b.json");
  const auto local = nlohmann::json::parse(test::run_cli(path, here).out);
  EXPECT_EQ(local["model_source"]["kind"], "hf-config");
  EXPECT_EQ(local["model_source"]["path"], "./llama-3.1-8b/config.json");

  // Text says it too: plan's first line, check's basis line.
  const auto text = test::run_cli({"plan", "--gpu", "h100-sxm-80", "--model", "llama-3.1-8b"}, here);
  EXPECT_EQ(text.out.substr(0, text.out.find('\n')), "model llama-3.1-8b from the catalogue entry models/llama-3.1-8b.json");
  const auto checked = test::run_cli({"check", "--gpu", "h100-sxm-80", "--model", "./llama-3.1-8b"}, here);
  EXPECT_NE(checked.out.find("llama-3.1-8b from the config.json ./llama-3.1-8b/config.json (no safetensors read)"),
            std::string::npos)
      << checked.out;

  const auto explained = test::run_cli({"explain", "--gpu", "h100-sxm-80", "--model", "llama-3.1-8b", "--json"}, here);
  const auto items = nlohmann::json::parse(explained.out)["items"];
  ASSERT_FALSE(items.empty());
  EXPECT_EQ(items[0]["section"], "model");
  EXPECT_EQ(items[0]["formula"], "llama-3.1-8b from the catalogue entry models/llama-3.1-8b.json");

  // A bare name the catalogue lacks is not read from the directory either: the error says how.
  dir.write("my-model/config.json", tiny_llama_config_text());
  const auto unknown = test::run_cli({"inspect", "--model", "my-model"}, here);
  EXPECT_EQ(unknown.exit_code, 4);
  EXPECT_NE(unknown.err.find("a bare name is a catalogue id: to read 'my-model' in the working directory, pass ./my-model"),
            std::string::npos)
      << unknown.err;
}

TEST(ModelInput, InspectSizesAQuantizedConfigByItsQuantizationConfig) {
  // hidden 128, intermediate 256, 1 layer, 4 heads of 32 (2 KV heads), vocab 256, untied, bf16.
  nlohmann::json config = {{"architectures", {"LlamaForCausalLM"}}, {"hidden_size", 128}, {"intermediate_size", 256},
                           {"num_hidden_layers", 1}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                           {"vocab_size", 256}, {"max_position_embeddings", 512}, {"tie_word_embeddings", false},
                           {"torch_dtype", "bfloat16"}};
  test::ScratchDir dir;
  const auto plain = dir.write("plain/config.json", config.dump());
  config["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}};
  const auto fp8 = dir.write("fp8/config.json", config.dump());

  // bf16: embed + lm_head 2 x 256 x 128 x 2 = 131,072; q, o 2 x 16,384 x 2 = 65,536; k, v
  // 2 x 8,192 x 2 = 32,768; gate, up, down 3 x 32,768 x 2 = 196,608; 3 norms x 128 x 2 = 768.
  // Total 426,752.
  const auto p = test::run_cli_json({"inspect", "--model", plain.string()});
  EXPECT_EQ(p["weight_bytes"], 426752);
  EXPECT_TRUE(p["stored_as"].is_null());
  // fp8 blocks of 128 x 128 (one fp32 scale per tile) on the Linear weights; embedding, lm_head
  // and norms stay bf16: 131,072 + q, o 2 x (16,384 + 4) + k, v 2 x (8,192 + 4) + gate, up
  // 2 x (32,768 + 2 x 4) + down (32,768 + 2 x 4) + 768 = 279,336.
  const auto q = test::run_cli_json({"inspect", "--model", fp8.string()});
  EXPECT_EQ(q["weight_bytes"], 279336);
  EXPECT_EQ(q["stored_as"].get<std::string>().rfind("fp8-block", 0), 0u) << q["stored_as"];
  // The catalogue's DeepSeek-V3 (fp8 blocks under torch_dtype bfloat16) is sized the same way:
  // about half of its 671 B parameters' bf16 size.
  const auto ds = test::run_cli_json({"inspect", "--model", "deepseek-v3"});
  EXPECT_LT(ds["weight_bytes"].get<double>(), 0.55 * 2 * ds["params"]["total"].get<double>());
}

TEST(ModelInput, AWeightsSchemeThatQuantizesNothingSaysSo) {
  // mxfp4 quantizes MoE experts only: on the dense 8B the weights stay bf16, as vLLM serves them.
  const std::vector<std::string> base = {"--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "8192"};
  auto plan = base, plain = base, check = base;
  plan.insert(plan.begin(), "plan");
  plan.insert(plan.end(), {"--weights", "mxfp4"});
  plain.insert(plain.begin(), "plan");
  check.insert(check.begin(), "check");
  check.insert(check.end(), {"--weights", "mxfp4"});
  const auto p = test::run_cli_json(plan);
  EXPECT_EQ(p["weights_precision"], "bf16 (mxfp4 quantized no tensor)");
  EXPECT_EQ(p["per_gpu"]["weights_bytes"], test::run_cli_json(plain)["per_gpu"]["weights_bytes"]);
  const auto c = test::run_cli_json(check);
  bool flagged = false;
  for (const auto& w : c["warnings"]) flagged = flagged || w.get<std::string>().starts_with("mxfp4 quantizes no tensor");
  EXPECT_TRUE(flagged) << c["warnings"];
}

}  // namespace
}  // namespace vramplan
