// TensorRT-LLM start-up logs (C++ executor of TensorRT engines and the PyTorch backend). The C++
// runtime logs "[TensorRT-LLM][INFO] message" (cpp/tensorrt_llm/common/logger.cpp), the Python
// side "[TRT-LLM] [I] message" (tensorrt_llm/logger.py); a timestamp "[MM/DD/YYYY-HH:MM:SS] " may
// come first, and pasted logs (NVIDIA/TensorRT-LLM#1188) carry the messages alone. Read:
//   cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp calculateMaxNumBlocks / calculateFreeMemBytes:
//     "Memory usage when calculating max tokens in paged kv cache: total: T GiB, available: F GiB"
//     "Number of blocks in KV cache primary pool: N"
//     "Number of tokens per block: N."
//   kvCacheManager.cpp allocatePools: "[MemUsageChange] Allocated X GiB for max tokens in paged KV cache (N)."
//   0.5's gptSession.cpp: "Using N tokens in paged KV cache." (the token budget before block rounding)
//   runtime/tllmRuntime.cpp: "Loaded engine size: N MiB", "Allocated X MiB for execution context memory."
//   batch_manager/trtGptModelInflightBatching.cpp: "[MemUsageChange] Allocated X GB GPU memory for
//     runtime buffers." / "... for decoder." (MemoryCounters::bytesToString: "KB"/"MB"/"GB" divide
//     by 1024, runtime/memoryCounters.cpp, so they are KiB / MiB / GiB)
//   llmapi / _torch/pyexecutor/_util.py: "Both free_gpu_memory_fraction and max_tokens are set (to F
//     and N, respectively). The smaller value will be used." and "max_seq_len=L, max_num_requests=B,
//     max_num_tokens=T"; "TensorRT-LLM version: X" (the banner of tensorrt_llm/__init__.py).
#include <array>
#include <cstdio>
#include <optional>
#include <string>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/engine_log.hpp"
#include "log_text.hpp"

namespace vramplan {

namespace {

// Messages only TensorRT-LLM prints (also pasted without the logger prefix); "Allocated " and
// "Using " lines must also name what they allocate.
constexpr std::array<std::string_view, 7> kTrtllmMessages = {
    "Memory usage when calculating max tokens in paged kv cache:", "Number of blocks in KV cache primary pool:",
    "Number of tokens per block:", "Loaded engine size:", "Both free_gpu_memory_fraction and max_tokens are set",
    "TensorRT-LLM version:", "Max KV cache pages per sequence:"};
constexpr std::array<std::string_view, 4> kTrtllmAllocations = {
    "for max tokens in paged KV cache", "tokens in paged KV cache", "for execution context memory", "GPU memory for "};

// "[11/21/2024-10:00:00] [TRT-LLM] [I] msg" -> "msg"; "[TensorRT-LLM][INFO] [MemUsageChange] msg" -> "msg".
// nullopt when the line carries neither logger tag.
std::optional<std::string_view> trtllm_tagged(std::string_view line) {
  std::size_t at = std::string_view::npos;
  for (const std::string_view tag : {"[TensorRT-LLM]", "[TRT-LLM]"})
    if (const auto p = line.find(tag); p != std::string_view::npos && p < 32) {
      at = p + tag.size();
      break;
    }
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at);
  // Level and topic tags: "[INFO]", " [I] ", "[MemUsageChange] ".
  while (true) {
    while (rest.starts_with(" ")) rest.remove_prefix(1);
    if (!rest.starts_with("[")) break;
    const auto close = rest.find(']');
    if (close == std::string_view::npos || close > 20) break;
    rest.remove_prefix(close + 1);
  }
  return rest;
}

std::string_view trtllm_message(std::string_view line) {
  if (const auto m = trtllm_tagged(line)) return *m;
  return line;
}

bool trtllm_known_message(std::string_view m) {
  for (const auto k : kTrtllmMessages)
    if (m.starts_with(k)) return true;
  if (m.starts_with("Allocated ") || m.starts_with("Using "))
    for (const auto what : kTrtllmAllocations)
      if (m.find(what) != std::string_view::npos) return true;
  return false;
}

// "2.66 GB" (MemoryCounters: binary units) / "52.51 GiB" / "875 MiB" -> bytes.
Bytes trtllm_size(const EngineLog& out, std::string_view text, std::size_t number, std::string_view what) {
  std::string s(trim(text));
  for (const auto& [dec, bin] : std::array<std::pair<const char*, const char*>, 3>{{{" KB", " KiB"}, {" MB", " MiB"}, {" GB", " GiB"}}})
    if (s.ends_with(dec)) s = s.substr(0, s.size() - 3) + bin;
  try {
    return parse_bytes(s, what);
  } catch (const Error&) {
    throw Error(ErrorKind::InputFile, out.origin + ":" + std::to_string(number) + ": " + std::string(what) + ": cannot read " +
                                          excerpt(text, 40));
  }
}

// The text between `key` and the next `stop` character.
std::optional<std::string_view> trtllm_field(std::string_view m, std::string_view key, char stop) {
  const auto at = m.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view v = trim(m.substr(at + key.size()));
  return trim(v.substr(0, v.find(stop)));
}

std::optional<std::uint64_t> trtllm_count(std::string_view m, std::string_view key, char stop) {
  const auto v = trtllm_field(m, key, stop);
  return v ? log_text::leading_count(*v) : std::nullopt;
}

void trtllm_set_arg(EngineLog& out, const char* flag, std::string value) {
  if (out.args.emplace(flag, std::move(value)).second) ++out.recognised;
}

template <class T>
void trtllm_first(std::optional<T>& slot, T value, EngineLog& out) {
  if (!slot) slot = std::move(value);
  ++out.recognised;
}

}  // namespace

bool trtllm_claims_line(std::string_view line) {
  if (trtllm_tagged(line)) return true;
  return trtllm_known_message(line);
}

void trtllm_read_line(std::string_view line, std::size_t number, EngineLog& out) {
  const std::string_view m = trtllm_message(line);
  if (m.starts_with("TensorRT-LLM version:")) {
    if (out.engine_version.empty()) out.engine_version = std::string(trim(m.substr(21)));
    return;
  }
  if (m.starts_with("Memory usage when calculating max tokens in paged kv cache:")) {
    const auto total = trtllm_field(m, "total:", ',');
    const auto avail = trtllm_field(m, "available:", ',');
    if (total) trtllm_first(out.gpu_total, LoggedSize{trtllm_size(out, *total, number, "total"), number}, out);
    if (avail) trtllm_first(out.free_for_kv, LoggedSize{trtllm_size(out, *avail, number, "available"), number}, out);
    return;
  }
  if (const auto n = trtllm_count(m, "Number of blocks in KV cache primary pool:", ' '); n && !out.gpu_blocks) {
    out.gpu_blocks = *n;
    out.gpu_blocks_line = number;
    ++out.recognised;
    return;
  }
  if (const auto n = trtllm_count(m, "Number of tokens per block:", '.')) {
    trtllm_set_arg(out, "tokens-per-block", std::to_string(*n));
    return;
  }
  // "Allocated 52.51 GiB for max tokens in paged KV cache (860320)."
  if (m.starts_with("Allocated ") && m.find("for max tokens in paged KV cache") != std::string_view::npos) {
    const auto size = trtllm_field(m, "Allocated ", 'f');
    if (size) trtllm_first(out.kv_cache, LoggedSize{trtllm_size(out, *size, number, "KV cache"), number}, out);
    if (const auto tokens = trtllm_count(m, "(", ')'); tokens && !out.kv_tokens) {
      out.kv_tokens = *tokens;
      out.kv_tokens_line = number;
    }
    return;
  }
  // 0.5: "Using 10718 tokens in paged KV cache." (the budget; the pool is whole blocks above it).
  if (m.starts_with("Using ") && m.find("tokens in paged KV cache") != std::string_view::npos) {
    if (const auto n = log_text::leading_count(m.substr(6)); n && !out.kv_token_budget) {
      out.kv_token_budget = *n;
      out.kv_token_budget_line = number;
      ++out.recognised;
    }
    return;
  }
  if (m.starts_with("Loaded engine size:")) {
    trtllm_first(out.weights, LoggedSize{trtllm_size(out, m.substr(19), number, "engine size"), number}, out);
    return;
  }
  if (m.starts_with("Allocated ") && m.find("for execution context memory") != std::string_view::npos) {
    if (const auto size = trtllm_field(m, "Allocated ", 'f'))
      trtllm_first(out.compute_buffer, LoggedSize{trtllm_size(out, *size, number, "execution context"), number}, out);
    return;
  }
  for (const auto& [suffix, slot] : {std::pair{"GPU memory for runtime buffers", &EngineLog::runtime_buffers},
                                     std::pair{"GPU memory for decoder", &EngineLog::decoder_buffers}})
    if (m.starts_with("Allocated ") && m.find(suffix) != std::string_view::npos) {
      trtllm_first(out.*slot, LoggedSize{trtllm_size(out, m.substr(10, m.find(" GPU memory") - 10), number, suffix), number}, out);
      return;
    }
  // "(to 0.800000011920929 and 860308, respectively)": the fraction as typed (a float32 printed
  // as double: six significant digits give it back) and the PyTorch backend's own token estimate.
  if (m.starts_with("Both free_gpu_memory_fraction and max_tokens are set")) {
    const auto to = trtllm_field(m, "(to ", ',');
    if (to) {
      const std::string_view both = *to;
      const auto and_at = both.find(" and ");
      if (and_at != std::string_view::npos) {
        double fraction = 0;
        if (std::sscanf(std::string(both.substr(0, and_at)).c_str(), "%lf", &fraction) == 1 && fraction > 0) {
          char buf[32];
          std::snprintf(buf, sizeof buf, "%.6g", fraction);
          trtllm_set_arg(out, "free-gpu-memory-fraction", buf);
        }
        if (const auto n = log_text::leading_count(both.substr(and_at + 5)); n && !out.kv_token_budget) {
          out.kv_token_budget = *n;
          out.kv_token_budget_line = number;
        }
      }
    }
    return;
  }
  // "max_seq_len=157, max_num_requests=4096, max_num_tokens=23552" (PyTorch backend).
  if (m.starts_with("max_seq_len=")) {
    for (const auto& [key, flag] : std::array<std::pair<std::string_view, const char*>, 3>{
             {{"max_seq_len=", "max-seq-len"}, {"max_num_requests=", "max-batch-size"}, {"max_num_tokens=", "max-num-tokens"}}})
      if (const auto n = trtllm_count(m, key, ',')) trtllm_set_arg(out, flag, std::to_string(*n));
    return;
  }
}

}  // namespace vramplan
