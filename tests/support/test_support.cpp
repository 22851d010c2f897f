#include "support/test_support.hpp"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
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

CliResult run_cli(const std::vector<std::string>& args) {
  ScratchDir scratch;
  const auto out_path = scratch.path() / "stdout";
  const auto err_path = scratch.path() / "stderr";
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in_fd = open("/dev/null", O_RDONLY);
    if (out_fd < 0 || err_fd < 0 || in_fd < 0) _exit(127);
    dup2(in_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    std::vector<std::string> storage;
    storage.reserve(args.size() + 1);
    storage.emplace_back(VRAMPLAN_EXE);
    for (const auto& a : args) storage.push_back(a);
    std::vector<char*> argv;
    for (auto& s : storage) argv.push_back(s.data());
    argv.push_back(nullptr);
    unsetenv("VRAMPLAN_DATA");
    execv(VRAMPLAN_EXE, argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_text(out_path);
  r.err = read_text(err_path);
  return r;
}

nlohmann::json run_cli_json(std::vector<std::string> args, int expected_exit) {
  if (std::find(args.begin(), args.end(), "--json") == args.end()) args.push_back("--json");
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, expected_exit) << r.out << r.err;
  return nlohmann::json::parse(r.out.empty() ? "{}" : r.out);
}

}  // namespace vramplan::test
