// llama.cpp model buffers: which device holds each tensor, and how the host part is held.
#include <algorithm>
#include <limits>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/llamacpp.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan::llamacpp {
namespace {

enum class Place { Host, Gpu };

Place placement(const TensorInfo& t, const Offload& o) {
  if (t.layer) return static_cast<std::uint64_t>(*t.layer) >= o.first_gpu_layer ? Place::Gpu : Place::Host;
  switch (t.role) {
    case TensorRole::Output:
    case TensorRole::OutputNorm:
      return o.output_on_gpu ? Place::Gpu : Place::Host;  // the output layer's context
    case TensorRole::RopeFreqs:
      return o.first_gpu_layer == 0 ? Place::Gpu : Place::Host;  // created with layer 0
    default:
      return Place::Host;  // token_embd and other input-side tensors stay on the host
  }
}

}  // namespace

std::uint64_t stored_tensor_bytes(const TensorInfo& t, const QuantCatalog& quant) {
  if (t.stored_bytes) return *t.stored_bytes;
  if (t.stored_format.empty())
    throw_usage("tensor '" + t.name + "' has no stored format: give the GGUF file or a file type");
  return tensor_bytes(quant.get(t.stored_format), t.shape, t.name);
}

bool is_repacked(const TensorInfo& t, const LlamacppProfile& profile) {
  if (std::find(profile.repack_types.begin(), profile.repack_types.end(), t.stored_format) ==
      profile.repack_types.end())
    return false;
  // Only matrix-multiply weights are repacked: token_embd is read by GET_ROWS.
  if (t.is_bias || t.role == TensorRole::TokenEmbedding || t.role == TensorRole::PositionEmbedding)
    return false;
  // ne[1] (rows) must split into the 8-row interleaved groups; 2-D weights, or stacked experts
  // (MUL_MAT_ID). Other 3-D weights (MLA attn_k_b / attn_v_b) stay in the mapped file.
  const auto& sh = t.shape;
  if (sh.size() == 2) return sh[0] % profile.repack_row_multiple == 0;
  if (sh.size() == 3 && is_routed_expert_role(t.role)) return sh[1] % profile.repack_row_multiple == 0;
  return false;
}

std::vector<ModelBuffer> model_buffers(const ModelSpec& model, const Settings& s,
                                       const LlamacppProfile& profile, const QuantCatalog& quant) {
  const Offload off = offload_split(model.arch.num_layers, s);
  const std::uint64_t align = profile.tensor_alignment;

  // The host part is mmap'd: CPU_Mapped is the file span from the first to the last host tensor
  // that is not repacked (llama_model_loader::get_mapping_range), so repacked tensors inside the
  // span still count there, and only those at its ends come off.
  std::uint64_t offset = 0;
  std::uint64_t span_begin = std::numeric_limits<std::uint64_t>::max(), span_end = 0;
  std::uint64_t repack = 0, gpu = 0, token_embd = 0;
  bool has_output = false;
  for (const auto& t : model.tensors) {
    const std::uint64_t bytes = stored_tensor_bytes(t, quant);
    if (t.role == TensorRole::Output) has_output = true;
    if (t.role == TensorRole::TokenEmbedding) token_embd = bytes;
    if (placement(t, off) == Place::Gpu) {
      gpu = checked_add(gpu, round_up(bytes, align));
    } else if (s.repack && is_repacked(t, profile)) {
      repack = checked_add(repack, round_up(bytes, align));
    } else {
      span_begin = std::min(span_begin, offset);
      span_end = std::max(span_end, checked_add(offset, bytes));
    }
    offset = checked_add(offset, round_up(bytes, align));
  }
  // Tied embeddings: llama.cpp creates `output` as a duplicate of token_embd in the output
  // layer's context (TENSOR_DUPLICATED), so an offloaded output layer holds a second copy.
  if (model.arch.tied_embeddings && !has_output && off.output_on_gpu)
    gpu = checked_add(gpu, round_up(token_embd, align));

  std::vector<ModelBuffer> out;
  if (span_end > 0) out.push_back({"CPU_Mapped", false, span_end - span_begin});
  if (repack > 0) out.push_back({"CPU_REPACK", false, repack});
  if (s.device == Device::Cuda && gpu > 0) out.push_back({"CUDA0", true, gpu});
  return out;
}

}  // namespace vramplan::llamacpp
