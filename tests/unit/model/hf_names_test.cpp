// HF tensor names -> roles, and checkpoint directories read through safetensors headers.
#include "vramplan/model/hf_names.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "support/test_support.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/model/checkpoint.hpp"
#include "vramplan/model/hf_config.hpp"
#include "vramplan/model/inventory.hpp"

namespace vramplan {
namespace {

ModelArch arch(const std::string& family, std::uint64_t layers, std::uint64_t mtp = 0) {
  ModelArch a;
  a.family = family;
  a.num_layers = layers;
  a.mtp_layers = mtp;
  return a;
}

TEST(HfNames, LayerIndex) {
  EXPECT_EQ(hf_layer_index("model.layers.12.mlp.up_proj.weight"), 12);
  EXPECT_EQ(hf_layer_index("transformer.h.3.mlp.dense_h_to_4h.weight"), 3);
  EXPECT_EQ(hf_layer_index("language_model.model.layers.7.self_attn.q_proj.weight"), 7);
  EXPECT_EQ(hf_layer_index("model.embed_tokens.weight"), std::nullopt);
  EXPECT_EQ(hf_layer_index("model.layers.x1.mlp.weight"), std::nullopt);
}

TEST(HfNames, RealCheckpointNames) {
  const auto llama = arch("llama", 32);
  EXPECT_EQ(role_from_hf_tensor_name("model.layers.0.post_attention_layernorm.weight", llama).role,
            TensorRole::FfnNorm);
  // Gemma-2/3: the same module name is the post-attention sandwich norm.
  EXPECT_EQ(role_from_hf_tensor_name("model.layers.0.post_attention_layernorm.weight", arch("gemma2", 26)).role,
            TensorRole::AttnPostNorm);
  const auto ds = arch("deepseek", 61, 1);
  const auto e = role_from_hf_tensor_name("model.layers.5.mlp.experts.17.gate_proj.weight_scale_inv", ds);
  EXPECT_EQ(e.role, TensorRole::FfnGateExps);
  EXPECT_EQ(e.layer, 5);
  EXPECT_EQ(role_from_hf_tensor_name("model.layers.61.shared_head.head.weight", ds).role, TensorRole::Mtp);
  EXPECT_EQ(role_from_hf_tensor_name("model.layers.3.mlp.gate.e_score_correction_bias", ds).role,
            TensorRole::FfnExpProbsBias);
  EXPECT_EQ(role_from_hf_tensor_name("model.layers.0.self_attn.q_proj.qweight", llama).role, TensorRole::AttnQ);
  const auto bias = role_from_hf_tensor_name("model.layers.0.self_attn.k_proj.bias", llama);
  EXPECT_EQ(bias.role, TensorRole::AttnK);
  EXPECT_TRUE(bias.is_bias);
  EXPECT_EQ(role_from_hf_tensor_name("model.layers.2.mlp.experts.gate_up_proj_blocks", arch("gpt_oss", 24)).role,
            TensorRole::FfnGateUpExps);
  EXPECT_EQ(role_from_hf_tensor_name("vision_tower.vision_model.encoder.layers.0.mlp.fc1.weight", llama).role,
            TensorRole::Vision);
  EXPECT_EQ(role_from_hf_tensor_name("model.layers.0.block_sparse_moe.experts.3.w2.weight", arch("mixtral", 32)).role,
            TensorRole::FfnDownExps);
  EXPECT_EQ(role_from_hf_tensor_name("language_model.lm_head.weight", llama).role, TensorRole::Output);
  EXPECT_EQ(role_from_hf_tensor_name("model.layers.0.some_new_thing.weight", llama).role, TensorRole::Other);
}

TEST(HfNames, InventoryKeyFoldsExpertsAndCompanions) {
  bool companion = false;
  EXPECT_EQ(hf_inventory_key("model.layers.4.mlp.experts.17.up_proj.weight_scale_inv", &companion),
            "model.layers.4.mlp.experts.*.up_proj.weight");
  EXPECT_TRUE(companion);
  EXPECT_EQ(hf_inventory_key("model.layers.4.block_sparse_moe.experts.2.w1.weight", &companion),
            hf_inventory_key("model.layers.4.block_sparse_moe.experts.*.w1.weight"));
  EXPECT_FALSE(companion);
  EXPECT_EQ(hf_inventory_key("model.language_model.layers.1.self_attn.q_proj.weight"),
            hf_inventory_key("language_model.model.layers.1.self_attn.q_proj.weight"));
}

// --- checkpoint directories -------------------------------------------------------------------

struct FakeTensor {
  std::string name, dtype;
  std::vector<std::uint64_t> shape;
  std::uint64_t bytes;
};

//! A safetensors file: u64 header length, JSON header, zero-filled data.
std::string safetensors_bytes(const std::vector<FakeTensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes}}};
    offset += t.bytes;
  }
  std::string h = header.dump();
  while (h.size() % 8 != 0) h += ' ';
  std::string out(8, '\0');
  std::uint64_t n = h.size();
  std::memcpy(out.data(), &n, 8);  // little-endian host (x86-64 / aarch64)
  return out + h + std::string(offset, '\0');
}

TEST(Checkpoint, ExactBytesExtraAndMissingTensors) {
  test::ScratchDir dir;
  dir.write("config.json", read_json_file(test::fixture("hf/tiny-llama/config.json")).dump());
  const auto formats = FormatTable::load(test::source_dir() / "data" / "quant_formats.json");
  const auto from_config = model_from_hf_config_file(dir.path());
  std::vector<FakeTensor> files;
  for (const auto& t : from_config.tensors) {
    if (t.name == "lm_head.weight") continue;  // missing from the files
    files.push_back({t.name, "BF16", t.shape, t.elements() * 2});
  }
  files.push_back({"model.layers.0.self_attn.q_proj.weight_scale", "F32", {1}, 4});  // companion
  files.push_back({"model.rotary_emb.inv_freq", "F32", {8}, 32});                   // not in config
  dir.write("model.safetensors", safetensors_bytes(files));

  // Planning refuses the checkpoint (vLLM would not load it), naming the first missing tensor.
  EXPECT_EQ(test::error_message([&] { model_from_checkpoint_dir(dir.path(), formats); }, ErrorKind::InputFile),
            dir.path().string() + ": tensor 'lm_head.weight' of config.json is in no safetensors file; vLLM refuses "
                                  "such a checkpoint (\"weights were not initialized from checkpoint\"); 'vramplan "
                                  "inspect' lists what the files hold");
  // `inspect` reads it with a warning.
  HfLoadOptions lenient;
  lenient.allow_missing_tensors = true;
  const auto spec = model_from_checkpoint_dir(dir.path(), formats, lenient);
  EXPECT_EQ(spec.source.kind, "safetensors");
  ASSERT_EQ(spec.warnings.size(), 1u);
  EXPECT_NE(spec.warnings[0].find("lm_head.weight"), std::string::npos);
  bool saw_q = false, saw_extra = false;
  for (const auto& t : spec.tensors) {
    if (t.name == "model.layers.0.self_attn.q_proj.weight") {
      saw_q = true;
      EXPECT_EQ(t.stored_bytes, 64u * 64 * 2 + 4);  // weight + its scale
      EXPECT_EQ(t.stored_format, "bf16");
    }
    if (t.name == "model.rotary_emb.inv_freq") {
      saw_extra = true;
      EXPECT_EQ(t.role, TensorRole::RopeFreqs);
      EXPECT_EQ(t.stored_format, "fp32");
    }
    EXPECT_NE(t.name, "lm_head.weight");
  }
  EXPECT_TRUE(saw_q);
  EXPECT_TRUE(saw_extra);
  EXPECT_EQ(spec.tensors.size(), from_config.tensors.size());  // -1 missing, +1 extra
}

TEST(Checkpoint, PerExpertTensorsSumIntoTheStackedTensor) {
  test::ScratchDir dir;
  const nlohmann::json config = {
      {"architectures", {"MixtralForCausalLM"}}, {"hidden_size", 32}, {"intermediate_size", 64},
      {"num_hidden_layers", 1}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
      {"vocab_size", 128}, {"num_local_experts", 2}, {"num_experts_per_tok", 1},
      {"torch_dtype", "bfloat16"}};
  dir.write("config.json", config.dump());
  const auto formats = FormatTable::load(test::source_dir() / "data" / "quant_formats.json");
  std::vector<FakeTensor> files;
  for (const auto& t : model_from_hf_config_file(dir.path()).tensors) {
    if (t.name.find("experts.*") == std::string::npos) {
      files.push_back({t.name, "BF16", t.shape, t.elements() * 2});
      continue;
    }
    for (int e = 0; e < 2; ++e) {
      auto name = t.name;
      name.replace(name.find('*'), 1, std::to_string(e));
      files.push_back({name, "F8_E4M3", {t.shape[1], t.shape[2]}, t.shape[1] * t.shape[2]});
    }
  }
  dir.write("model.safetensors", safetensors_bytes(files));
  const auto spec = model_from_checkpoint_dir(dir.path(), formats);
  EXPECT_TRUE(spec.warnings.empty());
  for (const auto& t : spec.tensors)
    if (is_routed_expert_role(t.role)) {
      EXPECT_EQ(t.shape[0], 2u) << t.name;
      EXPECT_EQ(t.stored_bytes, t.elements()) << t.name;  // 1 byte per fp8 weight, 2 experts
      EXPECT_EQ(t.stored_format, "fp8-e4m3");
    }
}

}  // namespace
}  // namespace vramplan
