// Engine start-up log reader (io/engine_log.hpp): hand-written vLLM lines in the shapes vLLM's
// logger writes (vllm/logger.py), the figures they carry, and the refusals.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/io/engine_log.hpp"

namespace vramplan::test {
namespace {

constexpr const char* kVllmLines =
    "(APIServer pid=1) INFO 04-22 00:03:35 [entrypoints/utils.py:299]  \xe2\x96\x84\xe2\x96\x88 version 0.19.0\n"
    "(APIServer pid=1) INFO 04-22 00:03:35 [entrypoints/utils.py:233] non-default args: {'model_tag': 'Qwen/Qwen3-8B', "
    "'model': 'Qwen/Qwen3-8B', 'max_model_len': 4096, 'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.85, "
    "'enable_prefix_caching': False, 'compilation_config': {'level': 3, 'sizes': [1, 2]}, 'enforce_eager': True}\n"
    "some line of another program in between\n"
    "(Worker_TP0 pid=444) INFO 04-22 01:36:06 [v1/worker/gpu_model_runner.py:4820] Model loading took 7.51 GiB memory and 10.5 seconds\n"
    "(Worker_TP1 pid=445) INFO 04-22 01:36:06 [v1/worker/gpu_model_runner.py:4820] Model loading took 7.60 GiB memory and 10.5 seconds\n"
    "DEBUG 04-22 01:36:26 [v1/worker/gpu_worker.py:435] Memory profiling takes 19.45 seconds. Total non KV cache memory: "
    "11.47GiB; torch peak memory increase: 1.89GiB; non-torch forward increase memory: 2.07GiB; weights memory: 7.51GiB.\n"
    "INFO 04-22 01:36:26 [v1/worker/gpu_worker.py:436] Available KV cache memory: 63.76 GiB\n"
    "INFO 04-22 01:36:26 [v1/core/kv_cache_utils.py:1319] GPU KV cache size: 1,044,688 tokens\n"
    "INFO 04-22 01:36:26 [v1/core/kv_cache_utils.py:1324] Maximum concurrency for 4,096 tokens per request: 255.05x\n"
    "INFO 04-22 01:36:30 [v1/worker/gpu_model_runner.py:6046] Graph capturing finished in 4 secs, took 0.76 GiB\n"
    "DEBUG 04-22 01:36:30 [v1/worker/gpu_worker.py:661] Free memory on device (77.66/79.19 GiB) on startup. Desired GPU "
    "memory utilization is (0.85, 67.31 GiB). Actual usage is ...\n";

// vLLM 0.29+: the KV-size and concurrency figures on one line (0.28+), and Model Runner V2's
// memory estimate printing a throwaway "Graph capturing finished" before the real capture.
constexpr const char* kVllm029Lines =
    "(APIServer pid=1) INFO 11-02 10:00:00 [entrypoints/utils.py:299]  \xe2\x96\x84\xe2\x96\x88 version 0.29.0\n"
    "INFO 11-02 10:01:00 [v1/worker/gpu/model_runner.py:900] Graph capturing finished in 2 secs, took 0.31 GiB\n"
    "INFO 11-02 10:01:10 [v1/core/kv_cache_utils.py:1700] GPU KV cache size: 1,044,688 tokens, Maximum concurrency "
    "for 4,096 tokens per request: 255.05x\n"
    "INFO 11-02 10:01:20 [v1/worker/gpu/model_runner.py:950] Graph capturing finished in 4 secs, took 0.76 GiB\n";

TEST(EngineLog, ReadsVllm029MergedKvLineAndTheLastGraphCapture) {
  const auto log = parse_engine_log(kVllm029Lines, "t.log");
  EXPECT_EQ(log.engine_version, "0.29.0");
  ASSERT_TRUE(log.kv_tokens);
  EXPECT_EQ(*log.kv_tokens, 1'044'688u);
  ASSERT_TRUE(log.max_concurrency);
  EXPECT_DOUBLE_EQ(*log.max_concurrency, 255.05);
  EXPECT_EQ(*log.concurrency_tokens, 4096u);
  ASSERT_TRUE(log.cuda_graphs);
  EXPECT_EQ(log.cuda_graphs->bytes, Bytes::from_gib(0.76));  // the real capture, not the estimate's
}

TEST(EngineLog, ReadsEveryVllmFigureAndTheFirstWorkersValue) {
  const auto log = parse_engine_log(kVllmLines, "t.log");
  EXPECT_EQ(log.engine, "vllm");
  EXPECT_EQ(log.engine_version, "0.19.0");
  EXPECT_EQ(log.model, "Qwen/Qwen3-8B");
  ASSERT_TRUE(log.weights);
  EXPECT_EQ(log.weights->bytes, Bytes::from_gib(7.51));  // TP0's line, not TP1's 7.60
  EXPECT_EQ(log.weights->line, 4u);
  EXPECT_EQ(log.activation->bytes, Bytes::from_gib(1.89));
  EXPECT_EQ(log.non_torch->bytes, Bytes::from_gib(2.07));
  EXPECT_EQ(log.kv_cache->bytes, Bytes::from_gib(63.76));
  EXPECT_EQ(log.cuda_graphs->bytes, Bytes::from_gib(0.76));
  EXPECT_EQ(log.gpu_total->bytes, Bytes::from_gib(79.19));
  EXPECT_EQ(*log.kv_tokens, 1044688u);
  EXPECT_DOUBLE_EQ(*log.max_concurrency, 255.05);
  EXPECT_EQ(*log.concurrency_tokens, 4096u);
  EXPECT_EQ(log.lines, 11u);
}

TEST(EngineLog, NonDefaultArgsBecomeEngineFlags) {
  const auto log = parse_engine_log(kVllmLines, "t.log");
  EXPECT_EQ(log.args.at("max-model-len"), "4096");
  EXPECT_EQ(log.args.at("tensor-parallel-size"), "2");
  EXPECT_EQ(log.args.at("gpu-memory-utilization"), "0.85");
  EXPECT_EQ(log.args.at("no-enable-prefix-caching"), "true");
  EXPECT_EQ(log.args.at("enforce-eager"), "true");  // after a nested dict: its commas do not split items
  EXPECT_FALSE(log.args.contains("compilation_config"));
}

TEST(EngineLog, EngineConfigLineGivesVersionParallelismAndDtypes) {
  const auto log = parse_engine_log(
      "(EngineCore pid=9) INFO 04-22 00:03:46 [v1/engine/core.py:105] Initializing a V1 LLM engine (v0.11.0) with config: "
      "model='meta-llama/Llama-3.1-8B-Instruct', speculative_config=None, dtype=torch.float16, max_seq_len=8192, "
      "tensor_parallel_size=1, pipeline_parallel_size=2, quantization=None, enforce_eager=False, kv_cache_dtype=fp8, seed=0\n"
      "INFO 04-22 00:04:20 [v1/worker/gpu_worker.py:436] Available KV cache memory: 58.11 GiB\n",
      "c.log");
  EXPECT_EQ(log.engine_version, "0.11.0");
  EXPECT_EQ(log.model, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(log.args.at("dtype"), "float16");
  EXPECT_EQ(log.args.at("pipeline-parallel-size"), "2");
  EXPECT_EQ(log.args.at("kv-cache-dtype"), "fp8");
  EXPECT_EQ(log.args.at("max-model-len"), "8192");
  EXPECT_FALSE(log.args.contains("enforce-eager"));
  EXPECT_FALSE(log.args.contains("quantization"));
}

TEST(EngineLog, OlderArgumentDumpsAreReadToo) {
  // vLLM <= 0.9 API servers logged every argument: "args: Namespace(...)".
  const auto log = parse_engine_log(
      "INFO 03-01 10:00:00 [api_server.py:912] args: Namespace(host=None, port=8000, model='Qwen/Qwen2.5-7B-Instruct', "
      "tokenizer=None, max_model_len=16384, tensor_parallel_size=4, lora_modules=[LoRAModulePath(name='a', path='b')], "
      "gpu_memory_utilization=0.9, quantization=None, enforce_eager=False, block_size=None)\n"
      "INFO 03-01 10:01:00 [gpu_worker.py:227] Available KV cache memory: 50.00 GiB\n",
      "n.log");
  EXPECT_EQ(log.model, "Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(log.args.at("max-model-len"), "16384");
  EXPECT_EQ(log.args.at("tensor-parallel-size"), "4");
  EXPECT_EQ(log.args.at("gpu-memory-utilization"), "0.9");
  EXPECT_FALSE(log.args.contains("quantization"));  // None: not stated
  EXPECT_FALSE(log.args.contains("block-size"));
  EXPECT_FALSE(log.args.contains("enforce-eager"));
}

TEST(EngineLog, LlamaServerLinesOfCurrentBuilds) {
  // Current llama.cpp names (print_info, load_tensors, llama_context, llama_kv_cache_unified).
  const auto log = parse_engine_log(
      "build: 6000 (abcdef12) with cc for x86_64-linux-gnu\n"
      "print_info: file type   = Q4_K - Medium\n"
      "print_info: general.name     = Llama 3.1 8B Instruct\n"
      "load_tensors: offloaded 33/33 layers to GPU\n"
      "load_tensors:   CPU_Mapped model buffer size =   281.81 MiB\n"
      "load_tensors:        CUDA0 model buffer size =  4403.49 MiB\n"
      "llama_context: n_ctx         = 4096\n"
      "llama_context: n_ctx_per_seq = 4096\n"
      "llama_context: n_batch       = 2048\n"
      "llama_context: n_ubatch      = 512\n"
      "llama_context: flash_attn    = auto\n"
      "llama_kv_cache_unified:      CUDA0 KV buffer size =   512.00 MiB\n"
      "llama_kv_cache_unified: size =  512.00 MiB (  4096 cells,  32 layers,  1/1 seqs), K (q8_0):  272.00 MiB, V (f16):  256.00 MiB\n"
      "llama_context:      CUDA0 compute buffer size =   300.01 MiB\n"
      "llama_context:  CUDA_Host compute buffer size =    16.01 MiB\n",
      "s.log");
  EXPECT_EQ(log.engine, "llamacpp");
  EXPECT_EQ(log.engine_version, "b6000");
  EXPECT_EQ(log.model, "Llama 3.1 8B Instruct");
  EXPECT_EQ(log.args.at("weights"), "gguf:Q4_K_M");
  EXPECT_EQ(log.args.at("n-gpu-layers"), "33");
  EXPECT_EQ(log.args.at("ctx-size"), "4096");  // not n_ctx_per_seq
  EXPECT_EQ(log.args.at("batch-size"), "2048");
  EXPECT_EQ(log.args.at("ubatch-size"), "512");
  EXPECT_EQ(log.args.at("flash-attn"), "auto");
  EXPECT_EQ(log.args.at("cache-type-k"), "q8_0");
  EXPECT_EQ(log.args.at("cache-type-v"), "f16");
  EXPECT_EQ(log.weights->bytes, Bytes::from_mib(4403.49));  // CUDA0, not CPU_Mapped
  EXPECT_EQ(log.weights->line, 6u);
  EXPECT_EQ(log.kv_cache->bytes, Bytes::from_mib(512));
  EXPECT_EQ(log.compute_buffer->bytes, Bytes::from_mib(300.01));  // CUDA0, not CUDA_Host
}

TEST(EngineLog, UnknownFormatNamesTheFirstLine) {
  const auto message = error_message([] { parse_engine_log("\n\nINFO:     Uvicorn running on http://0.0.0.0:8000\n", "x.log"); },
                                     ErrorKind::InputFile);
  EXPECT_EQ(message, "x.log:3: not a line of a vLLM, SGLang, llama.cpp, ollama or TensorRT-LLM start-up log (the formats reconcile reads): 'INFO:     Uvicorn running on http://0.0.0.0:8000'");
}

// A TensorRT-LLM line without a figure: the engine is known, the figures are missing.
TEST(EngineLog, TrtllmLinesWithoutFiguresAreNoRecognisedStartUpLines) {
  const auto message = error_message([] { parse_engine_log("[TensorRT-LLM][INFO] Max KV cache pages per sequence: 2048\n", "t.log"); },
                                     ErrorKind::InputFile);
  EXPECT_NE(message.find("t.log: no recognised start-up lines (TensorRT-LLM log lines, but none of"), std::string::npos) << message;
}

TEST(EngineLog, VllmLinesWithoutFiguresAreNoRecognisedStartUpLines) {
  try {
    parse_engine_log("INFO 04-22 00:03:36 [config/model.py:549] Resolved architecture: LlamaForCausalLM\n", "y.log");
    FAIL() << "no error";
  } catch (const UnrecognisedLog& e) {
    EXPECT_NE(std::string(e.what()).find("y.log: no recognised start-up lines"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_engine_log("", "e.log"), UnrecognisedLog);
}

TEST(EngineLog, AMalformedFigureNamesFileLineAndFigure) {
  const auto message = error_message(
      [] { parse_engine_log("INFO 04-22 00:04:20 [w.py:1] Available KV cache memory: lots GiB\n", "z.log"); },
      ErrorKind::InputFile);
  EXPECT_EQ(message, "z.log:1: Available KV cache memory: cannot read 'lots GiB'");
}

TEST(EngineLog, ShapeRequiresLevelDateAndSource) {
  EXPECT_TRUE(vllm_claims_line("INFO 04-22 00:04:20 [w.py:1] x"));
  EXPECT_TRUE(vllm_claims_line("(Worker_PP1 pid=443) DEBUG 12-31 23:59:59 [a/b.py:7] y"));
  EXPECT_FALSE(vllm_claims_line("INFO 2024-04-22 00:04:20 [w.py:1] x"));
  EXPECT_FALSE(vllm_claims_line("INFO: Started server process [1]"));  // uvicorn, not vLLM's logger
  EXPECT_FALSE(vllm_claims_line("(pid=1) NOTE 04-22 00:04:20 [w.py:1] x"));
}

TEST(EngineLog, MissingFileIsAnIoError) {
  error_message([] { read_engine_log(source_dir() / "tests/fixtures/logs/vllm/absent.log"); }, ErrorKind::Io);
}

}  // namespace
}  // namespace vramplan::test
