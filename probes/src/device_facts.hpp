// device_facts.hpp — what the probe reads off the device before measuring anything.
#pragma once

#include "vramplan/calib/calibration.hpp"

namespace vramplan::probe {

//! Selects device 0 and creates its context. Throws NoDevice when there is no CUDA device or
//! driver (cudaErrorNoDevice, cudaErrorInsufficientDriver, ...).
void open_device();

//! Name, compute capability, SMs, totals from cudaMemGetInfo and cuDeviceTotalMem, versions,
//! MIG mode and ECC. Driver release and MIG mode come from NVML (dlopen'ed; "unknown" without it).
calib::DeviceFacts read_device_facts();

//! L2 cache bytes (bandwidth probes size their buffers well past it).
std::size_t l2_cache_bytes();

}  // namespace vramplan::probe
