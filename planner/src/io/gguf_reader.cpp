// GGUF header parsing: every count, length, dimension and offset is checked against the bytes
// remaining in the file (or a hard cap) before it is used to allocate, loop or multiply.
// The checks and their order follow ggml's gguf_init_from_reader (ggml/src/gguf.cpp).
#include <algorithm>
#include <array>
#include <charconv>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <unordered_map>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/limits.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/binary_reader.hpp"
#include "vramplan/io/gguf.hpp"

namespace vramplan {
namespace {

constexpr std::string_view kMagic = "GGUF";
constexpr std::uint64_t kDefaultAlignment = 32;      // GGUF_DEFAULT_ALIGNMENT
constexpr std::uint32_t kMaxDims = 4;                // GGML_MAX_DIMS
constexpr std::uint64_t kMaxTensorName = 63;         // GGML_MAX_NAME (64) minus the NUL
constexpr std::uint64_t kMaxKeyBytes = 64 * kKiB;    // no real key is longer than ~100 bytes
constexpr std::uint64_t kMaxStringBytes = 16 * kMiB;  // chat templates are tens of KB
constexpr std::uint64_t kMaxKeptStringBytes = 32 * kMiB;  // all kept metadata text together
constexpr int kMaxArrayDepth = 4;                    // arrays of arrays of ... (none exist in practice)
// Smallest encodings, for "can this count possibly fit in what is left" checks.
// key/value: key length + 1 key byte + type + a 1-byte value.
constexpr std::uint64_t kMinKvBytes = 8 + 1 + 4 + 1;
// tensor info: name length + 1 name byte + n_dims + ne[0] + type + offset.
constexpr std::uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;

struct TypeRow {
  GgufType type;
  std::string_view name;
  std::uint64_t min_bytes;  // encoded size (fixed types) or smallest size (string, array)
};
constexpr TypeRow kTypes[] = {
    {GgufType::U8, "u8", 1},         {GgufType::I8, "i8", 1},       {GgufType::U16, "u16", 2},
    {GgufType::I16, "i16", 2},       {GgufType::U32, "u32", 4},     {GgufType::I32, "i32", 4},
    {GgufType::F32, "f32", 4},       {GgufType::Bool, "bool", 1},   {GgufType::String, "string", 8},
    {GgufType::Array, "array", 12},  {GgufType::U64, "u64", 8},     {GgufType::I64, "i64", 8},
    {GgufType::F64, "f64", 8},
};

const TypeRow* type_row(std::uint32_t id) {
  for (const auto& r : kTypes)
    if (static_cast<std::uint32_t>(r.type) == id) return &r;
  return nullptr;
}

bool fixed_size(GgufType t) { return t != GgufType::String && t != GgufType::Array; }

// Returns the index of the first byte that breaks UTF-8 (overlongs, surrogates and code points
// past U+10FFFF included), or npos when the text is valid.
std::size_t invalid_utf8_at(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {  // ASCII, most of a vocabulary: no decoding
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence(s, i, nullptr);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string hex_byte(unsigned char b) {
  constexpr char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[b >> 4] + kDigits[b & 15];
}

std::string printable(std::string_view s) {
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    out += (c >= 0x20 && c < 0x7F) ? std::string(1, ch) : "\\x" + hex_byte(c).substr(2);
  }
  return out;
}

// 'text' with non-printable bytes escaped. (Built by appending: g++ 12 warns falsely
// (-Wrestrict, GCC bug 105651) on "'" + std::string temporaries.)
std::string single_quoted(std::string_view s) {
  std::string out(1, '\'');
  out += printable(s);
  out += '\'';
  return out;
}

// Tensor-name uniqueness without an allocation per name: open addressing, sized once from the
// (bounded) tensor count and at most half full. A slot holds the name's hash (high 32 bits) and
// its index in the tensor table (low 32), so a probe reads another name only when the hashes match.
class TensorNameIndex {
 public:
  static_assert(kMaxTensors < std::numeric_limits<std::uint32_t>::max());

  void reserve(std::size_t n) {
    std::size_t slots = 16;
    while (slots < 2 * n) slots *= 2;
    slots_.assign(slots, kEmpty);
  }

  //! Records tensors[index] and returns nullopt, or returns the index of an earlier tensor of the
  //! same name. reserve() was called with more than `index` tensors.
  std::optional<std::uint32_t> insert(const std::vector<GgufTensor>& tensors, std::uint32_t index) {
    const std::string_view name = tensors[index].name;
    const std::uint64_t hash = std::hash<std::string_view>{}(name);
    const std::uint64_t tag = hash & ~std::uint64_t{0xFFFFFFFF};
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t k = static_cast<std::size_t>(hash) & mask;; k = (k + 1) & mask) {
      const std::uint64_t slot = slots_[k];
      if (slot == kEmpty) {
        slots_[k] = tag | index;
        return std::nullopt;
      }
      const auto other = static_cast<std::uint32_t>(slot);
      if ((slot & ~std::uint64_t{0xFFFFFFFF}) == tag && tensors[other].name == name) return other;
    }
  }

 private:
  // Index 0xFFFFFFFF is never used (static_assert above), so this is never a real slot.
  static constexpr std::uint64_t kEmpty = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::uint64_t> slots_;
};

class HeaderParser {
 public:
  HeaderParser(const std::filesystem::path& path, const FormatTable& catalog)
      : in_(path), catalog_(catalog) {
    out_.path = in_.file();
    out_.file_size = in_.file_size();
  }

  GgufFile parse() {
    read_preamble();
    for (std::uint64_t k = 0; k < n_kv_; ++k) read_kv(k);
    // Sized once: a million tensor infos must not rehash and reallocate their way in.
    out_.tensors.reserve(static_cast<std::size_t>(n_tensors_));
    tensor_names_.reserve(static_cast<std::size_t>(n_tensors_));  // n_tensors_ <= kMaxTensors
    for (std::uint64_t k = 0; k < n_tensors_; ++k) read_tensor_info(k);
    check_data_layout();
    return std::move(out_);
  }

 private:
  void read_preamble() {
    std::string magic;
    in_.bytes(4, magic, "magic");
    if (magic != kMagic)
      in_.fail("magic", single_quoted(magic) + " is not 'GGUF': not a GGUF file");

    const std::uint32_t version = in_.u32("version");
    const std::uint32_t swapped = __builtin_bswap32(version);
    if ((version & 0xFFFFu) == 0 && swapped >= 1 && swapped <= 3)
      in_.fail("version", "reads as " + std::to_string(version) + " (" + std::to_string(swapped) +
                              " byte-swapped): a big-endian GGUF file, which is not supported");
    if (version == 1)
      in_.fail("version", "GGUF version 1 is not supported (it used 32-bit counts; re-convert the "
                          "model with a current llama.cpp)");
    if (version != 2 && version != 3)
      in_.fail("version", "unsupported GGUF version " + std::to_string(version) + " (supported: 2, 3)");
    out_.version = version;

    n_tensors_ = in_.u64("tensor count");
    n_kv_ = in_.u64("metadata key/value count");
    // Each key/value and tensor info has a minimum encoded size, so the counts are bounded by
    // the bytes that follow. Checked by division: no product can overflow.
    const std::uint64_t left = in_.remaining();
    if (n_kv_ > left / kMinKvBytes)
      in_.fail("metadata key/value count",
               std::to_string(n_kv_) + " key/values need at least " + std::to_string(kMinKvBytes) +
                   " bytes each, but only " + std::to_string(left) + " bytes follow (offset " +
                   std::to_string(in_.offset()) + ")");
    if (n_tensors_ > left / kMinTensorInfoBytes)
      in_.fail("tensor count",
               std::to_string(n_tensors_) + " tensor infos need at least " +
                   std::to_string(kMinTensorInfoBytes) + " bytes each, but only " +
                   std::to_string(left) + " bytes follow (offset " + std::to_string(in_.offset()) + ")");
    if (n_kv_ * kMinKvBytes + n_tensors_ * kMinTensorInfoBytes > left)
      in_.fail("header", std::to_string(n_kv_) + " key/values and " + std::to_string(n_tensors_) +
                             " tensor infos cannot fit in the " + std::to_string(left) +
                             " bytes that follow");
    // A file large enough for them still has to be plausible: one tensor info costs a few hundred
    // bytes of memory here, and real GGUF files hold at most a few thousand tensors.
    if (n_tensors_ > kMaxTensors)
      in_.fail("tensor count", std::to_string(n_tensors_) + " tensors is above the plausibility limit of " +
                                   std::to_string(kMaxTensors) + " (llama.cpp's largest files hold a few thousand)");
  }

  // A length-prefixed string. `cap` bounds it before anything is allocated.
  std::string read_string(std::string_view field, std::uint64_t cap) {
    const std::uint64_t at = in_.offset();
    const std::uint64_t len = in_.u64(field);
    if (len > cap)
      in_.fail(field, "string length " + std::to_string(len) + " at offset " + std::to_string(at) +
                          " exceeds the limit of " + std::to_string(cap) + " bytes");
    if (len > in_.remaining())
      in_.fail(field, "string length " + std::to_string(len) + " at offset " + std::to_string(at) +
                          " runs past the end of the file (" + std::to_string(in_.remaining()) +
                          " bytes remain)");
    std::string s;
    in_.bytes(len, s, field);
    return s;
  }

  void skip_string(std::string_view field) {
    const std::uint64_t at = in_.offset();
    const std::uint64_t len = in_.u64(field);
    if (len > kMaxStringBytes || len > in_.remaining())
      in_.fail(field, "string length " + std::to_string(len) + " at offset " + std::to_string(at) +
                          (len > kMaxStringBytes ? " exceeds the limit of " + std::to_string(kMaxStringBytes) +
                                                       " bytes"
                                                 : " runs past the end of the file (" +
                                                       std::to_string(in_.remaining()) + " bytes remain)"));
    in_.skip(len, field);
  }

  std::string read_name(std::string_view what, std::uint64_t index, std::uint64_t cap) {
    // "key #N name" / "tensor #N name", read only by an error: built in a reused buffer, so a
    // million tensor infos do not allocate a million labels.
    name_label_.assign(what == "key" ? "key #" : "tensor #");
    char digits[24];
    name_label_.append(digits, std::to_chars(digits, digits + sizeof digits, index).ptr);
    const std::size_t field_size = name_label_.size();
    name_label_ += " name";
    const std::string_view field = std::string_view(name_label_).substr(0, field_size);
    const std::uint64_t at = in_.offset();
    std::string name = read_string(name_label_, cap);
    if (name.empty()) in_.fail(field, "empty " + std::string(what) + " name at offset " + std::to_string(at));
    if (const auto bad = invalid_utf8_at(name); bad != std::string_view::npos)
      in_.fail(field, std::string(what) + " name " + single_quoted(name) + " at offset " +
                          std::to_string(at) + " is not valid UTF-8 (byte " +
                          hex_byte(static_cast<unsigned char>(name[bad])) + " at position " +
                          std::to_string(bad) + ")");
    return name;
  }

  GgufType read_type(std::string_view field) {
    const std::uint64_t at = in_.offset();
    const std::uint32_t id = in_.u32(field);
    const TypeRow* row = type_row(id);
    if (!row)
      in_.fail(field, "unknown value type " + std::to_string(id) + " at offset " + std::to_string(at) +
                          " (GGUF types are 0..12)");
    return row->type;
  }

  void keep_text(std::uint64_t n, std::string_view field) {
    kept_text_ += n;
    if (kept_text_ > kMaxKeptStringBytes)
      in_.fail(field, "metadata strings exceed " + std::to_string(kMaxKeptStringBytes) +
                          " bytes in total (refusing to hold more)");
  }

  // Reads one value of `type`. `keep` = store it (false for array elements past the kept ones).
  GgufValue read_value(GgufType type, const std::string& field, bool keep, int depth) {
    GgufValue v;
    v.type = type;
    switch (type) {
      case GgufType::U8: v.uint_value = in_.u8(field); break;
      case GgufType::I8: v.int_value = static_cast<std::int8_t>(in_.u8(field)); break;
      case GgufType::U16: v.uint_value = in_.u16(field); break;
      case GgufType::I16: v.int_value = static_cast<std::int16_t>(in_.u16(field)); break;
      case GgufType::U32: v.uint_value = in_.u32(field); break;
      case GgufType::I32: v.int_value = static_cast<std::int32_t>(in_.u32(field)); break;
      case GgufType::U64: v.uint_value = in_.u64(field); break;
      case GgufType::I64: v.int_value = in_.i64(field); break;
      case GgufType::F32: v.float_value = in_.f32(field); break;
      case GgufType::F64: v.float_value = in_.f64(field); break;
      case GgufType::Bool: v.bool_value = read_bool(field); break;
      case GgufType::String:
        if (keep) {
          v.string_value = read_string(field, kMaxStringBytes);
          keep_text(v.string_value.size(), field);
        } else {
          skip_string(field);
        }
        break;
      case GgufType::Array: read_array(v, field, keep, depth); break;
    }
    return v;
  }

  bool read_bool(std::string_view field) {
    const std::uint64_t at = in_.offset();
    const std::uint8_t b = in_.u8(field);
    if (b > 1) in_.fail(field, "bool value " + std::to_string(b) + " at offset " + std::to_string(at) + " is not 0 or 1");
    return b == 1;
  }

  void read_array(GgufValue& v, const std::string& field, bool keep, int depth) {
    if (depth >= kMaxArrayDepth)
      in_.fail(field, "arrays nested deeper than " + std::to_string(kMaxArrayDepth) + " levels");
    v.element_type = read_type(field + " array type");
    const std::uint64_t at = in_.offset();
    v.count = in_.u64(field + " array length");
    const std::uint64_t min_bytes = type_row(static_cast<std::uint32_t>(v.element_type))->min_bytes;
    if (v.count > in_.remaining() / min_bytes)
      in_.fail(field, "array of " + std::to_string(v.count) + " " +
                          std::string(gguf_type_name(v.element_type)) + " elements at offset " +
                          std::to_string(at) + " needs at least " + std::to_string(min_bytes) +
                          " bytes per element, but only " + std::to_string(in_.remaining()) +
                          " bytes remain");
    // Only a top-level array keeps its leading elements; nested arrays are only counted.
    const std::uint64_t kept = keep && depth == 0 ? std::min(v.count, kKeptArrayItems) : 0;
    v.items.reserve(static_cast<std::size_t>(kept));
    for (std::uint64_t k = 0; k < kept; ++k) v.items.push_back(read_value(v.element_type, field, true, depth + 1));
    std::uint64_t rest = v.count - kept;
    if (rest == 0) return;
    if (v.element_type == GgufType::Bool) {
      in_.visit(rest, field, [&](std::string_view chunk) {
        for (char c : chunk)
          if (static_cast<unsigned char>(c) > 1) in_.fail(field, "bool array element is not 0 or 1");
      });
    } else if (fixed_size(v.element_type)) {
      in_.skip(rest * min_bytes, field);  // rest * min_bytes <= remaining (checked above)
    } else {
      for (; rest > 0; --rest) read_value(v.element_type, field, false, depth + 1);
    }
  }

  void read_kv(std::uint64_t index) {
    std::string key = read_name("key", index, kMaxKeyBytes);
    const std::string field = "key '" + key + "'";
    if (const auto [it, fresh] = key_index_.emplace(key, index); !fresh)
      in_.fail(field, "duplicate key (key #" + std::to_string(index) + " repeats key #" +
                          std::to_string(it->second) + ")");
    const GgufType type = read_type(field + " type");
    GgufValue value = read_value(type, field, true, 0);
    if (key == "general.alignment") set_alignment(value, field);
    if (key == "general.file_type") set_file_type(value, field);
    out_.metadata.push_back({std::move(key), std::move(value)});
  }

  void set_alignment(const GgufValue& v, const std::string& field) {
    // gguf.cpp requires exactly u32 here.
    if (v.type != GgufType::U32)
      in_.fail(field, "expected u32, got " + std::string(gguf_type_name(v.type)));
    if (v.uint_value == 0 || (v.uint_value & (v.uint_value - 1)) != 0)
      in_.fail(field, "alignment " + std::to_string(v.uint_value) + " is not a power of two");
    out_.alignment = v.uint_value;
  }

  void set_file_type(const GgufValue& v, const std::string& field) {
    const auto id = v.as_u64();
    if (!id || *id > std::numeric_limits<std::uint32_t>::max())
      in_.fail(field, "expected an unsigned 32-bit llama_ftype, got " + std::string(gguf_type_name(v.type)));
    out_.file_type = static_cast<std::uint32_t>(*id);
    const auto name = llama_ftype_name(*out_.file_type);
    out_.file_type_name = name ? std::string(*name) : "unknown ftype " + std::to_string(*id);
  }

  // Linear in the tensors with a handful of allocations each: the labels naming a field in an
  // error are only built when there is an error.
  void read_tensor_info(std::uint64_t index) {
    GgufTensor t;
    t.name = read_name("tensor", index, kMaxTensorName);
    const auto field = [&](std::string_view part = {}) { return "tensor '" + t.name + "'" + std::string(part); };

    const std::uint64_t dims_at = in_.offset();
    if (in_.remaining() < 4) in_.require(4, field(" n_dims"));
    const std::uint32_t n_dims = in_.u32("n_dims");
    if (n_dims == 0 || n_dims > kMaxDims)
      in_.fail(field(), "n_dims " + std::to_string(n_dims) + " at offset " + std::to_string(dims_at) +
                            " is outside 1.." + std::to_string(kMaxDims));
    // ne[n_dims], type, offset: one check for the fixed-size rest.
    const std::uint64_t rest = 8ull * n_dims + 4 + 8;
    if (in_.remaining() < rest) in_.require(rest, field(" ne, type and offset"));
    t.elements = 1;
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      const std::int64_t ne = in_.i64("ne");
      if (ne <= 0) in_.fail(field(" ne[" + std::to_string(d) + "]"), "dimension " + std::to_string(ne) + " is not positive");
      const auto une = static_cast<std::uint64_t>(ne);
      // Checked by division before multiplying (as gguf.cpp): the product stays <= INT64_MAX.
      if (une > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / t.elements)
        in_.fail(field(), "element count overflows: dimensions multiply past 2^63-1");
      t.elements *= une;
      t.ne.push_back(une);
    }
    t.type_id = in_.u32("type");
    t.offset = in_.u64("offset");
    set_format_and_size(t);
    out_.tensors.push_back(std::move(t));
    if (tensor_names_.insert(out_.tensors, static_cast<std::uint32_t>(index)))
      in_.fail("tensor '" + out_.tensors.back().name + "'", "duplicate tensor name");
  }

  void set_format_and_size(GgufTensor& t) {
    const auto field = [&] { return "tensor '" + t.name + "'"; };
    const QuantFormat* f = catalog_.find_gguf(t.type_id);
    if (!f)
      in_.fail(field(), "unknown ggml type id " + std::to_string(t.type_id) +
                          " (not in data/quant_formats.json: a removed or newer ggml type)");
    if (f->layout != QuantLayout::Block)
      throw_internal("GGUF type " + f->name + " is not a block layout in quant_formats.json");
    if (t.ne[0] % f->block_elems != 0)
      in_.fail(field(), "ne[0] = " + std::to_string(t.ne[0]) + " is not a multiple of " + f->name +
                          "'s block of " + std::to_string(f->block_elems) + " elements");
    std::array<std::uint64_t, GgufDims::kMax> outer_first{};  // tensor_bytes takes PyTorch order
    std::copy(t.ne.rbegin(), t.ne.rend(), outer_first.begin());
    const std::span<const std::uint64_t> shape(outer_first.data(), t.ne.size());
    t.format = f->name;
    try {
      t.bytes = tensor_bytes(*f, shape, t.name);  // the one size formula (ggml_nbytes)
    } catch (const Error& e) {
      in_.fail(field(), e.what());  // only overflow remains possible here: the row fits
    }
  }

  // Offsets must be aligned and equal the running padded sum (gguf.cpp); every tensor must end
  // inside the file.
  void check_data_layout() {
    const std::uint64_t align = out_.alignment;
    const std::uint64_t header_end = in_.offset();
    out_.data_offset = header_end + (align - header_end % align) % align;
    std::uint64_t expected = 0;
    for (const auto& t : out_.tensors) {
      const auto field = [&] { return "tensor '" + t.name + "'"; };
      if (t.offset % align != 0)
        in_.fail(field(), "offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                            std::to_string(align));
      if (t.offset != expected)
        in_.fail(field(), "offset " + std::to_string(t.offset) + ", expected " + std::to_string(expected) +
                            " (tensor data must follow in table order, each padded to " +
                            std::to_string(align) + " bytes)");
      const std::uint64_t room = std::numeric_limits<std::uint64_t>::max() - expected;
      if (t.bytes > room - (room % align)) in_.fail(field(), "data section size overflows 64 bits");
      expected += t.bytes + (align - t.bytes % align) % align;

      const std::uint64_t size = out_.file_size;
      if (out_.data_offset > size || t.offset > size - out_.data_offset)
        in_.fail(field(), "offset " + std::to_string(t.offset) + " (absolute " +
                            std::to_string(out_.data_offset) + " + " + std::to_string(t.offset) +
                            ") is past the end of the file (size " + std::to_string(size) + ")");
      const std::uint64_t begin = out_.data_offset + t.offset;
      if (t.bytes > size - begin)
        in_.fail(field(), std::to_string(t.bytes) + " bytes of data from offset " + std::to_string(begin) +
                            " run past the end of the file (size " + std::to_string(size) + ")");
    }
  }

  BinaryReader in_;
  const FormatTable& catalog_;
  GgufFile out_;
  std::uint64_t n_tensors_ = 0, n_kv_ = 0;
  std::unordered_map<std::string, std::uint64_t> key_index_;
  TensorNameIndex tensor_names_;
  std::string name_label_;
  std::uint64_t kept_text_ = 0;
};

}  // namespace

std::string_view gguf_type_name(GgufType type) {
  if (const TypeRow* r = type_row(static_cast<std::uint32_t>(type))) return r->name;
  return "invalid";
}

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufType::U8: case GgufType::U16: case GgufType::U32: case GgufType::U64:
    case GgufType::I8: case GgufType::I16: case GgufType::I32: case GgufType::I64:
      return true;
    default:
      return false;
  }
}

std::optional<std::uint64_t> GgufValue::as_u64() const {
  if (!is_integer()) return std::nullopt;
  switch (type) {
    case GgufType::I8: case GgufType::I16: case GgufType::I32: case GgufType::I64:
      if (int_value < 0) return std::nullopt;
      return static_cast<std::uint64_t>(int_value);
    default:
      return uint_value;
  }
}

std::optional<double> GgufValue::as_number() const {
  if (type == GgufType::F32 || type == GgufType::F64) return float_value;
  if (!is_integer()) return std::nullopt;
  if (const auto u = as_u64()) return static_cast<double>(*u);
  return static_cast<double>(int_value);
}

const GgufValue* GgufFile::find(std::string_view key) const {
  for (const auto& kv : metadata)
    if (kv.key == key) return &kv.value;
  return nullptr;
}

std::uint64_t GgufFile::tensor_data_bytes() const {
  std::uint64_t total = 0;
  for (const auto& t : tensors) total = checked_add(total, t.bytes, "GGUF tensor data bytes");
  return total;
}

GgufFile read_gguf_header(const std::filesystem::path& path, const FormatTable& catalog) {
  return HeaderParser(path, catalog).parse();
}

}  // namespace vramplan
