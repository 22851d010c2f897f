// PNG (ISO/IEC 15948): signature, chunks (length, type, data, CRC), IHDR, the IDAT stream
// inflated as one zlib stream, then per row a filter byte (0 none, 1 sub, 2 up, 3 average,
// 4 Paeth) undone against the previous row.
#include "support/png_reader.hpp"

#include <cstdlib>
#include <fstream>
#include <iterator>

#include <zlib.h>

namespace vramplan::test {
namespace {

std::uint32_t png_be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

int png_paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : (pb <= pc ? b : c);
}

}  // namespace

RgbaImage read_png(const std::filesystem::path& file, std::string& why) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (bytes.size() < 8 || !std::equal(signature, signature + 8, p)) return why = "not a PNG", RgbaImage{};
  RgbaImage img;
  int channels = 0;
  std::string idat;
  for (std::size_t at = 8; at + 12 <= bytes.size();) {
    const std::uint32_t len = png_be32(p + at);
    const std::string type = bytes.substr(at + 4, 4);
    if (at + 12 + len > bytes.size()) return why = "chunk " + type + " runs past the end", RgbaImage{};
    const unsigned char* data = p + at + 8;
    if (type == "IHDR") {
      img.width = png_be32(data);
      img.height = png_be32(data + 4);
      const int depth = data[8], colour = data[9], interlace = data[12];
      if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0)
        return why = "unsupported PNG (depth " + std::to_string(depth) + ", colour type " + std::to_string(colour) + ")", RgbaImage{};
      channels = colour == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      idat.append(reinterpret_cast<const char*>(data), len);
    } else if (type == "IEND") {
      break;
    }
    at += 12 + len;
  }
  if (channels == 0) return why = "no IHDR", RgbaImage{};
  const std::size_t stride = std::size_t{img.width} * static_cast<std::size_t>(channels);
  std::vector<unsigned char> raw((stride + 1) * img.height);
  uLongf raw_len = static_cast<uLongf>(raw.size());
  if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), static_cast<uLong>(idat.size())) != Z_OK ||
      raw_len != raw.size())
    return why = "IDAT does not inflate to " + std::to_string(raw.size()) + " bytes", RgbaImage{};
  std::vector<unsigned char> prev(stride, 0), row(stride);
  img.rgba.resize(std::size_t{img.width} * img.height * 4);
  for (std::uint32_t y = 0; y < img.height; ++y) {
    const unsigned char* src = &raw[y * (stride + 1)];
    const int filter = src[0];
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<std::size_t>(channels) ? row[i - channels] : 0, b = prev[i],
                c = i >= static_cast<std::size_t>(channels) ? prev[i - channels] : 0;
      int v = src[1 + i];
      switch (filter) {
        case 0: break;
        case 1: v += a; break;
        case 2: v += b; break;
        case 3: v += (a + b) / 2; break;
        case 4: v += png_paeth(a, b, c); break;
        default: return why = "row " + std::to_string(y) + ": filter " + std::to_string(filter), RgbaImage{};
      }
      row[i] = static_cast<unsigned char>(v & 0xFF);
    }
    for (std::uint32_t x = 0; x < img.width; ++x) {
      unsigned char* dst = &img.rgba[(std::size_t{y} * img.width + x) * 4];
      for (int k = 0; k < 3; ++k) dst[k] = row[x * channels + k];
      dst[3] = channels == 4 ? row[x * channels + 3] : 255;
    }
    std::swap(prev, row);
  }
  return img;
}

}  // namespace vramplan::test
