#include "vramplan/io/binary_reader.hpp"

#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>

#include <sys/types.h>

#include "vramplan/core/error.hpp"
#include "vramplan/io/input_file.hpp"

namespace vramplan {
namespace {

// Big enough that a multi-megabyte header (150k tokenizer strings) takes a handful of reads,
// small enough to be irrelevant next to the 64 MiB header budget.
constexpr std::size_t kBufferBytes = 1u << 20;

template <typename T>
T from_le(const unsigned char* p) {
  // Assembled byte by byte: correct on any host, no alignment or aliasing assumptions.
  std::uint64_t v = 0;
  for (std::size_t k = 0; k < sizeof(T); ++k) v |= static_cast<std::uint64_t>(p[k]) << (8 * k);
  return static_cast<T>(v);
}

}  // namespace

BinaryReader::BinaryReader(const std::filesystem::path& path, std::string display_name)
    : file_(display_name.empty() ? path.string() : std::move(display_name)) {
  require_regular_file(path, file_);  // before fopen(), which blocks forever on a FIFO
  std::error_code ec;
  fp_.reset(std::fopen(path.c_str(), "rb"));
  if (!fp_) throw Error(ErrorKind::Io, file_ + ": cannot open: " + std::strerror(errno));
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(ErrorKind::Io, file_ + ": cannot determine its size: " + ec.message());
  size_ = size;
  buffer_.resize(static_cast<std::size_t>(std::min<std::uint64_t>(kBufferBytes, std::max<std::uint64_t>(size_, 1))));
}

void BinaryReader::require(std::uint64_t n, std::string_view what) const {
  if (n > remaining())
    fail(what, "needs " + std::to_string(n) + " bytes at offset " + std::to_string(pos_) + ", only " +
                   std::to_string(remaining()) + " remain (file size " + std::to_string(size_) +
                   "): the file is truncated or the field is corrupt");
}

void BinaryReader::fail(std::string_view field, std::string_view message) const {
  throw_input(file_, field, message);
}

void BinaryReader::fill_some() {
  if (buf_pos_ < buf_end_) return;
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer_.size(), remaining()));
  const std::size_t got = std::fread(buffer_.data(), 1, want, fp_.get());
  if (got == 0)
    throw Error(ErrorKind::Io, file_ + ": read failed at offset " + std::to_string(pos_) +
                                   (std::ferror(fp_.get()) ? ": " + std::string(std::strerror(errno))
                                                           : ": unexpected end of file"));
  buf_pos_ = 0;
  buf_end_ = got;
}

void BinaryReader::consume(std::uint64_t n) {
  buf_pos_ += n;
  pos_ += n;
}

void BinaryReader::read_raw(void* dst, std::size_t n, std::string_view what) {
  require(n, what);
  auto* out = static_cast<char*>(dst);
  while (n > 0) {
    fill_some();
    const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(n, buf_end_ - buf_pos_));
    std::memcpy(out, buffer_.data() + buf_pos_, take);
    consume(take);
    out += take;
    n -= take;
  }
}

std::uint8_t BinaryReader::u8(std::string_view what) {
  unsigned char b[1];
  read_raw(b, 1, what);
  return b[0];
}
std::uint16_t BinaryReader::u16(std::string_view what) {
  unsigned char b[2];
  read_raw(b, 2, what);
  return from_le<std::uint16_t>(b);
}
std::uint32_t BinaryReader::u32(std::string_view what) {
  unsigned char b[4];
  read_raw(b, 4, what);
  return from_le<std::uint32_t>(b);
}
std::uint64_t BinaryReader::u64(std::string_view what) {
  unsigned char b[8];
  read_raw(b, 8, what);
  return from_le<std::uint64_t>(b);
}
std::int64_t BinaryReader::i64(std::string_view what) { return static_cast<std::int64_t>(u64(what)); }
float BinaryReader::f32(std::string_view what) { return std::bit_cast<float>(u32(what)); }
double BinaryReader::f64(std::string_view what) { return std::bit_cast<double>(u64(what)); }

void BinaryReader::bytes(std::uint64_t n, std::string& out, std::string_view what) {
  require(n, what);
  out.resize(static_cast<std::size_t>(n));
  read_raw(out.data(), static_cast<std::size_t>(n), what);
}

void BinaryReader::skip(std::uint64_t n, std::string_view what) {
  require(n, what);
  const std::uint64_t buffered = buf_end_ - buf_pos_;
  if (n <= buffered) {
    consume(n);
    return;
  }
  // Past the buffer: seek instead of reading what we would throw away.
  const std::uint64_t target = pos_ + n;
  if (target > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max()) ||
      fseeko(fp_.get(), static_cast<off_t>(target), SEEK_SET) != 0)
    throw Error(ErrorKind::Io, file_ + ": cannot seek to offset " + std::to_string(target));
  pos_ = target;
  buf_pos_ = buf_end_ = 0;
}

}  // namespace vramplan
