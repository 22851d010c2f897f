#include "vramplan/quant/precision_plan.hpp"

#include <gtest/gtest.h>

#include "support/catalogs.hpp"
#include "support/test_models.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan {
namespace {

// A two-layer Llama-like model (test::dense_model): hidden 256, 4 heads x 64, 2 KV heads,
// intermediate 512, vocab 1000, untied head, bf16.
ModelSpec tiny_llama() { return test::dense_model({2, 256, 4, 2, 64, 512, 1000, 4096}, "tiny-llama"); }

const TensorPrecision& find(const PrecisionPlan& plan, const ModelSpec& m, std::string_view name) {
  for (const auto& p : plan.tensors)
    if (m.tensors[p.index].name == name) return p;
  throw std::runtime_error("no tensor " + std::string(name));
}

TEST(PrecisionPlan, DefaultIsTheConfigDtype) {
  const ModelSpec m = tiny_llama();
  const PrecisionPlan plan = plan_precision(m, test::quant_catalog(), {});
  // 2 x 256,000 (embed, head) + 2 x (65,536 + 2 x 32,768 + 65,536 + 3 x 131,072) + 5 x 256
  // = 512,000 + 2 x 589,824 + 1,280 = 1,692,928 params x 2 B.
  EXPECT_EQ(plan.total_params, 1'692'928u);
  EXPECT_EQ(plan.total_bytes, 3'385'856u);
  EXPECT_EQ(plan.weights_precision, "bf16");
  EXPECT_EQ(plan.compute_precision, "bf16");
  EXPECT_EQ(plan.kept_bytes, plan.total_bytes);
}

TEST(PrecisionPlan, GptqKeepsEmbeddingsHeadAndNormsInFp16) {
  const ModelSpec m = tiny_llama();
  const PrecisionPlan plan = plan_precision(m, test::quant_catalog(), {"gptq-4bit-g128", ""});
  // Kept (fp16, vLLM's gptq kernel casts the bf16 model): embed + head 2 x 512,000 B, norms
  // 5 x 256 x 2 = 2,560 B.
  EXPECT_EQ(plan.kept_bytes, 1'026'560u);
  // Per layer (GPTQ 4-bit g128 = qweight + fp16 scales + packed zeros + int32 g_idx):
  //   q_proj, o_proj {256,256}: 32,768 + 1,024 + 256 + 1,024 = 35,072
  //   k_proj, v_proj {128,256}: 16,384 +   512 + 128 + 1,024 = 18,048
  //   gate, up {512,256}:       65,536 + 2,048 + 512 + 1,024 = 69,120
  //   down {256,512}:           65,536 + 2,048 + 512 + 2,048 = 70,144
  //   = 314,624 per layer, 629,248 for two.
  EXPECT_EQ(plan.total_bytes, 1'026'560u + 629'248u);
  EXPECT_EQ(find(plan, m, "model.layers.1.mlp.down_proj.weight").bytes, 70'144u);
  const auto& head = find(plan, m, "lm_head.weight");
  EXPECT_FALSE(head.quantized);
  EXPECT_EQ(head.format, "fp16");
  EXPECT_NE(head.reason.find("AutoGPTQ"), std::string::npos) << head.reason;
  EXPECT_EQ(plan.compute_precision, "fp16");
  EXPECT_EQ(plan.weights_precision, "gptq-4bit-g128 (mixed: 0.00 GiB fp16 kept)");
  ASSERT_FALSE(plan.warnings.empty());  // the bf16 -> fp16 cast is reported
}

TEST(PrecisionPlan, CheckpointQuantizationConfigWithVllmMarlinRuntimeLayout) {
  ModelSpec m = tiny_llama();
  m.quantization_config_json = R"({"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": false, "sym": true})";
  const PrecisionPlan from_config = plan_precision(m, test::quant_catalog(), {});
  EXPECT_EQ(from_config.scheme.format, "gptq-4bit-g128");
  // --weights gptq_marlin loads the same checkpoint and repacks it: q_proj keeps qweight +
  // scales only = 32,768 + 1,024.
  const PrecisionPlan marlin = plan_precision(m, test::quant_catalog(), {"gptq_marlin", ""});
  EXPECT_EQ(marlin.scheme.format, "gptq-marlin-4bit-g128");
  EXPECT_EQ(find(marlin, m, "model.layers.0.self_attn.q_proj.weight").bytes, 33'792u);
  EXPECT_EQ(marlin.compute_precision, "bf16");
}

TEST(PrecisionPlan, Fp8BlockFromConfigAndIgnoreList) {
  ModelSpec m = tiny_llama();
  m.quantization_config_json =
      R"({"quant_method": "fp8", "weight_block_size": [128, 128], "activation_scheme": "dynamic",
          "modules_to_not_convert": ["model.layers.0.mlp.down_proj"]})";
  const PrecisionPlan plan = plan_precision(m, test::quant_catalog(), {});
  // q_proj {256,256}: 65,536 fp8 + 2 x 2 tiles x 4 B = 65,552.
  EXPECT_EQ(find(plan, m, "model.layers.1.self_attn.q_proj.weight").bytes, 65'552u);
  const auto& ignored = find(plan, m, "model.layers.0.mlp.down_proj.weight");
  EXPECT_EQ(ignored.format, "bf16");
  EXPECT_NE(ignored.reason.find("ignore"), std::string::npos);
  EXPECT_EQ(find(plan, m, "model.layers.1.mlp.down_proj.weight").format, "fp8-e4m3-block128");
  EXPECT_EQ(find(plan, m, "model.embed_tokens.weight").format, "bf16");
  EXPECT_EQ(plan.compute_precision, "fp8 e4m3 matmul inputs (dynamic scales), bf16 elsewhere");
}

TEST(PrecisionPlan, StoredFormatsWinWhenTheInventoryCameFromAFile) {
  ModelSpec m = tiny_llama();
  for (auto& t : m.tensors) t.stored_format = t.shape.size() == 1 ? "F32" : "Q8_0";
  const PrecisionPlan plan = plan_precision(m, test::quant_catalog(), {});
  EXPECT_EQ(plan.scheme.kind, SchemeKind::Checkpoint);
  // lm_head {1000, 256}: 1000 x 8 blocks x 34 B = 272,000.
  EXPECT_EQ(find(plan, m, "lm_head.weight").bytes, 272'000u);
  EXPECT_EQ(find(plan, m, "model.norm.weight").format, "fp32");
}

TEST(PrecisionPlan, ConfigDtypeLabelsDoNotHideTheQuantizationConfig) {
  // A config-only inventory labels every tensor with torch_dtype (as hf_config does); the
  // quantization_config still decides the stored format (DeepSeek-V3: fp8 blocks, torch_dtype
  // bfloat16), since no file gave the bytes.
  ModelSpec m = tiny_llama();
  for (auto& t : m.tensors) t.stored_format = "bf16";
  m.quantization_config_json = R"({"quant_method": "fp8", "weight_block_size": [128, 128]})";
  const PrecisionPlan plan = plan_precision(m, test::quant_catalog(), {});
  EXPECT_EQ(plan.scheme.format, "fp8-e4m3-block128");
  // q_proj {256,256}: 65,536 fp8 + 2 x 2 tiles x 4 B = 65,552 (as Fp8BlockFromConfigAndIgnoreList).
  EXPECT_EQ(find(plan, m, "model.layers.1.self_attn.q_proj.weight").bytes, 65'552u);
  // With the files' exact bytes the stored formats win again.
  for (auto& t : m.tensors) t.stored_bytes = t.elements() * 2;
  EXPECT_EQ(plan_precision(m, test::quant_catalog(), {}).scheme.kind, SchemeKind::Checkpoint);
}

TEST(PrecisionPlan, Mxfp4OnADenseModelQuantizesNothingAndSaysSo) {
  // mxfp4 quantizes MoE experts only (data/quant_schemes.json gpt-oss-mxfp4; vLLM's Mxfp4Config
  // serves Linear layers unquantized): a dense model keeps its bf16 size, 3,385,856 B as in
  // DefaultIsTheConfigDtype, and the plan says nothing was quantized.
  const ModelSpec m = tiny_llama();
  const PrecisionPlan plan = plan_precision(m, test::quant_catalog(), {"mxfp4", ""});
  EXPECT_EQ(plan.total_bytes, 3'385'856u);
  EXPECT_EQ(plan.weights_precision, "bf16 (mxfp4 quantized no tensor)");
  EXPECT_NE(plan.nothing_quantized.find("mxfp4 quantizes no tensor of this model"), std::string::npos)
      << plan.nothing_quantized;
  ASSERT_FALSE(plan.warnings.empty());
  EXPECT_EQ(plan.warnings.back(), plan.nothing_quantized);
  // A scheme that quantizes something leaves it empty.
  EXPECT_TRUE(plan_precision(m, test::quant_catalog(), {"fp8", ""}).nothing_quantized.empty());
}

TEST(PrecisionPlan, GgufFileTypeFollowsLlamaCppMixture) {
  const ModelSpec m = tiny_llama();
  const PrecisionPlan plan = plan_precision(m, test::quant_catalog(), {"gguf:Q4_K_M", ""});
  // Untied output -> Q6_K; attn_v / ffn_down on use_more_bits layers (n = 2: both) -> Q6_K;
  // token_embd keeps Q4_K; norms F32.
  EXPECT_EQ(find(plan, m, "lm_head.weight").format, "Q6_K");
  EXPECT_EQ(find(plan, m, "model.layers.1.self_attn.v_proj.weight").format, "Q6_K");
  EXPECT_EQ(find(plan, m, "model.embed_tokens.weight").format, "Q4_K");
  EXPECT_EQ(find(plan, m, "model.norm.weight").format, "fp32");
  EXPECT_EQ(find(plan, m, "lm_head.weight").bytes, 1000u * 210u);  // one Q6_K block per row
}

// A vision tower goes to the --mmproj file: llama-quantize never sees it, so its 14-wide patch
// rows (no Q8_0 fallback) must not reach the mixture, and it keeps f16 (1-D: f32). Until
// 2026-12-05 a CUDA plan of Gemma-3 at gguf:Q8_0 failed with "no fallback for Q8_0 (row of 14)".
TEST(PrecisionPlan, GgufFileTypeLeavesTheVisionTowerToTheProjectorFile) {
  ModelSpec m = tiny_llama();
  TensorInfo patch;
  patch.name = "vision_tower.patch_embedding.weight";
  patch.role = TensorRole::Vision;
  patch.shape = {1152, 3, 14, 14};
  m.tensors.push_back(patch);
  TensorInfo bias = patch;
  bias.name = "vision_tower.patch_embedding.bias";
  bias.shape = {1152};
  bias.is_bias = true;
  m.tensors.push_back(bias);
  const PrecisionPlan plan = plan_precision(m, test::quant_catalog(), {"gguf:Q8_0", ""});
  EXPECT_EQ(find(plan, m, "vision_tower.patch_embedding.weight").format, "fp16");
  EXPECT_EQ(find(plan, m, "vision_tower.patch_embedding.weight").bytes, 1152u * 3 * 14 * 14 * 2);
  EXPECT_EQ(find(plan, m, "vision_tower.patch_embedding.bias").format, "fp32");
  EXPECT_EQ(find(plan, m, "model.layers.0.self_attn.q_proj.weight").format, "Q8_0");
}

// A Mamba layer's GGUF names decide what llama-quantize keeps: ssm_conv1d (4-wide kernel rows, no
// Q8_0 fallback) is never quantized, ssm_a / ssm_d are not ".weight" tensors.
TEST(PrecisionPlan, GgufFileTypeKeepsMambaConvAndStateTensors) {
  ModelSpec m = tiny_llama();
  const auto add = [&](std::string name, std::vector<std::uint64_t> shape) {
    TensorInfo t;
    t.name = std::move(name);
    t.role = TensorRole::Recurrent;
    t.layer = 0;
    t.shape = std::move(shape);
    m.tensors.push_back(t);
  };
  add("model.layers.0.mixer.conv1d.weight", {768, 1, 4});
  add("model.layers.0.mixer.A_log", {512, 16});
  add("model.layers.0.mixer.in_proj.weight", {1024, 256});
  const PrecisionPlan plan = plan_precision(m, test::quant_catalog(), {"gguf:Q8_0", ""});
  // The conversion writes it F32 (convert_hf_to_gguf.py prepare_tensors keeps SSM_CONV1D in float32;
  // the F16 oracle load of Nemotron-H matched only so) and llama-quantize never quantizes it (a Q8_0
  // row needs 32 values).
  EXPECT_EQ(find(plan, m, "model.layers.0.mixer.conv1d.weight").format, "fp32");
  EXPECT_EQ(find(plan, m, "model.layers.0.mixer.A_log").format, "fp32");
  EXPECT_EQ(find(plan, m, "model.layers.0.mixer.in_proj.weight").format, "Q8_0");
}

TEST(PrecisionPlan, UnknownQuantMethodIsRefused) {
  ModelSpec m = tiny_llama();
  m.quantization_config_json = R"({"quant_method": "quip"})";
  try {
    plan_precision(m, test::quant_catalog(), {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnknownName);
  }
}

}  // namespace
}  // namespace vramplan
