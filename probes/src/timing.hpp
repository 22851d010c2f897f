// timing.hpp — GPU timing with CUDA events: the stream is synchronised, one warm-up run is
// discarded, then each repeat is bracketed by two events and the median elapsed time is kept.
#pragma once

#include <functional>

#include <cuda_runtime_api.h>

namespace vramplan::probe {

//! Median over `repeats` timed runs of `body` (which enqueues work on `stream`), in seconds.
double median_seconds(cudaStream_t stream, int repeats, const std::function<void()>& body);

//! Device memory free right now (cudaMemGetInfo), after synchronising the device so that
//! finished frees are visible.
std::size_t free_bytes();

//! RAII device allocation (cudaMalloc; never managed memory). Empty when size is 0.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
    other.ptr_ = nullptr;
    other.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  //! cudaMalloc that reports failure instead of throwing (for "largest allocation" searches).
  static bool try_allocate(std::size_t bytes, DeviceBuffer& out);

  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace vramplan::probe
