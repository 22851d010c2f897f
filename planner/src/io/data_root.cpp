#include "vramplan/io/data_root.hpp"

#include <cstdlib>
#include <string>
#include <vector>

#include "vramplan/core/error.hpp"

namespace vramplan {
namespace {

bool holds_data(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_directory(dir / "data", ec);
}

std::filesystem::path running_executable() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : exe;
}

}  // namespace

DataRoot find_data_root(const std::filesystem::path& executable) {
  std::vector<std::filesystem::path> tried;
  if (const char* env = std::getenv("VRAMPLAN_DATA"); env != nullptr && *env != '\0') {
    const std::filesystem::path dir(env);
    if (holds_data(dir)) return DataRoot{dir};
    throw Error(ErrorKind::Io, "VRAMPLAN_DATA=" + dir.string() + ": no data/ folder there");
  }
  if (!executable.empty()) {
    const auto share = executable.parent_path().parent_path() / "share" / "vramplan";
    if (holds_data(share)) return DataRoot{share};
    tried.push_back(share);
  }
  std::string where;
  for (const auto& p : tried) where += " " + p.string();
  throw Error(ErrorKind::Io, "cannot find vramplan's data folder (looked in:" + where +
                                 "); set VRAMPLAN_DATA to a folder holding data/ and models/");
}

DataRoot find_data_root() { return find_data_root(running_executable()); }

}  // namespace vramplan
