// vramplan/model/hf_names.hpp — HF checkpoint tensor names -> TensorRole.
//
// One mapping for both directions of use: the config reader emits names that this function maps
// back to the same role (tested), and the safetensors path classifies a real checkpoint's tensor
// list with it. Names are matched on the module path after the decoder-layer index
// ("self_attn.q_proj.weight"); the few names whose meaning depends on the family
// (Gemma-2/3 "post_attention_layernorm" is a sandwich norm, in Llama it is the FFN pre-norm) are
// resolved with ModelArch::family.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "vramplan/model/spec.hpp"

namespace vramplan {

struct HfTensorClass {
  TensorRole role = TensorRole::Other;
  std::optional<int> layer;  //!< decoder layer index ("model.layers.12." -> 12)
  bool is_bias = false;
};

//! Decoder layer index of an HF tensor name ("model.layers.12.mlp..." -> 12,
//! "transformer.h.3..." -> 3); nullopt for global tensors or an unparsable index.
std::optional<int> hf_layer_index(std::string_view name);

//! Role, layer and bias flag of an HF tensor name. Layers at or beyond arch.num_layers are the
//! multi-token-prediction module (role Mtp) when arch.mtp_layers > 0. Vision / audio towers map
//! to Vision / Audio; a name nothing matches is Other (counted, never guessed about).
HfTensorClass role_from_hf_tensor_name(std::string_view name, const ModelArch& arch);

}  // namespace vramplan

namespace vramplan {

//! The inventory tensor a checkpoint tensor belongs to, as a comparable key: language-model
//! prefixes folded to "model.", an expert index replaced by '*' (stacked experts), and a
//! quantization companion (".qweight", ".weight_scale_inv", MXFP4 "_blocks", ...) mapped to its
//! weight. `is_companion` is set when the tensor is such a companion (its bytes belong to the
//! weight; its dtype is not the weight's format).
std::string hf_inventory_key(std::string_view name, bool* is_companion = nullptr);

}  // namespace vramplan
