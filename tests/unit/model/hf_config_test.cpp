// model_from_hf_config: architecture fields per family, validation errors, options.
#include "vramplan/model/hf_config.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/model/inventory.hpp"

namespace vramplan {
namespace {

ModelSpec entry(const std::string& id) { return load_catalogue_model(test::source_root(), id); }

std::size_t count(const ModelArch& a, LayerAttention kind) {
  return static_cast<std::size_t>(std::count(a.layer_attention.begin(), a.layer_attention.end(), kind));
}

nlohmann::json tiny() { return read_json_file(test::fixture("hf/tiny-llama/config.json")); }

TEST(HfConfig, Qwen25HalfBillionExact) {
  // memory-model.md §1.1: 494,032,768 (qkv bias, tied embeddings); Qwen2.5-0.5B card: 0.49B.
  const auto spec = model_from_hf_config_file(test::fixture("hf/qwen2.5-0.5b.json"));
  EXPECT_EQ(count_params(spec).total, 494'032'768ull);
  EXPECT_TRUE(spec.arch.tied_embeddings);
  EXPECT_EQ(count(spec.arch, LayerAttention::Full), 24u);  // use_sliding_window=false
}

TEST(HfConfig, TinyLlamaInventory) {
  const auto spec = model_from_hf_config(tiny(), "tiny.json");
  // embed + 2 x (2 norms + q,k,v,o + gate,up,down) + norm + lm_head = 1 + 18 + 2.
  EXPECT_EQ(spec.tensors.size(), 21u);
  const auto& q = spec.tensors[3];
  EXPECT_EQ(q.name, "model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(q.role, TensorRole::AttnQ);
  EXPECT_EQ(q.shape, (std::vector<std::uint64_t>{64, 64}));
  EXPECT_EQ(q.layer, 0);
  EXPECT_EQ(q.stored_format, "bf16");
  EXPECT_EQ(spec.arch.head_dim, 16u);  // 64 / 4
  // 256x64 embed + lm_head, per layer 4*64 (q) ... : 2*16384 + 2*(2*64 + 64*64*2 + 2*32*64 + 3*64*128) + 64
  EXPECT_EQ(count_params(spec).total, 2u * 16384 + 2u * (128 + 8192 + 4096 + 24576) + 64);
}

TEST(HfConfig, Llama31RopeTable) {
  // vLLM cos/sin cache 131072 x 128 (llama3 scaling keeps the row count); 32 MiB in bf16.
  const auto a = entry("llama-3.1-8b").arch;
  ASSERT_EQ(a.rope_tables.size(), 1u);
  EXPECT_EQ(a.rope_tables[0].max_positions, 131072u);
  EXPECT_EQ(a.rope_tables[0].rotary_dim, 128u);
  EXPECT_EQ(a.rope_tables[0].scaling_type, "llama3");
}

TEST(HfConfig, Gemma3SlidingPatternAndTwoRopeTables) {
  const auto spec = entry("gemma-3-27b");
  const auto& a = spec.arch;
  // memory-model.md §3.3: 62 layers = 10 global + 52 local, window 1024.
  EXPECT_EQ(count(a, LayerAttention::Full), 10u);
  EXPECT_EQ(count(a, LayerAttention::Sliding), 52u);
  EXPECT_EQ(a.layer_attention[5], LayerAttention::Full);  // (5 + 1) % 6 == 0
  EXPECT_EQ(a.sliding_window, 1024u);
  EXPECT_EQ(a.vocab_size, 262208u);  // Gemma3TextConfig default: the config omits it
  EXPECT_TRUE(a.tied_embeddings);
  ASSERT_EQ(a.rope_tables.size(), 2u);
  EXPECT_EQ(a.rope_tables[0].max_positions, 131072u * 8);  // linear x8 global rope
  EXPECT_EQ(a.rope_tables[1].max_positions, 131072u);      // local rope, unscaled
  EXPECT_GT(count_params(spec).vision, 0u);
  EXPECT_TRUE(spec.exclusions.empty());
}

TEST(HfConfig, Gemma2AlternatesStartingWithSliding) {
  const auto a = entry("gemma-2-9b").arch;
  EXPECT_EQ(a.layer_attention[0], LayerAttention::Sliding);
  EXPECT_EQ(a.layer_attention[1], LayerAttention::Full);
  EXPECT_EQ(count(a, LayerAttention::Sliding), 21u);
}

TEST(HfConfig, Llama4ChunkedWithNopeEveryFourthLayer) {
  const auto spec = entry("llama-4-scout");
  const auto& a = spec.arch;
  EXPECT_EQ(count(a, LayerAttention::Chunked), 36u);
  EXPECT_EQ(count(a, LayerAttention::Full), 12u);
  EXPECT_EQ(a.layer_attention[3], LayerAttention::Full);
  EXPECT_EQ(a.attention_chunk_size, 8192u);
  EXPECT_EQ(a.num_shared_experts, 1u);
  ASSERT_EQ(a.rope_tables.size(), 1u);
  EXPECT_EQ(a.rope_tables[0].max_positions, 10'485'760u);  // 10.5M positions
  EXPECT_TRUE(spec.exclusions.empty());
  // Vision encoder (vllm mllama4.py Llama4VisionModel), hidden 1408, MLP 5632, 34 layers:
  // per layer 2 LayerNorms 4*1408 + q/k/v/o 4*(1408^2+1408) + fc1 5632*1408+5632 + fc2 1408*5632+1408
  // = 5,632 + 7,935,488 + 7,935,488 + 7,931,264 = 23,807,872; x34 = 809,467,648. Global: patch
  // linear 1408*3*14*14 = 827,904, class 1408, positions (24^2+1)*1408 = 812,416, 2 LayerNorms 5,632,
  // adapter 4096*5632 + 4096*4096 = 39,845,888, projector 5120*4096 = 20,971,520 -> 62,464,768.
  EXPECT_EQ(count_params(spec).vision, 871'932'416u);
  // Maverick: interleave_moe_layer_step 2 -> odd layers are MoE.
  const auto m = entry("llama-4-maverick").arch;
  EXPECT_FALSE(m.layer_is_moe[0]);
  EXPECT_TRUE(m.layer_is_moe[1]);
}

TEST(HfConfig, DeepSeekMlaAndMtp) {
  const auto spec = entry("deepseek-v3");
  const auto& a = spec.arch;
  EXPECT_EQ(count(a, LayerAttention::Mla), 61u);
  EXPECT_EQ(a.kv_lora_rank, 512u);
  EXPECT_EQ(a.qk_rope_head_dim, 64u);
  EXPECT_EQ(a.v_head_dim, 128u);
  EXPECT_EQ(a.head_dim, 192u);
  EXPECT_EQ(a.mtp_layers, 1u);
  EXPECT_FALSE(a.layer_is_moe[2]);  // first_k_dense_replace = 3
  EXPECT_TRUE(a.layer_is_moe[3]);
  EXPECT_EQ(a.rope_tables[0].max_positions, 4096u * 40);  // yarn: original x factor
  for (const auto& t : spec.tensors)
    if (t.layer && *t.layer >= 61) {
      EXPECT_EQ(t.role, TensorRole::Mtp) << t.name;
    }
  EXPECT_NE(spec.quantization_config_json.find("\"fp8\""), std::string::npos);
}

TEST(HfConfig, GptOssSinksBiasesAndAlternatingWindow) {
  const auto spec = entry("gpt-oss-20b");
  EXPECT_EQ(count(spec.arch, LayerAttention::Sliding), 12u);
  EXPECT_EQ(spec.arch.sliding_window, 128u);
  bool sinks = false, router_bias = false;
  for (const auto& t : spec.tensors) {
    sinks |= t.role == TensorRole::AttnSinks;
    router_bias |= t.role == TensorRole::FfnGateInp && t.is_bias;
  }
  EXPECT_TRUE(sinks);
  EXPECT_TRUE(router_bias);
  EXPECT_NE(spec.quantization_config_json.find("mxfp4"), std::string::npos);
  EXPECT_EQ(spec.tensors.front().stored_format, "");  // no torch_dtype in the config
}

TEST(HfConfig, MistralV01SlidesEveryLayerQwen2DoesNot) {
  EXPECT_EQ(count(entry("mistral-7b-v0.1").arch, LayerAttention::Sliding), 32u);
  EXPECT_EQ(entry("mistral-7b-v0.1").arch.sliding_window, 4096u);
  EXPECT_EQ(count(entry("qwen2.5-7b").arch, LayerAttention::Sliding), 0u);
}

TEST(HfConfig, Qwen3HeadDimDiffersFromHiddenOverHeads) {
  const auto a = entry("qwen3-32b").arch;
  EXPECT_EQ(a.head_dim, 128u);  // 5120 / 64 would be 80
}

TEST(HfConfig, Phi2PartialRotaryAndBiases) {
  const auto spec = entry("phi-2");
  EXPECT_EQ(spec.arch.rope_tables[0].rotary_dim, 32u);  // 80 x 0.4
  EXPECT_EQ(spec.tensors.back().name, "lm_head.bias");
}

// --- validation ------------------------------------------------------------------------------

void expect_error(const nlohmann::json& config, ErrorKind kind, const std::string& fragment) {
  try {
    model_from_hf_config(config, "bad/config.json");
    FAIL() << "no error, expected " << fragment;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad/config.json"), std::string::npos) << e.what();
  }
}

TEST(HfConfigErrors, MissingHiddenSize) {
  auto c = tiny();
  c.erase("hidden_size");
  expect_error(c, ErrorKind::InputFile, "/hidden_size: required field is missing");
}

TEST(HfConfigErrors, NegativeLayers) {
  auto c = tiny();
  c["num_hidden_layers"] = -2;
  expect_error(c, ErrorKind::InputFile, "/num_hidden_layers: expected a non-negative integer");
}

TEST(HfConfigErrors, ZeroHeads) {
  auto c = tiny();
  c["num_attention_heads"] = 0;
  expect_error(c, ErrorKind::InputFile, "/num_attention_heads: must be greater than zero");
}

TEST(HfConfigErrors, HeadsNotDividingHidden) {
  auto c = tiny();
  c["num_attention_heads"] = 6;
  c["num_key_value_heads"] = 3;
  expect_error(c, ErrorKind::InputFile, "does not divide hidden_size 64");
}

TEST(HfConfigErrors, KvHeadsNotDividingHeads) {
  auto c = tiny();
  c["num_key_value_heads"] = 3;
  expect_error(c, ErrorKind::InputFile, "/num_key_value_heads");
}

TEST(HfConfigErrors, UnknownArchitectureListsSupported) {
  const auto c = read_json_file(test::fixture("hf/unknown-arch.json"));
  expect_error(c, ErrorKind::UnknownName, "LlamaForCausalLM");
  expect_error(c, ErrorKind::UnknownName, "FrobnicatorForCausalLM");
}

TEST(HfConfigErrors, AssumeLlamaLikeWarns) {
  const auto c = read_json_file(test::fixture("hf/unknown-arch.json"));
  const auto spec = model_from_hf_config(c, "x.json", HfLoadOptions{true});
  ASSERT_EQ(spec.warnings.size(), 1u);
  EXPECT_NE(spec.warnings[0].find("--assume-llama-like"), std::string::npos);
  EXPECT_EQ(spec.arch.family, "llama");
}

TEST(HfConfigErrors, NoArchitectures) {
  auto c = tiny();
  c.erase("architectures");
  expect_error(c, ErrorKind::InputFile, "/architectures");
}

TEST(HfConfigErrors, MalformedJsonFile) {
  test::ScratchDir dir;
  const auto path = dir.write("config.json", "{\"architectures\": [\"LlamaForCausalLM\"], ");
  try {
    model_from_hf_config_file(dir.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InputFile);
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

TEST(HfConfigErrors, LayerTypesLengthMismatch) {
  auto c = tiny();
  c["layer_types"] = {"full_attention"};
  expect_error(c, ErrorKind::InputFile, "/layer_types: has 1 entries");
}

}  // namespace
}  // namespace vramplan
