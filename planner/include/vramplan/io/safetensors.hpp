// vramplan/io/safetensors.hpp — safetensors header reader (tensor table only, never tensor data).
//
// Byte layout as read_safetensors_file() checks it (https://github.com/huggingface/safetensors):
//   1. N          u64 little-endian: header length; N <= kMaxSafetensorsHeader and 8 + N <= file
//                 size, checked BEFORE the header is allocated.
//   2. header     N bytes of UTF-8 JSON: an object whose members are
//                   "__metadata__": {string: string}   (optional, ignored)
//                   "<tensor name>": {"dtype": "BF16", "shape": [d0, d1, ...],
//                                     "data_offsets": [begin, end]}
//                 (duplicate names refused; trailing spaces allowed, as writers pad to 8 bytes).
//   3. data       the rest of the file (size D = file size - 8 - N). For every tensor:
//                 begin <= end <= D, end - begin == elements x dtype size (dtype sizes from
//                 data/quant_formats.json via FormatTable::find_safetensors), and no two tensors'
//                 byte ranges overlap.
// A checkpoint directory holds model.safetensors, or shards listed in
// model.safetensors.index.json {"weight_map": {"<tensor>": "<shard file>"}}.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "vramplan/core/bytes.hpp"
#include "vramplan/io/format_table.hpp"

namespace vramplan {

inline constexpr std::uint64_t kMaxSafetensorsHeader = 100 * kMiB;

struct SafetensorsTensor {
  std::string name;
  std::string dtype;                 //!< header string: "BF16", "F8_E4M3", "U8", "I32", ...
  std::vector<std::uint64_t> shape;  //!< as in the header (outermost first)
  std::uint64_t data_bytes = 0;      //!< end - begin
  std::filesystem::path file;        //!< the file holding it
};

//! Every tensor of one .safetensors file, sorted by name. Packed data (MXFP4 blocks as U8,
//! GPTQ qweight as I32) keeps its raw dtype: the precision plan interprets it.
//! Errors: Error(InputFile) naming the file, tensor and field; Error(Io) when unreadable.
std::vector<SafetensorsTensor> read_safetensors_file(const std::filesystem::path& path,
                                                     const FormatTable& catalog);

//! Every tensor of a checkpoint directory: model.safetensors, or the shards named by
//! model.safetensors.index.json (each shard read once; every tensor the index lists must be in
//! the shard it names; a tensor in two shards is refused), or without either every *.safetensors
//! file of the directory, as vLLM loads them. Index order of shards, then by name. A shard that
//! is absent or a loop of symbolic links is Error(Io).
std::vector<SafetensorsTensor> read_safetensors_dir(const std::filesystem::path& dir,
                                                    const FormatTable& catalog);

//! The *.safetensors entries of `dir`, sorted (at most the tensor limit of entries are looked at).
std::vector<std::filesystem::path> safetensors_files_in(const std::filesystem::path& dir);

}  // namespace vramplan
