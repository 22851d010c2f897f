// vramplan/quant/precision_plan.hpp — a storage format and exact bytes for every tensor.
//
// Defaults come from the checkpoint: stored formats when the inventory was read from a file
// (safetensors / GGUF), else the config's quantization_config (gptq, awq, compressed-tensors,
// fp8, bitsandbytes, mxfp4, modelopt) and torch_dtype. --weights overrides them; each scheme's
// rules (data/quant_schemes.json) say which tensors stay in higher precision, with a source.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/model/spec.hpp"
#include "vramplan/quant/format.hpp"
#include "vramplan/quant/scheme.hpp"

namespace vramplan {

struct PrecisionRequest {
  std::string weights;  //!< --weights ("" = what the checkpoint holds)
  std::string dtype;    //!< --dtype ("" or "auto" = the config's torch_dtype, else bf16)
};

struct TensorPrecision {
  std::size_t index = 0;  //!< into ModelSpec::tensors
  std::string format;     //!< quant_formats.json row; "Q5_0+Q4_K" for a tensor stored in parts
  std::uint64_t bytes = 0;
  bool quantized = false;  //!< in the scheme's quantized format (not kept in higher precision)
  std::string reason;
};

struct RoleBytes {
  TensorRole role = TensorRole::Other;
  std::uint64_t tensors = 0;
  std::uint64_t params = 0;
  std::uint64_t bytes = 0;
};

struct FormatBytes {
  std::string format;
  std::uint64_t params = 0;
  std::uint64_t bytes = 0;
};

struct PrecisionPlan {
  WeightScheme scheme;           //!< what was applied (kind Checkpoint when nothing overrode it)
  std::string model_dtype;       //!< format row of the unquantized tensors ("bf16")
  std::vector<TensorPrecision> tensors;  //!< one per ModelSpec tensor, same order
  std::vector<RoleBytes> by_role;        //!< roles in first-seen order
  std::vector<FormatBytes> by_format;
  std::uint64_t total_bytes = 0;
  std::uint64_t total_params = 0;
  std::uint64_t kept_bytes = 0;  //!< bytes of tensors kept out of the quantized format
  std::string weights_precision;  //!< "gptq-4bit-g128 (mixed: 2.1 GiB bf16 kept)"
  std::string compute_precision;  //!< activation dtype: "fp16", "bf16", "fp8 activations, bf16 elsewhere"
  std::vector<std::string> warnings;
  //! Set (and in `warnings`) when a quantizing scheme found no tensor to quantize, e.g. mxfp4 on
  //! a dense model: the size is the dtype's, and a decision must say so.
  std::string nothing_quantized;
};

PrecisionPlan plan_precision(const ModelSpec& model, const QuantCatalog& catalog, const PrecisionRequest& request);

//! The scheme a checkpoint's quantization_config describes, with the module names it leaves
//! unquantized (compressed-tensors `ignore`, `modules_to_not_convert`, modelopt `exclude_modules`,
//! bitsandbytes `llm_int8_skip_modules`). nullopt when the config is empty.
struct CheckpointQuant {
  WeightScheme scheme;
  std::vector<std::string> ignore;  //!< module names, globs ("model.layers.*.self_attn") or "re:" regexes
  bool quantize_output = false;     //!< GPTQModel lm_head=true
  std::string method;               //!< quant_method as written
};
std::optional<CheckpointQuant> checkpoint_quantization(const ModelSpec& model, const QuantCatalog& catalog);

//! True when HF module `module` (a tensor name without ".weight"/".bias") matches an ignore entry.
bool module_ignored(std::string_view module, const std::vector<std::string>& ignore);

}  // namespace vramplan
