// gguf_writer.hpp — writes GGUF files byte by byte for tests and benchmarks.
//
// Independent of the reader under test: sizes and offsets come from the caller (tests write
// the arithmetic next to them), and every field can be overridden to make a broken file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vramplan::test {

//! Appends little-endian integers, floats and GGUF strings to a byte string.
class ByteWriter {
 public:
  ByteWriter& u8(std::uint8_t v);
  ByteWriter& u32(std::uint32_t v);
  ByteWriter& u64(std::uint64_t v);
  ByteWriter& i64(std::int64_t v) { return u64(static_cast<std::uint64_t>(v)); }
  ByteWriter& f32(float v);
  ByteWriter& raw(std::string_view bytes);
  ByteWriter& str(std::string_view s) { return u64(s.size()).raw(s); }  //!< u64 length + bytes
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

//! ggml_type ids used by the tests (ggml/include/ggml.h).
namespace ggml_type {
inline constexpr std::uint32_t F32 = 0, F16 = 1, Q4_0 = 2, Q8_0 = 8, Q4_K = 12, Q6_K = 14, BF16 = 30;
}

//! One metadata key/value: the key and the encoded value (u32 GGUF type + payload).
struct GgufKv {
  std::string key;
  std::string encoded;
};
GgufKv kv_u32(std::string key, std::uint32_t v);
GgufKv kv_u64(std::string key, std::uint64_t v);
GgufKv kv_i32(std::string key, std::int32_t v);
GgufKv kv_f32(std::string key, float v);
GgufKv kv_bool(std::string key, bool v);
GgufKv kv_str(std::string key, std::string_view v);
GgufKv kv_arr_u32(std::string key, const std::vector<std::uint32_t>& v);
GgufKv kv_arr_i32(std::string key, const std::vector<std::int32_t>& v);
GgufKv kv_arr_bool(std::string key, const std::vector<bool>& v);
GgufKv kv_arr_str(std::string key, const std::vector<std::string>& v);
//! Any type id and payload, for values a valid writer would never produce.
GgufKv kv_raw(std::string key, std::uint32_t type, std::string payload);

struct GgufTensorDesc {
  GgufTensorDesc(std::string n, std::vector<std::int64_t> dims, std::uint32_t t, std::uint64_t bytes,
                 std::optional<std::uint64_t> off = std::nullopt)
      : name(std::move(n)), ne(std::move(dims)), type(t), nbytes(bytes), offset(off) {}
  std::string name;
  std::vector<std::int64_t> ne;  //!< innermost first
  std::uint32_t type = ggml_type::F32;
  std::uint64_t nbytes = 0;      //!< stored size (hand-computed by the caller)
  std::optional<std::uint64_t> offset;  //!< default: running sum padded to the alignment
};

struct GgufDesc {
  std::string magic = "GGUF";
  std::uint32_t version = 3;
  std::optional<std::uint64_t> n_tensors, n_kv;  //!< default: the vectors' sizes
  std::vector<GgufKv> kvs;
  std::vector<GgufTensorDesc> tensors;
  std::uint64_t alignment = 32;  //!< padding used by the writer (general.alignment is a kv)
  bool write_data = true;        //!< append the zero-filled data section
};

struct GgufBytes {
  std::string bytes;              //!< header + padding (+ data when write_data)
  std::uint64_t data_offset = 0;  //!< where the data section starts
  std::uint64_t data_bytes = 0;   //!< data section size (last tensor end)
};
GgufBytes build_gguf(const GgufDesc& desc);

//! A small valid llama-like GGUF v3: 2 layers, hidden 256, 4 heads / 2 KV heads of 64, FFN 512,
//! vocab 64, with F32 norms, Q4_K / Q6_K matrices and one F16 matrix (sizes in the .cpp).
//! Without `with_output` the output.weight tensor is left out (tied embeddings).
GgufDesc llama_like_gguf(bool with_output = true);

}  // namespace vramplan::test
