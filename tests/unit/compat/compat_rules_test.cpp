// One test per rule of data/compat/*.json: each builds the smallest query the rule is about,
// from the shipped GPU catalogue, and checks the verdict, the rule id and that the finding names
// the engine source the rule was read from (quoted in the comment above each test).
#include <gtest/gtest.h>

#include "support/catalogs.hpp"
#include "support/test_support.hpp"
#include "vramplan/compat/compat.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/quant/format.hpp"
#include "vramplan/quant/scheme.hpp"

namespace vramplan::compat {
namespace {

const CompatRules& rules() {
  static const CompatRules r = CompatRules::load(test::source_dir() / "data" / "compat");
  return r;
}

const GpuCatalog& gpus() {
  static const GpuCatalog c = GpuCatalog::load(test::source_dir() / "data" / "gpus.json");
  return c;
}

Query query(std::string engine, std::string version, std::string_view gpu, std::vector<std::string> families = {"float"},
            std::string dtype = "fp16") {
  Query q;
  q.engine = std::move(engine);
  q.engine_version = std::move(version);
  set_gpu_facts(q, gpus().resolve_one(gpu));
  q.weight_families = std::move(families);
  q.dtype = std::move(dtype);
  return q;
}

// The finding of `rule` in `v`, or nullptr.
const Finding* find(const Verdict& v, std::string_view rule) {
  for (const auto& f : v.findings)
    if (f.rule == rule) return &f;
  return nullptr;
}

void expect_rule(const Query& q, std::string_view rule, Support support, std::string_view source_part) {
  const Verdict v = rules().evaluate(q);
  const Finding* f = find(v, rule);
  ASSERT_NE(f, nullptr) << "rule " << rule << " did not fire for " << q.engine << " on " << q.gpu_id;
  EXPECT_EQ(f->support, support);
  EXPECT_NE(f->source.find(source_part), std::string::npos) << f->source;
  EXPECT_GE(v.support, support);
}

void expect_no_rule(const Query& q, std::string_view rule) {
  EXPECT_EQ(find(rules().evaluate(q), rule), nullptr) << rule << " fired for " << q.engine << " on " << q.gpu_id;
}

// --- engine x version x platform -------------------------------------------------------------

// vllm/platforms/cuda.py get_attn_backend_cls; vllm-project/vllm#18571: no V1 backend for V100.
TEST(CompatPlatform, VllmRejectsVolta) {
  expect_rule(query("vllm", "0.19", "v100-32"), "vllm-cuda-min-capability", Support::Unsupported, "platforms/cuda.py");
  expect_no_rule(query("vllm", "0.19", "t4"), "vllm-cuda-min-capability");
}

// vllm/attention/utils/fa_utils.py get_flash_attn_version: no FlashAttention below SM 8.0 (T4 = 7.5).
TEST(CompatPlatform, VllmTuringUsesTritonAttention) {
  expect_rule(query("vllm", "0.19", "t4"), "vllm-turing-triton-attention", Support::Fallback, "fa_utils.py");
  expect_no_rule(query("vllm", "0.19", "a100"), "vllm-turing-triton-attention");
}

// docs/getting_started/installation/gpu/rocm.inc.md: gfx90a / gfx942 / gfx950 / RDNA3-4 only.
TEST(CompatPlatform, VllmRocmTargets) {
  expect_no_rule(query("vllm", "0.19", "mi300x"), "vllm-rocm-gfx-targets");
  Query mi50 = query("vllm", "0.19", "mi300x");
  mi50.gfx_target = "gfx906";  // MI50 / MI60: not in the catalogue
  expect_rule(mi50, "vllm-rocm-gfx-targets", Support::Unsupported, "rocm.inc.md");
}

// sgl-kernel/CMakeLists.txt @00390b86: below SM90 only compute_80 / compute_89; sgl-project/sglang#6006
// deprecated sm75 for v0.5. So 0.5 and later refuse a T4 (7.5) and an RTX 2080; 0.4 still ran it.
TEST(CompatPlatform, SglangNeedsAmpereFromZeroFive) {
  expect_rule(query("sglang", "0.5", "t4"), "sglang-cuda-min-capability", Support::Unsupported, "sgl-kernel/CMakeLists.txt");
  expect_rule(query("sglang", "", "t4"), "sglang-cuda-min-capability", Support::Unsupported, "#6006");
  expect_no_rule(query("sglang", "0.5", "a10"), "sglang-cuda-min-capability");  // 8.6
  expect_no_rule(query("sglang", "0.4", "t4"), "sglang-cuda-min-capability");
  EXPECT_EQ(rules().evaluate(query("sglang", "0.4", "t4")).support, Support::Supported);
}

// sgl-project/sglang#5062: the 0.4-era sgl-kernel cu118 wheel covered sm75 upward, not Volta.
TEST(CompatPlatform, SglangZeroXNeedsTuring) {
  expect_rule(query("sglang", "0.4", "v100-16"), "sglang-0x-cuda-min-capability", Support::Unsupported, "#5062");
  expect_no_rule(query("sglang", "0.5", "v100-16"), "sglang-0x-cuda-min-capability");  // 0.5's own floor says it
}

// docs/platforms/amd_gpu.md: MI300X / MI325X / MI355X.
TEST(CompatPlatform, SglangRocmTargets) {
  expect_no_rule(query("sglang", "0.5", "mi325x"), "sglang-rocm-gfx-targets");
  Query mi250 = query("sglang", "0.5", "mi300x");
  mi250.gfx_target = "gfx90a";
  expect_rule(mi250, "sglang-rocm-gfx-targets", Support::Unsupported, "amd_gpu.md");
}

// docs/source/reference/support-matrix.md: Ampere and newer (from 1.0).
TEST(CompatPlatform, TrtllmNeedsAmpere) {
  expect_rule(query("trtllm", "1.0", "t4"), "trtllm-cuda-min-capability", Support::Unsupported, "support-matrix.md");
  expect_no_rule(query("trtllm", "1.0", "a10"), "trtllm-cuda-min-capability");
  expect_no_rule(query("trtllm", "0.13", "t4"), "trtllm-cuda-min-capability");  // rule holds from 1.0
}

// docs/source/release-notes.md: Volta deprecated in 0.14.0, removed in 0.15.0 ("NVIDIA Volta GPU
// support is removed in this and future releases"); Turing (T4, 7.5) stays until the 1.0 matrix.
TEST(CompatPlatform, TrtllmZeroXDroppedVolta) {
  expect_rule(query("trtllm", "0.15", "v100-32"), "trtllm-0x-volta-removed", Support::Unsupported, "release-notes.md");
  expect_rule(query("trtllm", "0.21", "v100-32"), "trtllm-0x-volta-removed", Support::Unsupported, "0.15.0");
  expect_no_rule(query("trtllm", "0.14", "v100-32"), "trtllm-0x-volta-removed");
  expect_no_rule(query("trtllm", "0.21", "t4"), "trtllm-0x-volta-removed");
  expect_no_rule(query("trtllm", "1.0", "v100-32"), "trtllm-0x-volta-removed");  // 1.0's own floor (8.0) says it
  EXPECT_EQ(rules().evaluate(query("trtllm", "0.14", "v100-32")).support, Support::Supported);
}

// docs/source/reference/support-matrix.md at 0.x: Volta and newer. No catalogue card is below 7.0:
// a P100 (6.0) is built by hand.
TEST(CompatPlatform, TrtllmZeroXNeedsVolta) {
  Query p100 = query("trtllm", "0.13", "v100-16");
  p100.gpu_id = "p100";
  p100.compute_capability = 6.0;
  expect_rule(p100, "trtllm-0x-cuda-min-capability", Support::Unsupported, "support-matrix.md");
  expect_no_rule(query("trtllm", "0.13", "v100-16"), "trtllm-0x-cuda-min-capability");
  p100.engine_version = "0.15";  // from 0.15 the Volta-removed rule is the floor
  expect_no_rule(p100, "trtllm-0x-cuda-min-capability");
  expect_rule(p100, "trtllm-0x-volta-removed", Support::Unsupported, "release-notes.md");
}

// docs/source/reference/support-matrix.md: NVIDIA only.
TEST(CompatPlatform, TrtllmIsCudaOnly) {
  expect_rule(query("trtllm", "1.0", "mi300x"), "trtllm-cuda-only", Support::Unsupported, "support-matrix.md");
}

// ggml/src/ggml-cuda/CMakeLists.txt: CUDA archs from 50-virtual; a Kepler card (3.7) is below. The
// floor is the CUDA build's: the Vulkan build of the same card has none.
TEST(CompatPlatform, LlamacppCudaFloor) {
  expect_no_rule(query("llamacpp", "", "v100-32"), "llamacpp-cuda-min-capability");
  Query k80 = query("llamacpp", "", "v100-32");
  k80.compute_capability = 3.7;
  expect_rule(k80, "llamacpp-cuda-min-capability", Support::Unsupported, "ggml-cuda/CMakeLists.txt");
  EXPECT_EQ(rules().evaluate(k80).backend, "cuda");  // the NVIDIA default (formats.json)
  k80.backend = "vulkan";
  expect_no_rule(k80, "llamacpp-cuda-min-capability");
}

// docs/build.md AMDGPU_TARGETS: gfx906 builds, an unlisted target does not (HIP build only).
TEST(CompatPlatform, LlamacppRocmTargets) {
  Query q = query("llamacpp", "", "mi300x");
  q.gfx_target = "gfx906";
  expect_no_rule(q, "llamacpp-rocm-gfx-targets");
  q.gfx_target = "gfx1031";
  expect_rule(q, "llamacpp-rocm-gfx-targets", Support::Unsupported, "docs/build.md");
  EXPECT_EQ(rules().evaluate(q).backend, "hip");
  q.backend = "vulkan";  // the rule's "instead"
  expect_no_rule(q, "llamacpp-rocm-gfx-targets");
  EXPECT_EQ(rules().evaluate(q).support, Support::Supported);
}

// ggml/src/ggml-cuda/CMakeLists.txt (CUDA toolkit) / ggml-hip/CMakeLists.txt (gfx targets): each
// build runs on its vendor's GPUs.
TEST(CompatPlatform, LlamacppBuildsMatchTheVendor) {
  Query q = query("llamacpp", "", "mi300x");
  q.backend = "cuda";
  expect_rule(q, "llamacpp-cuda-build-nvidia-only", Support::Unsupported, "ggml-cuda/CMakeLists.txt");
  Query h = query("llamacpp", "", "h100");
  h.backend = "hip";
  expect_rule(h, "llamacpp-hip-build-amd-only", Support::Unsupported, "ggml-hip/CMakeLists.txt");
  expect_no_rule(query("llamacpp", "", "h100"), "llamacpp-hip-build-amd-only");
}

// ggml/src/ggml-cpu/ggml-cpu.cpp ggml_backend_cpu_device_supports_op: every type multiplies on the
// CPU, which leaves the GPU idle: a fallback on any card.
TEST(CompatPlatform, LlamacppCpuBuild) {
  Query q = query("llamacpp", "", "rtx-4090", {"gguf"});
  q.gguf_types = {"TQ1_0"};
  q.backend = "cpu";
  expect_rule(q, "llamacpp-cpu-build", Support::Fallback, "ggml_backend_cpu_device_supports_op");
  expect_no_rule(q, "llamacpp-vulkan-no-tq1-matmul");
  expect_no_rule(q, "llamacpp-cuda-no-ternary-matmul");
  EXPECT_EQ(rules().evaluate(q).findings.size(), 1u);
}

// The build is resolved from data/compat/formats.json: the vendor's default, a build the engine
// has, and no build at all for engines compiled once.
TEST(CompatPlatform, BackendResolution) {
  Query q = query("llamacpp", "", "h100");
  q.backend = "metal";  // Apple only; no catalogue GPU is Apple's
  EXPECT_THROW(rules().evaluate(q), Error);
  Query v = query("vllm", "0.19", "h100");
  EXPECT_EQ(rules().evaluate(v).backend, "");
  v.backend = "vulkan";
  EXPECT_THROW(rules().evaluate(v), Error);
}

// vllm/platforms/cuda.py check_if_supports_dtype: bf16 needs 8.0; V100 / T4 run it as fp16.
TEST(CompatPlatform, Bf16FallsBackToFp16BeforeAmpere) {
  expect_rule(query("vllm", "0.19", "t4", {"float"}, "bf16"), "bf16-needs-ampere", Support::Fallback,
              "check_if_supports_dtype");
  expect_no_rule(query("vllm", "0.19", "t4", {"float"}, "fp16"), "bf16-needs-ampere");
  expect_no_rule(query("vllm", "0.19", "a10", {"float"}, "bf16"), "bf16-needs-ampere");
}

// --- quantization method x GPU --------------------------------------------------------------

// fp8.py Fp8Config.get_min_capability = 75.
TEST(CompatQuant, VllmFp8Floor) {
  expect_rule(query("vllm", "0.11", "v100-32", {"fp8"}), "vllm-fp8-min-capability", Support::Unsupported,
              "Fp8Config.get_min_capability");
}

// fp8.py Fp8LinearMethod: FP8 Marlin below 8.9 (A100 = 8.0), native on L40S (8.9).
TEST(CompatQuant, VllmFp8MarlinOnAmpere) {
  const Verdict v = rules().evaluate(query("vllm", "0.19", "a100", {"fp8", "float"}));
  ASSERT_NE(find(v, "vllm-fp8-marlin"), nullptr);
  EXPECT_EQ(find(v, "vllm-fp8-marlin")->kernel, "marlin");
  EXPECT_EQ(v.support, Support::Fallback);
  expect_no_rule(query("vllm", "0.19", "l40s", {"fp8"}), "vllm-fp8-marlin");
}

// vllm/platforms/rocm.py supports_fp8: gfx94x / gfx95x / gfx12.
TEST(CompatQuant, VllmFp8RocmTargets) {
  expect_no_rule(query("vllm", "0.19", "mi300x", {"fp8"}), "vllm-fp8-rocm-targets");
  Query mi250 = query("vllm", "0.19", "mi300x", {"fp8"});
  mi250.gfx_target = "gfx90a";
  expect_rule(mi250, "vllm-fp8-rocm-targets", Support::Unsupported, "supports_fp8");
}

// compressed_tensors_w8a8_int8.py get_min_capability = 75.
TEST(CompatQuant, VllmInt8Floor) {
  expect_rule(query("vllm", "0.19", "v100-32", {"int8"}), "vllm-int8-min-capability", Support::Unsupported,
              "compressed_tensors_w8a8_int8.py");
}

// gptq_marlin.py / awq_marlin.py get_min_capability = 75.
TEST(CompatQuant, VllmMarlinFloor) {
  expect_rule(query("vllm", "0.19", "v100-32", {"gptq-marlin"}), "vllm-marlin-min-capability", Support::Unsupported,
              "GPTQMarlinConfig.get_min_capability");
  expect_no_rule(query("vllm", "0.19", "t4", {"awq-marlin"}), "vllm-marlin-min-capability");
}

// awq.py AWQConfig.get_min_capability = 75.
TEST(CompatQuant, VllmAwqFloor) {
  expect_rule(query("vllm", "0.19", "v100-32", {"awq"}), "vllm-awq-min-capability", Support::Unsupported,
              "AWQConfig.get_min_capability");
}

// gptq.py GPTQConfig.get_min_capability = 60: V100 passes, a Maxwell card (5.2) does not.
TEST(CompatQuant, VllmGptqFloor) {
  Query q = query("vllm", "0.19", "v100-32", {"gptq"});
  expect_no_rule(q, "vllm-gptq-min-capability");
  q.compute_capability = 5.2;
  expect_rule(q, "vllm-gptq-min-capability", Support::Unsupported, "GPTQConfig.get_min_capability");
}

// bitsandbytes.py BitsAndBytesConfig.get_min_capability = 70.
TEST(CompatQuant, VllmBitsandbytesFloor) {
  Query q = query("vllm", "0.19", "v100-32", {"bitsandbytes"});
  expect_no_rule(q, "vllm-bitsandbytes-min-capability");
  q.compute_capability = 6.1;
  expect_rule(q, "vllm-bitsandbytes-min-capability", Support::Unsupported, "BitsAndBytesConfig");
}

// vllm/platforms/rocm.py supported_quantization: no Marlin, no bitsandbytes.
TEST(CompatQuant, VllmRocmHasNoMarlin) {
  expect_rule(query("vllm", "0.19", "mi300x", {"gptq-marlin"}), "vllm-rocm-cuda-only-methods", Support::Unsupported,
              "supported_quantization");
  expect_no_rule(query("vllm", "0.19", "mi300x", {"gptq"}), "vllm-rocm-cuda-only-methods");
}

// mxfp4.py Mxfp4Config.get_min_capability = 80.
TEST(CompatQuant, VllmMxfp4Floor) {
  expect_rule(query("vllm", "0.19", "t4", {"mxfp4"}), "vllm-mxfp4-min-capability", Support::Unsupported,
              "Mxfp4Config.get_min_capability");
}

// mxfp4.py get_mxfp4_backend: Marlin on SM 8.x, Triton on SM 9.0, FlashInfer on SM 10.0, Marlin on 12.x.
TEST(CompatQuant, VllmMxfp4KernelPath) {
  expect_rule(query("vllm", "0.19", "a100", {"mxfp4"}), "vllm-mxfp4-marlin-ampere", Support::Fallback, "get_mxfp4_backend");
  expect_rule(query("vllm", "0.19", "rtx-5090", {"mxfp4"}), "vllm-mxfp4-marlin-sm12x", Support::Fallback,
              "get_mxfp4_backend");
  EXPECT_EQ(rules().evaluate(query("vllm", "0.19", "h100", {"mxfp4"})).support, Support::Supported);
  EXPECT_EQ(rules().evaluate(query("vllm", "0.19", "b200", {"mxfp4"})).support, Support::Supported);
}

// mxfp4.py get_mxfp4_backend (ROCm): dequantizing Triton kernels before gfx950.
TEST(CompatQuant, VllmMxfp4OnMi300) {
  expect_rule(query("vllm", "0.19", "mi300x", {"mxfp4"}), "vllm-mxfp4-rocm-no-fp4", Support::Fallback, "mxfp4.py");
}

// modelopt.py ModelOptNvFp4Config.get_min_capability = 75.
TEST(CompatQuant, VllmNvfp4Floor) {
  expect_rule(query("vllm", "0.19", "v100-32", {"nvfp4"}), "vllm-nvfp4-min-capability", Support::Unsupported,
              "ModelOptNvFp4Config.get_min_capability");
}

// modelopt.py ModelOptNvFp4LinearMethod: FP4 Marlin below SM 10.0, CUTLASS FP4 from 10.0 (B200, RTX 5090).
TEST(CompatQuant, VllmNvfp4MarlinBeforeBlackwell) {
  expect_rule(query("vllm", "0.19", "h100", {"nvfp4"}), "vllm-nvfp4-marlin", Support::Fallback, "modelopt.py");
  EXPECT_EQ(rules().evaluate(query("vllm", "0.19", "b200", {"nvfp4"})).support, Support::Supported);
  EXPECT_EQ(rules().evaluate(query("vllm", "0.19", "rtx-5090", {"nvfp4"})).support, Support::Supported);
}

// vllm/platforms/rocm.py supported_quantization: no modelopt_fp4 — the MI300X example.
TEST(CompatQuant, VllmNvfp4OnMi300x) {
  const Verdict v = rules().evaluate(query("vllm", "0.19", "mi300x", {"nvfp4", "float"}));
  EXPECT_EQ(v.support, Support::Unsupported);
  const Finding* f = find(v, "vllm-nvfp4-rocm");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->instead.find("fp8 or mxfp4"), std::string::npos);
}

// sglang fp8.py Fp8LinearMethod: FP8 Marlin below 8.9.
TEST(CompatQuant, SglangFp8Marlin) {
  expect_rule(query("sglang", "0.5", "a10g", {"fp8"}), "sglang-fp8-marlin", Support::Fallback, "sglang/srt/layers");
}

// sglang modelopt_quant.py ModelOptFp4Config.get_min_capability = 100.
TEST(CompatQuant, SglangNvfp4NeedsBlackwell) {
  expect_rule(query("sglang", "0.5", "h200", {"nvfp4"}), "sglang-nvfp4-blackwell", Support::Unsupported,
              "ModelOptFp4Config");
  expect_rule(query("sglang", "0.5", "mi300x", {"nvfp4"}), "sglang-nvfp4-rocm", Support::Unsupported, "modelopt_quant.py");
}

// SGLang on ROCm: Marlin / bitsandbytes are CUDA kernels.
TEST(CompatQuant, SglangRocmHasNoMarlin) {
  expect_rule(query("sglang", "0.5", "mi300x", {"awq-marlin"}), "sglang-rocm-cuda-only-methods", Support::Unsupported,
              "quantization/__init__.py");
}

// TensorRT-LLM docs/source/reference/precision.md: FP8 on Ada+, NVFP4 on Blackwell, MXFP4 on Hopper+.
TEST(CompatQuant, TrtllmPrecisionMatrix) {
  expect_rule(query("trtllm", "1.0", "a100", {"fp8"}), "trtllm-fp8-ada", Support::Unsupported, "precision.md");
  expect_rule(query("trtllm", "1.0", "h100", {"nvfp4"}), "trtllm-nvfp4-blackwell", Support::Unsupported, "precision.md");
  expect_rule(query("trtllm", "1.0", "a100", {"mxfp4"}), "trtllm-mxfp4-hopper", Support::Unsupported, "fused_moe");
}

// transformers quantizer_finegrained_fp8.py validate_environment: compute capability >= 8.9.
TEST(CompatQuant, HfFp8NeedsAda) {
  expect_rule(query("hf", "4", "a100", {"fp8"}), "hf-fp8-ada", Support::Unsupported, "quantizer_finegrained_fp8.py");
}

// transformers quantizer_mxfp4.py: dequantizes to bf16 below compute capability 7.5.
TEST(CompatQuant, HfMxfp4Dequantizes) {
  expect_rule(query("hf", "4", "v100-32", {"mxfp4"}), "hf-mxfp4-dequantize", Support::Fallback, "quantizer_mxfp4.py");
}

// ggml-cuda.cu ggml_backend_cuda_device_supports_op: MUL_MAT has no TQ1_0 / TQ2_0 (HIP builds the same
// file); llama-model.cpp select_weight_buft then keeps those weights on the CPU. A Q4_K file is fine.
TEST(CompatQuant, LlamacppCudaHasNoTernaryMatmul) {
  Query q = query("llamacpp", "", "h100", {"gguf"});
  q.gguf_types = {"TQ2_0", "Q4_K"};
  expect_rule(q, "llamacpp-cuda-no-ternary-matmul", Support::Fallback, "ggml_backend_cuda_device_supports_op");
  EXPECT_EQ(find(rules().evaluate(q), "llamacpp-cuda-no-ternary-matmul")->kernel, "cpu-weights");
  Query mi = query("llamacpp", "", "mi300x", {"gguf"});
  mi.gguf_types = {"TQ1_0"};
  expect_rule(mi, "llamacpp-cuda-no-ternary-matmul", Support::Fallback, "select_weight_buft");
  q.gguf_types = {"Q4_K", "Q6_K"};
  expect_no_rule(q, "llamacpp-cuda-no-ternary-matmul");
}

// ggml-vulkan.cpp ggml_backend_vk_device_supports_op: MUL_MAT src0 types include TQ2_0 but not TQ1_0.
TEST(CompatQuant, LlamacppVulkanHasNoTq1Matmul) {
  Query q = query("llamacpp", "", "rtx-4090", {"gguf"});
  q.backend = "vulkan";
  q.gguf_types = {"TQ1_0"};
  expect_rule(q, "llamacpp-vulkan-no-tq1-matmul", Support::Fallback, "ggml_backend_vk_device_supports_op");
  expect_no_rule(q, "llamacpp-cuda-no-ternary-matmul");  // the CUDA rule is the CUDA build's
  q.gguf_types = {"TQ2_0"};
  expect_no_rule(q, "llamacpp-vulkan-no-tq1-matmul");
  EXPECT_EQ(rules().evaluate(q).support, Support::Supported);
}

// Every GGUF type a rule names is a GGUF type of the format catalogue (a typo would never match).
TEST(CompatQuant, RuleGgufTypesAreCatalogueTypes) {
  const QuantCatalog& catalog = test::quant_catalog();
  for (const auto& r : rules().rules())
    for (const auto& t : r.when.gguf_types) {
      const QuantFormat* f = catalog.find(t);
      ASSERT_NE(f, nullptr) << r.id << ": " << t;
      EXPECT_TRUE(f->gguf_type_id.has_value()) << r.id << ": " << t;
    }
}

// formats.json: llama.cpp loads GGUF only.
TEST(CompatQuant, EngineLoaders) {
  const Verdict v = rules().evaluate(query("llamacpp", "", "h100", {"gptq", "float"}));
  EXPECT_EQ(v.support, Support::Unsupported);
  EXPECT_NE(find(v, "llamacpp-loads-gptq"), nullptr);
  EXPECT_EQ(rules().evaluate(query("llamacpp", "", "h100", {"gguf"})).support, Support::Supported);
}

// --- features x GPU --------------------------------------------------------------------------

// vllm/platforms/cuda.py: FP8 KV on Ampere is stored fp8, attended in 16-bit.
TEST(CompatFeature, VllmFp8KvOnAmpere) {
  Query q = query("vllm", "0.19", "a100");
  q.kv = "fp8";
  expect_rule(q, "vllm-fp8-kv-no-fp8-cores", Support::Fallback, "platforms/cuda.py");
  Query h = query("vllm", "0.19", "h100");
  h.kv = "fp8";
  expect_no_rule(h, "vllm-fp8-kv-no-fp8-cores");
}

// TensorRT-LLM support matrix (0.18.2): Ampere runs FP32 / FP16 / BF16 / INT8 / INT4, FP8 from SM 8.9.
TEST(CompatFeature, TrtllmFp8KvNeedsAda) {
  Query q = query("trtllm", "1.0", "a100");
  q.kv = "fp8";
  expect_rule(q, "trtllm-fp8-kv-ada", Support::Unsupported, "support-matrix");
  Query l = query("trtllm", "1.0", "l40s");  // compute capability 8.9
  l.kv = "fp8";
  expect_no_rule(l, "trtllm-fp8-kv-ada");
}

// vllm/attention/ops/flashmla.py is_flashmla_supported: SM 9.0.
TEST(CompatFeature, VllmMlaBackend) {
  Query q = query("vllm", "0.19", "a100");
  q.architectures = {"DeepseekV3ForCausalLM"};
  expect_rule(q, "vllm-mla-triton", Support::Fallback, "flashmla.py");
  q.architectures = {"LlamaForCausalLM"};
  expect_no_rule(q, "vllm-mla-triton");
}

// NVIDIA MIG user guide: no communication between instances, so no TP across slices.
TEST(CompatFeature, NoTensorParallelAcrossMig) {
  Query q = query("vllm", "0.19", "a100-sxm-80/3g.40gb");
  EXPECT_TRUE(q.mig);
  EXPECT_EQ(q.gpu_id, "a100-sxm-80");
  q.tensor_parallel = 2;
  expect_rule(q, "tp-across-mig-slices", Support::Unsupported, "MIG user guide");
  q.tensor_parallel = 1;
  expect_no_rule(q, "tp-across-mig-slices");
  q.pipeline_parallel = 2;  // PP across slices: the same missing path
  expect_rule(q, "tp-across-mig-slices", Support::Unsupported, "MIG user guide");
}

// vllm custom_all_reduce.py: GeForce cards fail the P2P check.
TEST(CompatFeature, TensorParallelOverPcieWithoutP2p) {
  Query q = query("vllm", "0.19", "rtx-4090");
  q.tensor_parallel = 2;
  expect_rule(q, "tp-over-pcie-no-p2p", Support::Fallback, "custom_all_reduce.py");
  Query l40s = query("vllm", "0.19", "l40s");
  l40s.tensor_parallel = 2;
  expect_no_rule(l40s, "tp-over-pcie-no-p2p");
}

// ggml/src/ggml-cuda/ggml-cuda.cu ggml_cuda_graph_set_enabled: cc < GGML_CUDA_CC_VOLTA (700) sets
// disable_due_to_gpu_arch. No catalogue card is below 7.0, so the P40 (compute capability 6.1) is
// built by hand; the V100 (7.0) keeps its graphs.
TEST(CompatFeature, LlamacppNoCudaGraphsBeforeVolta) {
  Query p40 = query("llamacpp", "", "v100-32");
  p40.gpu_id = "p40";
  p40.compute_capability = 6.1;
  expect_rule(p40, "llamacpp-cuda-graphs-pre-volta", Support::Fallback, "ggml_cuda_graph_set_enabled");
  EXPECT_EQ(find(rules().evaluate(p40), "llamacpp-cuda-graphs-pre-volta")->kernel, "no-cuda-graphs");
  expect_no_rule(query("llamacpp", "", "v100-32"), "llamacpp-cuda-graphs-pre-volta");
  expect_no_rule(query("llamacpp", "", "mi300x"), "llamacpp-cuda-graphs-pre-volta");  // HIP: no cc
}

// vllm/config/parallel.py ParallelConfig.__post_init__: a world size above the node's GPU count
// needs the Ray executor. The node is the card's (data/gpus.json node_gpus): TP 8 fills one 8-GPU
// H100 server; TP 16, or TP 8 x PP 2, spans two. A GB200 NVL72 compute tray holds 4: TP 8 is two.
TEST(CompatFeature, VllmMultiNodeNeedsRay) {
  Query q = query("vllm", "0.19", "h100-sxm-80");
  q.tensor_parallel = 8;
  expect_no_rule(q, "vllm-multi-node-ray");
  q.tensor_parallel = 16;
  expect_rule(q, "vllm-multi-node-ray", Support::Fallback, "ParallelConfig.__post_init__");
  q.tensor_parallel = 8;
  q.pipeline_parallel = 2;  // 16 ranks: still two nodes
  expect_rule(q, "vllm-multi-node-ray", Support::Fallback, "config/parallel.py");
  Query gb = query("vllm", "0.19", "gb200");
  gb.tensor_parallel = 4;
  expect_no_rule(gb, "vllm-multi-node-ray");
  gb.tensor_parallel = 8;
  expect_rule(gb, "vllm-multi-node-ray", Support::Fallback, "ParallelConfig.__post_init__");
}

// vllm/engine/arg_utils.py create_engine_config: --data-parallel-size-local defaults to the whole
// --data-parallel-size, so engines beyond one node need a command per node (--headless,
// --data-parallel-start-rank on the others, vllm/entrypoints/cli/serve.py, from 0.9.1). An engine
// itself larger than the node is the Ray rule's instead.
TEST(CompatFeature, VllmDataParallelBeyondANodeIsLaunchedPerNode) {
  Query q = query("vllm", "0.19", "h200");
  q.data_parallel = 8;  // 8 engines of 1 GPU: one node
  expect_no_rule(q, "vllm-dp-multi-node");
  q.data_parallel = 16;
  expect_rule(q, "vllm-dp-multi-node", Support::Fallback, "--data-parallel-start-rank");
  expect_no_rule(q, "vllm-multi-node-ray");
  q.data_parallel = 4;
  q.tensor_parallel = 4;  // 4 engines of 4 GPUs: two nodes
  expect_rule(q, "vllm-dp-multi-node", Support::Fallback, "create_engine_config");
  q.tensor_parallel = 16;  // each engine spans nodes: Ray, not this rule
  expect_no_rule(q, "vllm-dp-multi-node");
  expect_rule(q, "vllm-multi-node-ray", Support::Fallback, "ParallelConfig.__post_init__");
  Query old = query("vllm", "0.8", "h200");  // before 0.9.1: no --headless
  old.data_parallel = 16;
  expect_no_rule(old, "vllm-dp-multi-node");
}

// python/sglang/srt/entrypoints/engine.py _launch_subprocesses: each node runs tp_size / nnodes
// ranks, so more GPUs than the node holds needs --nnodes.
TEST(CompatFeature, SglangMultiNodeNeedsNnodes) {
  Query q = query("sglang", "0.5", "h200");
  q.tensor_parallel = 8;
  expect_no_rule(q, "sglang-multi-node-nnodes");
  q.tensor_parallel = 16;
  expect_rule(q, "sglang-multi-node-nnodes", Support::Fallback, "_launch_subprocesses");
  expect_no_rule(q, "vllm-multi-node-ray");  // the vLLM rule is vLLM's alone
  Query rtx = query("sglang", "0.5", "rtx-4090");  // a 4-card workstation
  rtx.tensor_parallel = 8;
  expect_rule(rtx, "sglang-multi-node-nnodes", Support::Fallback, "_launch_subprocesses");
}

// TensorRT-LLM docs/source/commands/trtllm-serve/trtllm-serve.rst (Multi-node Serving with Slurm):
// srun --mpi=pmix ... trtllm-llmapi-launch trtllm-serve; one MPI world over the nodes.
TEST(CompatFeature, TrtllmMultiNodeNeedsMpi) {
  Query q = query("trtllm", "1.0", "gb200");
  q.tensor_parallel = 4;
  expect_no_rule(q, "trtllm-multi-node-mpi");
  q.tensor_parallel = 16;
  expect_rule(q, "trtllm-multi-node-mpi", Support::Fallback, "trtllm-serve.rst");
  Query b = query("trtllm", "1.0", "b200");
  b.tensor_parallel = 8;
  expect_no_rule(b, "trtllm-multi-node-mpi");
}

// ggml/src/ggml-rpc/ggml-rpc.cpp: remote GPUs join as RPC devices that take whole layers. Layers
// spread over hosts run (a fallback); a tensor split wider than one host does not.
TEST(CompatFeature, LlamacppAcrossHostsOnlyByRpcLayers) {
  Query q = query("llamacpp", "", "rtx-3090", {"gguf"});
  q.pipeline_parallel = 8;  // 8 layer groups on 4-card workstations: two hosts
  expect_rule(q, "llamacpp-multi-node-rpc", Support::Fallback, "ggml-rpc.cpp");
  EXPECT_EQ(find(rules().evaluate(q), "llamacpp-multi-node-rpc")->kernel, "rpc-layer-split");
  expect_no_rule(q, "llamacpp-no-cross-node-tp");
  q.pipeline_parallel = 1;
  q.tensor_parallel = 8;
  expect_rule(q, "llamacpp-no-cross-node-tp", Support::Unsupported, "ggml-backend.h");
  expect_no_rule(q, "llamacpp-multi-node-rpc");
  q.tensor_parallel = 4;  // within one host
  expect_no_rule(q, "llamacpp-no-cross-node-tp");
}

// A card without node_gpus (custom:SIZE, or a hand-built query) cannot be judged multi-node:
// said, not assumed.
TEST(CompatFeature, UnknownNodeSizeIsUnchecked) {
  Query q = query("vllm", "0.19", "h100-sxm-80");
  q.node_gpus.reset();
  q.tensor_parallel = 16;
  const Verdict v = rules().evaluate(q);
  expect_no_rule(q, "vllm-multi-node-ray");
  ASSERT_EQ(v.unchecked.size(), 1u);
  EXPECT_NE(v.unchecked[0].find("multi-node rules not checked"), std::string::npos);
}

// --- architecture x engine x version ---------------------------------------------------------

// architectures.json: vLLM registers GptOssForCausalLM from 0.10.1; transformers Qwen2 from 4.37.
TEST(CompatArchitecture, RegistryByVersion) {
  Query q = query("hf", "4.30", "h100");
  q.architectures = {"Qwen2ForCausalLM"};
  const Verdict old = rules().evaluate(q);
  EXPECT_EQ(old.support, Support::Unsupported);
  ASSERT_NE(find(old, "hf-registry"), nullptr);
  EXPECT_NE(find(old, "hf-registry")->message.find(">=4.37"), std::string::npos);
  q.engine_version = "4";  // the 4.x series: its latest release
  EXPECT_EQ(rules().evaluate(q).support, Support::Supported);
}

// sglang/srt/models: no Falcon (RWForCausalLM).
TEST(CompatArchitecture, MissingFromRegistry) {
  Query q = query("sglang", "0.5", "h100");
  q.architectures = {"RWForCausalLM"};
  EXPECT_NE(find(rules().evaluate(q), "sglang-registry"), nullptr);
  q.architectures = {"SomeNewForCausalLM"};  // in no registry of the data: said, not guessed
  const Verdict v = rules().evaluate(q);
  EXPECT_EQ(v.support, Support::Supported);
  EXPECT_EQ(v.unchecked.size(), 1u);
}

// The 2025-2026 families (architectures.json, read from the PyPI wheels' registries): GLM-5's
// GlmMoeDsaForCausalLM first in vLLM 0.16.0 and SGLang 0.5.9; Jamba in no SGLang release;
// MiniMax-M2 from vLLM 0.11.1 (the 0.11 series' latest release has it).
// The verdict for `arch` on an H100 under `engine` at `version`.
Verdict arch_verdict(const std::string& engine, const std::string& version, const std::string& arch) {
  Query q = query(engine, version, "h100");
  q.architectures = {arch};
  return rules().evaluate(q);
}

// vLLM 0.19 decides `arch` (the architecture table lists it), with no "not checked" for it.
void expect_decided(const std::string& arch) {
  for (const auto& u : arch_verdict("vllm", "0.19", arch).unchecked)
    EXPECT_EQ(u.find("architecture"), std::string::npos) << arch << ": " << u;
}

// One release's verdict on one architecture.
struct ArchCase {
  const char* engine;
  const char* version;
  const char* arch;
  Support support;
};

void expect_cases(std::initializer_list<ArchCase> cases) {
  for (const ArchCase& c : cases)
    EXPECT_EQ(arch_verdict(c.engine, c.version, c.arch).support, c.support) << c.engine << " " << c.version << " " << c.arch;
}

TEST(CompatArchitecture, NewerFamiliesByEngineAndVersion) {
  const Verdict old = arch_verdict("vllm", "0.15.1", "GlmMoeDsaForCausalLM");
  ASSERT_NE(find(old, "vllm-registry"), nullptr);
  EXPECT_NE(find(old, "vllm-registry")->message.find(">=0.16.0"), std::string::npos);
  expect_cases({{"vllm", "0.16.0", "GlmMoeDsaForCausalLM", Support::Supported},
                {"sglang", "0.5.8", "GlmMoeDsaForCausalLM", Support::Unsupported},
                {"sglang", "0.5.9", "GlmMoeDsaForCausalLM", Support::Supported},
                {"sglang", "0.5", "JambaForCausalLM", Support::Unsupported},
                {"vllm", "0.11", "MiniMaxM2ForCausalLM", Support::Supported},
                {"vllm", "0.9", "MiniMaxM2ForCausalLM", Support::Unsupported}});
  // Each of them is decided, not left "not checked".
  for (const std::string arch :
       {"DeciLMForCausalLM", "Ernie4_5_MoeForCausalLM", "FalconH1ForCausalLM", "Glm4MoeForCausalLM",
        "Glm4MoeLiteForCausalLM", "GraniteMoeHybridForCausalLM", "JambaForCausalLM", "KimiK25ForConditionalGeneration",
        "MiniMaxM2ForCausalLM", "NemotronHForCausalLM", "Qwen3NextForCausalLM", "Qwen3_5MoeForConditionalGeneration",
        "Qwen3_5ForConditionalGeneration", "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"})
    expect_decided(arch);
}

// vLLM dropped the text-only Llama4ForCausalLM after 0.8.3 (PR #16113) and has it again from 0.10.1
// (registry.py of the PyPI wheels); GLM-4 arrived in 0.8.4, GLM in 0.6.5. SGLang has no Falcon,
// GPT-NeoX or GLM (1) model class in any release 0.3.0-0.5.23. TensorRT-LLM's PyTorch backend
// registers none of them (Gemma 3 only, Cohere 2 only).
TEST(CompatArchitecture, OlderFamiliesByEngineAndVersion) {
  expect_cases({{"vllm", "0.9.1", "Llama4ForCausalLM", Support::Unsupported},
                {"vllm", "0.11", "Llama4ForCausalLM", Support::Supported},
                {"vllm", "0.8.3", "Glm4ForCausalLM", Support::Unsupported},
                {"vllm", "0.6.4", "GlmForCausalLM", Support::Unsupported},
                {"vllm", "0.6", "CohereForCausalLM", Support::Supported},
                {"sglang", "0.5", "GPTNeoXForCausalLM", Support::Unsupported},
                {"sglang", "0.5", "Glm4ForCausalLM", Support::Supported},
                {"trtllm", "1.0", "GemmaForCausalLM", Support::Unsupported}});
  for (const std::string arch :
       {"CohereForCausalLM", "FalconForCausalLM", "GPTBigCodeForCausalLM", "GPTNeoXForCausalLM",
        "GemmaForCausalLM", "GlmForCausalLM", "Glm4ForCausalLM", "GraniteForCausalLM", "Llama4ForCausalLM"}) {
    EXPECT_EQ(arch_verdict("vllm", "0.19", arch).support, Support::Supported) << arch;
    expect_decided(arch);
  }
}

// The vision-language families in SGLang and llama.cpp (architectures.json, 2026-12-06): SGLang's
// wheels name Mllama from 0.3.5, Qwen2.5-VL from 0.4.4, Qwen3-VL dense and MoE from 0.5.3 (0.5.2
// has neither); llama.cpp's converter registers Pixtral (LlavaForConditionalGeneration), Qwen2.5-VL
// and Qwen3-VL. Until that day both engines called them unsupported.
TEST(CompatArchitecture, VisionLanguageFamiliesInSglangAndLlamacpp) {
  expect_cases({{"sglang", "0.3.4", "MllamaForConditionalGeneration", Support::Unsupported},
                {"sglang", "0.3.5", "MllamaForConditionalGeneration", Support::Supported},
                {"sglang", "0.4.3", "Qwen2_5_VLForConditionalGeneration", Support::Unsupported},
                {"sglang", "0.4.4", "Qwen2_5_VLForConditionalGeneration", Support::Supported},
                {"sglang", "0.5.2", "Qwen3VLForConditionalGeneration", Support::Unsupported},
                {"sglang", "0.5.3", "Qwen3VLForConditionalGeneration", Support::Supported},
                {"sglang", "0.5.3", "Qwen3VLMoeForConditionalGeneration", Support::Supported},
                {"vllm", "0.10.2", "Qwen3VLMoeForConditionalGeneration", Support::Unsupported},
                {"vllm", "0.11", "Qwen3VLMoeForConditionalGeneration", Support::Supported},
                {"hf", "4.57", "Qwen3VLMoeForConditionalGeneration", Support::Supported},
                {"llamacpp", "3f545bec", "LlavaForConditionalGeneration", Support::Supported},
                {"llamacpp", "3f545bec", "Qwen2_5_VLForConditionalGeneration", Support::Supported},
                {"llamacpp", "3f545bec", "Qwen3VLForConditionalGeneration", Support::Supported},
                {"llamacpp", "3f545bec", "Qwen3VLMoeForConditionalGeneration", Support::Supported}});
}

// --- the model's guarantees ------------------------------------------------------------------

TEST(CompatModel, UnknownFamilyOrEngineIsAnError) {
  EXPECT_THROW(rules().evaluate(query("vllm", "0.19", "h100", {"fp12"})), Error);
  EXPECT_THROW(rules().evaluate(query("exllama", "", "h100")), Error);
}

TEST(CompatModel, VersionRanges) {
  const auto r = VersionRange::parse(">=0.4.10 <0.5");
  EXPECT_TRUE(r.contains("0.4.10"));
  EXPECT_TRUE(r.contains("0.4"));   // the 0.4 series' latest release
  EXPECT_FALSE(r.contains("0.4.9"));
  EXPECT_FALSE(r.contains("0.5.1"));
  EXPECT_FALSE(r.contains(""));      // newest release: above the upper bound
  EXPECT_FALSE(r.contains("3f545bec"));
  EXPECT_TRUE(VersionRange::parse("*").contains("3f545bec"));
  EXPECT_THROW(VersionRange::parse(">=0.x"), Error);
  EXPECT_THROW(VersionRange::parse(""), Error);
}

// Every rule in the data has a test above that names it (a rule added without one fails here).
TEST(CompatModel, EveryRuleIsTested) {
  const std::string self = test::read_text(test::source_dir() / "tests" / "unit" / "compat" / "compat_rules_test.cpp");
  for (const auto& r : rules().rules())
    EXPECT_NE(self.find("\"" + r.id + "\""), std::string::npos) << "no test names rule " << r.id;
}

// docs/compatibility.md lists every rule (tools/make_compat_doc.py writes its tables).
TEST(CompatModel, EveryRuleIsDocumented) {
  const std::string doc = test::read_text(test::source_dir() / "docs" / "compatibility.md");
  for (const auto& r : rules().rules())
    EXPECT_NE(doc.find("`" + r.id + "`"), std::string::npos) << "docs/compatibility.md lacks rule " << r.id;
  for (const auto& [engine, f] : rules().engine_formats())
    EXPECT_NE(doc.find("| " + engine + " |"), std::string::npos) << engine;
}

}  // namespace
}  // namespace vramplan::compat
