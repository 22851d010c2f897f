// Compatibility in the decisions (issue 20): `check`, `sweep` and `plan` ask data/compat before
// memory. UNSUPPORTED comes first with the rule, its source and what would work; fallbacks are
// warnings. The rules themselves are tested in tests/unit/compat.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/json_schema.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

// The first example: NVFP4 is a Blackwell / CUDA format; vLLM on ROCm has no modelopt_fp4
// (vllm/platforms/rocm.py supported_quantization).
TEST(CompatCli, Nvfp4OnMi300xIsUnsupported) {
  const auto r = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "mi300x", "--weights", "nvfp4", "--engine",
                          "vllm", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "UNSUPPORTED");
  EXPECT_EQ(j["limit"], "compatibility");
  EXPECT_EQ(j["compatibility"]["verdict"], "unsupported");
  EXPECT_EQ(j["compatibility"]["findings"][0]["rule"], "vllm-nvfp4-rocm");
  EXPECT_NE(j["line"].get<std::string>().find("instead: fp8 or mxfp4"), std::string::npos) << j["line"];
  EXPECT_TRUE(j["per_gpu"].is_null());
  // Valid against vramplan.check/1, as the memory verdicts are.
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs" / "schemas" / "check.schema.json"));
  EXPECT_EQ(schema_violations(j, schema), std::vector<std::string>{});
}

// The second example: V100 with current vLLM is not a KV shortfall but no attention
// backend at all (vllm-project/vllm#18571).
TEST(CompatCli, VllmOnV100IsUnsupportedBeforeMemory) {
  const auto r = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "v100-32"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out.rfind("UNSUPPORTED: vLLM V1", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("[vllm-cuda-min-capability; "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("KV"), std::string::npos) << r.out;  // no memory verdict
}

// A registry rule's source runs to ~2,000 characters (every family's first release). The verdict
// line a script reads keeps its first clause, the file and the function; --json keeps it whole.
TEST(CompatCli, UnsupportedLineCutsALongSourceToItsFirstClause) {
  const auto r = run_cli({"check", "--model", "falcon-7b", "--gpu", "h100-sxm-80", "--engine", "sglang", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const std::string line = j["line"];
  const std::string source = j["compatibility"]["findings"][0]["source"];
  EXPECT_GT(source.size(), 1500u) << source;
  EXPECT_NE(source.find("FalconForCausalLM"), std::string::npos) << source;
  EXPECT_LT(line.size(), 500u) << line;
  EXPECT_NE(line.find("[sglang-registry; python/sglang/srt/models/*.py EntryClass (llama.py, "), std::string::npos) << line;
  EXPECT_NE(line.find("; the whole source: --json]; instead: vLLM"), std::string::npos) << line;
  // A short source stays whole (VllmOnV100IsUnsupportedBeforeMemory's, 243 characters).
  const auto v = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "v100-32"});
  EXPECT_NE(v.out.find("vllm-project/vllm#18571"), std::string::npos) << v.out;
  EXPECT_EQ(v.out.find("the whole source"), std::string::npos) << v.out;
}

// TP 16 is two 8-GPU servers: the plan still sizes memory per GPU (19.2 GiB for the 70B on
// H100s), and the multi-node fallback (vllm/config/parallel.py ParallelConfig.__post_init__: Ray)
// is a warning beside it; TP 8 on one server has none.
TEST(CompatCli, MultiNodeTensorParallelIsAFallback) {
  const auto r = run_cli({"check", "--model", "llama-3.1-70b", "--gpu", "h100-sxm-80", "--tp", "16", "--engine",
                          "vllm", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["compatibility"]["verdict"], "fallback");
  ASSERT_EQ(j["compatibility"]["findings"].size(), 1u) << j["compatibility"];
  EXPECT_EQ(j["compatibility"]["findings"][0]["rule"], "vllm-multi-node-ray");
  const auto one_node = run_cli({"check", "--model", "llama-3.1-70b", "--gpu", "h100-sxm-80", "--tp", "8", "--engine",
                                 "vllm", "--json"});
  EXPECT_EQ(nlohmann::json::parse(one_node.out)["compatibility"]["verdict"], "supported") << one_node.err;
}

// node_gpus per card (data/gpus.json): a GB200 NVL72 compute tray holds 4 GPUs per host, so TP 8
// is two hosts (vLLM's Ray executor, vllm/config/parallel.py ParallelConfig.__post_init__) where on
// H100 SXM it is one HGX board (the test above); TP 4 stays inside the tray.
TEST(CompatCli, Gb200TrayIsFourGpusPerNode) {
  const auto r = run_cli({"check", "--model", "llama-3.1-70b", "--gpu", "gb200", "--tp", "8", "--engine", "vllm",
                          "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["compatibility"]["verdict"], "fallback");
  ASSERT_EQ(j["compatibility"]["findings"].size(), 1u) << j["compatibility"];
  EXPECT_EQ(j["compatibility"]["findings"][0]["rule"], "vllm-multi-node-ray");
  const auto tray = run_cli({"check", "--model", "llama-3.1-70b", "--gpu", "gb200", "--tp", "4", "--engine", "vllm",
                             "--json"});
  EXPECT_EQ(nlohmann::json::parse(tray.out)["compatibility"]["verdict"], "supported") << tray.err;
  // TensorRT-LLM across two trays: one MPI world (trtllm-serve.rst, multi-node serving with Slurm).
  const auto trt = run_cli({"check", "--model", "llama-3.1-70b", "--gpu", "gb200", "--tp", "8", "--engine", "trtllm",
                            "--json"});
  const auto tj = nlohmann::json::parse(trt.out);
  bool mpi = false;
  for (const auto& f : tj["compatibility"]["findings"]) mpi |= f["rule"] == "trtllm-multi-node-mpi";
  EXPECT_TRUE(mpi) << tj["compatibility"].dump() << trt.err;
}

// llama.cpp's Vulkan build on an RTX 4090: a TQ1_0 file has no Vulkan matmul shader
// (ggml-vulkan.cpp ggml_backend_vk_device_supports_op), so those weights run on the CPU: a
// fallback warning, and the JSON says which build was judged. The default (CUDA) build lacks
// both ternary types; a Q4_K_M file runs on either.
TEST(CompatCli, LlamacppVulkanBuildChecksGgufTypes) {
  const auto r = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--engine", "llamacpp",
                          "--weights", "gguf:TQ1_0", "--llamacpp-backend", "vulkan", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["compatibility"]["backend"], "vulkan");
  EXPECT_EQ(j["compatibility"]["verdict"], "fallback");
  ASSERT_EQ(j["compatibility"]["findings"].size(), 1u) << j["compatibility"];
  EXPECT_EQ(j["compatibility"]["findings"][0]["rule"], "llamacpp-vulkan-no-tq1-matmul");
  EXPECT_EQ(j["compatibility"]["findings"][0]["kernel"], "cpu-weights");
  // The build is a compile-time choice: the launch command says which, not a server flag.
  EXPECT_NE(j["launch"]["note"].get<std::string>().find("cmake -DGGML_VULKAN=ON"), std::string::npos) << j["launch"];
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs" / "schemas" / "check.schema.json"));
  EXPECT_EQ(schema_violations(j, schema), std::vector<std::string>{});
  const auto q4 = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--engine", "llamacpp",
                           "--weights", "gguf:Q4_K_M", "--llamacpp-backend", "vulkan", "--json"});
  EXPECT_EQ(nlohmann::json::parse(q4.out)["compatibility"]["verdict"], "supported") << q4.err;
  const auto cuda = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--engine", "llamacpp",
                             "--weights", "gguf:TQ2_0", "--json"});
  const auto cj = nlohmann::json::parse(cuda.out);
  EXPECT_EQ(cj["compatibility"]["backend"], "cuda");
  EXPECT_EQ(cj["compatibility"]["findings"][0]["rule"], "llamacpp-cuda-no-ternary-matmul") << cj["compatibility"];
  // A build llama.cpp does not have is a usage error naming the choices.
  const auto metal = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--engine", "llamacpp",
                              "--weights", "gguf:Q4_K_M", "--llamacpp-backend", "metal"});
  EXPECT_NE(metal.exit_code, 0);
  EXPECT_NE(metal.err.find("cuda, hip, vulkan, cpu"), std::string::npos) << metal.err;
}

// A fallback runs: the memory verdict stands, the kernel change is a warning (FP8 Marlin on A100).
TEST(CompatCli, FallbackIsAWarning) {
  const auto r = run_cli({"check", "--model", "llama-3.1-8b", "--gpu", "a100", "--weights", "fp8", "--max-model-len",
                          "8192", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "FITS");
  EXPECT_EQ(j["compatibility"]["verdict"], "fallback");
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs" / "schemas" / "check.schema.json"));
  EXPECT_EQ(schema_violations(j, schema), std::vector<std::string>{});
  bool warned = false;
  for (const auto& w : j["warnings"]) warned |= w.get<std::string>().find("[vllm-fp8-marlin; ") != std::string::npos;
  EXPECT_TRUE(warned) << j["warnings"].dump();
}

// sweep: an unsupported GPU is a miss marked UNSUPPORTED; the supported one still ranks.
TEST(CompatCli, SweepMarksUnsupportedGpus) {
  const auto r = run_cli({"sweep", "--model", "llama-3.1-8b", "--gpu", "v100-32,h100-sxm-80", "--tp", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  bool v100_unsupported = false;
  for (const auto& m : j["not_fitting"])
    v100_unsupported |= m["gpu"] == "v100-32" && m["verdict"] == "UNSUPPORTED";
  EXPECT_TRUE(v100_unsupported) << j["not_fitting"].dump();
  ASSERT_FALSE(j["rows"].empty());
  EXPECT_EQ(j["rows"][0]["gpu"], "h100-sxm-80");
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs" / "schemas" / "sweep.schema.json"));
  EXPECT_EQ(schema_violations(j, schema), std::vector<std::string>{});
}

// sweep text names the fallback a ranked row runs through (FP8 Marlin on an A100).
TEST(CompatCli, SweepTextNamesFallbacks) {
  const auto r = run_cli({"sweep", "--model", "llama-3.1-8b", "--gpu", "a100", "--weights", "fp8", "--tp", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("runs through a fallback"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  a100-sxm-80: vllm-fp8-marlin\n"), std::string::npos) << r.out;
}

// plan keeps its memory table and says first that the engine would not run it.
TEST(CompatCli, PlanJsonCarriesTheVerdict) {
  const auto r = run_cli({"plan", "--model", "llama-3.1-8b", "--gpu", "mi300x", "--weights", "nvfp4", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["compatibility"]["verdict"], "unsupported");
  const auto schema = nlohmann::json::parse(read_text(source_dir() / "docs" / "schemas" / "plan.schema.json"));
  EXPECT_EQ(schema_violations(j, schema), std::vector<std::string>{});
  const auto t = run_cli({"plan", "--model", "llama-3.1-8b", "--gpu", "mi300x", "--weights", "nvfp4"});
  EXPECT_NE(t.out.find("\nUNSUPPORTED: NVFP4 (modelopt_fp4) is a CUDA / Blackwell format"), std::string::npos) << t.out;
}

}  // namespace
}  // namespace vramplan::test
