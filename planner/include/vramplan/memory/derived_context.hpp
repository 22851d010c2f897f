// vramplan/memory/derived_context.hpp — the longest context an engine derives from a model's
// config, which a user-given length may not exceed without an environment override.
//
// vLLM (config/model.py _get_and_verify_max_len) and SGLang (configs/model_config.py
// _derive_context_length, get_context_length) both start from max_position_embeddings and scale it
// by the rope-scaling factor, except for rope types that already count the extended length
// ("su", "longrope" and "llama3": no factor). Yarn differs between them (vLLM multiplies
// original_max_position_embeddings, SGLang takes no factor when that key is present); the spec does
// not keep that key, so a yarn model's limit is unknown here.
#pragma once

#include <cstdint>
#include <optional>

#include "vramplan/model/spec.hpp"

namespace vramplan::memory {

//! The derived limit in tokens; nullopt when unknown (yarn, or no max_position_embeddings).
std::optional<std::uint64_t> derived_context_length(const ModelArch& arch);

}  // namespace vramplan::memory
