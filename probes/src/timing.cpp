#include "timing.hpp"

#include <vector>

#include "cuda_check.hpp"
#include "vramplan/calib/fit.hpp"

namespace vramplan::probe {

double median_seconds(cudaStream_t stream, int repeats, const std::function<void()>& body) {
  cudaEvent_t start = nullptr, stop = nullptr;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> seconds;
  try {
    body();  // warm-up: first-use module loading, clocks ramping up
    CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int r = 0; r < repeats; ++r) {
      CUDA_CHECK(cudaEventRecord(start, stream));
      body();
      CUDA_CHECK(cudaEventRecord(stop, stream));
      CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      seconds.push_back(static_cast<double>(ms) * 1e-3);
    }
  } catch (...) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    throw;
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return calib::median(seconds);
}

std::size_t free_bytes() {
  CUDA_CHECK(cudaDeviceSynchronize());
  std::size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);  // a destructor cannot throw; a failed free shows in the next call
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = other.ptr_;
    bytes_ = other.bytes_;
    other.ptr_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

bool DeviceBuffer::try_allocate(std::size_t bytes, DeviceBuffer& out) {
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // out-of-memory is not sticky; clear it so the next call starts clean
    return false;
  }
  CUDA_CHECK(status);
  out = DeviceBuffer();
  out.ptr_ = p;
  out.bytes_ = bytes;
  return true;
}

}  // namespace vramplan::probe
