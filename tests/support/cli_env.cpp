#include "support/cli_env.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace vramplan::test {

CliResult run_cli(const std::vector<std::string>& args, const CliEnv& how) {
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
    unsetenv("COLUMNS");
    for (const auto& [name, value] : how.env) setenv(name.c_str(), value.c_str(), 1);
    if (!how.cwd.empty() && chdir(how.cwd.c_str()) != 0) _exit(127);
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

}  // namespace vramplan::test
