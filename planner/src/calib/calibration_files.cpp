// Loading, writing and finding calibration files, and the documented defaults used without one.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <vector>

#include "vramplan/calib/calibration.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"

namespace vramplan::calib {
namespace {

// Sources for each default (also listed in docs/calibration.md, "Defaults").
//  - cuBLASLt workspace: NVIDIA cuBLAS documentation, cublasSetWorkspace, recommends 32 MiB on
//    Hopper and 4 MiB on other architectures
//    (https://docs.nvidia.com/cuda/cublas/index.html#cublassetworkspace).
//  - allocation granularity: cudaMalloc observed to round to 2 MiB granules
//    (https://github.com/signalnine/q27/issues/1); cuMemGetAllocationGranularity minimum is
//    2 MiB (https://github.com/fzyzcjy/torch_memory_saver/pull/82).
//  - CUDA context: 426 MiB measured with CUDA 13.0, lazy loading
//    (https://github.com/unslothai/unsloth-zoo/pull/1053).
constexpr std::uint64_t kDefaultWorkspaceHopperPlus = 32 * kMiB;
constexpr std::uint64_t kDefaultWorkspaceOlder = 4 * kMiB;
constexpr std::uint64_t kDefaultGranularity = 2 * kMiB;
constexpr std::uint64_t kDefaultContext = 426 * kMiB;
constexpr int kHopperMajor = 9;

}  // namespace

Calibration default_calibration(int cc_major) {
  Calibration cal;
  cal.origin = CalibrationOrigin::Defaults;
  cal.source = "documented defaults (docs/calibration.md#defaults)";
  cal.figures.cublaslt_workspace =
      Bytes(cc_major >= kHopperMajor ? kDefaultWorkspaceHopperPlus : kDefaultWorkspaceOlder);
  cal.figures.allocation_granularity = Bytes(kDefaultGranularity);
  cal.figures.context_overhead = Bytes(kDefaultContext);
  return cal;
}

Calibration load_calibration(const std::filesystem::path& path) {
  return calibration_from_json(read_json_file(path), path.string());
}

void write_calibration(const Calibration& cal, const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(ErrorKind::Io, path.string() + ": cannot open for writing");
  out << calibration_to_json(cal).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  out.close();
  if (!out) throw Error(ErrorKind::Io, path.string() + ": write failed");
}

std::string gpu_key(std::string_view name) {
  std::string key;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) key += static_cast<char>(std::tolower(u));
    else if (!key.empty() && key.back() != '-') key += '-';
  }
  while (!key.empty() && key.back() == '-') key.pop_back();
  constexpr std::string_view kVendor = "nvidia-";
  if (key.starts_with(kVendor)) key.erase(0, kVendor.size());
  return key;
}

std::optional<Calibration> find_calibration(const DataRoot& data_root, std::string_view gpu_id) {
  if (gpu_key(gpu_id).empty()) throw_usage("find_calibration: empty GPU name");
  const auto folder = data_root.data() / "calibration";
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) return std::nullopt;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  if (ec) throw Error(ErrorKind::Io, folder.string() + ": cannot list: " + ec.message());
  std::sort(files.begin(), files.end());  // deterministic tie-break between equal dates

  const std::string wanted = gpu_key(gpu_id);
  std::optional<Calibration> best;
  for (const auto& file : files) {
    auto cal = load_calibration(file);
    if (!cal.device) continue;  // a deployment-only file measured no card: it matches none
    const bool match = gpu_key(cal.device->name) == wanted || cal.device->uuid == gpu_id;
    if (match && (!best || cal.created_utc > best->created_utc)) best = std::move(cal);
  }
  return best;
}

std::string calibration_file_name(const DeviceFacts& device) {
  return gpu_key(device.name) + "-" + device.driver_version + "-cuda" + device.cuda_runtime_version +
         ".json";
}

}  // namespace vramplan::calib

namespace vramplan::calib {

namespace {
bool same_deployment(const DeploymentFigures& d, std::string_view model, std::string_view engine, std::string_view version,
                     std::string_view gpu, std::uint64_t tp, std::uint64_t pp) {
  return d.model == model && d.engine == engine && d.engine_version == version && d.gpu == gpu && d.tp == tp && d.pp == pp;
}
}  // namespace

const DeploymentFigures* find_deployment(const Calibration& cal, std::string_view model, std::string_view engine,
                                         std::string_view engine_version, std::string_view gpu, std::uint64_t tp,
                                         std::uint64_t pp) {
  for (const auto& d : cal.deployment)
    if (same_deployment(d, model, engine, engine_version, gpu, tp, pp)) return &d;
  return nullptr;
}

void put_deployment(Calibration& cal, DeploymentFigures d) {
  for (auto& e : cal.deployment)
    if (same_deployment(e, d.model, d.engine, d.engine_version, d.gpu, d.tp, d.pp)) {
      e = std::move(d);
      return;
    }
  cal.deployment.push_back(std::move(d));
}

}  // namespace vramplan::calib
