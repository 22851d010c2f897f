#include "support/gguf_writer.hpp"

#include <algorithm>
#include <bit>
#include <string>

namespace vramplan::test {
namespace {

// GGUF value type ids (gguf_type in ggml/include/gguf.h).
constexpr std::uint32_t kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7, kString = 8, kArray = 9, kU64 = 10;

GgufKv make(std::string key, std::uint32_t type, const ByteWriter& payload) {
  ByteWriter w;
  w.u32(type).raw(payload.bytes());
  return {std::move(key), w.bytes()};
}

std::uint64_t pad(std::uint64_t n, std::uint64_t align) { return (n + align - 1) / align * align; }

}  // namespace

ByteWriter& ByteWriter::u8(std::uint8_t v) {
  bytes_.push_back(static_cast<char>(v));
  return *this;
}
ByteWriter& ByteWriter::u32(std::uint32_t v) {
  for (int k = 0; k < 4; ++k) u8(static_cast<std::uint8_t>(v >> (8 * k)));
  return *this;
}
ByteWriter& ByteWriter::u64(std::uint64_t v) {
  for (int k = 0; k < 8; ++k) u8(static_cast<std::uint8_t>(v >> (8 * k)));
  return *this;
}
ByteWriter& ByteWriter::f32(float v) { return u32(std::bit_cast<std::uint32_t>(v)); }
ByteWriter& ByteWriter::raw(std::string_view bytes) {
  bytes_.append(bytes);
  return *this;
}

GgufKv kv_u32(std::string key, std::uint32_t v) { return make(std::move(key), kU32, ByteWriter().u32(v)); }
GgufKv kv_u64(std::string key, std::uint64_t v) { return make(std::move(key), kU64, ByteWriter().u64(v)); }
GgufKv kv_i32(std::string key, std::int32_t v) {
  return make(std::move(key), kI32, ByteWriter().u32(static_cast<std::uint32_t>(v)));
}
GgufKv kv_f32(std::string key, float v) { return make(std::move(key), kF32, ByteWriter().f32(v)); }
GgufKv kv_bool(std::string key, bool v) { return make(std::move(key), kBool, ByteWriter().u8(v ? 1 : 0)); }
GgufKv kv_str(std::string key, std::string_view v) { return make(std::move(key), kString, ByteWriter().str(v)); }

GgufKv kv_arr_u32(std::string key, const std::vector<std::uint32_t>& v) {
  ByteWriter w;
  w.u32(kU32).u64(v.size());
  for (auto x : v) w.u32(x);
  return make(std::move(key), kArray, w);
}
GgufKv kv_arr_i32(std::string key, const std::vector<std::int32_t>& v) {
  ByteWriter w;
  w.u32(kI32).u64(v.size());
  for (auto x : v) w.u32(static_cast<std::uint32_t>(x));
  return make(std::move(key), kArray, w);
}
GgufKv kv_arr_bool(std::string key, const std::vector<bool>& v) {
  ByteWriter w;
  w.u32(kBool).u64(v.size());
  for (bool x : v) w.u8(x ? 1 : 0);
  return make(std::move(key), kArray, w);
}
GgufKv kv_arr_str(std::string key, const std::vector<std::string>& v) {
  ByteWriter w;
  w.u32(kString).u64(v.size());
  for (const auto& s : v) w.str(s);
  return make(std::move(key), kArray, w);
}
GgufKv kv_raw(std::string key, std::uint32_t type, std::string payload) {
  return make(std::move(key), type, ByteWriter().raw(payload));
}

GgufBytes build_gguf(const GgufDesc& d) {
  ByteWriter w;
  w.raw(d.magic).u32(d.version).u64(d.n_tensors.value_or(d.tensors.size())).u64(d.n_kv.value_or(d.kvs.size()));
  for (const auto& kv : d.kvs) w.str(kv.key).raw(kv.encoded);
  std::uint64_t running = 0, data_end = 0;
  for (const auto& t : d.tensors) {
    w.str(t.name).u32(static_cast<std::uint32_t>(t.ne.size()));
    for (auto ne : t.ne) w.i64(ne);
    const std::uint64_t offset = t.offset.value_or(running);
    w.u32(t.type).u64(offset);
    running = pad(offset + t.nbytes, d.alignment);
    data_end = std::max(data_end, offset + t.nbytes);
  }
  GgufBytes out;
  out.data_offset = pad(w.bytes().size(), d.alignment);
  out.data_bytes = data_end;
  out.bytes = w.bytes();
  out.bytes.resize(out.data_offset, '\0');
  if (d.write_data) out.bytes.resize(out.data_offset + data_end, '\0');
  return out;
}

GgufDesc llama_like_gguf(bool with_output) {
  using namespace ggml_type;
  GgufDesc d;
  std::vector<std::string> tokens;
  for (int k = 0; k < 64; ++k) tokens.push_back("tok" + std::to_string(k));
  d.kvs = {kv_str("general.architecture", "llama"),   kv_str("general.name", "tiny-llama"),
           kv_u32("general.file_type", 15),            kv_u32("general.alignment", 32),
           kv_u32("llama.block_count", 2),             kv_u32("llama.context_length", 4096),
           kv_u32("llama.embedding_length", 256),      kv_u32("llama.feed_forward_length", 512),
           kv_u32("llama.attention.head_count", 4),    kv_u32("llama.attention.head_count_kv", 2),
           kv_u32("llama.rope.dimension_count", 64),   kv_f32("llama.rope.freq_base", 500000.0f),
           kv_str("tokenizer.ggml.model", "gpt2"),     kv_arr_str("tokenizer.ggml.tokens", tokens)};
  // Sizes: Q4_K = 144 B per 256 elements, Q6_K = 210 B per 256, F16 2 B, F32 4 B.
  d.tensors.push_back({"token_embd.weight", {256, 64}, Q4_K, 64 * 144});  // 9,216
  d.tensors.push_back({"output_norm.weight", {256}, F32, 256 * 4});       // 1,024
  if (with_output) d.tensors.push_back({"output.weight", {256, 64}, Q6_K, 64 * 210});  // 13,440
  for (int l = 0; l < 2; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    d.tensors.push_back({b + "attn_norm.weight", {256}, F32, 1024});
    d.tensors.push_back({b + "attn_q.weight", {256, 256}, Q4_K, 256 * 144});    // 36,864
    d.tensors.push_back({b + "attn_k.weight", {256, 128}, Q4_K, 128 * 144});    // 18,432
    d.tensors.push_back({b + "attn_v.weight", {256, 128}, Q6_K, 128 * 210});    // 26,880
    d.tensors.push_back({b + "attn_output.weight", {256, 256}, F16, 65536 * 2});  // 131,072
    d.tensors.push_back({b + "ffn_norm.weight", {256}, F32, 1024});
    d.tensors.push_back({b + "ffn_gate.weight", {256, 512}, Q4_K, 512 * 144});  // 73,728
    d.tensors.push_back({b + "ffn_up.weight", {256, 512}, Q4_K, 512 * 144});    // 73,728
    // ffn_down rows are 512 long: 2 Q6_K blocks = 420 B per row, 256 rows.
    d.tensors.push_back({b + "ffn_down.weight", {512, 256}, Q6_K, 256 * 420});  // 107,520
  }
  return d;
}

}  // namespace vramplan::test
