#include "vramplan/core/limits.hpp"

#include <array>
#include <cstdint>

namespace vramplan {
namespace {

// Figures of the largest public models, from their config.json on Hugging Face.
constexpr PlausibilityLimit kLayers{"layers", 1024, "126 (Llama-3.1-405B)"};
constexpr PlausibilityLimit kHidden{"hidden size", 131072, "16384 (Llama-3.1-405B)"};
constexpr PlausibilityLimit kIntermediate{"intermediate size", 1048576, "53248 (Llama-3.1-405B)"};
constexpr PlausibilityLimit kVocab{"vocabulary", 4194304, "262208 (Gemma 3)"};
constexpr PlausibilityLimit kHeads{"attention heads", 4096, "128 (Llama-3.1-405B, DeepSeek-V3)"};
constexpr PlausibilityLimit kHeadDim{"head dimension", 16384, "256 (Gemma 2 / 3)"};
constexpr PlausibilityLimit kExperts{"experts", 4096, "512 (Qwen3-Next-80B-A3B)"};
constexpr PlausibilityLimit kPositions{"positions", kMaxContextTokens, "10485760 (Llama 4 Scout)"};
constexpr PlausibilityLimit kPixels{"image pixels", 65536, "896 (Gemma 3 SigLIP)"};
constexpr PlausibilityLimit kOther{"other count", 1u << 27, "the position limit"};

struct KeyLimit {
  std::string_view key;
  const PlausibilityLimit* limit;
};
constexpr std::array kKeys{
    KeyLimit{"num_hidden_layers", &kLayers},
    KeyLimit{"n_layer", &kLayers},
    KeyLimit{"n_deepstack_layers", &kLayers},
    KeyLimit{"attention.indexer.key_length", &kHeadDim},
    KeyLimit{"attention.indexer.head_count", &kHeads},
    KeyLimit{"num_layers", &kLayers},
    KeyLimit{"block_count", &kLayers},
    KeyLimit{"num_nextn_predict_layers", &kLayers},
    KeyLimit{"nextn_predict_layers", &kLayers},
    KeyLimit{"first_k_dense_replace", &kLayers},
    KeyLimit{"leading_dense_block_count", &kLayers},
    KeyLimit{"hidden_size", &kHidden},
    KeyLimit{"n_embd", &kHidden},
    KeyLimit{"d_model", &kHidden},
    KeyLimit{"embedding_length", &kHidden},
    KeyLimit{"kv_lora_rank", &kHidden},
    KeyLimit{"q_lora_rank", &kHidden},
    KeyLimit{"moe_latent_size", &kHidden},
    KeyLimit{"projector_input_dim", &kHidden},
    KeyLimit{"projector_output_dim", &kHidden},
    KeyLimit{"vision_output_dim", &kHidden},
    KeyLimit{"intermediate_size", &kIntermediate},
    KeyLimit{"intermediate_size_mlp", &kIntermediate},
    KeyLimit{"moe_intermediate_size", &kIntermediate},
    KeyLimit{"shared_expert_intermediate_size", &kIntermediate},
    KeyLimit{"n_inner", &kIntermediate},
    KeyLimit{"ffn_hidden_size", &kIntermediate},
    KeyLimit{"feed_forward_length", &kIntermediate},
    KeyLimit{"expert_feed_forward_length", &kIntermediate},
    KeyLimit{"expert_shared_feed_forward_length", &kIntermediate},
    KeyLimit{"vocab_size", &kVocab},
    KeyLimit{"num_attention_heads", &kHeads},
    KeyLimit{"n_head", &kHeads},
    KeyLimit{"num_heads", &kHeads},
    KeyLimit{"num_key_value_heads", &kHeads},
    KeyLimit{"index_n_heads", &kHeads},
    KeyLimit{"n_head_kv", &kHeads},
    KeyLimit{"num_kv_heads", &kHeads},
    KeyLimit{"attention.head_count", &kHeads},
    KeyLimit{"attention.head_count_kv", &kHeads},
    KeyLimit{"linear_num_key_heads", &kHeads},
    KeyLimit{"linear_num_value_heads", &kHeads},
    KeyLimit{"head_dim", &kHeadDim},
    KeyLimit{"linear_key_head_dim", &kHeadDim},
    KeyLimit{"linear_value_head_dim", &kHeadDim},
    KeyLimit{"qk_rope_head_dim", &kHeadDim},
    KeyLimit{"qk_nope_head_dim", &kHeadDim},
    KeyLimit{"v_head_dim", &kHeadDim},
    KeyLimit{"index_head_dim", &kHeadDim},
    KeyLimit{"attention.key_length", &kHeadDim},
    KeyLimit{"attention.value_length", &kHeadDim},
    KeyLimit{"attention.key_length_mla", &kHeadDim},
    KeyLimit{"attention.value_length_mla", &kHeadDim},
    KeyLimit{"rope.dimension_count", &kHeadDim},
    KeyLimit{"attention.q_lora_rank", &kHidden},
    KeyLimit{"attention.kv_lora_rank", &kHidden},
    KeyLimit{"num_local_experts", &kExperts},
    KeyLimit{"num_experts", &kExperts},
    KeyLimit{"n_routed_experts", &kExperts},
    KeyLimit{"n_shared_experts", &kExperts},
    KeyLimit{"num_experts_per_tok", &kExperts},
    KeyLimit{"experts_per_token", &kExperts},
    KeyLimit{"expert_count", &kExperts},
    KeyLimit{"expert_used_count", &kExperts},
    KeyLimit{"expert_shared_count", &kExperts},
    KeyLimit{"n_group", &kExperts},
    KeyLimit{"topk_group", &kExperts},
    KeyLimit{"expert_group_count", &kExperts},
    KeyLimit{"expert_group_used_count", &kExperts},
    KeyLimit{"max_position_embeddings", &kPositions},
    KeyLimit{"n_positions", &kPositions},
    KeyLimit{"max_sequence_length", &kPositions},
    KeyLimit{"seq_length", &kPositions},
    KeyLimit{"original_max_position_embeddings", &kPositions},
    KeyLimit{"sliding_window", &kPositions},
    KeyLimit{"index_topk", &kPositions},
    KeyLimit{"attention_chunk_size", &kPositions},
    KeyLimit{"context_length", &kPositions},
    KeyLimit{"attention.sliding_window", &kPositions},
    KeyLimit{"image_size", &kPixels},
    KeyLimit{"patch_size", &kPixels},
    KeyLimit{"num_channels", &kPixels},
};

}  // namespace

const PlausibilityLimit& config_field_limit(std::string_view key) {
  for (const auto& k : kKeys)
    if (k.key == key) return *k.limit;
  return kOther;
}

std::string count_text(std::uint64_t value) {
  return value > static_cast<std::uint64_t>(INT64_MAX) ? "a negative number" : std::to_string(value);
}

}  // namespace vramplan
