// vramplan/model/gguf_model.hpp — a GGUF file (io/gguf.hpp reads it as file structures) turned
// into a ModelSpec: the reader knows bytes and keys, model/ knows what they mean.
#pragma once

#include <filesystem>

#include "vramplan/io/format_table.hpp"
#include "vramplan/io/gguf.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan {

//! The tensor table and architecture metadata of a GGUF as a ModelSpec (source.kind "gguf"):
//! tensor names "blk.N.<role>.weight" -> role + layer, shapes outermost-first, stored_format /
//! stored_bytes exact; `<arch>.*` keys -> ModelArch (see docs/formats.md for the key map).
ModelSpec model_from_gguf(const GgufFile& file, const FormatTable& catalog);
ModelSpec model_from_gguf_file(const std::filesystem::path& path, const FormatTable& catalog);

//! "" when the GGUF spec holds what llama.cpp creates for every architecture (token_embd.weight,
//! a tensor in every block), else the one-line reason llama.cpp refuses it ("missing tensor"),
//! naming the file. load_model refuses such a file; inspect lists it with the reason as a warning.
std::string gguf_missing_tensors(const ModelSpec& spec);

}  // namespace vramplan
