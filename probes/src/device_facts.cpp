#include "device_facts.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cuda.h>
#include <cudaTypedefs.h>

#include "cuda_check.hpp"

namespace vramplan::probe {
namespace {

// "13.0" from 13000.
std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

std::string uuid_text(const cudaUUID_t& uuid) {
  // GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, as nvidia-smi -L prints it.
  std::string out = "GPU-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    out += hex;
  }
  return out;
}

// The few NVML entry points we need, declared here (no nvml.h in the toolkit image) and looked up
// with dlopen so the probe starts on machines without a driver. Their C ABI is stable.
struct Nvml {
  using Init = int (*)();
  using Shutdown = int (*)();
  using DriverVersion = int (*)(char*, unsigned int);
  using HandleByUuid = int (*)(const char*, void**);
  using MigMode = int (*)(void*, unsigned int*, unsigned int*);
  void* lib = nullptr;
  Init init = nullptr;
  Shutdown shutdown = nullptr;
  DriverVersion driver_version = nullptr;
  HandleByUuid handle_by_uuid = nullptr;
  MigMode mig_mode = nullptr;

  Nvml() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    init = reinterpret_cast<Init>(dlsym(lib, "nvmlInit_v2"));
    shutdown = reinterpret_cast<Shutdown>(dlsym(lib, "nvmlShutdown"));
    driver_version = reinterpret_cast<DriverVersion>(dlsym(lib, "nvmlSystemGetDriverVersion"));
    handle_by_uuid = reinterpret_cast<HandleByUuid>(dlsym(lib, "nvmlDeviceGetHandleByUUID"));
    mig_mode = reinterpret_cast<MigMode>(dlsym(lib, "nvmlDeviceGetMigMode"));
    if (!init || !shutdown || init() != 0) {
      dlclose(lib);
      lib = nullptr;
    }
  }
  ~Nvml() {
    if (lib) {
      shutdown();
      dlclose(lib);
    }
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
};

constexpr int kNvmlSuccess = 0;
constexpr int kNvmlNotSupported = 3;

}  // namespace

void open_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    throw NoDevice(std::string("no CUDA device (") +
                   (status == cudaSuccess ? "device count 0" : cudaGetErrorName(status)) + ")");
  CUDA_CHECK(cudaSetDevice(0));
  CUDA_CHECK(cudaFree(nullptr));  // creates the primary context now, not inside a timed region
}

std::size_t l2_cache_bytes() {
  int l2 = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  return static_cast<std::size_t>(l2);
}

calib::DeviceFacts read_device_facts() {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  calib::DeviceFacts d;
  d.name = prop.name;
  d.uuid = uuid_text(prop.uuid);
  char bus[32];
  std::snprintf(bus, sizeof bus, "%08x:%02x:%02x.0", static_cast<unsigned>(prop.pciDomainID),
                static_cast<unsigned>(prop.pciBusID), static_cast<unsigned>(prop.pciDeviceID));
  d.pci_bus_id = bus;
  d.compute_capability_major = prop.major;
  d.compute_capability_minor = prop.minor;
  d.sm_count = static_cast<std::uint32_t>(prop.multiProcessorCount);
  d.ecc_enabled = prop.ECCEnabled != 0;

  std::size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  d.total_bytes_runtime = Bytes(total);
  d.free_bytes_at_start = Bytes(free);

  // cuDeviceTotalMem through the runtime's driver entry point: no link against libcuda.
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuDeviceTotalMem", &fn, 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || !fn) throw ProbeError("driver has no cuDeviceTotalMem");
  std::size_t driver_total = 0;
  const CUresult cu = reinterpret_cast<PFN_cuDeviceTotalMem_v3020>(fn)(&driver_total, 0);
  if (cu != CUDA_SUCCESS) throw ProbeError("cuDeviceTotalMem failed: CUresult " + std::to_string(cu));
  d.total_bytes_driver = Bytes(driver_total);

  int driver = 0, runtime = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  d.cuda_driver_version = cuda_version_text(driver);
  d.cuda_runtime_version = cuda_version_text(runtime);

  d.driver_version = "unknown";
  d.mig_mode = "unknown";
  const Nvml nvml;
  if (nvml.lib) {
    char version[96] = {};
    if (nvml.driver_version && nvml.driver_version(version, sizeof version) == kNvmlSuccess)
      d.driver_version = version;
    void* handle = nullptr;
    unsigned int current = 0, pending = 0;
    if (nvml.handle_by_uuid && nvml.mig_mode &&
        nvml.handle_by_uuid(d.uuid.c_str(), &handle) == kNvmlSuccess) {
      const int rc = nvml.mig_mode(handle, &current, &pending);
      if (rc == kNvmlSuccess) d.mig_mode = current != 0 ? "enabled" : "disabled";
      else if (rc == kNvmlNotSupported) d.mig_mode = "unsupported";
    }
  }
  return d;
}

}  // namespace vramplan::probe
