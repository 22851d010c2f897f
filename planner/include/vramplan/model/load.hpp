// vramplan/model/load.hpp — one entry point from "what the user typed" to a ModelSpec.
//
//   catalogue id          -> models/<id>.json
//   path to config.json   -> HF config (+ the safetensors headers beside it, when present)
//   directory             -> its config.json (+ safetensors headers)
//   path to a .gguf file  -> the GGUF header (every split of a gguf-split model)
//
// A bare name (no '/', no leading '.', no .json / .gguf / .safetensors extension) is always a
// catalogue id, even when a file of that name is in the working directory; a path needs one of
// those marks ("./my-model"). ModelSpec::source says which was read.
#pragma once

#include <string>
#include <string_view>

#include "vramplan/io/data_root.hpp"
#include "vramplan/model/hf_config.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan {

class FormatTable;

struct LoadOptions {
  HfLoadOptions hf;
};

//! Which source a spec was read from, for every output that names the model: "catalogue entry
//! models/llama-3.1-8b.json", "checkpoint /m (config.json + safetensors headers)", "GGUF file
//! /m.gguf", "config.json /m/config.json (no safetensors read)".
std::string model_source_text(const ModelSource& source);

//! Throws Error(UnknownName) with close catalogue matches when `what` is neither an existing
//! path nor a catalogue id; Error(Io)/Error(InputFile) for unreadable or malformed files.
ModelSpec load_model(std::string_view what, const DataRoot& root, const LoadOptions& options = {});
//! The same with the quant catalogue the caller already loaded (GGUF files and safetensors
//! checkpoints need it): a caller that holds one does not read data/quant_formats.json again.
ModelSpec load_model(std::string_view what, const DataRoot& root, const FormatTable& quant,
                     const LoadOptions& options = {});

}  // namespace vramplan
