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

// VRAMPLAN_DATA when set (it must hold data/), else the first of `candidates` that holds data/.
DataRoot search_data_root(const std::vector<std::filesystem::path>& candidates) {
  if (const char* env = std::getenv("VRAMPLAN_DATA"); env != nullptr && *env != '\0') {
    const std::filesystem::path dir(env);
    if (holds_data(dir)) return DataRoot{dir};
    throw Error(ErrorKind::Io, "VRAMPLAN_DATA=" + dir.string() + ": no data/ folder there");
  }
  for (const auto& dir : candidates)
    if (holds_data(dir)) return DataRoot{dir};
  std::string where;
  for (const auto& p : candidates) where += " " + p.string();
  throw Error(ErrorKind::Io, "cannot find vramplan's data folder (looked in:" + where +
                                 "); set VRAMPLAN_DATA to a folder holding data/ and models/");
}

}  // namespace

DataRoot find_data_root(const std::filesystem::path& executable) {
  if (executable.empty()) return search_data_root({});
  return search_data_root({executable.parent_path().parent_path() / "share" / "vramplan"});
}

DataRoot find_data_root_in(const std::filesystem::path& folder) { return search_data_root({folder}); }

DataRoot find_data_root() { return find_data_root(running_executable()); }

}  // namespace vramplan
