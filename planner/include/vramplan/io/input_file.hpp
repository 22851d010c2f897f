// vramplan/io/input_file.hpp — what a path names, checked before anything opens it.
//
// open() on a FIFO blocks until a writer appears, and a character device can be read forever,
// so every input file is stat()ed first and only regular files (after following symlinks) are
// opened. The format of a model file is told by its first bytes, not by its name: a GGUF file
// renamed to model.bin is still GGUF.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace vramplan {

//! Throws Error(Io) naming `path` (or `display`, when given) unless it is an existing regular file: "no such file"
//! (or, for a symbolic link, "a loop of symbolic links" / "a symbolic link to nothing"), "is a directory, expected a
//! file", or "is not a regular file (a FIFO, socket or device)".
void require_regular_file(const std::filesystem::path& path, std::string_view display = {});

//! Why `path`, which std::filesystem::status (error `status_error`) did not find, is missing: `absent` ("no such
//! file"), or for a symbolic link "a loop of symbolic links" / "a symbolic link to nothing (its target does not
//! exist)".
std::string missing_file_reason(const std::filesystem::path& path, const std::error_code& status_error,
                                std::string_view absent = "no such file");

enum class FileMagic {
  Gguf,         //!< starts with "GGUF"
  Safetensors,  //!< an 8-byte little-endian header length, then '{'
  Other,        //!< anything else (JSON is checked by its parser)
};

//! The format told by the first 9 bytes of a regular file (require_regular_file first).
FileMagic sniff_magic(const std::filesystem::path& path);

}  // namespace vramplan
