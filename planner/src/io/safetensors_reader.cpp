// safetensors headers: one bounded read of the JSON header per file, every tensor's dtype,
// shape and byte range checked against the data section. Tensor data is never read.
#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>

#include "vramplan/core/error.hpp"
#include "vramplan/core/limits.hpp"
#include "vramplan/io/binary_reader.hpp"
#include "vramplan/io/input_file.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/io/safetensors.hpp"

namespace vramplan {
namespace {

constexpr std::string_view kMetadataKey = "__metadata__";

// The first member name of the top-level object in `text` (valid JSON) that appears twice, or
// nullopt. One linear scan: each name at depth 1 (a string followed by ':') is decoded by the
// JSON parser, so "a" and "\u0061" are the same name. nlohmann keeps only the last of duplicates
// silently, and its callback parser, which would see them, rescans the parent object at the end
// of every member: quadratic (a 30,000-tensor header took 9.6 s, 100,000 tensors minutes).
std::optional<std::string> first_duplicate_name(std::string_view text) {
  std::unordered_set<std::string> names;
  std::size_t depth = 0;
  // Stops where the top-level object closes: only whitespace may follow it (a fuzz finding ran
  // this scan past the object into an unterminated string).
  for (std::size_t k = 0; k < text.size(); ++k) {
    const char c = text[k];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) break;
    } else if (c == '"') {
      const std::size_t begin = k;
      for (++k; k < text.size() && text[k] != '"'; ++k)
        if (text[k] == '\\') ++k;  // the escaped character cannot end the string
      if (k >= text.size()) break;
      if (depth != 1) continue;
      std::size_t next = k + 1;
      while (next < text.size() && std::isspace(static_cast<unsigned char>(text[next]))) ++next;
      if (next == text.size() || text[next] != ':') continue;  // a value, not a name
      auto name = nlohmann::json::parse(text.substr(begin, k + 1 - begin)).get<std::string>();
      if (!names.insert(name).second) return name;
    }
  }
  return std::nullopt;
}

// Parses the header, refusing duplicate tensor names and NUL bytes. The format pads its header
// with spaces (0x20, safetensors' serialize()), and its reader hands the whole header to
// serde_json::from_str, which refuses a NUL anywhere; nlohmann's parser would instead stop at
// the first NUL and accept whatever JSON came before it.
nlohmann::json parse_header(const std::string& text, const std::string& file) {
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos)
    throw_input(file, "header", "byte " + std::to_string(nul) + " of the " + std::to_string(text.size()) +
                                    "-byte header is NUL (a safetensors header is JSON padded with spaces)");
  check_json_depth(text, file + ": header");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    parse_json_text(text, file + ": header");  // throws the located message
    throw_input(file, "header", "invalid JSON");
  }
  if (!doc.is_object())
    throw_input(file, "header", "expected a JSON object, got " + std::string(json_type_name(doc)));
  if (const auto duplicate = first_duplicate_name(text))
    throw_input(file, "header", "tensor '" + *duplicate + "' is listed twice");
  return doc;
}

struct Range {
  std::uint64_t begin, end;
  std::string name;
};

SafetensorsTensor read_entry(const JsonView& entry, const std::string& name, std::uint64_t data_size,
                             const FormatTable& catalog, const std::filesystem::path& path,
                             std::vector<Range>& ranges) {
  if (!entry.is_object()) entry.fail("expected an object with dtype, shape and data_offsets");
  SafetensorsTensor t;
  t.name = name;
  t.file = path;
  t.dtype = entry.req_string("dtype");
  const QuantFormat* f = catalog.find_safetensors(t.dtype);
  if (!f) entry.fail_at("dtype", "unknown dtype '" + t.dtype + "' (not in data/quant_formats.json)");
  // F4 / F6_*: elements below a byte. Published packed checkpoints (NVFP4, MXFP4) store them as U8
  // with their scales beside; a raw sub-byte tensor has no format in the weight tables to size it by.
  if (f->layout != QuantLayout::Block || f->block_elems != 1)
    entry.fail_at("dtype", "'" + t.dtype + "' packs " + std::to_string(f->block_elems) + " elements in " +
                               std::to_string(f->block_bytes) + " byte(s): sub-byte safetensors dtypes are not read "
                               "(packed FP4 / FP6 checkpoints store U8 with their scales)");

  std::uint64_t elements = 1;
  for (const auto& dim : entry.at("shape").items()) {
    const std::uint64_t d = dim.as_u64();
    if (d != 0 && elements > std::numeric_limits<std::uint64_t>::max() / d)
      dim.fail("element count overflows 64 bits");
    elements *= d;
    t.shape.push_back(d);
  }
  const auto offsets = entry.at("data_offsets").items();
  if (offsets.size() != 2) entry.fail_at("data_offsets", "expected [begin, end]");
  const std::uint64_t begin = offsets[0].as_u64(), end = offsets[1].as_u64();
  if (begin > end)
    entry.fail_at("data_offsets", "begin " + std::to_string(begin) + " is after end " + std::to_string(end));
  if (end > data_size)
    entry.fail_at("data_offsets", "end " + std::to_string(end) + " is past the data section (" +
                                      std::to_string(data_size) + " bytes)");
  t.data_bytes = end - begin;
  if (elements > std::numeric_limits<std::uint64_t>::max() / f->block_bytes ||
      elements * f->block_bytes != t.data_bytes)
    entry.fail_at("data_offsets", std::to_string(t.data_bytes) + " bytes, but shape and dtype give " +
                                      std::to_string(elements) + " elements x " +
                                      std::to_string(f->block_bytes) + " bytes");
  ranges.push_back({begin, end, name});
  return t;
}

void check_no_overlap(std::vector<Range>& ranges, const std::string& file) {
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  for (std::size_t k = 1; k < ranges.size(); ++k) {
    const Range& prev = ranges[k - 1];
    const Range& cur = ranges[k];
    if (cur.begin < prev.end)
      throw_input(file, "tensor '" + cur.name + "'",
                  "bytes [" + std::to_string(cur.begin) + ", " + std::to_string(cur.end) + ") overlap tensor '" +
                      prev.name + "' [" + std::to_string(prev.begin) + ", " + std::to_string(prev.end) + ")");
  }
}

}  // namespace

std::vector<SafetensorsTensor> read_safetensors_file(const std::filesystem::path& path,
                                                     const FormatTable& catalog) {
  BinaryReader in(path);
  const std::string& file = in.file();
  const std::uint64_t header_len = in.u64("header length");
  if (header_len > kMaxSafetensorsHeader)
    in.fail("header length", std::to_string(header_len) + " bytes exceeds the limit of " +
                                 std::to_string(kMaxSafetensorsHeader) + " bytes");
  if (header_len > in.remaining())
    in.fail("header length", std::to_string(header_len) + " bytes but only " + std::to_string(in.remaining()) +
                                 " bytes follow (file size " + std::to_string(in.file_size()) + ")");
  std::string text;
  in.bytes(header_len, text, "header");
  const std::uint64_t data_size = in.remaining();

  const nlohmann::json doc = parse_header(text, file);
  const JsonView root(doc, file);
  std::vector<SafetensorsTensor> tensors;
  std::vector<Range> ranges;
  if (doc.size() > kMaxTensors)
    throw_input(file, "header", std::to_string(doc.size()) + " tensors is above the plausibility limit of " +
                                    std::to_string(kMaxTensors) + " per checkpoint");
  for (const auto& [name, entry] : root.members()) {
    if (name == kMetadataKey) continue;
    tensors.push_back(read_entry(entry, name, data_size, catalog, path, ranges));
  }
  check_no_overlap(ranges, file);
  return tensors;  // members() iterates nlohmann's sorted object: sorted by name
}

std::vector<std::filesystem::path> safetensors_files_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  std::size_t entries = 0;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    // Bounded: a directory of millions of entries is no checkpoint.
    if (++entries > kMaxTensors)
      throw_input(dir.string(), "directory", "more than " + std::to_string(kMaxTensors) + " entries");
    if (it->path().extension() == ".safetensors") out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<SafetensorsTensor> read_safetensors_dir(const std::filesystem::path& dir,
                                                    const FormatTable& catalog) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw Error(ErrorKind::Io, dir.string() + ": not a directory");
  const auto index_path = dir / "model.safetensors.index.json";
  if (!std::filesystem::exists(index_path, ec)) {
    const auto single = dir / "model.safetensors";
    if (std::filesystem::exists(std::filesystem::symlink_status(single, ec))) return read_safetensors_file(single, catalog);
    // No index: vLLM loads every *.safetensors file of the directory (DefaultModelLoader._prepare_weights,
    // vllm/model_executor/model_loader/default_loader.py: allow_patterns "*.safetensors";
    // filter_duplicate_safetensors_files narrows them only when an index exists).
    const auto files = safetensors_files_in(dir);
    if (files.empty())
      throw Error(ErrorKind::Io, dir.string() + ": neither model.safetensors nor model.safetensors.index.json");
    std::vector<SafetensorsTensor> all;
    std::map<std::string, std::string> found;
    for (const auto& file : files) {
      for (auto& t : read_safetensors_file(file, catalog)) {
        if (const auto [it, fresh] = found.emplace(t.name, file.filename().string()); !fresh)
          throw_input(file.string(), "tensor '" + t.name + "'", "also stored in '" + it->second + "'");
        all.push_back(std::move(t));
      }
      if (all.size() > kMaxTensors)
        throw_input(dir.string(), "*.safetensors", "the files hold " + std::to_string(all.size()) +
                                                      " tensors, above the plausibility limit of " +
                                                      std::to_string(kMaxTensors) + " per checkpoint");
    }
    return all;
  }

  const auto index_doc = read_json_file(index_path);
  const JsonView index(index_doc, index_path.string());
  const JsonView weight_map = index.at("weight_map");
  if (!weight_map.is_object()) weight_map.fail("expected an object {tensor: shard file}");
  if (weight_map.raw().size() > kMaxTensors)
    weight_map.fail(std::to_string(weight_map.raw().size()) + " tensors is above the plausibility limit of " +
                    std::to_string(kMaxTensors) + " per checkpoint");
  std::vector<std::string> shards;             // first-listed order
  std::set<std::string> shard_set;             // the same names, for a logarithmic "seen before"
  std::map<std::string, std::string> listed;   // tensor -> shard
  for (const auto& [tensor, shard_view] : weight_map.members()) {
    const std::string shard = shard_view.as_string();
    // A shard is a file beside the index, never a path elsewhere.
    // A NUL would cut the name where the file is opened: the same shard under two names.
    if (shard.empty() || shard.find('/') != std::string::npos || shard.find('\\') != std::string::npos ||
        shard.find('\0') != std::string::npos || shard == "." || shard == "..")
      shard_view.fail("'" + shard + "' is not a file name in the checkpoint directory");
    if (shard_set.insert(shard).second) shards.push_back(shard);
    listed.emplace(tensor, shard);
  }

  std::vector<SafetensorsTensor> all;
  std::map<std::string, std::string> found;  // tensor -> shard it was read from
  for (const auto& shard : shards) {
    const auto shard_path = dir / shard;
    // An absent or unreadable shard is an I/O failure (exit 5), as a missing GGUF split is.
    const auto shard_status = std::filesystem::status(shard_path, ec);
    if (ec || !std::filesystem::exists(shard_status))
      throw Error(ErrorKind::Io, shard_path.string() + ": " + missing_file_reason(shard_path, ec) +
                                     " (a shard " + index_path.filename().string() + " lists)");
    for (auto& t : read_safetensors_file(shard_path, catalog)) {
      if (const auto [it, fresh] = found.emplace(t.name, shard); !fresh)
        throw_input(shard_path.string(), "tensor '" + t.name + "'", "also stored in shard '" + it->second + "'");
      all.push_back(std::move(t));
    }
    if (all.size() > kMaxTensors)
      throw_input(index_path.string(), "weight_map", "shards hold " + std::to_string(all.size()) +
                                                         " tensors, above the plausibility limit of " +
                                                         std::to_string(kMaxTensors) + " per checkpoint");
  }
  for (const auto& [tensor, shard] : listed) {
    const auto it = found.find(tensor);
    if (it == found.end() || it->second != shard)
      throw_input(index_path.string(), "weight_map", "tensor '" + tensor + "' is listed in shard '" + shard +
                                                         "', which does not contain it");
  }
  return all;
}

}  // namespace vramplan
