// test_support.hpp — helpers shared by the tests: paths into the source tree, scratch files,
// and running the real `vramplan` executable.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/core/error.hpp"
#include "vramplan/io/data_root.hpp"

namespace vramplan::test {

//! The source checkout (for data/, models/, tests/fixtures/).
std::filesystem::path source_dir();
//! The source tree as the data root (data/, models/): what the installed binary finds beside it.
DataRoot source_root();
std::filesystem::path fixture(const std::string& relative);  //!< tests/fixtures/<relative>
//! A file's whole content ("" when it cannot be read).
std::string read_text(const std::filesystem::path& path);

//! A fresh empty folder under the system temp dir, removed when the object dies.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  //! Writes `bytes` to <dir>/<name> and returns the path.
  std::filesystem::path write(const std::string& name, const std::string& bytes) const;

 private:
  std::filesystem::path path_;
};

struct CliResult {
  int exit_code = -1;
  std::string out;  //!< stdout
  std::string err;  //!< stderr
};

//! Runs `f`, expects it to throw vramplan::Error of kind `expected` (a test failure otherwise) and
//! returns the error's message for further checks.
std::string error_message(const std::function<void()>& f, ErrorKind expected);

//! Runs the built vramplan executable with `args` (no shell interpretation), stdin from /dev/null,
//! VRAMPLAN_DATA and COLUMNS unset (cli_env.hpp: another directory or environment).
CliResult run_cli(const std::vector<std::string>& args);

//! run_cli with "--json" added (unless given), expecting `expected_exit`; the parsed stdout, or {}
//! when it is empty (the failure is then reported by the exit-code expectation).
nlohmann::json run_cli_json(std::vector<std::string> args, int expected_exit = 0);

}  // namespace vramplan::test
