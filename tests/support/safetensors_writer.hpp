// safetensors_writer.hpp — writes safetensors files for tests: an 8-byte little-endian header
// length, the JSON header (space-padded to 8 bytes as the reference writer does) and a
// zero-filled data section. Offsets default to back-to-back; any of them can be overridden.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vramplan::test {

struct SafetensorsEntry {
  SafetensorsEntry(std::string n, std::string dt, std::vector<std::uint64_t> s, std::uint64_t bytes,
                   std::optional<std::pair<std::uint64_t, std::uint64_t>> offs = std::nullopt)
      : name(std::move(n)), dtype(std::move(dt)), shape(std::move(s)), nbytes(bytes), offsets(offs) {}
  std::string name;
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::uint64_t nbytes = 0;  //!< hand-computed by the caller
  std::optional<std::pair<std::uint64_t, std::uint64_t>> offsets;  //!< default: running
};

//! A whole file from entries (with a "__metadata__" {"format": "pt"} block).
std::string build_safetensors(const std::vector<SafetensorsEntry>& entries);
//! A file from raw header text: length prefix (or `declared_length`), header, `data_bytes` zeros.
std::string build_safetensors_raw(const std::string& header, std::uint64_t data_bytes,
                                  std::optional<std::uint64_t> declared_length = std::nullopt);

}  // namespace vramplan::test
