// vramplan/model/load.hpp — one entry point from "what the user typed" to a ModelSpec.
//
//   catalogue id          -> models/<id>.json
//   path to config.json   -> HF config (+ the safetensors headers beside it, when present)
//   directory             -> its config.json (+ safetensors headers)
//   path to a .gguf file  -> the GGUF header
#pragma once

#include <string_view>

#include "vramplan/io/data_root.hpp"
#include "vramplan/model/hf_config.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan {

struct LoadOptions {
  HfLoadOptions hf;
};

//! Throws Error(UnknownName) with close catalogue matches when `what` is neither an existing
//! path nor a catalogue id; Error(Io)/Error(InputFile) for unreadable or malformed files.
ModelSpec load_model(std::string_view what, const DataRoot& root, const LoadOptions& options = {});

}  // namespace vramplan
