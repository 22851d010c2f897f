// vramplan/core/limits.hpp — plausibility limits on the numbers an input file may state.
//
// A model file is untrusted: `num_hidden_layers: 10000000` would build ten million layers (tens of
// GB) and `hidden_size: 2^62` would overflow every product. Each integer a config states is
// checked against the limit of its kind, well above the largest public model (named in the
// table, docs/errors.md lists them), so a refusal always means a corrupt or hostile file, and the
// error names the field that caused it instead of a size overflow found later.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vramplan {

struct PlausibilityLimit {
  std::string_view kind;     //!< "layers", "hidden size", ...
  std::uint64_t max;         //!< largest accepted value
  std::string_view largest;  //!< the largest public figure it covers, with its model
};

//! The limit for an integer field of a model config, found by the field's name (HF config keys,
//! their aliases, and GGUF metadata key suffixes such as "block_count"). Names not in the table
//! get the "other count" limit.
const PlausibilityLimit& config_field_limit(std::string_view key);

//! rope_scaling.factor: the largest context stretch accepted (real configs use 2 to 40).
inline constexpr double kMaxRopeScalingFactor = 1024.0;
//! Concurrent sequences a plan may ask for (--batch): far above any engine's batch (vLLM's
//! max_num_seqs defaults to 256 / 1024).
inline constexpr std::uint64_t kMaxBatch = 1u << 20;  // 1,048,576
//! Tokens per sequence (--context): the position limit, 134,217,728, 12.8 x Llama 4 Scout's
//! 10,485,760-token context.
inline constexpr std::uint64_t kMaxContextTokens = 1u << 27;
//! A count option's value as an error message quotes it: the option parser reads "-3" into an
//! unsigned count as 2^64 - 3, so a value above INT64_MAX (no real count) is "a negative number".
std::string count_text(std::uint64_t value);
//! Tensors in one checkpoint (all safetensors shards together, or one GGUF file).
inline constexpr std::uint64_t kMaxTensors = 1u << 22;  // 4,194,304

}  // namespace vramplan
