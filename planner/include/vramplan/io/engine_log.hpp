// vramplan/io/engine_log.hpp — what an inference engine's start-up log states, read line by line.
//
// The reader only transcribes: the configuration the log prints (model, engine flags, parallel
// degrees, GPU total) and the memory figures it prints (per GPU, as printed, first worker / first
// pipeline stage). It plans nothing; plan/reconcile.hpp compares these figures with a plan.
// Formats and the engine source of every line: docs/reconcile.md. One reader per engine
// (io/vllm_log.cpp, io/llamacpp_log.cpp), chosen by the shape of the log's lines.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan {

//! A log without a line vramplan reads: a malformed input file (ErrorKind::InputFile) that the CLI
//! reports with its own exit code, 7 (planner/cli/exit_codes.hpp), so scripts can tell "not a log
//! I can read" from "a log with a bad figure".
class UnrecognisedLog : public Error {
 public:
  explicit UnrecognisedLog(std::string_view message) : Error(ErrorKind::InputFile, message) {}
};

//! A size as the log prints it (GiB with two decimals in vLLM) and the 1-based line it came from.
struct LoggedSize {
  Bytes bytes;
  std::size_t line = 0;
};

struct EngineLog {
  std::string origin;          //!< the file, for messages
  std::string engine;          //!< "vllm", "sglang", "llamacpp", "trtllm", "ollama"
  std::string engine_version;  //!< "0.19.0"; "" when the log does not print it
  std::string model;           //!< as the log names it (an HF id or a path); "" when absent
  //! Engine flags the log states, keyed like memory::EngineArgs ("max-model-len" -> "8192"):
  //! the user's non-default arguments, plus parallel degrees and dtypes of the resolved config.
  std::map<std::string, std::string> args;
  std::optional<LoggedSize> gpu_total;  //!< the runtime-reported total per GPU

  // Memory figures per GPU.
  std::optional<LoggedSize> weights;        //!< vLLM: "Model loading took"; llama.cpp: "CUDA0 (model) buffer size"
  std::optional<LoggedSize> activation;     //!< vLLM: "torch peak memory increase"
  std::optional<LoggedSize> non_torch;      //!< vLLM: "non-torch forward increase memory"
  std::optional<LoggedSize> cuda_graphs;    //!< vLLM: "Graph capturing finished ... took"; SGLang: "Capture cuda graph end ... mem usage"
  std::optional<LoggedSize> kv_cache;       //!< vLLM: "Available KV cache memory"; llama.cpp: "CUDA0 KV buffer size"
  std::optional<LoggedSize> compute_buffer; //!< llama.cpp: "CUDA0 compute buffer size"; TensorRT-LLM: "execution context memory"
  std::optional<LoggedSize> free_for_kv;     //!< TensorRT-LLM: "... paged kv cache: total: T, available: F" (F)
  std::optional<LoggedSize> runtime_buffers; //!< TensorRT-LLM: "Allocated X GB GPU memory for runtime buffers"
  std::optional<LoggedSize> decoder_buffers; //!< TensorRT-LLM: "Allocated X GB GPU memory for decoder"
  std::optional<LoggedSize> free_before_load;  //!< SGLang: "Load weight begin. avail mem"
  std::optional<LoggedSize> after_pool;        //!< SGLang: "Memory pool end. avail mem"
  std::optional<LoggedSize> free_before_graphs;  //!< SGLang: "Capture cuda graph begin. ... avail mem"
  std::optional<LoggedSize> peak_torch;        //!< vLLM 0.6.4: "peak_torch_memory" (weights included)
  std::optional<std::uint64_t> gpu_blocks;     //!< vLLM V0: "# GPU blocks: N"
  std::size_t gpu_blocks_line = 0;
  std::optional<std::uint64_t> kv_tokens;   //!< vLLM: "GPU KV cache size: N tokens"
  std::optional<double> max_concurrency;    //!< vLLM: "Maximum concurrency for N tokens per request: Xx"
  std::optional<std::uint64_t> concurrency_tokens;  //!< the N of that line
  std::size_t kv_tokens_line = 0, concurrency_line = 0;
  //! TensorRT-LLM: the token budget before rounding up to whole blocks ("Using N tokens in paged KV
  //! cache", 0.5; the PyTorch backend's estimate in "Both free_gpu_memory_fraction and max_tokens are set").
  std::optional<std::uint64_t> kv_token_budget;
  std::size_t kv_token_budget_line = 0;

  //! The engine's own estimate printed before it starts (ollama: the memory.* keys of its
  //! "offload to cuda" line, llm/memory.go EstimateGPULayers), first GPU, in log order.
  std::vector<std::pair<std::string, LoggedSize>> engine_estimate;
  std::optional<std::uint64_t> estimate_layers;  //!< ollama: layers.offload
  //! llama.cpp: the KV lines come from llama_kv_cache_init, a build (2024 - early 2025) from before
  //! the per-sequence KV streams of llama.cpp PR #14363 (June 2025, `--kv-unified`): all sequences
  //! share one cache ("the vanilla unified approach which we always used until now", the PR says).
  //! Its successor llama_kv_cache_unified spans the change (renamed by PR #15467): not marked.
  bool llamacpp_unified_kv = false;

  //! Lines that announce a server start (vLLM's version banner, one kind per list): a second one
  //! of a kind means the file holds two start-ups, whose figures would be mixed.
  std::vector<std::size_t> banner_lines, api_version_lines;

  std::size_t lines = 0;       //!< lines read
  std::size_t recognised = 0;  //!< lines that gave a figure or a setting

  //! The architecture the log states of the model it loaded (llama.cpp's print_info /
  //! llm_load_print_meta: n_layer, n_embd, n_head, n_head_kv, n_ff, n_vocab, n_expert as
  //! printed, "model params" as "6.74 B"), first load only; plan/reconcile.cpp compares it with
  //! the planned model. Keys as llama.cpp prints them.
  std::map<std::string, std::string> architecture{};
  std::size_t architecture_line = 0;  //!< the first line that stated one of them

  bool has_figures() const {
    return weights || activation || non_torch || cuda_graphs || kv_cache || kv_tokens || compute_buffer || gpu_blocks ||
           free_before_load || after_pool || free_for_kv || runtime_buffers || decoder_buffers || kv_token_budget;
  }
};

//! Reads `file` (a regular file, at most 64 MiB). Throws Error(Io) for a missing file,
//! UnrecognisedLog when no line has the shape of a known engine's log ("<file>:<n>: ...
//! naming the first non-empty line) or when the engine's lines carry no start-up figure.
EngineLog read_engine_log(const std::filesystem::path& file);

//! The same on text already in memory; `origin` names it in messages.
EngineLog parse_engine_log(std::string_view text, std::string_view origin);

//! The reader of one engine: whether a line has the engine's shape, and what to take from a line
//! that has it. Registered in io/engine_log.cpp.
struct LogReader {
  std::string_view engine;
  std::string_view label;  //!< "vLLM" for messages
  std::string_view figures;  //!< the lines with figures, for "no recognised start-up lines"
  bool (*claims)(std::string_view line);
  void (*read)(std::string_view line, std::size_t number, EngineLog& out);
  //! Lines the reader also reads once the log is its, though they do not name the engine
  //! (ollama: the llama.cpp runner's own lines); nullptr: none.
  bool (*also_reads)(std::string_view line) = nullptr;
};

//! vLLM (V1 0.8 - 0.19: io/vllm_log.cpp; its V0 lines, 0.6 - 0.10: io/vllm_v0_log.cpp).
bool vllm_claims_line(std::string_view line);
void vllm_read_line(std::string_view line, std::size_t number, EngineLog& out);
//! A line of vLLM's V0 engine (its logger without brackets, the multi-line profiling message,
//! pasted messages without a logger prefix, a `vllm serve` command line).
bool vllm_v0_claims_line(std::string_view line);
void vllm_v0_read_line(std::string_view line, std::size_t number, EngineLog& out);
//! One vLLM argument as Python names it (EngineArgs field) with its printed value -> an engine flag.
void vllm_take_arg(EngineLog& out, std::string_view python_key, std::string_view raw);
//! SGLang start-up logs: io/sglang_log.cpp.
bool sglang_claims_line(std::string_view line);
void sglang_read_line(std::string_view line, std::size_t number, EngineLog& out);
//! llama.cpp / llama-server: io/llamacpp_log.cpp.
bool llamacpp_claims_line(std::string_view line);
void llamacpp_read_line(std::string_view line, std::size_t number, EngineLog& out);
//! ollama's server log (its own slog lines and the llama.cpp runner's): io/ollama_log.cpp.
bool ollama_claims_line(std::string_view line);
bool ollama_also_reads(std::string_view line);
void ollama_read_line(std::string_view line, std::size_t number, EngineLog& out);
//! TensorRT-LLM (C++ executor and PyTorch backend): io/trtllm_log.cpp.
bool trtllm_claims_line(std::string_view line);
void trtllm_read_line(std::string_view line, std::size_t number, EngineLog& out);

}  // namespace vramplan
