// The bad-input table (docs/errors.md): every row run through the real executable, checking the
// exact one-line message and the exit code, and every row present in the document verbatim.
// Paths in messages are written "<dir>/..." for the test's scratch folder.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "support/cli_env.hpp"
#include "support/gguf_split_writer.hpp"
#include "support/safetensors_writer.hpp"
#include "support/test_support.hpp"

namespace vramplan {
namespace {

// A file to create in the scratch folder before the run: its bytes, or a FIFO / directory, or a
// sparse file of `bytes` (a decimal size) zero bytes, which costs no disk, or a symbolic link to
// `bytes` (a path in the folder).
struct File {
  std::string name;
  std::string bytes;
  enum Kind { Regular, Fifo, Directory, Sparse, Symlink } kind = Regular;
};

struct Row {
  std::string input;               //!< the "input" column of docs/errors.md
  std::vector<std::string> args;   //!< after `vramplan`; "<dir>" is the scratch folder
  std::vector<File> files;
  int exit_code;
  std::string message;  //!< after "vramplan: error: " ("does not fit": the stdout line); "<dir>" as in args
  bool in_dir = false;  //!< run with the scratch folder as the working directory
};

std::string tiny_with(const std::function<void(nlohmann::json&)>& edit) {
  auto c = nlohmann::json::parse(test::read_text(test::fixture("hf/tiny-llama/config.json")));
  edit(c);
  return c.dump();
}
std::string tiny_set(const std::string& key, const nlohmann::json& value) {
  return tiny_with([&](nlohmann::json& c) { c[key] = value; });
}
std::string tiny_raw(const std::string& key, const std::string& literal) {  // values JSON cannot hold
  std::string text = tiny_set(key, 0);
  const auto at = text.find("\"" + key + "\":0");
  return text.replace(at, key.size() + 4, "\"" + key + "\":" + literal);
}
std::string gguf_bytes(const std::function<void(test::GgufDesc&)>& edit) {
  auto d = test::llama_like_gguf();
  edit(d);
  return test::build_gguf(d).bytes;
}

// A catalogue model's config.json (its "_" provenance keys dropped), edited.
std::string catalogue_config_with(const std::string& model, const std::function<void(nlohmann::json&)>& edit) {
  auto c = nlohmann::json::parse(test::read_text(test::source_dir() / "models" / (model + ".json")));
  for (auto it = c.begin(); it != c.end();) it = it.key().rfind('_', 0) == 0 ? c.erase(it) : std::next(it);
  edit(c);
  return c.dump();
}

// A catalogue diffusion pipeline copied under sd/ (model_index.json and every component config,
// without source.json), with `key` of one component's config.json set to `value`.
std::vector<File> pipeline_files_with(const std::string& model, const std::string& component, const std::string& key,
                                      const nlohmann::json& value) {
  std::vector<File> files;
  const auto root = test::source_dir() / "models" / "diffusion" / model;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (!e.is_regular_file() || e.path().filename() == "source.json") continue;
    const std::string rel = std::filesystem::relative(e.path(), root).generic_string();
    std::string bytes = test::read_text(e.path());
    if (rel == component + "/config.json") {
      auto c = nlohmann::json::parse(bytes);
      c[key] = value;
      bytes = c.dump();
    }
    files.push_back({"sd/" + rel, bytes});
  }
  return files;
}

// The llama-like GGUF with the u32 key `key` set to `value`.
std::string gguf_with_u32(const std::string& key, std::uint32_t value) {
  return gguf_bytes([&](test::GgufDesc& d) {
    for (auto& kv : d.kvs)
      if (kv.key == key) kv = test::kv_u32(key, value);
  });
}

// The llama-like GGUF relabelled a pure Mamba-2 model (mamba2.cpp): no KV heads, ssm.* keys. Its
// attention tensors stay; the planner refuses the architecture before it reads them.
std::string mamba2_gguf() {
  return gguf_bytes([](test::GgufDesc& d) {
    for (auto& kv : d.kvs) {
      if (kv.key == "general.architecture") kv = test::kv_str(kv.key, "mamba2");
      if (kv.key.rfind("llama.", 0) == 0) kv.key = "mamba2." + kv.key.substr(6);
      if (kv.key == "mamba2.attention.head_count_kv") kv = test::kv_u32(kv.key, 0);
    }
    for (auto& [key, v] : std::vector<std::pair<std::string, std::uint32_t>>{
             {"conv_kernel", 4}, {"inner_size", 512}, {"state_size", 16}, {"time_step_rank", 8}, {"group_count", 1}})
      d.kvs.push_back(test::kv_u32("mamba2.ssm." + key, v));
  });
}

const std::vector<std::string> kPlan = {"plan", "--gpu", "h100-sxm-80", "--model"};
std::vector<std::string> plan_model(const std::string& model, std::vector<std::string> extra = {}) {
  auto a = kPlan;
  a.push_back(model);
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}
std::vector<std::string> plan_8b(std::vector<std::string> extra) { return plan_model("llama-3.1-8b", std::move(extra)); }

// `vramplan simulate` of Llama-3.1-8B on one H100 under vLLM, 8,192-token context, + `extra`.
std::vector<std::string> simulate_8b(std::vector<std::string> extra) {
  std::vector<std::string> args = {"simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "8192"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::vector<Row> rows() {
  using namespace std::string_literals;
  const std::string cfg = "<dir>/config.json";
  const auto config_row = [&](std::string input, std::string bytes, int code, std::string message) {
    return Row{std::move(input), plan_model(cfg), {{"config.json", std::move(bytes)}}, code, std::move(message)};
  };
  const auto gguf_row = [&](std::string input, std::string bytes, int code, std::string message) {
    return Row{std::move(input), plan_model("<dir>/m.gguf"), {{"m.gguf", std::move(bytes)}}, code, std::move(message)};
  };
  const auto st_row = [&](std::string input, std::string bytes, int code, std::string message) {
    return Row{std::move(input), plan_model("<dir>"),
               {{"config.json", tiny_set("num_hidden_layers", 2)}, {"model.safetensors", std::move(bytes)}},
               code, std::move(message)};
  };
  const std::string limits = " is above the plausibility limit ";
  return {
      // --- config.json values
      config_row("num_hidden_layers: 10000000", tiny_set("num_hidden_layers", 10'000'000), 3,
                 cfg + ": /num_hidden_layers: 10000000" + limits + "1024 for layers (largest public model: 126 (Llama-3.1-405B))"),
      Row{"inspect of torch_dtype: float7", {"inspect", "--model", cfg}, {{"config.json", tiny_set("torch_dtype", "float7")}}, 3,
          cfg + ": torch_dtype: unknown dtype 'float7' (float16, bfloat16, float32, or a format of data/quant_formats.json)"},
      config_row("torch_dtype: float7", tiny_set("torch_dtype", "float7"), 3,
                 cfg + ": torch_dtype: unknown dtype 'float7' (float16, bfloat16, float32, or a format of data/quant_formats.json)"),
      config_row("torch_dtype: int8", tiny_set("torch_dtype", "int8"), 3,
                 "<dir>/config.json: torch_dtype: 'int8' is not a model dtype an engine serves (float16, bfloat16, float32)"),
      config_row("max_position_embeddings: 0", tiny_set("max_position_embeddings", 0), 3,
                 "<dir>/config.json: /max_position_embeddings: must be greater than zero"),
      config_row("quantization_config: bitsandbytes 4-bit and 8-bit",
                 tiny_set("quantization_config", nlohmann::json{{"quant_method", "bitsandbytes"}, {"load_in_4bit", true},
                                                                {"load_in_8bit", true}}),
                 3, cfg + ": quantization_config: load_in_4bit and load_in_8bit are both true: bitsandbytes takes one"),
      config_row("quantization_config: fp8 weight_block_size [0, 0]",
                 tiny_set("quantization_config", nlohmann::json{{"quant_method", "fp8"}, {"weight_block_size", {0, 0}}}), 3,
                 cfg + ": quantization_config/weight_block_size: expected two positive integers such as [128, 128], got [0,0]"),
      config_row("quantization_config: modelopt quant_algo unknown",
                 tiny_set("quantization_config", nlohmann::json{{"quant_method", "modelopt"}, {"quant_algo", "bogus"}}), 4,
                 cfg + ": quantization_config quant_algo 'bogus' of modelopt is not modelled (FP8, NVFP4)"),
      config_row("quantization_config: gptq bits 0",
                 tiny_set("quantization_config", nlohmann::json{{"quant_method", "gptq"}, {"bits", 0}, {"group_size", 128}}), 3,
                 cfg + ": quantization_config: its fields describe 'gptq-0bit-g128', which is no weight scheme vramplan knows"),
      config_row("quantization_config: gptq group_size 0",
                 tiny_set("quantization_config", nlohmann::json{{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 0}}), 3,
                 cfg + ": quantization_config/group_size: must be -1 (per channel) or > 0, got 0"),
      config_row("hidden_size: 2^62", tiny_set("hidden_size", 1ull << 62), 3,
                 cfg + ": /hidden_size: 4611686018427387904" + limits + "131072 for hidden size (largest public model: 16384 (Llama-3.1-405B))"),
      config_row("vocab_size: 2^40", tiny_set("vocab_size", 1ull << 40), 3,
                 cfg + ": /vocab_size: 1099511627776" + limits + "4194304 for vocabulary (largest public model: 262208 (Gemma 3))"),
      config_row("intermediate_size: 10^7", tiny_set("intermediate_size", 10'000'000), 3,
                 cfg + ": /intermediate_size: 10000000" + limits + "1048576 for intermediate size (largest public model: 53248 (Llama-3.1-405B))"),
      config_row("num_attention_heads: 10^6", tiny_set("num_attention_heads", 1'000'000), 3,
                 cfg + ": /num_attention_heads: 1000000" + limits + "4096 for attention heads (largest public model: 128 (Llama-3.1-405B, DeepSeek-V3))"),
      config_row("max_position_embeddings: 10^12", tiny_set("max_position_embeddings", 1'000'000'000'000ull), 3,
                 cfg + ": /max_position_embeddings: 1000000000000" + limits + "134217728 for positions (largest public model: 10485760 (Llama 4 Scout))"),
      config_row("rope_scaling.factor: 1e300", tiny_set("rope_scaling", {{"rope_type", "linear"}, {"factor", 1e300}}), 3,
                 cfg + ": /rope_scaling/factor: must be in (0, 1024] (real configs stretch the context 2 to 40 times)"),
      config_row("rope_scaling: a string", tiny_set("rope_scaling", "big"), 3,
                 cfg + ": /rope_scaling: must be an object such as {\"rope_type\": \"yarn\", \"factor\": 4}"),
      config_row("rope_scaling.factor: -2", tiny_set("rope_scaling", {{"rope_type", "linear"}, {"factor", -2}}), 3,
                 cfg + ": /rope_scaling/factor: must be in (0, 1024] (real configs stretch the context 2 to 40 times)"),
      config_row("no num_hidden_layers", tiny_with([](nlohmann::json& c) { c.erase("num_hidden_layers"); }), 3,
                 cfg + ": /num_hidden_layers: required field is missing"),
      config_row("num_hidden_layers: 0", tiny_set("num_hidden_layers", 0), 3, cfg + ": /num_hidden_layers: must be greater than zero"),
      config_row("num_hidden_layers: -1", tiny_set("num_hidden_layers", -1), 3,
                 cfg + ": /num_hidden_layers: expected a non-negative integer, got -1"),
      config_row("num_hidden_layers: 2.5", tiny_set("num_hidden_layers", 2.5), 3,
                 cfg + ": /num_hidden_layers: expected a non-negative integer, got 2.5"),
      config_row("hidden_size: \"64\" (a string)", tiny_set("hidden_size", "64"), 3,
                 cfg + ": /hidden_size: expected a non-negative integer, got string"),
      config_row("num_key_value_heads: 3 with 4 heads", tiny_set("num_key_value_heads", 3), 3,
                 cfg + ": /num_key_value_heads: 3 does not divide num_attention_heads 4"),
      config_row("hidden_size: 1e400", tiny_raw("hidden_size", "1e400"), 3,
                 cfg + ": invalid JSON: [json.exception.out_of_range.406] number overflow parsing '1e400'"),
      config_row("hidden_size: NaN", tiny_raw("hidden_size", "NaN"), 3, cfg + ": invalid JSON at line 1, column 53"),
      config_row("object nested 100,000 deep", "{\"a\":" + std::string(100'000, '[') + std::string(100'000, ']') + "}", 3,
                 cfg + ": objects and arrays nested deeper than 64 levels (at byte 68)"),
      config_row("a JSON array, not an object", "[1, 2]", 3, cfg + ": /: expected a JSON object (an HF config.json)"),
      config_row("unknown architecture", tiny_set("architectures", {"FrobForCausalLM"}), 4,
                 cfg + ": architecture 'FrobForCausalLM' is not supported (supported: BertForMaskedLM, "
                       "BertForSequenceClassification, BertModel, CohereForCausalLM, DebertaV2ForSequenceClassification, "
                       "DebertaV2Model, DeciLMForCausalLM, DeepseekV2ForCausalLM, DeepseekV32ForCausalLM, "
                       "DeepseekV3ForCausalLM, Ernie4_5_MoeForCausalLM, FalconForCausalLM, FalconH1ForCausalLM, GPTBigCodeForCausalLM, GPTNeoXForCausalLM, Gemma2ForCausalLM, "
                       "Gemma3ForCausalLM, Gemma3ForConditionalGeneration, Gemma4ForCausalLM, Gemma4ForConditionalGeneration, GemmaForCausalLM, Glm4ForCausalLM, Glm4MoeForCausalLM, Glm4MoeLiteForCausalLM, GlmForCausalLM, "
                       "GlmMoeDsaForCausalLM, GptOssForCausalLM, GraniteForCausalLM, GraniteMoeHybridForCausalLM, JambaForCausalLM, KimiK25ForConditionalGeneration, KimiLinearForCausalLM, Llama4ForCausalLM, "
                       "Llama4ForConditionalGeneration, LlamaForCausalLM, LlavaForConditionalGeneration, "
                       "MiniMaxM2ForCausalLM, Mistral3ForConditionalGeneration, MistralForCausalLM, MixtralForCausalLM, "
                       "MllamaForConditionalGeneration, ModernBertForMaskedLM, "
                       "ModernBertModel, NemotronHForCausalLM, NomicBertModel, Phi3ForCausalLM, PhiForCausalLM, "
                       "Qwen2ForCausalLM, Qwen2MoeForCausalLM, Qwen2_5_VLForConditionalGeneration, Qwen3ForCausalLM, "
                       "Qwen3MoeForCausalLM, Qwen3NextForCausalLM, Qwen3VLForConditionalGeneration, Qwen3VLMoeForConditionalGeneration, Qwen3_5ForConditionalGeneration, "
                       "Qwen3_5MoeForConditionalGeneration, RWForCausalLM, "
                       "RobertaForMaskedLM, RobertaForSequenceClassification, RobertaModel, Step3p5ForCausalLM, XLMRobertaForMaskedLM, "
                       "XLMRobertaForSequenceClassification, XLMRobertaModel); "
                       "--assume-llama-like builds it as a Llama-style decoder"),
      // --- the path itself
      Row{"engine flag an encoder has no use for", plan_model("bge-m3", {"--engine", "vllm", "--kv-cache-dtype", "fp8"}), {}, 2,
          "--kv-cache-dtype does not apply to bge-m3 (encoder XLMRobertaModel: no KV cache, no generation) under vllm; flags "
          "that apply: --gpu-memory-utilization, --max-model-len, --max-num-seqs, --max-num-batched-tokens, --dtype, "
          "--enforce-eager"},
      Row{"encoder under an engine without a pooling runner", plan_model("bge-m3", {"--engine", "sglang"}), {}, 2,
          "--engine sglang: bge-m3 is an encoder (XLMRobertaModel); encoders are planned under hf (sentence-transformers), "
          "vllm (pooling runner) and tei"},
      Row{"a llama.cpp build it does not have",
          plan_model("llama-3.1-8b", {"--engine", "llamacpp", "--weights", "gguf:Q4_K_M", "--llamacpp-backend", "metal"}),
          {}, 4, "backend 'metal' is not a llamacpp build in data/compat/formats.json (cuda, hip, vulkan, cpu)"},
      Row{"a llama.cpp CUDA-graphs setting that is neither on nor off",
          plan_model("llama-3.1-8b", {"--engine", "llamacpp", "--weights", "gguf:Q4_K_M", "--llamacpp-cuda-graphs", "maybe"}),
          {}, 2, "--llamacpp-cuda-graphs: expected on or off, got 'maybe'"},
      Row{"another engine's flag",
          plan_model("llama-3.1-8b", {"--engine", "sglang", "--max-model-len", "4096"}), {}, 2,
          "vramplan plan: unrecognised option '--max-model-len'; --max-model-len is a flag of vllm, not of sglang; "
          "sglang's flag for the context length is --context-length (see 'vramplan plan --help')"},
      Row{"an engine's flag with underscores",
          plan_model("llama-3.1-8b", {"--engine", "sglang", "--context_length", "4096"}), {}, 2,
          "vramplan plan: unrecognised option '--context_length'; did you mean --context-length? (vramplan writes engine "
          "flags with dashes) (see 'vramplan plan --help')"},
      Row{"FIFO named *.gguf", plan_model("<dir>/m.gguf"), {{"m.gguf", "", File::Fifo}}, 5,
          "<dir>/m.gguf: is not a regular file (a FIFO, socket or device), refused"},
      Row{"directory whose config.json is a directory", plan_model("<dir>"), {{"config.json", "", File::Directory}}, 5,
          "<dir>/config.json: is a directory, expected a file"},
      Row{"directory without config.json", plan_model("<dir>"), {}, 3, "<dir>: directory has no config.json (a model needs one)"},
      Row{"missing file", plan_model("<dir>/absent.json"), {}, 5, "<dir>/absent.json: no such file or directory"},
      Row{"100,000-character model name", plan_model(std::string(100'000, 'x')), {}, 2,
          "--model: 100000 characters, longer than any path (4096)"},
      Row{"model name with terminal escapes", plan_model("\x1b[31mred\x1b[0m"), {}, 4,
          "unknown model '\\x1b[31mred\\x1b[0m'; 'vramplan models' lists the catalogue, or pass a config.json / checkpoint dir / .gguf"},
      // --- GGUF
      gguf_row("*.gguf without the GGUF magic", "{\"not\": \"gguf\"}", 3, "<dir>/m.gguf: magic: '{\"no' is not 'GGUF': not a GGUF file"),
      gguf_row("GGUF claiming 2^40 tensors", gguf_bytes([](test::GgufDesc& d) { d.n_tensors = 1ull << 40; }), 3,
               "<dir>/m.gguf: tensor count: 1099511627776 tensor infos need at least 33 bytes each, but only 966824 bytes follow (offset 24)"),
      gguf_row("GGUF head_count_kv above head_count", gguf_with_u32("llama.attention.head_count_kv", 8), 3,
               "<dir>/m.gguf: key 'llama.attention.head_count_kv': 8 KV heads do not divide the 4 query heads of layer 0"),
      gguf_row("GGUF expert_group_count not dividing expert_count",
               gguf_bytes([](test::GgufDesc& d) {
                 for (const auto& [key, value] : {std::pair{"expert_count", 8u}, {"expert_used_count", 2u},
                                                  {"expert_group_count", 3u}, {"expert_group_used_count", 1u}})
                   d.kvs.push_back(test::kv_u32("llama."s + key, value));
               }),
               3,
               "<dir>/m.gguf: key 'llama.expert_group_count': 3 groups of 8 experts with 1 used: llama.cpp needs "
               "groups dividing the experts and 0 < used < groups"),
      gguf_row("GGUF n_deepstack_layers above block_count",
               gguf_bytes([](test::GgufDesc& d) { d.kvs.push_back(test::kv_u32("llama.n_deepstack_layers", 9)); }), 3,
               "<dir>/m.gguf: key 'llama.n_deepstack_layers': 9 is more than the 2 layers"),
      config_row("n_group not dividing n_routed_experts",
                 catalogue_config_with("deepseek-v3", [](nlohmann::json& c) { c["n_group"] = 7; }), 3,
                 cfg + ": /n_group: 7 does not divide n_routed_experts 256"),
      Row{"topk_group equal to n_group under llama.cpp",
          {"plan", "--gpu", "h100-sxm-80", "--engine", "llamacpp", "--weights", "gguf:Q4_K_M", "--model", "<dir>"},
          {{"config.json", catalogue_config_with("deepseek-v3", [](nlohmann::json& c) {
              c["topk_group"] = 8;
              c["num_hidden_layers"] = 4;
            })}},
          2, "--engine llamacpp: llama.cpp loads a grouped router only with topk_group below n_group (here 8 of 8)"},
      gguf_row("GGUF head_count 0 without recurrent layers", gguf_with_u32("llama.attention.head_count", 0), 3,
               "<dir>/m.gguf: key 'llama.attention.head_count': is 0 on every layer of a model without recurrent layers "
               "(no ssm.* / wkv.* keys)"),
      gguf_row("GGUF without tensors", gguf_bytes([](test::GgufDesc& d) { d.tensors.clear(); }), 3,
               "<dir>/m.gguf: tensor count: 0 tensors: a vocabulary-only GGUF has no weights to plan"),
      gguf_row("GGUF version 1", gguf_bytes([](test::GgufDesc& d) { d.version = 1; }), 3,
               "<dir>/m.gguf: version: GGUF version 1 is not supported (it used 32-bit counts; re-convert the model with a current llama.cpp)"),
      gguf_row("GGUF cut inside its header", gguf_bytes([](test::GgufDesc&) {}).substr(0, 200), 3,
               "<dir>/m.gguf: metadata key/value count: 14 key/values need at least 14 bytes each, but only 176 bytes follow (offset 24)"),
      gguf_row("GGUF string holding NUL", gguf_bytes([](test::GgufDesc& d) { d.kvs[0] = test::kv_str("general.architecture", "lla\0ma"s); }), 3,
               "<dir>/m.gguf: key 'lla\\x00ma.embedding_length': missing (required to describe the model)"),
      gguf_row("GGUF block_count 10^6", gguf_bytes([](test::GgufDesc& d) { d.kvs[4] = test::kv_u32("llama.block_count", 1'000'000); }), 3,
               "<dir>/m.gguf: key 'llama.block_count': 1000000" + limits + "1024 for layers (largest public model: 126 (Llama-3.1-405B))"),
      gguf_row("GGUF general.architecture llama.cpp does not know",
               gguf_bytes([](test::GgufDesc& d) {
                 for (auto& kv : d.kvs)
                   if (kv.key.rfind("llama.", 0) == 0) kv.key = "frobnicator." + kv.key.substr(6);
                 d.kvs[0] = test::kv_str("general.architecture", "frobnicator");
               }),
               4,
               "<dir>/m.gguf: key 'general.architecture': 'frobnicator' is not an architecture llama.cpp loads "
               "(src/llama-arch.cpp LLM_ARCH_NAMES; llama.cpp refuses the file: \"unknown model architecture\"), so no "
               "graph or buffer of it can be planned"),
      gguf_row("GGUF without the tensors of a layer",
               gguf_bytes([](test::GgufDesc& d) {
                 std::erase_if(d.tensors, [](const test::GgufTensorDesc& t) { return t.name.rfind("blk.1.", 0) == 0; });
               }),
               3,
               "<dir>/m.gguf: key 'llama.block_count': 2 blocks, but no tensor blk.1.* is in the file (llama.cpp refuses "
               "it: \"missing tensor 'blk.1.attn_norm.weight'\" or the like)"),
      gguf_row("GGUF attention tensor of another shape than the metadata's",
               gguf_bytes([](test::GgufDesc& d) {
                 for (auto& t : d.tensors)
                   if (t.name == "blk.0.attn_q.weight") t = test::GgufTensorDesc(t.name, {256, 128}, test::ggml_type::Q4_K, 128 * 144);
               }),
               3,
               "<dir>/m.gguf: tensor 'blk.0.attn_q.weight': shape [256, 128] is not the [256, 256] the metadata gives "
               "(embedding_length 256, head_count 4 x key_length 64); llama.cpp refuses it (\"tensor has wrong shape\")"),
      // --- safetensors
      st_row("safetensors header longer than the file", test::build_safetensors_raw("{}", 0, 1000), 3,
             "<dir>/model.safetensors: header length: 1000 bytes but only 2 bytes follow (file size 10)"),
      st_row("safetensors header length 2^40", test::build_safetensors_raw("{}", 0, 1ull << 40), 3,
             "<dir>/model.safetensors: header length: 1099511627776 bytes exceeds the limit of 104857600 bytes"),
      // 60 bytes of valid JSON, 3 NULs and 5 more bytes: nlohmann would stop at byte 60.
      st_row("safetensors header holding a NUL",
             test::build_safetensors_raw(std::string(R"({"w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}})") +
                                             std::string(3, '\0') + "\"open",
                                         1),
             3, "<dir>/model.safetensors: header: byte 60 of the 68-byte header is NUL (a safetensors header is JSON padded with spaces)"),
      st_row("safetensors tensor listed twice",
             test::build_safetensors_raw(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8),
             3, "<dir>/model.safetensors: header: tensor 'w' is listed twice"),
      st_row("safetensors sub-byte dtype F4",
             test::build_safetensors_raw(R"({"w":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}})", 1), 3,
             "<dir>/model.safetensors: /w/dtype: 'F4' packs 2 elements in 1 byte(s): sub-byte safetensors dtypes are not "
             "read (packed FP4 / FP6 checkpoints store U8 with their scales)"),
      Row{"model.safetensors a directory", plan_model("<dir>"),
          {{"config.json", tiny_set("num_hidden_layers", 2)}, {"model.safetensors", "", File::Directory}}, 5,
          "<dir>/model.safetensors: is a directory, expected a file"},
      Row{"model.safetensors a symbolic link loop", plan_model("<dir>"),
          {{"config.json", tiny_set("num_hidden_layers", 2)}, {"model.safetensors", "model.safetensors", File::Symlink}}, 5,
          "<dir>/model.safetensors: a loop of symbolic links"},
      Row{"--model a loop of symbolic links", plan_model("<dir>/m.gguf"), {{"m.gguf", "m.gguf", File::Symlink}}, 5,
          "<dir>/m.gguf: a loop of symbolic links"},
      Row{"--trace a loop of symbolic links", simulate_8b({"--trace", "<dir>/t.jsonl"}), {{"t.jsonl", "t.jsonl", File::Symlink}}, 5,
          "trace <dir>/t.jsonl: a loop of symbolic links"},
      Row{"reconcile --log a symbolic link to nothing", {"reconcile", "--log", "<dir>/x.log"},
          {{"x.log", "gone.log", File::Symlink}}, 5, "<dir>/x.log: a symbolic link to nothing (its target does not exist)"},
      st_row("safetensors unknown dtype",
             test::build_safetensors_raw(R"({"w":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}})", 4), 3,
             "<dir>/model.safetensors: /w/dtype: unknown dtype 'F99' (not in data/quant_formats.json)"),
      st_row("safetensors tensors overlapping",
             test::build_safetensors_raw(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8),
             3, "<dir>/model.safetensors: tensor 'b': bytes [4, 8) overlap tensor 'a' [0, 8)"),
      st_row("safetensors missing a tensor the config describes",
             test::build_safetensors({{"model.embed_tokens.weight", "BF16", {256, 64}, 32768}}), 3,
             "<dir>: tensor 'model.layers.0.input_layernorm.weight' of config.json is in no safetensors file (20 tensors "
             "missing); vLLM refuses such a checkpoint (\"weights were not initialized from checkpoint\"); 'vramplan "
             "inspect' lists what the files hold"),
      st_row("safetensors tensor of another size than the config's",
             [] {
               // tiny-llama's 21 tensors in bf16, the embedding stored 4096 rows long instead of 256.
               std::vector<test::SafetensorsEntry> e{{"model.embed_tokens.weight", "BF16", {4096, 64}, 4096 * 64 * 2},
                                                     {"model.norm.weight", "BF16", {64}, 128},
                                                     {"lm_head.weight", "BF16", {256, 64}, 256 * 64 * 2}};
               struct Module {
                 const char* name;
                 std::uint64_t out, in;  // in 0: a norm, one dimension
               };
               constexpr Module kLayer[] = {{"input_layernorm", 64, 0}, {"post_attention_layernorm", 64, 0},
                                            {"self_attn.q_proj", 64, 64}, {"self_attn.k_proj", 32, 64},
                                            {"self_attn.v_proj", 32, 64}, {"self_attn.o_proj", 64, 64},
                                            {"mlp.gate_proj", 128, 64}, {"mlp.up_proj", 128, 64}, {"mlp.down_proj", 64, 128}};
               for (int l = 0; l < 2; ++l)
                 for (const Module& m : kLayer)
                   e.emplace_back("model.layers." + std::to_string(l) + "." + m.name + ".weight", "BF16",
                                  m.in ? std::vector<std::uint64_t>{m.out, m.in} : std::vector<std::uint64_t>{m.out},
                                  (m.in ? m.out * m.in : m.out) * 2);
               return test::build_safetensors(e);
             }(),
             3,
             "<dir>: tensor 'model.embed_tokens.weight': the safetensors files hold 262144 elements for "
             "'model.embed_tokens.weight', config.json gives [256, 64] = 16384; vLLM refuses such a checkpoint (its weight "
             "loader asserts param.size() == loaded_weight.size())"),
      Row{"safetensors index naming a shard that is absent", plan_model("<dir>"),
          {{"config.json", tiny_set("num_hidden_layers", 2)},
           {"model.safetensors.index.json", R"({"weight_map": {"model.norm.weight": "model-00002-of-00002.safetensors"}})"}},
          5, "<dir>/model-00002-of-00002.safetensors: no such file (a shard model.safetensors.index.json lists)"},
      Row{"safetensors index shard name holding NUL", plan_model("<dir>"),
          {{"config.json", tiny_set("num_hidden_layers", 2)},
           {"model.safetensors.index.json", "{\"weight_map\": {\"model.norm.weight\": \"m.safetensors\\u0000x\"}}"}},
          3,
          "<dir>/model.safetensors.index.json: /weight_map/model.norm.weight: 'm.safetensors\\x00x' is not a file name in "
          "the checkpoint directory"},
      // --- split GGUF (llama.cpp gguf-split)
      Row{"later split of a split GGUF", plan_model("<dir>/m-00002-of-00002.gguf"),
          {{"m-00002-of-00002.gguf", test::build_gguf(test::split_gguf(test::llama_like_gguf(), {0, 10})[1]).bytes}}, 3,
          "<dir>/m-00002-of-00002.gguf: key 'split.no': this is split 2 of 2; pass the first split "
          "(...-00001-of-00002.gguf), as llama.cpp requires"},
      Row{"split GGUF with a split missing", plan_model("<dir>/m-00001-of-00002.gguf"),
          {{"m-00001-of-00002.gguf", test::build_gguf(test::split_gguf(test::llama_like_gguf(), {0, 10})[0]).bytes}}, 5,
          "<dir>/m-00002-of-00002.gguf: no such file (split 2 of 2 of <dir>/m-00001-of-00002.gguf)"},
      // --- a bare name is a catalogue id, even beside a directory of that name
      Row{"bare name of a checkpoint in the working directory", plan_model("ckpt"),
          {{"ckpt/config.json", test::read_text(test::fixture("hf/tiny-llama/config.json"))}}, 4,
          "unknown model 'ckpt'; 'vramplan models' lists the catalogue, or pass a config.json / checkpoint dir / .gguf; "
          "a bare name is a catalogue id: to read 'ckpt' in the working directory, pass ./ckpt",
          true},
      Row{"bare .safetensors file as --model", plan_model("<dir>/x.safetensors"),
          {{"x.safetensors", test::build_safetensors({{"a", "BF16", {2}, 4}})}}, 3,
          "<dir>/x.safetensors: is a safetensors file; pass the checkpoint directory that holds it and its config.json"},
      // --- options
      Row{"--context 10^15", plan_8b({"--context", "1000000000000000"}), {}, 2, "--context: must be in 1..134217728, got 1000000000000000"},
      Row{"--context -1", plan_8b({"--context", "-1"}), {}, 2, "--context: must not be negative, got '-1'"},
      Row{"--context 0", plan_8b({"--context", "0"}), {}, 2, "--context: must be in 1..134217728, got 0"},
      Row{"--context 1e400", plan_8b({"--context", "1e400"}), {}, 2,
          "vramplan plan: the argument ('1e400') for option '--context' is invalid (see 'vramplan plan --help')"},
      Row{"--context NaN", plan_8b({"--context", "NaN"}), {}, 2,
          "vramplan plan: the argument ('NaN') for option '--context' is invalid (see 'vramplan plan --help')"},
      Row{"sweep --mode train without a run length", {"sweep", "--mode", "train", "--model", "llama-3.2-1b", "--gpu", "h100-sxm-80"}, {}, 2,
          "sweep --mode train ranks layouts by the cost of a run: give --tokens N or --epochs E --dataset-tokens N"},
      Row{"train --global-batch disagreeing with --grad-accum",
          {"train", "--model", "llama-3.2-1b", "--gpu", "rtx-4090", "--global-batch", "8", "--grad-accum", "3"}, {}, 2,
          "--grad-accum 3 and --global-batch 8 disagree (global batch = micro-batch 1 x accumulation 8 x data-parallel 1 = 8 "
          "sequences): give one of them"},
      Row{"--batch 0", plan_8b({"--batch", "0"}), {}, 2, "--batch: must be in 1..1048576, got 0"},
      Row{"--batch -3", plan_8b({"--batch", "-3"}), {}, 2, "--batch: must not be negative, got '-3'"},
      Row{"--gpu-memory-utilization 0", plan_8b({"--gpu-memory-utilization", "0"}), {}, 2, "--gpu-memory-utilization must be in (0, 1]"},
      Row{"--gpu-memory-utilization -0.5", plan_8b({"--gpu-memory-utilization", "-0.5"}), {}, 2, "--gpu-memory-utilization must be in (0, 1]"},
      Row{"--gpu-memory-utilization NaN", plan_8b({"--gpu-memory-utilization", "nan"}), {}, 2,
          "--gpu-memory-utilization: expected a number, got 'nan'"},
      Row{"--gpu-memory-utilization 1e400", plan_8b({"--gpu-memory-utilization", "1e400"}), {}, 2,
          "--gpu-memory-utilization: expected a number, got '1e400'"},
      Row{"--max-model-len 0", plan_8b({"--max-model-len", "0"}), {}, 2, "--max-model-len: must be in 1..134217728, got 0"},
      Row{"--max-model-len 10^15", plan_8b({"--max-model-len", "1000000000000000"}), {}, 2,
          "--max-model-len: must be in 1..134217728, got 1000000000000000"},
      Row{"--gpu-memory -5GB", plan_8b({"--gpu-memory", "-5GB"}), {}, 2,
          "--gpu-memory: cannot read size '-5GB': no number (examples: 80GB, 79.22GiB, 81559MiB, 48e9)"},
      Row{"--gpu-memory 1e400GB", plan_8b({"--gpu-memory", "1e400GB"}), {}, 2, "--gpu-memory: size must be a finite, non-negative number"},
      Row{"TP not dividing the attention heads", plan_8b({"-tp", "3"}), {}, 2,
          "TP 3 is invalid for llama-3.1-8b: attention heads (32) must be divisible by TP 3"},
      Row{"GPU smaller than the weights and one KV block (check)", {"check", "--model", "llama-3.1-8b", "--gpu", "custom:1GiB"}, {}, 1,
          "DOES NOT FIT custom:1GiB x1: weights alone need 14.99 GiB per GPU at TP 1 (the GPU has 1.00 GiB); no layout of "
          "up to 8 x custom:1GiB fits (--max-gpus) (vLLM: No available memory for the cache blocks (weights + activation "
          "peak + non-torch = 15.79 GiB exceed 0.90 GiB = total x gpu_memory_utilization). Try increasing "
          "`gpu_memory_utilization` when initializing the engine.)"},
      Row{"--headroom 150%", {"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--headroom", "150%"}, {}, 2,
          "--headroom must be in [0%, 100%)"},
      // --- flags of the diffusion pipelines, simulate --cold-start and embedding jobs
      Row{"diffusion: --frames for an image pipeline", {"plan", "--model", "sdxl-base-1.0", "--gpu", "l4", "--frames", "16"},
          {}, 2, "--frames applies to video pipelines (CogVideoXPipeline, WanPipeline); StableDiffusionXLPipeline makes images"},
      Row{"diffusion: --frames 50 (CogVideoX)", {"plan", "--model", "cogvideox-2b", "--gpu", "h100-sxm-80", "--frames", "50"},
          {}, 2, "--frames 50: CogVideoXPipeline needs 1 + a multiple of 4 frames (the VAE's temporal_compression_ratio)"},
      Row{"diffusion: --frames -1", {"plan", "--model", "wan2.1-t2v-1.3b", "--gpu", "h100-sxm-80", "--frames", "-1"},
          {}, 2, "--frames: must not be negative, got '-1'"},
      Row{"diffusion: --steps -1", {"plan", "--model", "sdxl-base-1.0", "--gpu", "l4", "--steps", "-1"},
          {}, 2, "--steps: must not be negative, got '-1'"},
      Row{"diffusion: --guidance NaN", {"plan", "--model", "wan2.1-t2v-1.3b", "--gpu", "h100-sxm-80", "--guidance", "nan"},
          {}, 2, "--guidance must be a finite number"},
      Row{"simulate --cold-start under another engine",
          {"simulate", "--model", "mixtral-8x7b", "--gpu", "h100-sxm-80", "--engine", "sglang", "--tp-size", "2", "--rate",
           "5", "--requests", "20", "--cold-start"},
          {}, 2, "simulate: --cold-start is modelled for --engine vllm only (docs/simulator.md#cold-start: what sglang "
                 "compiles at first use is not)"},
      Row{"simulate --cold-start with a capacity search",
          {"simulate", "--model", "mixtral-8x7b", "--gpu", "h100-sxm-80", "--tensor-parallel-size", "2", "--rate", "5",
           "--requests", "20", "--cold-start", "--slo", "p99_ttft<=1s", "--find-max-rate"},
          {}, 2, "--cold-start applies to one run of a freshly started server, not to --find-max-rate, --target-rate or --workers"},
      // --- simulate: workloads that would run without end, write without bound or be ignored
      Row{"simulate --requests -1", simulate_8b({"--rate", "5", "--requests", "-1"}), {}, 2,
          "--requests: must not be negative, got '-1'"},
      Row{"simulate --rate below one request in 11.6 days", simulate_8b({"--rate", "4.9e-324", "--requests", "10"}), {}, 2,
          "--rate: must be at least 1e-06 requests per second, got '4.9e-324'"},
      Row{"simulate --sample-every below a millisecond",
          simulate_8b({"--rate", "5", "--requests", "10", "--timeline", "<dir>/t.csv", "--sample-every", "1e-9"}), {}, 2,
          "--sample-every: must be at least 0.001 seconds"},
      Row{"simulate --sample-every without --timeline", simulate_8b({"--rate", "5", "--requests", "10", "--sample-every", "2"}),
          {}, 2, "--sample-every: spaces the samples of --timeline FILE, which is not given"},
      Row{"simulate --timeline of no known format", simulate_8b({"--rate", "5", "--requests", "10", "--timeline", "<dir>/t.txt"}),
          {}, 2, "--timeline: '<dir>/t.txt' must end in .csv or .json (the format)"},
      Row{"simulate --arrivals without a finite --rate", simulate_8b({"--concurrency", "4", "--requests", "10", "--arrivals", "constant"}),
          {}, 2, "--arrivals: spaces the arrivals of a finite --rate R; without one every request is ready at once"},
      Row{"simulate --batch on a serving engine", simulate_8b({"--rate", "1", "--requests", "10", "--batch", "4"}), {}, 2,
          "--batch: a static batch is HF transformers' generate() (--engine hf); vllm batches continuously, up to --max-num-seqs"},
      Row{"simulate --trace with --rate", simulate_8b({"--trace", "<dir>/t.jsonl", "--rate", "5"}),
          {{"t.jsonl", "{\"arrival_s\": 0, \"input_tokens\": 10, \"output_tokens\": 5}\n"}}, 2,
          "--rate: a --trace sets arrivals and lengths itself"},
      Row{"simulate --trace a directory", simulate_8b({"--trace", "<dir>/d"}), {{"d", "", File::Directory}}, 5,
          "trace <dir>/d: is a directory, expected a file"},
      Row{"simulate --trace - with nothing on standard input", simulate_8b({"--trace", "-"}), {}, 3,
          "stdin: empty trace: no requests"},
      Row{"simulate --trace an empty file", simulate_8b({"--trace", "<dir>/e.jsonl"}), {{"e.jsonl", "\n\n"}}, 3,
          "<dir>/e.jsonl: empty trace: no requests"},
      Row{"simulate --probe-requests 100000000",
          simulate_8b({"--rate", "5", "--requests", "10", "--slo", "p99_ttft<=2s", "--find-max-rate", "--probe-requests", "100000000"}),
          {}, 2, "--probe-requests: at most 1000000 (each probe simulates that many requests)"},
      Row{"simulate --workers above --requests", simulate_8b({"--rate", "inf", "--requests", "10", "--workers", "11"}), {}, 2,
          "--workers: at most 10 (one request per worker at the least, and at most 1000 workers)"},
      Row{"simulate an embedding model", {"simulate", "--model", "bge-m3", "--gpu", "h100-sxm-80", "--rate", "5", "--requests", "10"},
          {}, 2, "simulate: no step-time model for this configuration: decode / TTFT do not apply to a pooling model "
                 "(XLMRobertaModel); its throughput in inputs/s is in the plan's notes"},
      Row{"simulate sglang --context-length 1",
          {"simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "sglang", "--context-length", "1", "--rate",
           "5", "--requests", "10"},
          {}, 2, "--context-length: must be at least 2 (SGLang serves requests whose prompt + output tokens stay below it), got 1"},
      Row{"simulate --requests above 10,000,000", simulate_8b({"--rate", "5", "--requests", "20000000"}), {}, 2,
          "--requests: at most 10000000, got 20000000"},
      Row{"simulate --router without --target-rate", simulate_8b({"--rate", "5", "--requests", "10", "--router", "round-robin"}),
          {}, 2, "--router: the router in front of --target-rate's replicas, which is not given"},
      Row{"simulate --margin without --workers", simulate_8b({"--rate", "inf", "--requests", "10", "--margin", "2h"}), {}, 2,
          "--margin: time added to the offline job of --workers K, which is not given"},
      Row{"simulate --periods without --target-rate or --workers", simulate_8b({"--rate", "5", "--requests", "10", "--periods", "7d"}),
          {}, 2, "--periods: prices the replicas of --target-rate or the offline job of --workers, neither given"},
      Row{"simulate --prices without --target-rate or --workers",
          simulate_8b({"--rate", "5", "--requests", "10", "--prices", "<dir>/p.json"}), {{"p.json", "{}"}}, 2,
          "--prices: prices the replicas of --target-rate or the offline job of --workers, neither given"},
      Row{"simulate --probe-requests without a capacity search", simulate_8b({"--rate", "5", "--requests", "10", "--probe-requests", "500"}),
          {}, 2, "--probe-requests: the requests of each probe of --find-max-rate or --target-rate, neither given"},
      Row{"simulate --margin -1h", simulate_8b({"--rate", "inf", "--requests", "10", "--workers", "2", "--margin=-1h"}), {}, 2,
          "--margin: expected a duration >= 0 such as 0, 600, 600s, 10m, 2h or 1.5d, got '-1h'"},
      Row{"simulate --rate inf --requests above 1,000,000", simulate_8b({"--rate", "inf", "--requests", "2000000"}), {}, 2,
          "--requests: --rate inf queues every request at once: at most 1000000 (split a larger job with --workers, or give "
          "--concurrency C), got 2000000"},
      Row{"sweep --tp -1", {"sweep", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--tp", "-1"}, {}, 2,
          "--tp: expected a comma-separated list of whole numbers in 1..1048576, got '-1'"},
      Row{"sweep --headroom 150%", {"sweep", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--headroom", "150%"}, {}, 2,
          "--headroom must be in [0%, 100%)"},
      Row{"check trtllm --max-batch-size 0", {"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "trtllm",
                                              "--max-batch-size", "0", "--max-seq-len", "8192"},
          {}, 2, "--max-batch-size must be >= 1"},
      Row{"plan sglang --max-running-requests 0", plan_8b({"--engine", "sglang", "--max-running-requests", "0"}), {}, 2,
          "--max-running-requests must be >= 1"},
      Row{"plan sglang --ep 3 at --tp 8",
          {"plan", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm-80", "--engine", "sglang", "--tp", "8", "--ep", "3"}, {}, 2,
          "--ep-size 3 must divide --tp-size 8 (SGLang splits each expert over tp / ep ranks: parallel_state.py "
          "initialize_model_parallel)"},
      Row{"plan sglang --dp 2 without DP attention",
          {"plan", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm-80", "--engine", "sglang", "--tp", "4", "--dp", "2"}, {}, 2,
          "--dp-size 2 without --enable-dp-attention starts 2 separate servers of --tp-size GPUs each "
          "(managers/data_parallel_controller.py): plan one with --replicas 2"},
      Row{"simulate --node-gpus 0",
          {"simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--node-gpus", "0", "--rate", "1",
           "--requests", "10"},
          {}, 2, "--node-gpus: GPUs per host must be in 1..1024, got 0"},
      Row{"check --network-gbit 0",
          {"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--network-gbit", "0"}, {}, 2,
          "--network-gbit: the network per GPU between hosts must be in (0, 100000] Gb/s, got 0"},
      Row{"plan --node-gpus on a MIG slice",
          {"plan", "--model", "llama-3.1-8b", "--gpu", "a100-sxm-80/3g.40gb", "--node-gpus", "8"}, {}, 2,
          "--node-gpus: 'a100-sxm-80/3g.40gb' is a MIG slice, one card: it never spans hosts"},
      Row{"train --epochs x --dataset-tokens past 1e18",
          {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--epochs", "1e12", "--dataset-tokens", "1B"}, {}, 2,
          "--epochs x --dataset-tokens: at most 1e18 tokens, got 1e+21"},
      Row{"train --lora-rank above the hidden size",
          {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--method", "lora", "--lora-rank", "99999999999"}, {}, 2,
          "--lora-rank 99999999999 exceeds the model's hidden size 4096 (a LoRA update's rank is at most min(d_in, d_out))"},
      Row{"plan llamacpp of a recurrent GGUF whose graph is not transcribed (mamba2)",
          plan_model("<dir>/m.gguf", {"--engine", "llamacpp"}), {{"m.gguf", mamba2_gguf()}}, 2,
          "--engine llamacpp: tiny-llama has recurrent (Mamba / linear-attention) layers, whose llama.cpp buffers "
          "vramplan does not model; plan it under vllm or sglang"},
      Row{"plan llamacpp of Llama-3.2-Vision (mllama)",
          plan_model("llama-3.2-11b-vision", {"--engine", "llamacpp", "--weights", "gguf:Q4_K_M"}), {}, 2,
          "--engine llamacpp: llama-3.2-11b-vision (MllamaForConditionalGeneration) has no llama.cpp conversion or "
          "builder (its cross-attention layers); plan it under vllm or hf"},
      Row{"plan llamacpp of an encoder GGUF",
          plan_model("<dir>/m.gguf", {"--engine", "llamacpp"}),
          {{"m.gguf", gguf_bytes([](test::GgufDesc& d) {
              for (auto& kv : d.kvs) {
                if (kv.key == "general.architecture") kv = test::kv_str("general.architecture", "nomic-bert");
                else if (kv.key.rfind("llama.", 0) == 0) kv.key = "nomic-bert." + kv.key.substr(6);
              }
            })}},
          2, "--engine llamacpp: tiny-llama (GGUF architecture 'nomic-bert') keeps no KV cache in llama.cpp (an encoder or "
             "diffusion model: llama_model::create_memory builds none), and its non-causal compute graph is not modelled"},
      Row{"plan --format markdown", plan_8b({"--format", "markdown"}), {}, 2,
          "--format markdown: this command writes a table or json (--format table|json)"},
      Row{"sweep --seed without --rate", {"sweep", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--seed", "3"}, {}, 2,
          "--seed applies to the simulated sweep: add --rate R --slo T"},
      Row{"check --max-gpus without --limits", {"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-gpus", "4"}, {}, 2,
          "--max-gpus applies to the limits: add --limits"},
      Row{"trial --compare a directory", {"trial", "--compare", "<dir>/d"}, {{"d", "", File::Directory}}, 5,
          "trial --compare <dir>/d: is a directory, expected a file"},
      Row{"inspect --model ''", {"inspect", "--model", ""}, {}, 2,
          "vramplan inspect: --model is required (see 'vramplan models')"},
      Row{"plan --emit-rehearsal ''", plan_8b({"--emit-rehearsal", ""}), {}, 2,
          "--emit-rehearsal: give the file to write"},
      Row{"sweep --mig beside --gpu", {"sweep", "--model", "llama-3.1-8b", "--gpu", "a100-sxm-80", "--mig"}, {}, 2,
          "--mig and --min-memory choose among the catalogue's GPUs: they apply without --gpu"},
      Row{"gpus --min-memory without a unit", {"gpus", "--min-memory", "80"}, {}, 2,
          "--min-memory '80' is 80 bytes: give a unit, e.g. 80GB or 79.19GiB"},
      Row{"sweep --min-memory without a unit", {"sweep", "--model", "llama-3.1-8b", "--min-memory", "48"}, {}, 2,
          "--min-memory '48' is 48 bytes: give a unit, e.g. 80GB or 79.19GiB"},
      Row{"simulate --timeout above 1e9 seconds", simulate_8b({"--rate", "5", "--requests", "10", "--timeout", "18446744073709551616"}), {}, 2,
          "--timeout: at most 1e9 seconds (31.7 years), got '18446744073709551616'"},
      Row{"diffusion: --max-sequence-length 0", {"plan", "--model", "flux.1-dev", "--gpu", "h100-sxm-80", "--max-sequence-length", "0"}, {}, 2,
          "--max-sequence-length: 1 to 65536 tokens, got 0"},
      Row{"plan --prompt-len 0", plan_8b({"--prompt-len", "0"}), {}, 2, "--prompt-len must be >= 1"},
      Row{"trial --batches -1", {"trial", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--batches", "-1"}, {}, 2,
          "--batches: expected a comma-separated list of whole numbers in 1..1048576, got '-1'"},
      Row{"embedding job: --documents -1", plan_model("bge-m3", {"--engine", "hf", "--documents", "-1"}),
          {}, 2, "--documents: must not be negative, got '-1'"},
      Row{"embedding job: --documents -1 --keep-embeddings-on-gpu",
          plan_model("bge-m3", {"--engine", "hf", "--documents", "-1", "--keep-embeddings-on-gpu"}), {}, 2,
          "--documents: must not be negative, got '-1'"},
      // --- other input files
      Row{"calibration file with the wrong schema", plan_8b({"--calibration", "<dir>/cal.json"}),
          {{"cal.json", R"({"schema": "vramplan.tenants/1"})"}}, 3,
          "<dir>/cal.json: /schema: expected \"vramplan.calibration/1\", got \"vramplan.tenants/1\""},
      Row{"check --tenant with a key given twice",
          {"check", "--gpu", "h100-sxm-80", "--tenant", "model=llama-3.2-1b,gpu-memory-utilization=0.4,gpu-memory-utilization=0.9",
           "--tenant", "model=llama-3.2-1b,gpu-memory-utilization=0.4"},
          {}, 2, "--tenant 'model=llama-3.2-1b,gpu-memory-utilization=0.4,gpu-memory-utilization=0.9': gpu-memory-utilization is given twice"},
      Row{"tenants file with the wrong schema", {"check", "--gpu", "h100-sxm-80", "--tenants", "<dir>/t.json"},
          {{"t.json", R"({"schema": "vramplan.calibration/1", "tenants": []})"}}, 3, "<dir>/t.json: /schema: expected \"vramplan.tenants/1\""},
      Row{"tenants file: tenant without a model", {"check", "--gpu", "h100-sxm-80", "--tenants", "<dir>/t.json"},
          {{"t.json", R"({"schema": "vramplan.tenants/1", "tenants": [{"engine": "vllm"}]})"}}, 3,
          "<dir>/t.json: /tenants/0/model: required field is missing"},
      Row{"reconcile: log of an unknown format", {"reconcile", "--log", "<dir>/x.log"},
          {{"x.log", "\nStarting server on port 8080\n"}}, 7,
          "<dir>/x.log:2: not a line of a vLLM, SGLang, llama.cpp, ollama or TensorRT-LLM start-up log (the formats reconcile reads): 'Starting server on port 8080'"},
      Row{"reconcile: vLLM log without start-up figures", {"reconcile", "--log", "<dir>/x.log"},
          {{"x.log", "INFO 04-22 00:03:36 [config/model.py:549] Resolved architecture: LlamaForCausalLM\n"}}, 7,
          "<dir>/x.log: no recognised start-up lines (vLLM log lines, but none of 'Model loading took', 'Memory profiling "
          "takes', 'Available KV cache memory', 'GPU KV cache size', 'Graph capturing finished', 'Loading model weights took', 'Memory profiling results', '# GPU blocks')"},
      Row{"reconcile: unreadable figure", {"reconcile", "--log", "<dir>/x.log"},
          {{"x.log", "INFO 04-22 00:04:20 [gpu_worker.py:436] Available KV cache memory: 1e999 GiB\n"}}, 3,
          "<dir>/x.log:1: Available KV cache memory: cannot read '1e999 GiB'"},
      Row{"reconcile: --engine-arg without a value", {"reconcile", "--log", "<dir>/x.log", "--engine-arg", "max-batch-size"},
          {{"x.log", "[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: 631\n"}}, 2,
          "reconcile: --engine-arg expects KEY=VALUE (an engine flag without its dashes), got 'max-batch-size'"},
      Row{"reconcile: --update-calibration on a TensorRT-LLM log without a deployment figure",
          {"reconcile", "--log", "<dir>/x.log", "--model", "llama-2-7b", "--gpu", "h100-sxm-80", "--engine", "trtllm",
           "--update-calibration", "<dir>/c.json"},
          {{"x.log", "[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: 4060\n"}}, 2,
          "<dir>/x.log: --update-calibration: the log states none of free memory for the KV cache, execution context, "
          "runtime or decoder buffers ('Memory usage when calculating max tokens in paged kv cache', 'Allocated ... for "
          "execution context memory', '... for runtime buffers', '... for decoder')"},
      Row{"calibration: deployment entry without figures",
          {"plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--calibration", "<dir>/cal.json"},
          {{"cal.json", R"({"schema": "vramplan.calibration/1", "created_utc": "2026-12-02T00:00:00Z", "deployment": [{"model": "llama-3.1-8b", "engine": "vllm", "engine_version": "0.19", "gpu": "h100-sxm-80", "figures": {}}]})"}},
          3, "<dir>/cal.json: /deployment/0/figures: expected at least one of non_torch_bytes, activation_peak_bytes, cuda_graph_bytes, "
          "free_before_load_bytes, free_for_kv_bytes, execution_context_bytes, runtime_buffers_bytes, decoder_buffers_bytes"},
      // Engine flags the plan does not read are still checked, as the engine's parser checks them.
      Row{"engine flag of the wrong form, unread by the plan", plan_8b({"--max-loras", "abc"}), {}, 2,
          "--max-loras: expected a non-negative integer, got 'abc'"},
      Row{"llama.cpp --host-bandwidth not a bandwidth",
          plan_8b({"--engine", "llamacpp", "--weights", "gguf:Q4_K_M", "--ngl", "0", "--host-bandwidth", "fast"}), {}, 2,
          "--host-bandwidth 'fast': expected a bandwidth in GB/s (10^9 B/s), e.g. 60 or 60GB/s"},
      Row{"vLLM --max-loras without --enable-lora", plan_8b({"--max-loras", "4"}), {}, 2,
          "--max-loras sizes LoRA slots only with --enable-lora (vLLM ignores it without)"},
      Row{"vLLM --max-lora-rank not one of vLLM's", plan_8b({"--enable-lora", "--max-lora-rank", "12"}), {}, 2,
          "--max-lora-rank 12: vLLM takes one of 1, 8, 16, 32, 64, 128, 256, 320, 512 (vllm/config/lora.py MaxLoRARanks)"},
      Row{"vLLM --speculative-config with an unknown key",
          {"plan", "--model", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--speculative-config",
           R"({"method": "mtp", "num_speculative_tokens": 1, "frob": 1})"},
          {}, 2, "--speculative-config: key 'frob' is not modelled (modelled: \"method\", \"num_speculative_tokens\")"},
      Row{"vLLM --num-scheduler-steps on a release without it",
          {"plan", "--model", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm@0.19", "--num-scheduler-steps", "10"},
          {}, 2, "--num-scheduler-steps: vLLM 0.19 has no such flag (multi-step scheduling was removed in 0.10.1, "
                 "PR #22138): plan it with --engine vllm@0.7.3 or earlier"},
      Row{"vLLM --no-scheduler-reserve-full-isl on a release without it",
          {"plan", "--model", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm@0.18", "--no-scheduler-reserve-full-isl"},
          {}, 2, "--no-scheduler-reserve-full-isl: vLLM 0.18 has no such flag (SchedulerConfig.scheduler_reserve_full_isl "
                 "arrived in 0.19.0, PR #37307): plan it with --engine vllm@0.19 or later"},
      Row{"vLLM --watermark on a release without it",
          {"plan", "--model", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm@0.19", "--watermark", "0.05"},
          {}, 2, "--watermark: vLLM 0.19 has no such flag (SchedulerConfig.watermark arrived in 0.24.0): plan it with "
                 "--engine vllm@0.24 or later"},
      Row{"vLLM --watermark of the whole pool",
          {"plan", "--model", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm@0.28", "--watermark", "1"},
          {}, 2, "--watermark must be in [0, 1): the share of the KV blocks kept free (vllm/config/scheduler.py SchedulerConfig.watermark)"},
      Row{"vLLM 0.6.0 multi-step with chunked prefill",
          {"plan", "--model", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm@0.6.0", "--num-scheduler-steps", "10"},
          {}, 2, "--num-scheduler-steps: vLLM 0.6.0 refuses multi-step with chunked prefill (engine/arg_utils.py: "
                 "\"Chunked prefill is not supported with multi-step\"); chunked prefill is on by default above "
                 "--max-model-len 32768: lower it or give --no-enable-chunked-prefill"},
      Row{"vLLM --data-parallel-size on a release that ran it eager",
          {"plan", "--model", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm@0.9.0", "--data-parallel-size", "2"},
          {}, 2, "--data-parallel-size: vLLM 0.9.0 runs data parallelism in eager mode (platforms/cuda.py "
                 "check_and_update_config forces enforce_eager when data_parallel_size > 1, up to 0.9.0), which is "
                 "not modelled: plan vllm@0.9.1 or later"},
      Row{"vLLM --data-parallel-size with pipeline parallelism",
          {"plan", "--model", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm@0.19", "--data-parallel-size", "2", "--pp", "2"},
          {}, 2, "--data-parallel-size with --pipeline-parallel-size 2: data parallelism over pipeline stages is not modelled"},
      Row{"simulate --cold-start with vLLM data parallelism",
          {"simulate", "--model", "llama-3.1-8b", "--gpu", "h100", "--engine", "vllm@0.19", "--data-parallel-size", "2",
           "--rate", "1", "--requests", "10", "--cold-start"},
          {}, 2, "simulate: --cold-start with data parallelism is not modelled (each engine compiles on its own)"},
      Row{"vLLM --speculative-config drafts beyond the context",
          {"plan", "--model", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--max-model-len", "4096", "--speculative-config",
           R"({"method": "mtp", "num_speculative_tokens": 99999999999})"},
          {}, 2, "--speculative-config: num_speculative_tokens 99999999999 is not below max_model_len 4096: no request could hold its drafts"},
      Row{"SGLang --max-prefill-tokens 0", plan_8b({"--engine", "sglang", "--max-prefill-tokens", "0"}), {}, 2,
          "--max-prefill-tokens must be >= 1 (0 admits no prompt)"},
      Row{"TEI --max-batch-requests 0", {"plan", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei", "--max-batch-requests", "0"},
          {}, 2, "--max-batch-requests must be >= 1 (0 batches no input)"},
      Row{"TEI plan with --batch", {"plan", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei", "--batch", "8"}, {}, 2,
          "--batch: TEI forms its batches by --max-batch-tokens and --max-batch-requests"},
      Row{"pooling plan with --prompt-len", {"plan", "--model", "bge-m3", "--gpu", "l4", "--prompt-len", "512"}, {}, 2,
          "--prompt-len sizes a generating model's TTFT: a pooling plan takes its input length from --context"},
      Row{"check --batch-range of a pooling model", {"check", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei", "--batch-range"},
          {}, 2, "--batch-range: bge-m3 is a pooling model (XLMRobertaModel): it generates nothing, so the batch table's decode "
          "tok/s, TPOT and TTFT do not apply; its throughput in inputs/s is in vramplan plan, an offline job's in vramplan plan "
          "--documents N"},
      Row{"TEI plan with --context", {"plan", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei", "--context", "512"}, {}, 2,
          "--context: TEI has no input-length flag; it serves inputs up to the model's max input length (8192 tokens for bge-m3, "
          "or --max-batch-tokens with --auto-truncate): give --max-batch-tokens"},
      Row{"TEI sweep with --batch", {"sweep", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei", "--batch", "1,8"}, {}, 2,
          "--batch: TEI forms its batches by --max-batch-tokens and --max-batch-requests"},
      Row{"pooling plan with --spec-accept-length",
          {"plan", "--model", "bge-m3", "--gpu", "l4", "--engine", "hf", "--spec-accept-length", "2"}, {}, 2,
          "--spec-accept-length does not apply to bge-m3 (encoder XLMRobertaModel): a pooling model generates no tokens, so "
          "nothing is drafted"},
      Row{"vLLM encoder plan with --batch", {"plan", "--model", "bge-m3", "--gpu", "l4", "--engine", "vllm", "--batch", "8"}, {}, 2,
          "--batch does not apply to bge-m3 (encoder XLMRobertaModel) under vllm: the pooling runner batches by "
          "--max-num-batched-tokens and --max-num-seqs"},
      Row{"--dtype of an 8-bit format", {"plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--dtype", "fp8"}, {}, 2,
          "--dtype fp8: not a compute dtype (auto, float16 / half, bfloat16, float32 / float); for 8-bit weights give --weights "
          "fp8 (or the engine's --quantization fp8)"},
      Row{"TEI --auto-truncate not a boolean",
          {"plan", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei", "--auto-truncate", "yes"}, {}, 2,
          "--auto-truncate: expected true or false, got 'yes'"},
      Row{"hf encoder --context beyond an XLM-R model's longest input",
          {"plan", "--model", "bge-m3", "--gpu", "h100-sxm-80", "--engine", "hf", "--context", "8193"}, {}, 2,
          "--context 8193 exceeds XLMRobertaModel's longest input 8192 (max_position_embeddings 8194 less its position ids' "
          "offset 2, pad_token_id + 1)"},
      Row{"trial of an embedding model", {"trial", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei"}, {}, 2,
          "trial: bge-m3 is a pooling model (XLMRobertaModel): decode / TTFT do not apply; its throughput in inputs/s is in "
          "vramplan plan, an offline job's in vramplan plan --documents N"},
      Row{"TEI 1.8 with --max-batch-tokens below the model's input length",
          {"check", "--model", "bge-m3", "--gpu", "l4", "--engine", "tei@1.8", "--max-batch-tokens", "1000"}, {}, 1,
          "UNSUPPORTED: `--max-batch-tokens` cannot be lower than the model `max_input_length` (8192 < 1000) when "
          "`--auto-truncate` is disabled, add the `--auto-truncate` flag to truncate the input sequences to match the "
          "`--max-batch-tokens` [tei-refuses-flags; the engine's own check of its flags at start-up, quoted]"},
      Row{"train: LoRA flag with --method full",
          {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--method", "full", "--lora-rank", "64"}, {}, 2,
          "--lora-rank applies to an adapter: --method lora, dora or qlora"},
      Row{"train --tokens below one token", {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--tokens", "1e-5"},
          {}, 2, "--tokens: expected a token count of at least 1 such as 2e9, 500M or 1.5T, got '1e-5'"},
      Row{"train --keeps-previous-logits without --length-median",
          {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--keeps-previous-logits"}, {}, 2,
          "--keeps-previous-logits applies to variable-length batches: add --length-median"},
      Row{"train --seq-len beyond learned absolute positions",
          {"train", "--model", "bge-base-en-v1.5", "--gpu", "h100-sxm-80"}, {}, 2,
          "--seq-len 2048 exceeds bge-base-en-v1.5's 512 learned absolute positions (max_position_embeddings)"},
      Row{"train --sharding hsdp over GPUs that are not whole nodes",
          {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--sharding", "hsdp", "--gpus", "16", "--gpus-per-node", "3"}, {}, 2,
          "--sharding hsdp: 16 GPUs are not whole nodes of --gpus-per-node 3"},
      Row{"train --gpus-per-node 0",
          {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--gpus-per-node", "0"}, {}, 2,
          "--gpus-per-node must be >= 1"},
      Row{"train --length-sigma without --length-median",
          {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--length-sigma", "0.5"}, {}, 2,
          "--length-sigma applies to variable-length batches: add --length-median"},
      Row{"train --upcast-unquantized on a bf16 base",
          {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--method", "lora", "--upcast-unquantized"}, {}, 2,
          "--upcast-unquantized applies to a quantized base: --base-format bnb-int8, nf4 or nf4-dq"},
      Row{"train --quantize-targets-only on a bf16 base",
          {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--method", "lora", "--quantize-targets-only"}, {}, 2,
          "--quantize-targets-only applies to a quantized base: --base-format bnb-int8, nf4 or nf4-dq"},
      Row{"train --fused-optimizer with adafactor",
          {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--optimizer", "adafactor", "--fused-optimizer"}, {}, 2,
          "--fused-optimizer: transformers' Adafactor has no fused step (torch.optim AdamW and SGD do)"},
      Row{"train --sequence-parallel with --tp 1",
          {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--sequence-parallel"}, {}, 2,
          "--sequence-parallel splits activations over the tensor-parallel group: add --tp 2 or more"},
      Row{"train --offload optimizer without ZeRO",
          {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--offload", "optimizer"}, {}, 2,
          "--offload optimizer needs ZeRO or FSDP sharding (--sharding zero1 / zero2 / zero3 / fsdp / hsdp)"},
      Row{"train --offload optimizer with a bitsandbytes optimizer",
          {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--sharding", "zero2", "--offload", "optimizer", "--optimizer", "paged-adamw-8bit"}, {}, 2,
          "--offload optimizer steps the optimizer on the CPU (DeepSpeedCPUAdam); bitsandbytes' paged-adamw-8bit steps on the GPU (paged states page to the host themselves)"},
      Row{"diffusion --resolution -8x8", {"plan", "--model", "sdxl-base-1.0", "--gpu", "h100-sxm-80", "--resolution", "-8x8"}, {}, 2,
          "--resolution '-8x8': expected WIDTHxHEIGHT in pixels, e.g. 1024x1024"},
      Row{"diffusion --engine diffusers@0.30", {"plan", "--model", "flux.1-dev", "--gpu", "h100-sxm-80", "--engine", "diffusers@0.30"},
          {}, 2, "--engine diffusers@0.30: the diffusers plan follows its source of one release, not a version; give --engine diffusers"},
      Row{"--gpu blank", {"plan", "--model", "llama-3.1-8b", "--gpu", " "}, {}, 4,
          "unknown GPU ' '; 'vramplan gpus --all' lists every id, or use custom:<size> such as custom:46068MiB"},
      Row{"diffusion --guidance 1e308", {"plan", "--model", "flux.1-dev", "--gpu", "h100-sxm-80", "--guidance", "1e308"}, {}, 2,
          "--guidance: a guidance scale within +-1000, got 1e+308"},
      Row{"diffusion VAE config: block_out_channels []", {"plan", "--model", "<dir>/sd", "--gpu", "l4"},
          pipeline_files_with("sdxl-base-1.0", "vae", "block_out_channels", nlohmann::json::array()), 3,
          "<dir>/sd/vae/config.json: /block_out_channels: expected a non-empty list of positive integers, got []"},
      Row{"diffusion VAE config: norm_num_groups not dividing the channels", {"plan", "--model", "<dir>/sd", "--gpu", "l4"},
          pipeline_files_with("sdxl-base-1.0", "vae", "norm_num_groups", 7), 3,
          "<dir>/sd/vae/config.json: /norm_num_groups: 7 groups do not divide 128 channels (torch.nn.GroupNorm: "
          "num_channels must be divisible by num_groups)"},
      Row{"diffusion UNet config: sample_size 0", {"plan", "--model", "<dir>/sd", "--gpu", "l4"},
          pipeline_files_with("sdxl-base-1.0", "unet", "sample_size", 0), 3,
          "<dir>/sd/unet/config.json: /sample_size: must be greater than zero (the pipeline's default height and width "
          "are sample_size x vae_scale_factor)"},
      Row{"diffusion plan on Intel Gaudi", {"plan", "--model", "sdxl-base-1.0", "--gpu", "gaudi2"}, {}, 2,
          "GPU 'gaudi2' is listed in the catalogue but cannot be planned: no vramplan engine profile serves Intel Gaudi "
          "(HPU): vLLM runs on Gaudi through the separate vllm-gaudi plugin (HPU graphs, its own memory profiling and "
          "bucketing), SGLang, TensorRT-LLM and llama.cpp have no HPU backend, and transformers needs optimum-habana; "
          "none of these is modelled"},
      Row{"diffusion: FLUX --max-sequence-length above 512",
          {"plan", "--model", "flux.1-dev", "--gpu", "h100-sxm-80", "--max-sequence-length", "1024"}, {}, 2,
          "--max-sequence-length 1024: FluxPipeline.check_inputs raises \"`max_sequence_length` cannot be greater than 512\""},
      Row{"diffusion check --conservative with --accept-marginal",
          {"check", "--model", "flux.1-dev", "--gpu", "h100-sxm-80", "--conservative", "--accept-marginal"}, {}, 2,
          "--conservative and --accept-marginal contradict each other: give one"},
      Row{"train: --margin without a run length", {"train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--margin", "2h"},
          {}, 2, "--margin applies to the run's duration: give --tokens N, or --epochs E with --dataset-tokens N"},
      Row{"check --mig-layout with an empty profile",
          {"check", "--gpu", "a100-sxm-80", "--mig-layout", "3g.40gb,", "--tenant", "model=llama-3.2-1b", "--tenant", "model=llama-3.2-1b"},
          {}, 2, "--mig-layout '3g.40gb,': an empty profile; give MIG profiles separated by commas, e.g. 3g.40gb,3g.40gb"},
      Row{"check --tenant a diffusion pipeline",
          {"check", "--gpu", "h100-sxm-80", "--tenant", "model=flux.1-dev", "--tenant", "model=qwen3-8b"}, {}, 2,
          "tenant 1: flux.1-dev is a diffusion pipeline; co-tenancy plans serving instances (LLMs and embedders): check it "
          "alone with vramplan check --model flux.1-dev"},
      Row{"reconcile: a vLLM log planned under --engine sglang",
          {"reconcile", "--log", "<dir>/x.log", "--engine", "sglang"},
          {{"x.log", test::read_text(test::fixture("logs/vllm/llama-3.1-8b-tp1.log"))}}, 2,
          "<dir>/x.log (vllm start-up log): planning its configuration: --gpu-memory-utilization is not a flag of engine "
          "'sglang' (its flags: --mem-fraction-static, --max-running-requests, --max-total-tokens, --context-length, "
          "--chunked-prefill-size, --cuda-graph-max-bs, --page-size, --attention-backend, --decode-attention-backend, "
          "--prefill-attention-backend, --kv-cache-dtype, --tp-size, --pp-size, --nnodes, --ep-size, --dp-size, --enable-dp-attention, --enable-dp-lm-head, --dtype, --quantization, "
          "--disable-cuda-graph, --disable-piecewise-cuda-graph, --max-prefill-tokens, --disable-radix-cache, --enable-mixed-chunk, --disable-overlap-schedule, "
          "--schedule-conservativeness, --mamba-full-memory-ratio, --max-mamba-cache-size, --swa-full-tokens-ratio, "
          "--disable-hybrid-swa-memory, --speculative-algorithm, --speculative-num-steps, --speculative-eagle-topk, "
          "--speculative-num-draft-tokens, --speculative-draft-model-path)"},
      Row{"reconcile: a log of two start-ups", {"reconcile", "--log", "<dir>/x.log"},
          {{"x.log", test::read_text(test::fixture("logs/vllm/llama-3.1-8b-tp1.log")) +
                         test::read_text(test::fixture("logs/vllm/llama-3.1-8b-tp1.log"))}},
          3, "<dir>/x.log: 2 start-ups in one log (the version banner at lines 1 and 11): reconcile reads one; cut the log to a single start-up"},
      Row{"reconcile: --engine-arg given twice",
          {"reconcile", "--log", "<dir>/x.log", "--engine-arg", "max-batch-size=4", "--engine-arg", "max-batch-size=8"},
          {{"x.log", "[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: 631\n"}}, 2,
          "reconcile: --engine-arg max-batch-size is given twice: give it once"},
      Row{"reconcile: log over 64 MiB", {"reconcile", "--log", "<dir>/x.log"}, {{"x.log", "67108865", File::Sparse}}, 3,
          "<dir>/x.log: 67108865 bytes, above the 64 MiB limit for a start-up log (cut it to the start-up)"},
      Row{"simulate --find-max-rate where no request fits the context",
          simulate_8b({"--rate", "2", "--find-max-rate", "--slo", "p99_ttft<=2s", "--input-len", "9000"}), {}, 2,
          "--find-max-rate / --target-rate: the engine completes none of these requests: it refuses them (prompt + "
          "output tokens exceed max_model_len 8192)"},
      Row{"simulate --seed with --trace", simulate_8b({"--trace", "<dir>/t.csv", "--seed", "3"}),
          {{"t.csv", "arrival_s,input_tokens,output_tokens\n0,10,10\n"}}, 2, "--seed: a --trace sets arrivals and lengths itself"},
      Row{"SLO sweep of a pooling model", {"sweep", "--model", "bge-m3", "--gpu", "h100-sxm-80", "--rate", "1", "--slo", "p99_ttft<=5s"},
          {}, 2, "--rate / --slo simulate generation: bge-m3 is a pooling model with no TTFT or TPOT (size its embedding job "
          "with vramplan plan --documents N)"},
      Row{"vLLM --kv-cache-memory above the card", plan_8b({"--kv-cache-memory", "9223372036854775807"}), {}, 2,
          "--kv-cache-memory 8388608.00 TiB is more than the GPU's 79.19 GiB"},
      Row{"SGLang --swa-full-tokens-ratio above 1",
          {"plan", "--engine", "sglang", "--model", "gpt-oss-20b", "--gpu", "h100-sxm-80", "--swa-full-tokens-ratio", "1e308"},
          {}, 2, "--swa-full-tokens-ratio must be in (0, 1]"},
      Row{"llama.cpp --ctx-size below -np",
          {"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "llamacpp", "--weights", "gguf:Q4_K_M",
           "-c", "100", "-np", "1000"},
          {}, 1, "UNSUPPORTED: llama_init_from_model: n_ctx_seq == 0: --ctx-size 256 split over 1000 sequences "
          "(-np) gives each none [llamacpp-refuses-flags; the engine's own check of its flags at start-up, quoted]"},
      Row{"check --batch-range with prompts beyond the engine's length",
          {"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "8192", "--batch-range",
           "--input-len", "100000"},
          {}, 2, "--input-len 100000 + --output-len 256 exceeds the engine's length 8192 (--max-model-len): it refuses such requests"},
      Row{"simulate --arrivals gamma:1e-300", simulate_8b({"--rate", "2", "--arrivals", "gamma:1e-300"}), {}, 2,
          "--arrivals: gamma:CV needs a coefficient of variation in [0.001, 100] (below, use constant), got 'gamma:1e-300'"},
      Row{"simulate --trace of 1 MiB without a newline", simulate_8b({"--trace", "<dir>/t.jsonl"}),
          {{"t.jsonl", std::string((1u << 20) + 1, '0')}}, 3, "<dir>/t.jsonl:1: line longer than 1048576 bytes"},
      Row{"trace arrival beyond 1e9 s", simulate_8b({"--trace", "<dir>/t.csv"}),
          {{"t.csv", "arrival_s,input_tokens,output_tokens\n1e308,10,10\n"}}, 3,
          "<dir>/t.csv:2: arrival_s: at most 1e9 seconds (31.7 years), got '1e308'"},
      Row{"engine flag of 2^63", {"plan", "--engine", "trtllm", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80",
                                  "--tokens-per-block", "9223372036854775808"},
          {}, 2, "--tokens-per-block: 9223372036854775808 is beyond any real setting (at most 2^53 = 9007199254740992)"},
      Row{"vLLM --kv-cache-dtype of llama.cpp", plan_8b({"--kv-cache-dtype", "q4_0"}), {}, 2,
          "--kv-cache-dtype 'q4_0': not a vLLM cache dtype (auto, float16, bfloat16, int8, fp8, fp8_e4m3, fp8_e5m2, "
          "fp8_inc, fp8_ds_mla)"},
      Row{"vLLM --quantization unknown", plan_8b({"--quantization", "abc"}), {}, 4,
          "unknown --quantization method 'abc' (known: fp8 gptq gptq_marlin awq awq_marlin compressed-tensors bitsandbytes "
          "mxfp4 modelopt modelopt_fp4 experts_int8)"},
      Row{"plan --context above --max-model-len", plan_8b({"--max-model-len", "8192", "--context", "16384"}), {}, 2,
          "--context 16384 exceeds the engine's maximum length 8192 (--max-model-len)"},
      Row{"check --max-model-len 0", {"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "0"},
          {}, 2, "--max-model-len must be >= 1"},
      Row{"sweep --periods beyond 1e9 s", {"sweep", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--tp", "1",
                                           "--periods", "18446744073709551616h"},
          {}, 2, "--periods: each period is from 1 minute to 277,777 h (1e9 s), got '18446744073709551616h'"},
      Row{"sweep --mode train with TP 0", {"sweep", "--mode", "train", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80",
                                           "--tokens", "1e9", "--tp", "0"},
          {}, 2, "--tp, --pp and --cp must be >= 1"},
      Row{"SLO sweep with --spec-accept-length and no speculation",
          {"sweep", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--tp", "1", "--max-model-len", "8192", "--rate", "2",
           "--slo", "p99_ttft<=2s", "--spec-accept-length", "2"},
          {}, 2, "--spec-accept-length: the plan runs no speculative decoding (give the engine's speculative flags)"},
      Row{"explain of a diffusion pipeline", {"explain", "--model", "flux.1-dev", "--gpu", "h100-sxm-80"}, {}, 2,
          "'flux.1-dev' is a diffusion pipeline (models/diffusion/flux.1-dev): plan, check, sweep and inspect take it; "
          "this command plans language and embedding models"},
      Row{"report --train-gpus without --train",
          {"report", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--train-gpus", "8", "--out", "<dir>/x.html"}, {}, 2,
          "--train-gpus applies to the training plan: add --train METHOD"},
      Row{"report: --out in a missing folder", {"report", "--model", "llama-3.1-8b", "--gpu", "l4", "--out", "<dir>/no/q.html"},
          {}, 5, "--out: cannot write <dir>/no/q.html"},
      Row{"report: --out a directory", {"report", "--model", "llama-3.1-8b", "--gpu", "l4", "--out", "<dir>/d"},
          {{"d", "", File::Directory}}, 5, "--out: cannot write <dir>/d"},
      Row{"report: without --out", {"report", "--model", "llama-3.1-8b", "--gpu", "l4"}, {}, 2,
          "report: --out FILE is required (the HTML page is written there)"},
      Row{"report: --rate without --simulate", {"report", "--model", "llama-3.1-8b", "--gpu", "l4", "--rate", "3", "--out", "<dir>/q.html"},
          {}, 2, "--rate applies to the simulated run: add --simulate"},
      Row{"model name with a C1 control character (U+009B, CSI)", plan_model("\xc2\x9b" "31mred"), {}, 4,
          "unknown model '\\xc2\\x9b31mred'; 'vramplan models' lists the catalogue, or pass a config.json / checkpoint dir / .gguf"},
      Row{"model name that is not UTF-8", plan_model("caf\xe9"), {}, 4,
          "unknown model 'caf\\xe9'; 'vramplan models' lists the catalogue, or pass a config.json / checkpoint dir / .gguf"},
      Row{"plan --prompt-len above --max-model-len", plan_8b({"--max-model-len", "8192", "--prompt-len", "999999999"}), {}, 2,
          "--prompt-len 999999999 exceeds the engine's maximum length 8192 (--max-model-len)"},
      Row{"--json with --format table", plan_8b({"--format", "table", "--json"}), {}, 2,
          "--json and --format table ask for two output formats: give one"},
      Row{"--format of no known format", plan_8b({"--format", "csv"}), {}, 2, "--format: unknown format 'csv' (table, json)"},
      Row{"trial --format csv with --json", {"trial", "--model", "llama-3.1-8b", "--gpu", "l40s", "--format", "csv", "--json"}, {}, 2,
          "--format csv and --json ask for two output formats: give one"},
      Row{"trial --format csv with --compare",
          {"trial", "--model", "llama-3.1-8b", "--gpu", "l40s", "--format", "csv", "--compare", "<dir>/t.csv"}, {}, 2,
          "--format csv writes the trial table to fill in, --compare reads one back: give one"},
      Row{"trial --format markdown", {"trial", "--model", "llama-3.1-8b", "--gpu", "l40s", "--format", "markdown"}, {}, 2,
          "--format markdown: this command writes a table, json or csv (--format table|json|csv)"},
      Row{"no command", {}, {}, 2, "no command given: usage: vramplan <command> [options]; 'vramplan --help' lists the commands"},
      Row{"vLLM --block-size outside its BlockSize literal",
          {"check", "--model", "llama-3.1-8b", "--gpu", "l40s", "--max-model-len", "8192", "--block-size", "7"}, {}, 1,
          "UNSUPPORTED: --block-size 7: invalid choice; vLLM takes one of 1, 8, 16, 32, 64, 128 (and 256 in newer "
          "releases) (vllm/config/cache.py BlockSize) [vllm-refuses-flags; the engine's own check of its flags at "
          "start-up, quoted]"},
      Row{"vLLM --cpu-offload-gb", plan_8b({"--cpu-offload-gb", "4"}), {}, 2,
          "vramplan plan: unrecognised option '--cpu-offload-gb': vLLM's --cpu-offload-gb (weights offloaded to host "
          "memory, read over UVA) is not modelled (see 'vramplan plan --help')"},
  };
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

TEST(BadInput, EveryRowGivesItsMessageAndExitCode) {
  for (const Row& row : rows()) {
    test::ScratchDir dir;
    const std::string d = dir.path().string();
    for (const File& f : row.files) {
      const auto path = dir.path() / f.name;
      if (f.kind == File::Fifo) {
        ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
      } else if (f.kind == File::Directory) {
        std::filesystem::create_directory(path);
      } else if (f.kind == File::Symlink) {
        std::filesystem::create_symlink(dir.path() / f.bytes, path);
      } else if (f.kind == File::Sparse) {
        dir.write(f.name, "");
        std::filesystem::resize_file(path, std::stoull(f.bytes));
      } else {
        dir.write(f.name, f.bytes);
      }
    }
    std::vector<std::string> args;
    for (const auto& a : row.args) args.push_back(replace_all(a, "<dir>", d));
    const auto r = row.in_dir ? test::run_cli(args, {dir.path(), {}}) : test::run_cli(args);
    EXPECT_EQ(r.exit_code, row.exit_code) << row.input << "\n" << r.err;
    const std::string expected = replace_all(row.message, "<dir>", d);
    if (row.exit_code == 1)  // "does not fit" is a result: its line is on stdout
      EXPECT_EQ(r.out.substr(0, r.out.find('\n')), expected) << row.input;
    else
      EXPECT_EQ(r.err, "vramplan: error: " + expected + "\n") << row.input;
    // One line, whatever the input held.
    EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 1) << row.input;
  }
}

// --json echoes the user's bytes (here a model name) and the error document still parses (the
// dump aborted the program until 2026-12-05). Since 2026-12-08 an error message writes a byte
// that is not UTF-8 as \xHH, as stderr does (core/text.hpp escape_control); the dump's U+FFFD
// replacement still covers the bytes other documents echo.
TEST(BadInput, JsonOutputSurvivesBytesThatAreNotUtf8) {
  const auto r = test::run_cli({"inspect", "--model", "x\xff", "--json"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("error").at("message").get<std::string>().substr(0, 20), "unknown model 'x\\xff");
}

TEST(BadInput, DocsErrorsListsEveryRow) {
  const std::string doc = test::read_text(test::source_dir() / "docs" / "errors.md");
  std::size_t listed = 0;
  for (const Row& row : rows()) {
    const std::string cell = "| " + row.input + " |";
    const auto at = doc.find(cell);
    ASSERT_NE(at, std::string::npos) << "docs/errors.md has no row " << cell;
    const std::string line = doc.substr(at, doc.find('\n', at) - at);
    EXPECT_NE(line.find("| " + std::to_string(row.exit_code) + " |"), std::string::npos) << line;
    // A message holding backticks is fenced with two.
    const bool listed_message = line.find("`" + row.message + "`") != std::string::npos ||
                                line.find("`` " + row.message + " ``") != std::string::npos;
    EXPECT_TRUE(listed_message) << line;
    ++listed;
  }
  EXPECT_GE(listed, 40u);
}

}  // namespace
}  // namespace vramplan
