// Families without a catalogue entry yet, on tiny hand-counted configs.
// Common dims: h 64, intermediate 128, 1 layer, 4 heads / 2 KV heads (head_dim 16), vocab 256.
//   q, o: 64x64 = 4096 each; k, v: 32x64 = 2048 each  -> attention 12,288
//   gated MLP: 3 x 64 x 128 = 24,576;  embedding / lm_head: 256 x 64 = 16,384;  a norm: 64
#include <gtest/gtest.h>

#include "vramplan/model/hf_config.hpp"
#include "vramplan/model/inventory.hpp"

namespace vramplan {
namespace {

nlohmann::json tiny(const std::string& architecture) {
  return {{"architectures", {architecture}}, {"hidden_size", 64},   {"intermediate_size", 128},
          {"num_hidden_layers", 1},          {"num_attention_heads", 4}, {"num_key_value_heads", 2},
          {"vocab_size", 256},               {"max_position_embeddings", 128}};
}

std::uint64_t total(const nlohmann::json& config) {
  return count_params(model_from_hf_config(config, "tiny.json")).total;
}

TEST(Families, GraniteIsLlamaShaped) {
  auto c = tiny("GraniteForCausalLM");
  c["tie_word_embeddings"] = true;
  // embed + (attention + MLP + 2 norms) + final norm.
  EXPECT_EQ(total(c), 16384u + (12288 + 24576 + 128) + 64);
}

TEST(Families, CohereOneLayerNormAndPerHeadQkNorm) {
  auto c = tiny("CohereForCausalLM");
  c["use_qk_norm"] = true;
  // tied by default; one bias-free LayerNorm; q_norm {4,16} + k_norm {2,16}.
  EXPECT_EQ(total(c), 16384u + (12288 + 24576 + 64 + 64 + 32) + 64);
}

TEST(Families, Glm4FourNormsQkvBiasFusedGateUp) {
  auto c = tiny("Glm4ForCausalLM");
  c["attention_bias"] = true;
  c["partial_rotary_factor"] = 0.5;
  const auto spec = model_from_hf_config(c, "tiny.json");
  // q/k/v biases 64 + 32 + 32; gate_up_proj {256, 64} + down = 24,576; 4 norms; untied.
  EXPECT_EQ(count_params(spec).total, 16384u + (12288 + 128 + 24576 + 256) + 64 + 16384);
  EXPECT_EQ(spec.arch.rope_tables[0].rotary_dim, 8u);  // 16 x 0.5
}

TEST(Families, Falcon7bStyleMultiQuery) {
  nlohmann::json c = {{"architectures", {"FalconForCausalLM"}}, {"hidden_size", 64},
                      {"num_hidden_layers", 1}, {"num_attention_heads", 4}, {"multi_query", true},
                      {"parallel_attn", true}, {"vocab_size", 256}};
  const auto spec = model_from_hf_config(c, "tiny.json");
  EXPECT_EQ(spec.arch.num_kv_heads, 1u);
  // query_key_value (4 + 2) x 16 = 96 rows; dense 64x64; MLP 2 x 64 x 256 (4h);
  // input_layernorm + ln_f with bias; tied.
  EXPECT_EQ(count_params(spec).total, 16384u + (96 * 64 + 4096 + 2 * 64 * 256 + 128) + 128);
}

TEST(Families, FalconContextFromTheConfigClassDefault) {
  // The original RW configs (Falcon-7B/40B) have no max_position_embeddings; transformers'
  // FalconConfig fills 2048. An explicit value wins.
  nlohmann::json c = {{"architectures", {"RWForCausalLM"}}, {"hidden_size", 64},
                      {"n_layer", 1}, {"n_head", 4}, {"multi_query", true}, {"vocab_size", 256}};
  EXPECT_EQ(model_from_hf_config(c, "tiny.json").arch.max_position_embeddings, 2048u);
  c["max_position_embeddings"] = 4096;
  EXPECT_EQ(model_from_hf_config(c, "tiny.json").arch.max_position_embeddings, 4096u);
}

TEST(Families, Mistral3CountsItsPixtralTower) {
  nlohmann::json c = {{"architectures", {"Mistral3ForConditionalGeneration"}},
                      {"text_config", tiny("MistralForCausalLM")},
                      {"vision_config", {{"model_type", "pixtral"}, {"hidden_size", 32}, {"intermediate_size", 64},
                                         {"num_hidden_layers", 1}, {"patch_size", 4}, {"image_size", 16}}}};
  const auto spec = model_from_hf_config(c, "tiny.json");
  // Pixtral (w 32): patch_conv 32·3·4·4 = 1536, ln_pre 32, one layer 32 + 4·32² + 32 + 3·32·64 = 10304;
  // Mistral3 projector: norm 32, merger 32·(32·2²) = 4096, linear_1 64·32 = 2048, linear_2 64·64 = 4096.
  const std::uint64_t vision = 1536 + 32 + 10304 + (32 + 4096 + 2048 + 4096);
  const auto counts = count_params(spec);
  EXPECT_EQ(counts.vision, vision);
  EXPECT_EQ(counts.total, 16384u + (12288 + 24576 + 128) + 64 + 16384 + vision);
  EXPECT_TRUE(spec.exclusions.empty());
  EXPECT_TRUE(spec.arch.multimodal);
  EXPECT_EQ(spec.arch.mm_tokens_per_item, 4u);  // (16 / 4 / 2)^2 merged patches
  EXPECT_EQ(spec.tensors.front().name, "language_model.model.embed_tokens.weight");
  EXPECT_EQ(spec.tensors.back().name, "multi_modal_projector.linear_2.weight");
  // A vision_feature_layer of -2 builds one layer fewer (vLLM mistral3.py _get_num_hidden_layers).
  c["vision_config"]["num_hidden_layers"] = 2;
  c["vision_feature_layer"] = -2;
  EXPECT_EQ(count_params(model_from_hf_config(c, "tiny.json")).vision, vision);
}

TEST(Families, Qwen2MoeSharedExpertAndSparseStep) {
  auto c = tiny("Qwen2MoeForCausalLM");
  c["num_hidden_layers"] = 2;
  c["num_experts"] = 4;
  c["num_experts_per_tok"] = 2;
  c["moe_intermediate_size"] = 32;
  c["shared_expert_intermediate_size"] = 96;
  c["decoder_sparse_step"] = 2;  // only layer 1 ((1 + 1) % 2 == 0) is sparse
  const auto spec = model_from_hf_config(c, "tiny.json");
  EXPECT_EQ(spec.arch.layer_is_moe, (std::vector<bool>{false, true}));
  // layer 0 dense; layer 1: router 4x64, experts 4 x 3 x 64 x 32, shared 3 x 64 x 96,
  // shared_expert_gate 1x64. Both layers: attention + q/k/v bias (64 + 32 + 32) + 2 norms.
  const std::uint64_t attn = 12288 + 128 + 128;
  EXPECT_EQ(count_params(spec).total,
            16384u + (attn + 24576) + (attn + 256 + 4 * 3 * 64 * 32 + 3 * 64 * 96 + 64) + 64 + 16384);
}

}  // namespace
}  // namespace vramplan
