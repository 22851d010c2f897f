#include "self_test.hpp"

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "cuda_check.hpp"
#include "kernels.hpp"
#include "lt_gemm.hpp"
#include "timing.hpp"

namespace vramplan::probe {
namespace {

// Multiples of 16 in every dimension (FP8 requires it); small enough to check exhaustively.
constexpr std::uint64_t kM = 32, kN = 48, kK = 64;
// Outputs are bf16 (8 significant bits) or fp16: rounding is at most 2^-8 of |y|; fp32
// accumulation in another order adds far less. 2^-7 of sum|x*w| bounds both; a transposed or
// mis-strided operand misses by orders of magnitude more.
constexpr double kRelTolerance = 1.0 / 128;

std::vector<float> download_as_float(const void* data, Dtype dtype, std::size_t count, cudaStream_t stream) {
  DeviceBuffer f(count * sizeof(float));
  to_float(data, dtype, count, static_cast<float*>(f.get()), stream);
  std::vector<float> host(count);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaMemcpy(host.data(), f.get(), count * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}

bool check_gemm(ProbeEnv& env, cublasLtHandle_t handle, Dtype dtype) {
  const GemmShape shape{dtype, kM, kN, kK};
  DeviceBuffer w(shape.weight_bytes()), x(shape.input_bytes()), y(shape.output_bytes());
  fill_random(w.get(), dtype, kN * kK, 11, env.stream);
  fill_random(x.get(), dtype, kM * kK, 12, env.stream);
  const LtGemm gemm(handle, shape, std::size_t{32} << 20);
  if (!gemm.supported()) {
    std::printf("FAIL gemm %s: %s\n", dtype_name(dtype), gemm.unsupported_reason().c_str());
    return false;
  }
  DeviceBuffer workspace(gemm.workspace_bytes());
  gemm.run(w.get(), x.get(), y.get(), workspace.get(), env.stream);
  const Dtype out_type = dtype == Dtype::Fp16 ? Dtype::Fp16 : Dtype::Bf16;
  const auto hw = download_as_float(w.get(), dtype, kN * kK, env.stream);
  const auto hx = download_as_float(x.get(), dtype, kM * kK, env.stream);
  const auto hy = download_as_float(y.get(), out_type, kM * kN, env.stream);
  double worst = 0;  // largest error as a fraction of the tolerance
  for (std::uint64_t i = 0; i < kM; ++i) {
    for (std::uint64_t j = 0; j < kN; ++j) {
      double ref = 0, magnitude = 0;
      for (std::uint64_t k = 0; k < kK; ++k) {
        ref += static_cast<double>(hx[i * kK + k]) * static_cast<double>(hw[j * kK + k]);
        magnitude += std::abs(static_cast<double>(hx[i * kK + k]) * static_cast<double>(hw[j * kK + k]));
      }
      const double error = std::abs(static_cast<double>(hy[i * kN + j]) - ref);
      worst = std::max(worst, error / (kRelTolerance * magnitude + 1e-6));
    }
  }
  const bool ok = worst <= 1.0;
  std::printf("%s gemm %s %llux%llux%llu: worst error %.3f of tolerance\n", ok ? "PASS" : "FAIL",
              dtype_name(dtype), static_cast<unsigned long long>(kM), static_cast<unsigned long long>(kN),
              static_cast<unsigned long long>(kK), worst);
  return ok;
}

bool check_read_and_copy(ProbeEnv& env) {
  constexpr std::size_t kWords = (std::size_t{1} << 20) + 4;  // not a multiple of the grid stride
  std::vector<std::uint32_t> host(kWords);
  std::mt19937 rng(7);
  std::uint32_t expected = 0;
  for (auto& word : host) {
    word = static_cast<std::uint32_t>(rng());
    expected ^= word;
  }
  const std::size_t bytes = kWords * sizeof(std::uint32_t);
  DeviceBuffer src(bytes), dst(bytes), sink(sizeof(unsigned long long));
  CUDA_CHECK(cudaMemcpy(src.get(), host.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(sink.get(), 0, sizeof(unsigned long long)));
  read_stream(src.get(), bytes, static_cast<unsigned long long*>(sink.get()),
              static_cast<int>(env.device.sm_count) * 8, env.stream);
  unsigned long long folded = 0;
  CUDA_CHECK(cudaStreamSynchronize(env.stream));
  CUDA_CHECK(cudaMemcpy(&folded, sink.get(), sizeof folded, cudaMemcpyDeviceToHost));
  const bool read_ok = folded == expected;
  std::printf("%s read kernel: XOR fold %llx, expected %x\n", read_ok ? "PASS" : "FAIL", folded, expected);

  CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, env.stream));
  std::vector<std::uint32_t> back(kWords);
  CUDA_CHECK(cudaStreamSynchronize(env.stream));
  CUDA_CHECK(cudaMemcpy(back.data(), dst.get(), bytes, cudaMemcpyDeviceToHost));
  const bool copy_ok = back == host;
  std::printf("%s device-to-device copy of %zu bytes\n", copy_ok ? "PASS" : "FAIL", bytes);
  return read_ok && copy_ok;
}

}  // namespace

bool run_self_test(ProbeEnv& env) {
  bool ok = check_read_and_copy(env);
  cublasLtHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasLtCreate(&handle));
  for (const Dtype dtype : {Dtype::Bf16, Dtype::Fp16, Dtype::Fp8E4m3}) {
    const std::string why = dtype_unsupported_reason(dtype, env.device.compute_capability_major,
                                                     env.device.compute_capability_minor);
    if (!why.empty()) {
      std::printf("SKIP gemm %s: %s\n", dtype_name(dtype), why.c_str());
      continue;
    }
    ok = check_gemm(env, handle, dtype) && ok;
  }
  CUBLAS_CHECK(cublasLtDestroy(handle));
  return ok;
}

}  // namespace vramplan::probe
