// vramplan/model/hf_config.hpp — a ModelSpec from a Hugging Face config.json.
//
// The config is read the way transformers reads it: the architecture (`architectures[0]`) picks
// a family handler (model/hf_families.cpp) that knows which projections, biases and norms the
// module constructors create, and the handler emits ONE tensor inventory with HF tensor names.
// Multimodal configs (text_config + vision_config) are read from text_config; the vision tower
// is counted when the config describes it, otherwise it is listed in ModelSpec::exclusions.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/model/spec.hpp"

namespace vramplan {

struct HfLoadOptions {
  //! Build an unknown architecture as a Llama-style decoder (with a warning in the spec) instead
  //! of failing with Error(UnknownName).
  bool assume_llama_like = false;
  //! A checkpoint directory whose safetensors files lack a tensor the config describes is
  //! refused (Error(InputFile) naming the first one), as vLLM refuses to load it. `inspect`, which
  //! shows what the files hold, sets this to read such a checkpoint with a warning instead.
  bool allow_missing_tensors = false;
};

//! Builds the spec from a parsed config. `origin` names the file in error messages and becomes
//! ModelSource::path. Throws Error(InputFile) naming origin + field for a missing, zero, negative
//! or inconsistent field, Error(UnknownName) for an unsupported architecture.
ModelSpec model_from_hf_config(const nlohmann::json& config, std::string origin,
                               const HfLoadOptions& options = {});

//! Reads `path` (a config.json, or a directory holding one) and builds the spec.
ModelSpec model_from_hf_config_file(const std::filesystem::path& path,
                                    const HfLoadOptions& options = {});

//! The HF `architectures` values vramplan has a family handler for, sorted.
std::vector<std::string> supported_architectures();

}  // namespace vramplan
