// lt_gemm.hpp — one cuBLASLt GEMM of a model-shaped linear layer.
//
// Row-major view, as a framework sees it: Y[M x N] = X[M x K] * W[N x K]^T, W being the layer's
// weight (N outputs, K inputs), M the tokens. In cuBLASLt's column-major terms that is
// D[N x M] = op(W)[N x K] * X[K x M] with op = transpose ("TN"), the layout FP8 requires.
// Output is bf16 for bf16 and fp8 inputs, fp16 for fp16; accumulation is fp32.
#pragma once

#include <cstdint>
#include <string>

#include <cublasLt.h>

#include "kernels.hpp"

namespace vramplan::probe {

struct GemmShape {
  Dtype dtype = Dtype::Bf16;
  std::uint64_t m = 0, n = 0, k = 0;

  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
  std::size_t weight_bytes() const { return n * k * dtype_bytes(dtype); }
  std::size_t input_bytes() const { return m * k * dtype_bytes(dtype); }
  std::size_t output_bytes() const { return m * n * 2; }  //!< bf16 / fp16 output
};

//! "bf16" / "fp16" / "fp8_e4m3" <-> Dtype. parse_dtype throws ProbeError on anything else.
const char* dtype_name(Dtype dtype);
Dtype parse_dtype(const std::string& name);
//! Empty when `dtype` runs on a card of compute capability major.minor, else the reason.
std::string dtype_unsupported_reason(Dtype dtype, int cc_major, int cc_minor);

class LtGemm {
 public:
  //! Builds the descriptors and asks the heuristic for the best algorithm whose workspace fits
  //! `workspace_cap` bytes. supported() is false (with a reason) when it offers none.
  LtGemm(cublasLtHandle_t handle, const GemmShape& shape, std::size_t workspace_cap);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  bool supported() const { return reason_.empty(); }
  const std::string& unsupported_reason() const { return reason_; }
  //! Workspace the chosen algorithm asks for.
  std::size_t workspace_bytes() const { return heuristic_.workspaceSize; }

  //! Enqueues Y = X * W^T on `stream`. `workspace` must hold workspace_bytes().
  void run(const void* weight, const void* input, void* output, void* workspace, cudaStream_t stream) const;

 private:
  cublasLtHandle_t handle_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t w_ = nullptr, x_ = nullptr, y_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
  std::string reason_;
};

}  // namespace vramplan::probe
