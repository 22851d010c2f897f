// png_reader.hpp — a minimal PNG decoder for the browser test's pixel check: 8-bit RGB or RGBA,
// not interlaced (what chromium's --screenshot writes), inflated with zlib.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace vramplan::test {

struct RgbaImage {
  std::uint32_t width = 0, height = 0;
  std::vector<std::uint8_t> rgba;  //!< 4 bytes per pixel, rows top to bottom
  const std::uint8_t* at(std::uint32_t x, std::uint32_t y) const { return &rgba[(std::size_t{y} * width + x) * 4]; }
};

//! The image, or an empty one with `why` set (not a PNG, a format outside the above, bad data).
RgbaImage read_png(const std::filesystem::path& file, std::string& why);

}  // namespace vramplan::test
