// vramplan/quant/gguf_mixture.hpp — which ggml type llama.cpp's quantizer gives each tensor of a
// model for a file type (Q4_K_M, Q3_K_L, IQ4_XS, MXFP4_MOE, ...).
//
// A port of src/llama-quant.cpp (llama_tensor_get_type / llama_tensor_get_type_impl /
// tensor_type_fallback / tensor_allows_quantization, llama.cpp 3f545bec, Aug 2026) applied to the
// tensors convert_hf_to_gguf.py writes: 1-D tensors, norms, routers and position embeddings
// F32, other weights in the conversion type (F16 by default); DeepSeek MLA's attn_kv_b split into
// attn_k_b {n_head, kv_lora_rank, qk_nope} and attn_v_b {n_head, v_head_dim, kv_lora_rank}.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/model/spec.hpp"
#include "vramplan/quant/format.hpp"
#include "vramplan/quant/scheme.hpp"

namespace vramplan {

//! One tensor as the GGUF file stores it (an inventory tensor maps to one or, for the split
//! MLA attn_kv_b, two of these).
struct GgufTensorChoice {
  std::string gguf_name;               //!< "blk.3.attn_v.weight"
  std::vector<std::uint64_t> shape;    //!< outermost first
  std::string type;                    //!< ggml type name: "Q6_K", "F32", ...
  std::uint64_t bytes = 0;             //!< exact tensor data bytes
  std::string reason;                  //!< why this type (the llama.cpp rule that chose it)
};

struct GgufTensorPlan {
  std::size_t tensor_index = 0;  //!< index into ModelSpec::tensors
  std::vector<GgufTensorChoice> parts;
};

//! Predicts every inventory tensor's GGUF type and bytes for `file_type`. `conversion_type` is
//! the type convert_hf_to_gguf.py wrote the quantizable weights in ("F16", "BF16", "F32").
std::vector<GgufTensorPlan> plan_gguf_file_type(const ModelSpec& model, const GgufFileType& file_type,
                                                const QuantCatalog& catalog,
                                                const std::string& conversion_type = "F16");

//! llama.cpp's use_more_bits(i, n): layers that get a bigger type in the *_M mixes.
bool gguf_use_more_bits(int i_layer, int n_layers);

}  // namespace vramplan
