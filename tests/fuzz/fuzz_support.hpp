// fuzz_support.hpp — what every libFuzzer target (tests/fuzz/*_fuzz.cpp) shares.
//
// The readers take paths (they stat, size and stream their file), so each input is written to a
// file in the fuzzer process's own scratch directory and the reader runs on it. A vramplan::Error
// is the expected way to refuse an input; anything else — another exception, a crash, a
// sanitizer report, a run past -timeout or -rss_limit_mb — is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "vramplan/core/error.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan::fuzz {

//! <tmp>/vramplan-fuzz-<pid>/, created on first use.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    auto p = std::filesystem::temp_directory_path() / ("vramplan-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(p);
    return p;
  }();
  return dir;
}

//! Writes `size` bytes to <scratch>/<relative> (parents created) and returns the path.
inline std::filesystem::path write_input(const std::uint8_t* data, std::size_t size, const std::string& relative) {
  const auto path = scratch_dir() / relative;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

//! The repository's data/<name> (the fuzz build knows its source directory).
inline std::filesystem::path data_file(const std::string& name) {
  return std::filesystem::path(VRAMPLAN_SOURCE_DIR) / "data" / name;
}

//! data/quant_formats.json, loaded once.
inline const QuantCatalog& quant_formats() {
  static const QuantCatalog catalog = QuantCatalog::load(data_file("quant_formats.json"));
  return catalog;
}

//! Runs `read`; a vramplan::Error is a clean refusal, everything else escapes to libFuzzer.
template <class Read>
int refuse_cleanly(Read&& read) {
  try {
    read();
  } catch (const Error&) {
  }
  return 0;
}

}  // namespace vramplan::fuzz
