// A model's own files (config.json, safetensors headers, hf_quant_config.json, GGUF headers)
// planned the way the engine loads them: findings of a user's probe (probe A, 2026-12).
#include <numeric>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/gguf_writer.hpp"
#include "support/safetensors_writer.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/model/hf_names.hpp"
#include "vramplan/model/load.hpp"

namespace vramplan::test {
namespace {

// tests/fixtures/hf/tiny-llama: hidden 64, 4 heads / 2 KV heads of 16, FFN 128, vocab 256, 2 layers.
// Its tensors, outermost dimension first. Parameters: embed 256 x 64 = 16,384; per layer 2 norms
// (128) + q 4,096 + k 2,048 + v 2,048 + o 4,096 + gate / up / down 3 x 8,192 = 36,992; final norm 64;
// lm_head 16,384. Total 16,384 + 2 x 36,992 + 64 + 16,384 = 106,816.
std::vector<SafetensorsEntry> tiny_llama_tensors(const std::string& dtype, std::uint64_t bytes_per_value,
                                                 bool with_lm_head = true) {
  std::vector<SafetensorsEntry> e;
  auto add = [&](const std::string& name, std::vector<std::uint64_t> shape) {
    const std::uint64_t n = std::accumulate(shape.begin(), shape.end(), std::uint64_t{1}, std::multiplies<>());
    e.emplace_back(name, dtype, std::move(shape), n * bytes_per_value);
  };
  add("model.embed_tokens.weight", {256, 64});
  for (int l = 0; l < 2; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", {64});
    add(p + "post_attention_layernorm.weight", {64});
    add(p + "self_attn.q_proj.weight", {64, 64});
    add(p + "self_attn.k_proj.weight", {32, 64});
    add(p + "self_attn.v_proj.weight", {32, 64});
    add(p + "self_attn.o_proj.weight", {64, 64});
    add(p + "mlp.gate_proj.weight", {128, 64});
    add(p + "mlp.up_proj.weight", {128, 64});
    add(p + "mlp.down_proj.weight", {64, 128});
  }
  add("model.norm.weight", {64});
  if (with_lm_head) add("lm_head.weight", {256, 64});
  return e;
}

std::string tiny_config(const std::string& edit_from = "", const std::string& edit_to = "") {
  std::string c = read_text(fixture("hf/tiny-llama/config.json"));
  if (!edit_from.empty()) c.replace(c.find(edit_from), edit_from.size(), edit_to);
  return c;
}

// The model's own weights in a plan: its layers, embedding, lm_head and other tensors (not the rope
// cache or the allocator's rounding, which the weights group also lists).
std::uint64_t weight_bytes(const nlohmann::json& plan) {
  std::uint64_t sum = 0;
  for (const auto& w : plan["per_gpu"]["breakdown"]["weights"]) {
    const std::string name = w["name"];
    if (name == "weights.layers" || name == "weights.embedding" || name == "weights.lm_head" || name == "weights.other")
      sum += w["bytes"].get<std::uint64_t>();
  }
  return sum;
}

// #1: vLLM creates unquantized parameters in the model dtype and copies the checkpoint into them.
// A bf16 directory served at --dtype float32 holds 106,816 x 4 = 427,264 B of weights, as the
// config.json alone does; at the default (bf16) 106,816 x 2 = 213,632 B.
TEST(ModelFilesTrust, DtypeSetsTheBytesOfACheckpointDirectory) {
  ScratchDir dir;
  dir.write("config.json", tiny_config());
  dir.write("model.safetensors", build_safetensors(tiny_llama_tensors("BF16", 2)));
  const std::vector<std::string> base = {"plan", "--model", dir.path().string(), "--gpu", "h100-sxm-80", "--max-model-len", "128"};
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli_json(args);
  };
  EXPECT_EQ(weight_bytes(with({})), 213'632u);
  EXPECT_EQ(weight_bytes(with({"--dtype", "float32"})), 427'264u);
  // The config.json alone agrees.
  EXPECT_EQ(weight_bytes(run_cli_json({"plan", "--model", (dir.path() / "config.json").string(), "--gpu", "h100-sxm-80",
                                       "--max-model-len", "128", "--dtype", "float32"})),
            427'264u);
}

// #1, the other way: F32 files with torch_dtype float32 are served in bf16 (dtype auto).
TEST(ModelFilesTrust, Float32CheckpointIsServedInBf16) {
  ScratchDir dir;
  dir.write("config.json", tiny_config("\"bfloat16\"", "\"float32\""));
  dir.write("model.safetensors", build_safetensors(tiny_llama_tensors("F32", 4)));
  EXPECT_EQ(weight_bytes(run_cli_json({"plan", "--model", dir.path().string(), "--gpu", "l4", "--max-model-len", "128"})),
            213'632u);
}

// #3: a stored tensor of another size than the config's is refused (vLLM asserts the sizes).
TEST(ModelFilesTrust, TensorOfTheWrongSizeIsRefused) {
  ScratchDir dir;
  dir.write("config.json", tiny_config());
  auto t = tiny_llama_tensors("BF16", 2);
  t[0] = SafetensorsEntry("model.embed_tokens.weight", "BF16", {4096, 64}, 4096 * 64 * 2);
  dir.write("model.safetensors", build_safetensors(t));
  EXPECT_EQ(error_message([&] { load_model(dir.path().string(), source_root()); }, ErrorKind::InputFile),
            dir.path().string() +
                ": tensor 'model.embed_tokens.weight': the safetensors files hold 262144 elements for "
                "'model.embed_tokens.weight', config.json gives [256, 64] = 16384; vLLM refuses such a checkpoint "
                "(its weight loader asserts param.size() == loaded_weight.size())");
}

// #2: tie_word_embeddings with lm_head.weight also stored: vLLM skips it; 106,816 - 16,384 =
// 90,432 parameters, the config's count.
TEST(ModelFilesTrust, StoredLmHeadOfATiedModelIsNotCounted) {
  ScratchDir dir;
  dir.write("config.json", tiny_config("\"tie_word_embeddings\": false", "\"tie_word_embeddings\": true"));
  dir.write("model.safetensors", build_safetensors(tiny_llama_tensors("BF16", 2)));
  const auto spec = load_model(dir.path().string(), source_root());
  std::uint64_t params = 0;
  for (const auto& t : spec.tensors) params += t.elements();
  EXPECT_EQ(params, 90'432u);
  EXPECT_NE(std::find_if(spec.warnings.begin(), spec.warnings.end(),
                         [](const std::string& w) { return w.find("'lm_head.weight' in the files is not counted") != std::string::npos; }),
            spec.warnings.end());
}

// #9: bitsandbytes quant state belongs to its weight.
TEST(ModelFilesTrust, BitsandbytesQuantStateIsACompanion) {
  for (const std::string suffix : {".absmax", ".quant_map", ".nested_absmax", ".quant_state.bitsandbytes__nf4"}) {
    bool companion = false;
    EXPECT_EQ(hf_inventory_key("model.layers.0.self_attn.q_proj.weight" + suffix, &companion),
              "model.layers.0.self_attn.q_proj.weight");
    EXPECT_TRUE(companion) << suffix;
  }
}

// #11: shards without an index are read, as vLLM loads every *.safetensors file.
TEST(ModelFilesTrust, ShardsWithoutAnIndexAreRead) {
  ScratchDir dir;
  dir.write("config.json", tiny_config());
  auto t = tiny_llama_tensors("BF16", 2);
  const std::vector<SafetensorsEntry> a(t.begin(), t.begin() + 10), b(t.begin() + 10, t.end());
  dir.write("model-00001-of-00002.safetensors", build_safetensors(a));
  dir.write("model-00002-of-00002.safetensors", build_safetensors(b));
  const auto spec = load_model(dir.path().string(), source_root());
  EXPECT_EQ(spec.source.kind, "safetensors");
  std::uint64_t bytes = 0;
  for (const auto& x : spec.tensors) bytes += *x.stored_bytes;
  EXPECT_EQ(bytes, 213'632u);
}

// #15 / #16: a missing shard is an I/O error; a NUL in a shard name is refused.
TEST(ModelFilesTrust, MissingShardIsIoAndNulNameIsRefused) {
  ScratchDir dir;
  dir.write("config.json", tiny_config());
  dir.write("model.safetensors.index.json", R"({"weight_map": {"model.norm.weight": "model-00002-of-00002.safetensors"}})");
  EXPECT_EQ(error_message([&] { load_model(dir.path().string(), source_root()); }, ErrorKind::Io),
            (dir.path() / "model-00002-of-00002.safetensors").string() +
                ": no such file (a shard model.safetensors.index.json lists)");
  dir.write("model.safetensors.index.json", "{\"weight_map\": {\"model.norm.weight\": \"m.safetensors\\u0000x\"}}");
  EXPECT_EQ(error_message([&] { load_model(dir.path().string(), source_root()); }, ErrorKind::InputFile),
            (dir.path() / "model.safetensors.index.json").string() +
                ": /weight_map/model.norm.weight: 'm.safetensors\\x00x' is not a file name in the checkpoint directory");
}

// #7: a ModelOpt hf_quant_config.json beside config.json is the quantization vLLM reads.
TEST(ModelFilesTrust, ModelOptHfQuantConfigIsRead) {
  ScratchDir dir;
  dir.write("config.json", tiny_config());
  dir.write("hf_quant_config.json",
            R"({"producer": {"name": "modelopt", "version": "0.23.0"}, "quantization": {"quant_algo": "FP8", "exclude_modules": ["lm_head"]}})");
  const auto j = run_cli_json({"plan", "--model", dir.path().string(), "--gpu", "h100-sxm-80", "--max-model-len", "128"});
  EXPECT_NE(j["weights_precision"].get<std::string>().find("fp8"), std::string::npos) << j["weights_precision"];
}

// #7, the catalogue: llama-3.1-70b-instruct-fp8 is ModelOpt FP8 (its _hf_quant_config: quant_algo
// FP8, lm_head excluded). Weights at TP 1: embed_tokens and lm_head 128,256 x 8,192 x 2 B each =
// 2 x 2,101,346,304; norms (80 x 2 + 1) x 8,192 x 2 B = 2,637,824; the 560 linear matrices
// (80 layers x q, k, v, o, gate, up, down) 68,451,041,280 params x 1 B + one fp32 scale each
// (560 x 4 = 2,240). Sum 72,656,373,952 B (67.67 GiB), where bf16 gave 131.45 GiB.
TEST(ModelFilesTrust, CatalogueModelOptEntryIsPlannedInFp8) {
  const auto j = run_cli_json({"plan", "--model", "llama-3.1-70b-instruct-fp8", "--gpu", "h100-sxm-80", "--max-model-len", "4096"});
  EXPECT_EQ(weight_bytes(j), 72'656'373'952u);
}

// #6: block-FP8 experts at a TP whose expert slice breaks vLLM's 128 x 128 blocks: Qwen3-235B-A22B-FP8
// (moe_intermediate_size 1536) at TP 8 has 1536 / 8 = 192 per rank, not a multiple of 128
// (vllm-project/vllm#17569); TP 4 gives 384 = 3 x 128, and expert parallelism keeps experts whole.
TEST(ModelFilesTrust, BlockFp8MoeAtATpVllmRefusesIsUnsupported) {
  const std::vector<std::string> base = {"check", "--model", "qwen3-235b-a22b-fp8", "--gpu", "h100-sxm-80", "--max-model-len", "8192"};
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
  };
  const auto tp8 = with({"-tp", "8"});
  EXPECT_EQ(tp8.exit_code, 1);
  EXPECT_TRUE(tp8.out.starts_with("UNSUPPORTED")) << tp8.out;
  EXPECT_NE(tp8.out.find("the output_size of gate's and up's weight = 192 (moe intermediate 1536 / TP 8) is not divisible "
                         "by weight quantization block_n = 128"),
            std::string::npos)
      << tp8.out;
  const auto tp4 = with({"-tp", "4"});
  EXPECT_EQ(tp4.out.find("block_n"), std::string::npos) << tp4.out;
  const auto ep = with({"-tp", "8", "--enable-expert-parallel"});
  EXPECT_EQ(ep.out.find("block_n"), std::string::npos) << ep.out;
}

// #12 / #19: fields of the config named, not flags never given.
TEST(ModelFilesTrust, ConfigFieldsAreNamed) {
  ScratchDir dir;
  const auto int8 = dir.write("i8.json", tiny_config("\"bfloat16\"", "\"int8\""));
  const auto r = run_cli({"plan", "--model", int8.string(), "--gpu", "l4"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err, "vramplan: error: " + int8.string() +
                       ": torch_dtype: 'int8' is not a model dtype an engine serves (float16, bfloat16, float32)\n");
  const auto zero = dir.write("p0.json", tiny_config("\"max_position_embeddings\": 512", "\"max_position_embeddings\": 0"));
  EXPECT_EQ(error_message([&] { load_model(zero.string(), source_root()); }, ErrorKind::InputFile),
            zero.string() + ": /max_position_embeddings: must be greater than zero");
}

// #13: the launch line names the checkpoint directory, never the config.json file.
TEST(ModelFilesTrust, LaunchLineNamesTheDirectoryOfAConfigJson) {
  ScratchDir dir;
  const auto config = dir.write("config.json", tiny_config());
  const auto j = run_cli_json({"check", "--model", config.string(), "--gpu", "l4", "--max-model-len", "128"});
  EXPECT_EQ(j["launch"]["argv"][2], dir.path().string());
  const auto other = dir.write("tiny.json", tiny_config());
  const auto k = run_cli_json({"check", "--model", other.string(), "--gpu", "l4", "--max-model-len", "128"});
  EXPECT_EQ(k["launch"]["argv"][2], "<checkpoint-dir>");
}

GgufDesc with_arch(const std::string& arch) {
  GgufDesc d = llama_like_gguf();
  for (auto& kv : d.kvs)
    if (kv.key.starts_with("llama.")) kv.key = arch + kv.key.substr(5);
  d.kvs[0] = kv_str("general.architecture", arch);
  return d;
}

// #5: an architecture llama.cpp does not know is refused (exit 4), as llama.cpp refuses it.
TEST(ModelFilesTrust, GgufOfAnUnknownArchitectureIsRefused) {
  ScratchDir dir;
  const auto path = dir.write("m.gguf", build_gguf(with_arch("frobnicator")).bytes);
  EXPECT_EQ(error_message([&] { load_model(path.string(), source_root()); }, ErrorKind::UnknownName),
            path.string() +
                ": key 'general.architecture': 'frobnicator' is not an architecture llama.cpp loads (src/llama-arch.cpp "
                "LLM_ARCH_NAMES; llama.cpp refuses the file: \"unknown model architecture\"), so no graph or buffer of "
                "it can be planned");
}

// #4: a GGUF missing a layer or the token embedding is refused.
TEST(ModelFilesTrust, GgufMissingTensorsAreRefused) {
  ScratchDir dir;
  GgufDesc d = llama_like_gguf();
  std::erase_if(d.tensors, [](const GgufTensorDesc& t) { return t.name.starts_with("blk.1."); });
  const auto no_layer = dir.write("a.gguf", build_gguf(d).bytes);
  EXPECT_EQ(error_message([&] { load_model(no_layer.string(), source_root()); }, ErrorKind::InputFile),
            no_layer.string() + ": key 'llama.block_count': 2 blocks, but no tensor blk.1.* is in the file (llama.cpp "
                                "refuses it: \"missing tensor 'blk.1.attn_norm.weight'\" or the like)");
  GgufDesc e = llama_like_gguf();
  std::erase_if(e.tensors, [](const GgufTensorDesc& t) { return t.name == "token_embd.weight"; });
  const auto no_embd = dir.write("b.gguf", build_gguf(e).bytes);
  EXPECT_EQ(error_message([&] { load_model(no_embd.string(), source_root()); }, ErrorKind::InputFile),
            no_embd.string() + ": tensor 'token_embd.weight': missing (llama.cpp refuses the file: \"missing tensor "
                               "'token_embd.weight'\")");
  GgufDesc f = llama_like_gguf();
  f.kvs.push_back(kv_u32("split.count", 1));
  f.kvs.push_back(kv_i32("split.tensors.count", 40));
  const auto lone = dir.write("c.gguf", build_gguf(f).bytes);
  // llama_like_gguf: 3 global tensors + 2 layers x 9 = 21.
  EXPECT_EQ(error_message([&] { load_model(lone.string(), source_root()); }, ErrorKind::InputFile),
            lone.string() + ": key 'split.tensors.count': 40 tensors expected, 21 found (split.count 1: this file must "
                            "hold them all)");
}

// #3 (GGUF): attn_q of half the width the metadata gives: 4 heads x 64 = 256 rows expected.
TEST(ModelFilesTrust, GgufAttentionShapeIsChecked) {
  ScratchDir dir;
  GgufDesc d = llama_like_gguf();
  for (auto& t : d.tensors)
    if (t.name == "blk.0.attn_q.weight") t = GgufTensorDesc("blk.0.attn_q.weight", {256, 128}, ggml_type::Q4_K, 128 * 144);
  const auto path = dir.write("m.gguf", build_gguf(d).bytes);
  EXPECT_EQ(error_message([&] { load_model(path.string(), source_root()); }, ErrorKind::InputFile),
            path.string() + ": tensor 'blk.0.attn_q.weight': shape [256, 128] is not the [256, 256] the metadata gives "
                            "(embedding_length 256, head_count 4 x key_length 64); llama.cpp refuses it (\"tensor has "
                            "wrong shape\")");
}

}  // namespace
}  // namespace vramplan::test
