#include "cuda_check.hpp"

namespace vramplan::probe {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  throw ProbeError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                   cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw ProbeError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                   cublasLtGetStatusString(status));
}

}  // namespace vramplan::probe
