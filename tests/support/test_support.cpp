#include "support/test_support.hpp"

#include "support/cli_env.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <algorithm>

namespace vramplan::test {
std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path source_dir() { return VRAMPLAN_SOURCE_DIR; }
DataRoot source_root() { return DataRoot{source_dir()}; }
std::filesystem::path fixture(const std::string& relative) {
  return source_dir() / "tests" / "fixtures" / relative;
}

ScratchDir::ScratchDir() {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          ("vramplan-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path ScratchDir::write(const std::string& name, const std::string& bytes) const {
  const auto p = path_ / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return p;
}

std::string error_message(const std::function<void()>& f, ErrorKind expected) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), expected) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

CliResult run_cli(const std::vector<std::string>& args) { return run_cli(args, CliEnv{}); }

nlohmann::json run_cli_json(std::vector<std::string> args, int expected_exit) {
  if (std::find(args.begin(), args.end(), "--json") == args.end()) args.push_back("--json");
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, expected_exit) << r.out << r.err;
  return nlohmann::json::parse(r.out.empty() ? "{}" : r.out);
}

}  // namespace vramplan::test
