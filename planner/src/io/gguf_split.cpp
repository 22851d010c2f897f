// A split GGUF (llama.cpp's gguf-split) read as the one model it holds, the way llama.cpp loads
// it (src/llama-model-loader.cpp, llama_model_loader::llama_model_loader):
//   - the file named must be the first split (`split.no` 0; otherwise "model must be loaded with
//     the first split");
//   - the other files are found by name: llama_split_prefix strips "-00001-of-0000N.gguf" from the
//     first path, llama_split_path appends "-%05d-of-%05d.gguf" (src/llama.cpp);
//   - each split's `split.no` must be its index ("invalid split file idx"), a tensor name may
//     appear in one split only ("tensor '%s' is duplicated"), and the tensors of all splits
//     together must number `split.tensors.count` ("corrupted model: %d tensors expected").
// Metadata comes from the first split (gguf-split writes only the split.* keys into the others).
// Work is bounded: at most 65,535 splits (split.count is a u16), each header read with the
// single-file limits, and kMaxTensors tensors over all of them.
#include <cstdio>
#include <unordered_set>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/limits.hpp"
#include "vramplan/io/gguf.hpp"

namespace vramplan {
namespace {

constexpr std::uint64_t kMaxGgufSplits = 65535;  // split.count is a u16 (LLM_KV_SPLIT_COUNT)

// llama_split_path's suffix for split `index` (0-based) of `count`: "-00002-of-00003.gguf".
std::string split_suffix(std::uint64_t index, std::uint64_t count) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "-%05llu-of-%05llu.gguf", static_cast<unsigned long long>(index + 1),
                static_cast<unsigned long long>(count));
  return buf;
}

std::optional<std::uint64_t> split_key(const GgufFile& f, const char* key) {
  const GgufValue* v = f.find(key);
  if (!v) return std::nullopt;
  const auto u = v->is_array() ? std::nullopt : v->as_u64();
  if (!u) throw_input(f.path, "key '" + std::string(key) + "'", "expected a non-negative integer");
  return u;
}

}  // namespace

GgufFile read_gguf_model(const std::filesystem::path& path, const FormatTable& catalog) {
  GgufFile first = read_gguf_header(path, catalog);
  const std::uint64_t count = split_key(first, "split.count").value_or(1);
  if (count <= 1) {
    // The file's own tensor count, whatever split.count says: a part of a split set relabelled as
    // whole would be planned as a smaller model than any llama.cpp loads (it fails on the first
    // tensor it lacks, llama_model_loader::create_tensor: "missing tensor").
    if (const auto expected = split_key(first, "split.tensors.count"); expected && *expected != first.tensors.size())
      throw_input(first.path, "key 'split.tensors.count'",
                  std::to_string(*expected) + " tensors expected, " + std::to_string(first.tensors.size()) +
                      " found (split.count " + std::to_string(count) + ": this file must hold them all)");
    return first;
  }
  if (count > kMaxGgufSplits)
    throw_input(first.path, "key 'split.count'", std::to_string(count) + " is above the u16 limit 65535");
  const std::uint64_t no = split_key(first, "split.no").value_or(0);
  const std::string head = split_suffix(0, count);
  if (no != 0)
    throw_input(first.path, "key 'split.no'",
                "this is split " + std::to_string(no + 1) + " of " + std::to_string(count) +
                    "; pass the first split (...-" + head.substr(1) + "), as llama.cpp requires");
  if (first.path.size() <= head.size() || !first.path.ends_with(head))
    throw_input(first.path, "key 'split.count'",
                "the model is split in " + std::to_string(count) + " files, but this name does not end in '" + head +
                    "', so the others cannot be found (llama.cpp names them <prefix>-0000K-of-0000N.gguf)");
  const std::string prefix = first.path.substr(0, first.path.size() - head.size());

  std::unordered_set<std::string> names;
  names.reserve(first.tensors.size());
  for (const auto& t : first.tensors) names.insert(t.name);
  for (std::uint64_t index = 1; index < count; ++index) {
    const std::filesystem::path split_path = prefix + split_suffix(index, count);
    std::error_code ec;
    if (!std::filesystem::exists(split_path, ec))
      throw Error(ErrorKind::Io, split_path.string() + ": no such file (split " + std::to_string(index + 1) + " of " +
                                     std::to_string(count) + " of " + first.path + ")");
    GgufFile part = read_gguf_header(split_path, catalog);
    if (split_key(part, "split.no").value_or(0) != index)
      throw_input(part.path, "key 'split.no'", "expected " + std::to_string(index) + " for split " +
                                                   std::to_string(index + 1) + " of " + std::to_string(count));
    if (first.tensors.size() + part.tensors.size() > kMaxTensors)
      throw_input(part.path, "tensor count", "the splits together hold more than " + std::to_string(kMaxTensors) +
                                                 " tensors, the plausibility limit");
    for (auto& t : part.tensors) {
      if (!names.insert(t.name).second)
        throw_input(part.path, "tensor '" + t.name + "'", "is also in an earlier split");
      first.tensors.push_back(std::move(t));
    }
    first.file_size = checked_add(first.file_size, part.file_size, "GGUF split sizes");
  }
  if (const auto expected = split_key(first, "split.tensors.count"); expected && *expected != first.tensors.size())
    throw_input(first.path, "key 'split.tensors.count'",
                std::to_string(*expected) + " tensors expected, " + std::to_string(first.tensors.size()) +
                    " found in the " + std::to_string(count) + " splits");
  first.splits = count;
  return first;
}

}  // namespace vramplan
