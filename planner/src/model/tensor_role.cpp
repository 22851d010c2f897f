// The one table of tensor-role names (llama.cpp's tensor names) and layer-attention names.
#include <array>
#include <utility>

#include "vramplan/core/bytes.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan {
namespace {

constexpr std::array<std::pair<TensorRole, std::string_view>, 50> kRoleNames{{
    {TensorRole::TokenEmbedding, "token_embd"},
    {TensorRole::PositionEmbedding, "pos_embd"},
    {TensorRole::Output, "output"},
    {TensorRole::OutputNorm, "output_norm"},
    {TensorRole::AttnNorm, "attn_norm"},
    {TensorRole::AttnQ, "attn_q"},
    {TensorRole::AttnK, "attn_k"},
    {TensorRole::AttnV, "attn_v"},
    {TensorRole::AttnQKV, "attn_qkv"},
    {TensorRole::AttnOutput, "attn_output"},
    {TensorRole::AttnQNorm, "attn_q_norm"},
    {TensorRole::AttnKNorm, "attn_k_norm"},
    {TensorRole::AttnPostNorm, "post_attention_norm"},
    {TensorRole::AttnSinks, "attn_sinks"},
    {TensorRole::AttnQA, "attn_q_a"},
    {TensorRole::AttnQANorm, "attn_q_a_norm"},
    {TensorRole::AttnQB, "attn_q_b"},
    {TensorRole::AttnKVAMqa, "attn_kv_a_mqa"},
    {TensorRole::AttnKVANorm, "attn_kv_a_norm"},
    {TensorRole::AttnKVB, "attn_kv_b"},
    {TensorRole::AttnKVB, "attn_k_b"},  // llama.cpp splits attn_kv_b for MLA (DeepSeek-V2/V3 GGUF)
    {TensorRole::AttnKVB, "attn_v_b"},
    {TensorRole::IndexerQB, "indexer.attn_q_b"},  // llama.cpp llama-arch.cpp LLM_TENSOR_INDEXER_*
    {TensorRole::IndexerK, "indexer.attn_k"},
    {TensorRole::IndexerKNorm, "indexer.k_norm"},
    {TensorRole::IndexerProj, "indexer.proj"},
    {TensorRole::FfnNorm, "ffn_norm"},
    {TensorRole::FfnPostNorm, "post_ffw_norm"},
    {TensorRole::FfnGate, "ffn_gate"},
    {TensorRole::FfnUp, "ffn_up"},
    {TensorRole::FfnDown, "ffn_down"},
    {TensorRole::FfnGateUp, "ffn_gate_up"},
    {TensorRole::FfnGateInp, "ffn_gate_inp"},
    {TensorRole::FfnExpProbsBias, "exp_probs_b"},
    {TensorRole::FfnGateExps, "ffn_gate_exps"},
    {TensorRole::FfnUpExps, "ffn_up_exps"},
    {TensorRole::FfnDownExps, "ffn_down_exps"},
    {TensorRole::FfnGateUpExps, "ffn_gate_up_exps"},
    {TensorRole::FfnGateShexp, "ffn_gate_shexp"},
    {TensorRole::FfnUpShexp, "ffn_up_shexp"},
    {TensorRole::FfnDownShexp, "ffn_down_shexp"},
    {TensorRole::FfnGateInpShexp, "ffn_gate_inp_shexp"},
    {TensorRole::FfnLatentDown, "ffn_latent_down"},  // llama.cpp llama-arch.cpp LLM_TENSOR_FFN_LATENT_*
    {TensorRole::FfnLatentUp, "ffn_latent_up"},
    {TensorRole::RopeFreqs, "rope_freqs"},
    {TensorRole::Recurrent, "recurrent"},
    {TensorRole::Vision, "vision"},
    {TensorRole::Audio, "audio"},
    {TensorRole::Mtp, "mtp"},
    {TensorRole::Other, "other"},
}};

constexpr std::array<std::pair<LayerAttention, std::string_view>, 6> kAttentionNames{{
    {LayerAttention::Full, "full"},
    {LayerAttention::Sliding, "sliding"},
    {LayerAttention::Chunked, "chunked"},
    {LayerAttention::Mla, "mla"},
    {LayerAttention::Recurrent, "recurrent"},
    {LayerAttention::None, "none"},
}};

}  // namespace

std::string_view tensor_role_name(TensorRole role) {
  for (const auto& [r, name] : kRoleNames)
    if (r == role) return name;
  return "other";
}

std::optional<TensorRole> tensor_role_from_name(std::string_view name) {
  for (const auto& [r, n] : kRoleNames)
    if (n == name) return r;
  return std::nullopt;
}

bool is_routed_expert_role(TensorRole role) {
  return role == TensorRole::FfnGateExps || role == TensorRole::FfnUpExps ||
         role == TensorRole::FfnDownExps || role == TensorRole::FfnGateUpExps;
}

bool is_mmproj_role(TensorRole role) { return role == TensorRole::Vision || role == TensorRole::Audio; }

std::string_view layer_attention_name(LayerAttention kind) {
  for (const auto& [k, name] : kAttentionNames)
    if (k == kind) return name;
  return "none";
}

std::optional<LayerAttention> layer_attention_from_name(std::string_view name) {
  for (const auto& [k, n] : kAttentionNames)
    if (n == name) return k;
  return std::nullopt;
}

std::uint64_t TensorInfo::elements() const {
  std::uint64_t n = 1;
  for (auto d : shape) n = checked_mul(n, d, "tensor '" + name + "' element count");
  return n;
}

}  // namespace vramplan
