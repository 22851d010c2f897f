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

}  // namespace vramplan
