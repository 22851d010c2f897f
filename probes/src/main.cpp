// vramplan-probe — measures the GPU it runs on and writes one calibration JSON
// (docs/calibration.md). Modes:
//   vramplan-probe [--out FILE | --out-dir DIR] [--budget-seconds S] [--repeats N] [--axis P.A=V,...]
//   vramplan-probe --self-test
//   vramplan-probe --rehearse PLAN.json [--out RESULT.json]
// Exit codes: 0 ok; 1 self-test mismatch or rehearsal does not fit; 2 usage; 3 bad input file;
// 5 I/O; 69 no CUDA device; 70 CUDA/cuBLAS failure or internal error.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "alloc_probe.hpp"
#include "bandwidth_probe.hpp"
#include "context_probe.hpp"
#include "cuda_check.hpp"
#include "device_facts.hpp"
#include "gemm_probe.hpp"
#include "rehearsal_probe.hpp"
#include "self_test.hpp"
#include "timing.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan::probe {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInputFile = 3;
constexpr int kExitIo = 5;
constexpr int kExitNoDevice = 69;  // EX_UNAVAILABLE (sysexits.h); ctest's SKIP_RETURN_CODE
constexpr int kExitCuda = 70;

constexpr const char* kUsage =
    "usage: vramplan-probe [--out FILE | --out-dir DIR] [--budget-seconds S] [--repeats N]\n"
    "                      [--axis PROBE.AXIS=V1,V2,...]...\n"
    "       vramplan-probe --self-test\n"
    "       vramplan-probe --rehearse PLAN.json [--out RESULT.json]\n"
    "       vramplan-probe --version\n"
    "Measures this GPU and writes a calibration file (default name <gpu>-<driver>-cuda<ver>.json).\n"
    "Exit codes: 0 ok, 1 self-test mismatch / plan does not fit, 2 usage, 3 bad input file,\n"
    "5 I/O error, 69 no CUDA device, 70 CUDA or cuBLAS failure.\n";

struct Options {
  enum class Mode { Calibrate, SelfTest, Rehearse, ContextChild, Version, Help } mode = Mode::Calibrate;
  std::optional<std::filesystem::path> out;
  std::filesystem::path out_dir = ".";
  std::filesystem::path rehearsal;
  double budget_seconds = 50;  // the whole calibration must stay under 60 s on an H200
  int repeats = 5;
  AxisOverrides axes;
  std::vector<std::string> argv;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 0; i < argc; ++i) o.argv.emplace_back(argv[i]);
  auto next = [&](int& i, const std::string& flag) -> std::string {
    if (i + 1 >= argc) throw_usage(flag + " needs a value");
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--self-test") o.mode = Options::Mode::SelfTest;
    else if (a == "--context-child") o.mode = Options::Mode::ContextChild;
    else if (a == "--version") o.mode = Options::Mode::Version;
    else if (a == "--help" || a == "-h") o.mode = Options::Mode::Help;
    else if (a == "--rehearse") {
      o.mode = Options::Mode::Rehearse;
      o.rehearsal = next(i, a);
    } else if (a == "--out") o.out = next(i, a);
    else if (a == "--out-dir") o.out_dir = next(i, a);
    else if (a == "--axis") add_axis_override(o.axes, next(i, a));
    else if (a == "--budget-seconds" || a == "--repeats") {
      const std::string v = next(i, a);
      try {
        std::size_t used = 0;
        const double x = std::stod(v, &used);
        if (used != v.size() || !(x > 0) || x > 3600) throw std::invalid_argument(v);
        if (a == "--repeats") o.repeats = static_cast<int>(x);
        else o.budget_seconds = x;
      } catch (const std::exception&) {
        throw_usage(a + " '" + v + "': expected a positive number (at most 3600)");
      }
    } else throw_usage("unknown argument '" + a + "' (see --help)");
  }
  return o;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

template <typename T>
T required(const std::optional<T>& v, const char* figure) {
  if (!v) throw ProbeError(std::string("figure '") + figure + "' was not measured (see skipped records)");
  return *v;
}

void write_json(const nlohmann::json& doc, const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(ErrorKind::Io, path.string() + ": cannot open for writing");
  out << doc.dump(2) << '\n';
  if (!out.flush()) throw Error(ErrorKind::Io, path.string() + ": write failed");
}

int calibrate(const Options& o, ProbeEnv& env) {
  const auto started = std::chrono::steady_clock::now();
  const auto context = probe_context(env, std::filesystem::read_symlink("/proc/self/exe").string());
  const auto alloc = probe_allocation(env);
  const auto bandwidth = probe_bandwidth(env);
  cublasLtHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasLtCreate(&handle));
  const auto gemm = probe_gemm(env, handle);
  double read_gbps = 0;
  for (const auto& c : bandwidth.curves)
    if (c.kind == "read") read_gbps = c.fit.rate_per_second / 1e9;
  probe_gemv_chain(env, handle, read_gbps);
  CUBLAS_CHECK(cublasLtDestroy(handle));
  if (const auto unused = env.recorder.unused_overrides(); !unused.empty())
    throw_usage("--axis " + unused.front() + ": no probe has that axis");

  calib::Calibration cal;
  cal.origin = calib::CalibrationOrigin::Measured;
  cal.created_utc = utc_now();
  cal.device = env.device;
  auto& f = cal.figures;
  for (const auto& c : bandwidth.curves)
    (c.kind == "copy" ? f.copy_bandwidth_gbps : f.read_bandwidth_gbps) = c.fit.rate_per_second / 1e9;
  required(f.copy_bandwidth_gbps, "copy_bandwidth_gbps");
  required(f.read_bandwidth_gbps, "read_bandwidth_gbps");
  f.achieved_tflops = gemm.achieved_tflops;
  f.launch_overhead_us = bandwidth.launch_overhead_us;
  f.context_overhead = required(context.lazy, "context_overhead_bytes");
  f.context_overhead_eager = required(context.eager, "context_overhead_eager_bytes");
  f.stream_bytes = context.stream_bytes;
  f.cublas_handle_bytes = context.cublas_first_handle;
  f.cublaslt_handle_bytes = context.cublaslt_first_handle;
  f.cublaslt_workspace = gemm.max_workspace;
  f.allocation_granularity = alloc.granularity;
  f.reported_total = env.device.total_bytes_runtime;
  f.largest_single_allocation = alloc.largest_single;
  f.largest_total_allocation = alloc.largest_total;
  cal.bandwidth = bandwidth.curves;
  cal.gemm = gemm.curves;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  cal.measurements = {{"producer", {{"program", "vramplan-probe"}, {"version", VRAMPLAN_VERSION}, {"argv", o.argv},
                                    {"repeats", env.repeats}, {"wall_seconds", wall}}},
                      {"records", env.recorder.records()}};

  const auto path = o.out ? *o.out : o.out_dir / calib::calibration_file_name(env.device);
  calib::write_calibration(cal, path);
  std::printf("%s\n", path.string().c_str());
  std::fprintf(stderr, "vramplan-probe: %s, %.1f s; copy %.0f GB/s, read %.0f GB/s, context %.0f MiB\n",
               env.device.name.c_str(), wall, *f.copy_bandwidth_gbps, *f.read_bandwidth_gbps,
               f.context_overhead->mib());
  return kExitOk;
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.mode == Options::Mode::Help) return std::printf("%s", kUsage), kExitOk;
  if (o.mode == Options::Mode::Version) return std::printf("vramplan-probe %s\n", VRAMPLAN_VERSION), kExitOk;
  if (o.mode == Options::Mode::ContextChild) return run_context_child();
  // Read the plan before touching the GPU: a bad file is reported the same with or without one.
  const auto plan = o.mode == Options::Mode::Rehearse ? std::optional(calib::load_rehearsal(o.rehearsal))
                                                      : std::nullopt;
  open_device();
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long long>(o.budget_seconds * 1000));
  Recorder recorder(o.axes, deadline);
  ProbeEnv env{read_device_facts(), recorder, nullptr, o.repeats, l2_cache_bytes()};
  CUDA_CHECK(cudaStreamCreateWithFlags(&env.stream, cudaStreamNonBlocking));
  switch (o.mode) {
    case Options::Mode::SelfTest: return run_self_test(env) ? kExitOk : kExitFailed;
    case Options::Mode::Rehearse: {
      const auto result = run_rehearsal(env, *plan);
      if (o.out) write_json(result, *o.out);
      else std::printf("%s\n", result.dump(2).c_str());
      return result.at("fits").get<bool>() ? kExitOk : kExitFailed;
    }
    default: return calibrate(o, env);
  }
}

}  // namespace
}  // namespace vramplan::probe

int main(int argc, char** argv) {
  using namespace vramplan::probe;
  try {
    return run(argc, argv);
  } catch (const NoDevice& e) {
    std::fprintf(stderr, "vramplan-probe: %s\n", e.what());
    return kExitNoDevice;
  } catch (const ProbeError& e) {
    std::fprintf(stderr, "vramplan-probe: %s\n", e.what());
    return kExitCuda;
  } catch (const vramplan::Error& e) {
    std::fprintf(stderr, "vramplan-probe: %s\n", e.what());
    switch (e.kind()) {
      case vramplan::ErrorKind::Usage: return kExitUsage;
      case vramplan::ErrorKind::InputFile: return kExitInputFile;
      case vramplan::ErrorKind::Io: return kExitIo;
      default: return kExitCuda;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vramplan-probe: internal error: %s\n", e.what());
    return kExitCuda;
  }
}
