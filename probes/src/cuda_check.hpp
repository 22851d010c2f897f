// cuda_check.hpp — every CUDA, driver and cuBLAS call is checked where it happens; a failure
// throws ProbeError carrying file, line and the text of the call (nvbench's NVBENCH_CUDA_CALL).
#pragma once

#include <stdexcept>
#include <string>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace vramplan::probe {

//! A CUDA / cuBLAS call failed: a fault of the card, driver or probe (exit code 70).
class ProbeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

//! No usable CUDA device or driver on this machine (exit code 69, "no CUDA device").
class NoDevice : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);

}  // namespace vramplan::probe

#define CUDA_CHECK(call)                                                                   \
  do {                                                                                     \
    const cudaError_t vramplan_status_ = (call);                                           \
    if (vramplan_status_ != cudaSuccess)                                                   \
      ::vramplan::probe::throw_cuda_error(vramplan_status_, #call, __FILE__, __LINE__);    \
  } while (0)

#define CUBLAS_CHECK(call)                                                                 \
  do {                                                                                     \
    const cublasStatus_t vramplan_status_ = (call);                                        \
    if (vramplan_status_ != CUBLAS_STATUS_SUCCESS)                                         \
      ::vramplan::probe::throw_cublas_error(vramplan_status_, #call, __FILE__, __LINE__);  \
  } while (0)
