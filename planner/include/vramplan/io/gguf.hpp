// vramplan/io/gguf.hpp — GGUF header reader (metadata + tensor table, never tensor data).
//
// Byte layout as read_gguf_header() checks it (all integers little-endian; GGUF v2 and v3 —
// v1 used 32-bit counts and is refused; a v3 file written big-endian is detected by its
// byte-swapped version and refused). Spec: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md,
// reader: https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/gguf.cpp.
//
//   1. magic      4 bytes "GGUF"
//   2. version    u32  (2 or 3)
//   3. n_tensors  u64  (<= bytes remaining / 32: a tensor info takes at least 32 bytes)
//   4. n_kv       u64  (<= bytes remaining / 13: a key/value takes at least 13 bytes)
//   5. n_kv x key/value:
//        key   string = u64 length + UTF-8 bytes (non-empty, valid UTF-8, unique)
//        type  u32 (GgufType) then the value:
//              u8/i8/bool 1 B, u16/i16 2 B, u32/i32/f32 4 B, u64/i64/f64 8 B,
//              string (u64 length + bytes), array = u32 element type + u64 count + elements
//              (arrays nest; count checked against bytes remaining x smallest element).
//        general.alignment, if present, is a u32 power of two (default 32).
//   6. n_tensors x tensor info:
//        name string (non-empty, valid UTF-8, < 64 bytes as GGML_MAX_NAME, unique),
//        n_dims u32 (1..4), ne[n_dims] i64 innermost first (each >= 1, product <= INT64_MAX),
//        type u32 (a ggml_type in data/quant_formats.json; ne[0] a multiple of its block),
//        offset u64 relative to the data section, a multiple of the alignment and equal to the
//        running sum of the preceding tensors' sizes each padded to the alignment.
//   7. padding to the alignment; the data section starts there and every tensor must end
//      inside the file.
//
// Memory: arrays keep their element type and count, but only their first kKeptArrayItems
// elements (so tokenizer.ggml.tokens with 150k strings costs a few KB; the rest is validated
// and skipped). Nested arrays keep only their count.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/io/format_table.hpp"

namespace vramplan {

//! GGUF metadata value types (the on-disk ids of gguf_type).
enum class GgufType : std::uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
  String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12,
};
std::string_view gguf_type_name(GgufType type);  //!< "u32", "string", "array", ...

//! Leading elements of an array that are kept in memory (the rest is only counted).
inline constexpr std::uint64_t kKeptArrayItems = 1024;

struct GgufValue {
  GgufType type = GgufType::U8;
  std::uint64_t uint_value = 0;  //!< U8/U16/U32/U64
  std::int64_t int_value = 0;    //!< I8/I16/I32/I64
  double float_value = 0;        //!< F32/F64
  bool bool_value = false;
  std::string string_value;

  // Array: element type, element count in the file, and the first kept elements.
  GgufType element_type = GgufType::U8;
  std::uint64_t count = 0;
  std::vector<GgufValue> items;

  bool is_array() const { return type == GgufType::Array; }
  bool is_integer() const;
  //! A non-negative integer of any integer type; nullopt for other types or negative values.
  std::optional<std::uint64_t> as_u64() const;
  std::optional<double> as_number() const;  //!< any integer or float
};

struct GgufKeyValue {
  std::string key;
  GgufValue value;
};

//! A tensor's ne[]: 1..4 dimensions (GGML_MAX_DIMS), held inline so that a million tensor infos
//! do not cost a million allocations.
class GgufDims {
 public:
  static constexpr std::size_t kMax = 4;
  std::size_t size() const { return size_; }
  std::uint64_t operator[](std::size_t k) const { return values_[k]; }
  const std::uint64_t* begin() const { return values_.data(); }
  const std::uint64_t* end() const { return values_.data() + size_; }
  std::reverse_iterator<const std::uint64_t*> rbegin() const { return std::reverse_iterator(end()); }
  std::reverse_iterator<const std::uint64_t*> rend() const { return std::reverse_iterator(begin()); }
  void push_back(std::uint64_t v) {
    values_.at(size_) = v;  // at(): a fifth dimension throws (the reader refuses it first)
    ++size_;
  }

 private:
  std::array<std::uint64_t, kMax> values_{};
  std::size_t size_ = 0;
};

struct GgufTensor {
  std::string name;
  GgufDims ne;                    //!< GGUF order: innermost (contiguous row) first
  std::uint32_t type_id = 0;      //!< ggml_type
  std::string format;             //!< QuantFormat name from data/quant_formats.json ("Q4_K")
  std::uint64_t offset = 0;       //!< relative to the data section (of its own split)
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;        //!< exact stored size (ggml_nbytes)
};

struct GgufFile {
  std::string path;
  std::uint32_t version = 0;
  std::uint64_t file_size = 0;    //!< all splits together for a split model
  std::uint64_t splits = 1;       //!< files the model was read from (gguf-split `split.count`)
  std::uint64_t alignment = 32;
  std::uint64_t data_offset = 0;  //!< absolute offset of the data section
  std::vector<GgufKeyValue> metadata;  //!< in file order
  std::vector<GgufTensor> tensors;     //!< in file order
  std::optional<std::uint32_t> file_type;  //!< general.file_type (llama_ftype)
  std::string file_type_name;              //!< "Q4_K_M", ... ("" when absent)

  const GgufValue* find(std::string_view key) const;  //!< nullptr when absent
  std::uint64_t tensor_data_bytes() const;            //!< sum of tensor bytes (unpadded)
};

//! Name of a llama_ftype id as llama-quantize spells it ("Q4_K_M", "BF16", "MXFP4_MOE");
//! nullopt for ids llama.cpp never defined.
std::optional<std::string_view> llama_ftype_name(std::uint32_t ftype);

//! Reads and validates the header of a GGUF file (see the layout above). Errors:
//! Error(InputFile) naming the file, the field/key/tensor and byte offsets; Error(Io) when the
//! file cannot be read.
GgufFile read_gguf_header(const std::filesystem::path& path, const FormatTable& catalog);

//! A whole model: read_gguf_header of `path`, and when its `split.count` > 1 (llama.cpp's
//! gguf-split) the tensors of every other split, found by llama.cpp's naming
//! <prefix>-0000K-of-0000N.gguf (io/gguf_split.cpp). `path` must be the first split. Errors as
//! read_gguf_header, plus Error(InputFile) for a later split named, a name that does not follow
//! the pattern, a duplicated tensor or a tensor count that disagrees with `split.tensors.count`,
//! and Error(Io) for a missing split.
GgufFile read_gguf_model(const std::filesystem::path& path, const FormatTable& catalog);

}  // namespace vramplan
