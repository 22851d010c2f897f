#include "vramplan/io/input_file.hpp"

#include <array>
#include <fstream>

#include "vramplan/core/error.hpp"

namespace vramplan {

std::string missing_file_reason(const std::filesystem::path& path, const std::error_code& status_error,
                                std::string_view absent) {
  // ELOOP names the loop even when `path` itself is no link ("loop/" resolves the link before it).
  if (status_error == std::errc::too_many_symbolic_link_levels) return "a loop of symbolic links";
  std::error_code ec;
  if (!std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec)) || ec) return std::string(absent);
  return status_error == std::errc::too_many_symbolic_link_levels ? "a loop of symbolic links"
                                                                   : "a symbolic link to nothing (its target does not exist)";
}

void require_regular_file(const std::filesystem::path& path, std::string_view display) {
  const std::string name = display.empty() ? path.string() : std::string(display);
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);  // follows symlinks, never opens
  if (ec || !std::filesystem::exists(status)) throw Error(ErrorKind::Io, name + ": " + missing_file_reason(path, ec));
  if (std::filesystem::is_directory(status))
    throw Error(ErrorKind::Io, name + ": is a directory, expected a file");
  if (!std::filesystem::is_regular_file(status))
    throw Error(ErrorKind::Io, name + ": is not a regular file (a FIFO, socket or device), refused");
}

FileMagic sniff_magic(const std::filesystem::path& path) {
  std::array<char, 9> head{};
  std::ifstream in(path, std::ios::binary);
  in.read(head.data(), head.size());
  const auto got = static_cast<std::size_t>(in.gcount());
  if (got >= 4 && std::string_view(head.data(), 4) == "GGUF") return FileMagic::Gguf;
  // safetensors: u64 header length (a header is far below 2^56 bytes, so the top byte is 0),
  // then the JSON header's opening brace.
  if (got == 9 && head[7] == 0 && head[8] == '{') return FileMagic::Safetensors;
  return FileMagic::Other;
}

}  // namespace vramplan
