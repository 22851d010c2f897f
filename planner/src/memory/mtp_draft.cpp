// The MTP draft's weights and KV; the rules and their sources are in vramplan/memory/mtp_draft.hpp.
#include "vramplan/memory/mtp_draft.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan::memory {

namespace {

// Both engines build these drafts from the target's checkpoint (SGLang server_args.py
// _handle_speculative_decoding, vLLM config/speculative.py hf_config_override: DeepSeekMTPModel),
// and this planner builds them with their MTP tensors (model/family_deepseek.cpp).
constexpr std::array<std::string_view, 4> kMtpDraftArchitectures = {
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM", "Glm4MoeLiteForCausalLM"};

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

}  // namespace

std::string mtp_draft_unsupported(const ModelArch& arch) {
  const bool listed = std::find(kMtpDraftArchitectures.begin(), kMtpDraftArchitectures.end(), arch.architecture) !=
                      kMtpDraftArchitectures.end();
  const std::string name = arch.architecture.empty() ? std::string("this model") : arch.architecture;
  if (!listed)
    return name + " is not modelled with a draft: only the MTP layer of DeepSeek-V3 / V3.2 / GLM-5 / GLM-4.7-Flash "
                  "checkpoints, which the engines load from the target's own files";
  if (arch.mtp_layers == 0) return name + " has no MTP layer in its checkpoint (num_nextn_predict_layers 0)";
  if (arch.mtp_layers != 1)
    return "the config has " + std::to_string(arch.mtp_layers) +
           " MTP layers; one is modelled (SGLang's deepseek_weight_loader.py: 'Only 1 nextn layer is supported')";
  return "";
}

std::uint64_t mtp_draft_weight_bytes(const ModelSpec& model, const ResolvedWeights& rw, std::uint64_t tp) {
  std::uint64_t whole = 0, split = 0;
  for (std::size_t i = 0; i < model.tensors.size(); ++i) {
    const TensorInfo& t = model.tensors[i];
    if (t.role != TensorRole::Mtp) continue;
    if (contains(t.name, "embed_tokens") || contains(t.name, "shared_head.head")) continue;  // the target's
    if (contains(t.name, "eh_proj")) {
      whole = checked_add(whole, checked_mul(t.elements(), rw.compute_bytes), "draft eh_proj");
    } else if (contains(t.name, "enorm") || contains(t.name, "hnorm") || contains(t.name, "shared_head.norm")) {
      whole = checked_add(whole, rw.tensor_bytes.at(i), "draft norms");
    } else {
      split = checked_add(split, rw.tensor_bytes.at(i), "draft layer");
    }
  }
  return checked_add(whole, split / std::max<std::uint64_t>(tp, 1), "draft weights");
}

LayerKv mtp_draft_kv_layer(const KvLayout& kv) {
  const LayerKv* most = nullptr;
  for (const auto& l : kv.layers)
    if (!l.shared && l.state_bytes == 0 && (!most || l.bytes_per_token > most->bytes_per_token)) most = &l;
  if (!most) throw_internal("MTP draft: the target has no attention layer to copy");
  return *most;
}

}  // namespace vramplan::memory
