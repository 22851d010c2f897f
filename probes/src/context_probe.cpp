#include "context_probe.hpp"

#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "cuda_check.hpp"
#include "timing.hpp"
#include "vramplan/calib/fit.hpp"

extern char** environ;

namespace vramplan::probe {
namespace {

constexpr int kChildTimeoutMs = 30000;  // a context takes well under a second to create
constexpr int kExtraStreams = 8;

// Starts `self --context-child` with CUDA_MODULE_LOADING=mode and returns the device memory its
// context took (free before the child minus free while it holds its context).
std::size_t one_child_context(const std::string& self, const std::string& mode) {
  int to_child[2], from_child[2];
  if (pipe(to_child) != 0 || pipe(from_child) != 0) throw ProbeError("pipe() failed");

  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "CUDA_MODULE_LOADING=", 20) != 0) env_strings.emplace_back(*e);
  env_strings.push_back("CUDA_MODULE_LOADING=" + mode);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string arg0 = self, arg1 = "--context-child";
  char* argv[] = {arg0.data(), arg1.data(), nullptr};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
  for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]})
    posix_spawn_file_actions_addclose(&actions, fd);

  const std::size_t before = free_bytes();
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(to_child[0]);
  close(from_child[1]);
  if (rc != 0) {
    close(to_child[1]);
    close(from_child[0]);
    throw ProbeError("cannot start " + self + " --context-child: " + std::strerror(rc));
  }

  char line[64] = {};
  pollfd pfd{from_child[0], POLLIN, 0};
  const bool ready = poll(&pfd, 1, kChildTimeoutMs) == 1 && read(from_child[0], line, sizeof line - 1) > 0 &&
                     std::strncmp(line, "ready", 5) == 0;
  const std::size_t during = ready ? free_bytes() : 0;
  close(to_child[1]);  // the child exits when its stdin closes
  close(from_child[0]);
  int status = 0;
  if (!ready) kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  if (!ready) throw ProbeError("context child (" + mode + ") did not report ready: '" + std::string(line) + "'");
  return before > during ? before - during : 0;
}

Bytes median_bytes(std::vector<double> samples) { return Bytes(static_cast<std::uint64_t>(calib::median(samples))); }

}  // namespace

int run_context_child() {
  if (cudaFree(nullptr) != cudaSuccess) {
    std::printf("error\n");
    return 70;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  char buffer[16];
  while (read(STDIN_FILENO, buffer, sizeof buffer) > 0) {
  }
  return 0;
}

ContextResult probe_context(ProbeEnv& env, const std::string& self) {
  ContextResult result;
  env.recorder.sweep("context", {{"module_loading", {"LAZY", "EAGER"}}}, [&](const Point& p) {
    const std::string mode = p.get_string("module_loading");
    std::vector<double> samples;
    for (int r = 0; r < 3; ++r) samples.push_back(static_cast<double>(one_child_context(self, mode)));
    const Bytes overhead = median_bytes(samples);
    (mode == "LAZY" ? result.lazy : result.eager) = overhead;
    env.recorder.record("context", p, {{"context_bytes", value(static_cast<double>(overhead.count()), "bytes")}});
  });

  // Streams: several at once, so one 2 MiB granule shared by a few streams still shows.
  {
    const std::size_t before = free_bytes();
    std::vector<cudaStream_t> streams(kExtraStreams);
    for (auto& s : streams) CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const std::size_t after = free_bytes();
    for (auto& s : streams) CUDA_CHECK(cudaStreamDestroy(s));
    result.stream_bytes = Bytes((before - after) / kExtraStreams);
    Point p;
    p.set("streams", std::to_string(kExtraStreams));
    env.recorder.record("streams", p, {{"total_bytes", value(static_cast<double>(before - after), "bytes")},
                                       {"per_stream_bytes", value(static_cast<double>(result.stream_bytes.count()), "bytes")}});
  }

  // Handles: the first of each kind loads its library's state; a second one shows the marginal cost.
  {
    std::size_t f0 = free_bytes();
    cublasLtHandle_t lt1 = nullptr, lt2 = nullptr;
    CUBLAS_CHECK(cublasLtCreate(&lt1));
    std::size_t f1 = free_bytes();
    CUBLAS_CHECK(cublasLtCreate(&lt2));
    std::size_t f2 = free_bytes();
    cublasHandle_t b1 = nullptr, b2 = nullptr;
    CUBLAS_CHECK(cublasCreate(&b1));
    std::size_t f3 = free_bytes();
    CUBLAS_CHECK(cublasCreate(&b2));
    std::size_t f4 = free_bytes();
    CUBLAS_CHECK(cublasDestroy(b2));
    CUBLAS_CHECK(cublasDestroy(b1));
    CUBLAS_CHECK(cublasLtDestroy(lt2));
    CUBLAS_CHECK(cublasLtDestroy(lt1));
    const auto diff = [](std::size_t a, std::size_t b) { return static_cast<double>(a > b ? a - b : 0); };
    result.cublaslt_first_handle = Bytes(static_cast<std::uint64_t>(diff(f0, f1)));
    result.cublas_first_handle = Bytes(static_cast<std::uint64_t>(diff(f2, f3)));
    Point p;
    env.recorder.record("handles", p,
                        {{"cublaslt_first_bytes", value(diff(f0, f1), "bytes")},
                         {"cublaslt_second_bytes", value(diff(f1, f2), "bytes")},
                         {"cublas_first_bytes", value(diff(f2, f3), "bytes")},
                         {"cublas_second_bytes", value(diff(f3, f4), "bytes")}});
  }
  return result;
}

}  // namespace vramplan::probe
