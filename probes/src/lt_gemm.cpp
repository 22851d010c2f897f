#include "lt_gemm.hpp"

#include "cuda_check.hpp"

namespace vramplan::probe {
namespace {

struct DtypeInfo {
  Dtype dtype;
  const char* name;
  cudaDataType_t input;
  cudaDataType_t output;
  int min_cc;  //!< 10 * major + minor
};
// FP8 tensor-core GEMMs need Ada / Hopper (sm_89+) — cuBLASLt documentation, cublasLtMatmul
// "FP8" data type table.
constexpr DtypeInfo kDtypes[] = {
    {Dtype::Bf16, "bf16", CUDA_R_16BF, CUDA_R_16BF, 80},
    {Dtype::Fp16, "fp16", CUDA_R_16F, CUDA_R_16F, 70},
    {Dtype::Fp8E4m3, "fp8_e4m3", CUDA_R_8F_E4M3, CUDA_R_16BF, 89},
};

const DtypeInfo& info(Dtype dtype) {
  for (const auto& d : kDtypes)
    if (d.dtype == dtype) return d;
  throw ProbeError("unknown dtype");
}

}  // namespace

const char* dtype_name(Dtype dtype) { return info(dtype).name; }

Dtype parse_dtype(const std::string& name) {
  for (const auto& d : kDtypes)
    if (name == d.name) return d.dtype;
  throw ProbeError("unknown dtype '" + name + "' (known: bf16, fp16, fp8_e4m3)");
}

std::string dtype_unsupported_reason(Dtype dtype, int cc_major, int cc_minor) {
  const auto& d = info(dtype);
  if (10 * cc_major + cc_minor >= d.min_cc) return "";
  return std::string(d.name) + " GEMMs need compute capability " + std::to_string(d.min_cc / 10) +
         "." + std::to_string(d.min_cc % 10) + "+, this card is " + std::to_string(cc_major) + "." +
         std::to_string(cc_minor);
}

LtGemm::LtGemm(cublasLtHandle_t handle, const GemmShape& shape, std::size_t workspace_cap)
    : handle_(handle) {
  const auto& d = info(shape.dtype);
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transpose = CUBLAS_OP_T, keep = CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof keep));
  const auto m = shape.m, n = shape.n, k = shape.k;
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&w_, d.input, k, n, static_cast<int64_t>(k)));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&x_, d.input, k, m, static_cast<int64_t>(k)));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&y_, d.output, n, m, static_cast<int64_t>(n)));

  cublasLtMatmulPreference_t pref = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  int returned = 0;
  cublasStatus_t status = cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_cap, sizeof workspace_cap);
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatmulAlgoGetHeuristic(handle_, op_, w_, x_, y_, y_, pref, 1, &heuristic_, &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || (status == CUBLAS_STATUS_SUCCESS && returned == 0))
    reason_ = "cuBLASLt heuristic offers no algorithm for this shape and type";
  else
    CUBLAS_CHECK(status);
}

LtGemm::~LtGemm() {
  if (y_) cublasLtMatrixLayoutDestroy(y_);
  if (x_) cublasLtMatrixLayoutDestroy(x_);
  if (w_) cublasLtMatrixLayoutDestroy(w_);
  if (op_) cublasLtMatmulDescDestroy(op_);
}

void LtGemm::run(const void* weight, const void* input, void* output, void* workspace,
                 cudaStream_t stream) const {
  if (!supported()) throw ProbeError("LtGemm::run on an unsupported shape: " + reason_);
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasLtMatmul(handle_, op_, &alpha, weight, w_, input, x_, &beta, output, y_, output, y_,
                              &heuristic_.algo, workspace, heuristic_.workspaceSize, stream));
}

}  // namespace vramplan::probe
