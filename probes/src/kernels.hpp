// kernels.hpp — the probe's own CUDA kernels, behind plain host functions so the host code can be
// ordinary C++ (compiled by g++ with the project's warnings).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace vramplan::probe {

enum class Dtype { Bf16, Fp16, Fp8E4m3 };

std::size_t dtype_bytes(Dtype dtype);

//! Fills `count` elements with deterministic pseudo-random values in [-1, 1) (hash of the index
//! and `seed`). Random data, not zeros: tensor cores draw less power on zeros and run faster
//! (see docs/calibration.md), so zeros would flatter the TFLOPS figure.
void fill_random(void* data, Dtype dtype, std::size_t count, std::uint32_t seed, cudaStream_t stream);
//! Converts `count` elements of `dtype` to float (for the self-test's CPU reference).
void to_float(const void* data, Dtype dtype, std::size_t count, float* out, cudaStream_t stream);
//! Reads `bytes` (a multiple of 16) with 16-byte loads and folds them into *sink with XOR, so
//! the reads cannot be optimised away. `blocks` x 256 threads, grid-stride.
void read_stream(const void* data, std::size_t bytes, unsigned long long* sink, int blocks,
                 cudaStream_t stream);
//! An empty kernel: <<<1, 1>>>, for launch overhead.
void launch_empty(cudaStream_t stream);

}  // namespace vramplan::probe
