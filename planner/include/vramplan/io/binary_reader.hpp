// vramplan/io/binary_reader.hpp — a bounded, buffered little-endian reader over a file.
//
// Header parsers (GGUF, safetensors) read untrusted bytes through it. It knows the file size and
// its own position, so every read checks the bytes remaining BEFORE touching them and callers
// can check a count against remaining() before allocating or looping (as ggml's gguf_reader
// does with nbytes_remain). Reads go through a fixed buffer: a 700 GB file costs one buffer,
// never a mapping of the whole file.
//
// Errors: running past the end -> Error(InputFile) "<file>: <what>: needs N bytes at offset O,
// only R remain (file size S)"; the OS refusing to open/read -> Error(Io).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace vramplan {

class BinaryReader {
 public:
  //! Opens `path` for reading (Error(Io) when it cannot be opened or sized). `display_name`
  //! names the file in messages (defaults to the path as given).
  explicit BinaryReader(const std::filesystem::path& path, std::string display_name = "");

  const std::string& file() const { return file_; }
  std::uint64_t file_size() const { return size_; }
  std::uint64_t offset() const { return pos_; }  //!< bytes consumed so far
  std::uint64_t remaining() const { return size_ - pos_; }

  // Little-endian fixed-width reads; `what` names the field in the truncation message.
  std::uint8_t u8(std::string_view what);
  std::uint16_t u16(std::string_view what);
  std::uint32_t u32(std::string_view what);
  std::uint64_t u64(std::string_view what);
  std::int64_t i64(std::string_view what);
  float f32(std::string_view what);
  double f64(std::string_view what);

  //! Reads exactly n bytes into `out` (resized; n was checked against remaining() first).
  void bytes(std::uint64_t n, std::string& out, std::string_view what);
  //! Consumes n bytes without keeping them.
  void skip(std::uint64_t n, std::string_view what);
  //! Consumes n bytes, passing them to `sink` chunk by chunk (for validating without keeping).
  template <typename Sink>
  void visit(std::uint64_t n, std::string_view what, Sink&& sink) {
    require(n, what);
    while (n > 0) {
      fill_some();
      const std::uint64_t take = std::min<std::uint64_t>(n, buf_end_ - buf_pos_);
      sink(std::string_view(buffer_.data() + buf_pos_, static_cast<std::size_t>(take)));
      consume(take);
      n -= take;
    }
  }

  //! Throws the truncation error unless n bytes remain.
  void require(std::uint64_t n, std::string_view what) const;
  //! Throws Error(InputFile) "<file>: <field>: <message>".
  [[noreturn]] void fail(std::string_view field, std::string_view message) const;

 private:
  void read_raw(void* dst, std::size_t n, std::string_view what);
  void fill_some();  // ensures the buffer holds at least one unread byte
  void consume(std::uint64_t n);

  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, FileCloser> fp_;
  std::string file_;
  std::uint64_t size_ = 0;
  std::uint64_t pos_ = 0;  // logical position in the file
  std::vector<char> buffer_;
  std::uint64_t buf_pos_ = 0, buf_end_ = 0;  // unread window [buf_pos_, buf_end_) of buffer_
};

}  // namespace vramplan
