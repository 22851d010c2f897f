// vramplan/model/tp_validity.hpp — which tensor-parallel sizes a model can be split into, and why
// not. The rules are vLLM's (the strictest of the engines modelled):
//   attention heads % TP == 0       vllm/config ModelConfig.verify_with_parallel_config:
//                                   "Total number of attention heads (H) must be divisible by
//                                   tensor parallel size (TP)."
//   KV heads % TP == 0, or TP % KV heads == 0 (heads replicated)
//                                   vllm/model_executor/layers/linear.py QKVParallelLinear (divide())
//   MLP intermediate % TP == 0      ColumnParallelLinear: output_size_per_partition = divide(...)
// MLA models (DeepSeek) keep one latent KV "head" replicated on every rank: no KV-head rule.
// Pipeline stages must not outnumber the decoder layers. Every plan refuses a split that breaks
// them (memory::resolve_plan); check, sweep and limits report it per layout.
#pragma once

#include <cstdint>
#include <string>

#include "vramplan/model/spec.hpp"

namespace vramplan {

struct TpCheck {
  std::uint64_t tp = 1;
  bool valid = true;
  std::string why;  //!< the first rule broken, with the numbers ("" when valid)
};

TpCheck check_tp(const ModelArch& arch, std::uint64_t tp);
//! "" when `pp` stages can hold the layers, else why not.
std::string check_pp(const ModelArch& arch, std::uint64_t pp);
//! Error(Usage) "TP 64 is invalid for llama-3.1-8b: attention heads (32) must be divisible by
//! TP 64" (or check_pp's reason) when the model cannot be split so.
void require_valid_split(const ModelArch& arch, const std::string& model_id, std::uint64_t tp, std::uint64_t pp);

}  // namespace vramplan
