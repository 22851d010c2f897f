// vLLM V1 start-up logs (0.10 - 0.19). Every line vLLM's logger writes has the shape
//   [(EngineCore pid=242) ]LEVEL MM-DD HH:MM:SS [path.py:line] message
// (vllm/logger.py _FORMAT "%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d] %(message)s",
// DATE_FORMAT "%m-%d %H:%M:%S"; the "(Name pid=N) " prefix is added by the multiprocessing
// workers). Of those, the lines below are read; every other vLLM line is skipped. Where a figure
// is printed by several workers (TP / PP ranks), the first one is kept: the first rank / stage,
// the one vLLM's own KV sizing reports (docs/reconcile.md).
#include <array>
#include <cctype>
#include <charconv>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/core/version.hpp"
#include "vramplan/io/engine_log.hpp"
#include "log_text.hpp"

namespace vramplan {

namespace {

bool vllm_is_digit_at(std::string_view s, std::size_t i) { return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); }

// The message of a vLLM logger line, or nullopt when `line` does not have the shape.
std::optional<std::string_view> vllm_message(std::string_view line) {
  if (!line.empty() && line.front() == '(') {
    const auto close = line.find(") ");
    if (close == std::string_view::npos || close > 64) return std::nullopt;
    line.remove_prefix(close + 2);
  }
  static constexpr std::array<std::string_view, 5> kLevels = {"DEBUG ", "INFO ", "WARNING ", "ERROR ", "CRITICAL "};
  bool level = false;
  for (const auto l : kLevels)
    if (line.starts_with(l)) {
      line.remove_prefix(l.size());
      level = true;
      break;
    }
  if (!level || line.size() < 16) return std::nullopt;
  // "04-22 00:03:35 "
  for (const std::size_t i : {0, 1, 3, 4, 6, 7, 9, 10, 12, 13})
    if (!vllm_is_digit_at(line, i)) return std::nullopt;
  if (line[2] != '-' || line[5] != ' ' || line[8] != ':' || line[11] != ':' || line[14] != ' ' || line[15] != '[')
    return std::nullopt;
  const auto close = line.find(']');
  if (close == std::string_view::npos) return std::nullopt;
  line.remove_prefix(close + 1);
  if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  return line;
}

[[noreturn]] void vllm_bad_figure(const EngineLog& out, std::size_t number, std::string_view what, std::string_view text) {
  while (!what.empty() && (what.back() == ' ' || what.back() == ':')) what.remove_suffix(1);
  while (!what.empty() && (what.front() == ' ' || what.front() == ',')) what.remove_prefix(1);
  throw Error(ErrorKind::InputFile, out.origin + ":" + std::to_string(number) + ": " + std::string(what) +
                                        ": cannot read " + excerpt(text, 40));
}

// "58.11 GiB", "17.12GiB": a decimal number and a binary unit, as vLLM prints memory.
LoggedSize vllm_size_after(const EngineLog& out, std::size_t number, std::string_view message, std::string_view key) {
  const auto at = message.find(key);
  std::string_view rest = message.substr(at + key.size());
  std::size_t n = 0;
  while (n < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[n])) || rest[n] == '.')) ++n;
  std::size_t u = n;
  while (u < rest.size() && rest[u] == ' ') ++u;
  std::size_t e = u;
  while (e < rest.size() && std::isalpha(static_cast<unsigned char>(rest[e]))) ++e;
  const std::string_view unit = rest.substr(u, e - u);
  if (n == 0 || (unit != "GiB" && unit != "MiB" && unit != "GB")) vllm_bad_figure(out, number, key, rest);
  // V0 and early V1 printed "GB" for the same GiB figures (vllm/worker/worker.py divides by
  // float(2**30)); the figure is GiB either way.
  const std::string text = std::string(rest.substr(0, n)) + (unit == "MiB" ? "MiB" : "GiB");
  try {
    return {parse_bytes(text, key), number};
  } catch (const Error&) {
    vllm_bad_figure(out, number, key, rest);
  }
}


template <class T>
void vllm_keep_first(std::optional<T>& slot, T value, EngineLog& out) {
  if (!slot) slot = std::move(value);
  ++out.recognised;
}

void vllm_set_arg(EngineLog& out, const std::string& flag, std::string value) {
  out.args.emplace(flag, std::move(value));  // the first statement wins (non-default args come first)
}

// Python literals of the argument dump -> engine flag values.
std::string vllm_unquote(std::string_view v) {
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) return std::string(v.substr(1, v.size() - 2));
  return std::string(v);
}

// How a vLLM argument becomes an engine flag (memory/vllm_engine.cpp options()).
enum class VllmArgKind { Value, Switch, OnOff };
struct VllmArgRow {
  std::string_view python;  //!< EngineArgs field (vllm/engine/arg_utils.py)
  std::string_view flag;    //!< vramplan's engine flag
  VllmArgKind kind;
};
constexpr std::array<VllmArgRow, 15> kVllmArgs = {{
    {"max_model_len", "max-model-len", VllmArgKind::Value},
    {"gpu_memory_utilization", "gpu-memory-utilization", VllmArgKind::Value},
    {"tensor_parallel_size", "tensor-parallel-size", VllmArgKind::Value},
    {"pipeline_parallel_size", "pipeline-parallel-size", VllmArgKind::Value},
    {"dtype", "dtype", VllmArgKind::Value},
    {"kv_cache_dtype", "kv-cache-dtype", VllmArgKind::Value},
    {"quantization", "quantization", VllmArgKind::Value},
    {"block_size", "block-size", VllmArgKind::Value},
    {"max_num_seqs", "max-num-seqs", VllmArgKind::Value},
    {"max_num_batched_tokens", "max-num-batched-tokens", VllmArgKind::Value},
    {"kv_cache_memory_bytes", "kv-cache-memory", VllmArgKind::Value},
    {"enforce_eager", "enforce-eager", VllmArgKind::Switch},
    {"enable_prefix_caching", "enable-prefix-caching", VllmArgKind::OnOff},
    {"enable_chunked_prefill", "enable-chunked-prefill", VllmArgKind::OnOff},
    {"disable_hybrid_kv_cache_manager", "disable-hybrid-kv-cache-manager", VllmArgKind::Switch},
}};

}  // namespace

void vllm_take_arg(EngineLog& out, std::string_view key, std::string_view raw) {
  if (raw == "None") return;
  if (key == "model") {
    if (out.model.empty()) out.model = vllm_unquote(raw);
    return;
  }
  for (const auto& row : kVllmArgs) {
    if (row.python != key) continue;
    const std::string value = vllm_unquote(raw);
    switch (row.kind) {
      case VllmArgKind::Value: vllm_set_arg(out, std::string(row.flag), value); break;
      case VllmArgKind::Switch:
        if (value == "True") vllm_set_arg(out, std::string(row.flag), "true");
        break;
      case VllmArgKind::OnOff:
        vllm_set_arg(out, (value == "True" ? "" : "no-") + std::string(row.flag), "true");
        break;
    }
    return;
  }
}

namespace {

// "non-default args: {'model': 'x', 'max_model_len': 8192, ...}" (vllm/entrypoints/utils.py
// log_non_default_args): a Python dict repr; or the full argument dump of older API servers,
// "args: Namespace(model='x', max_model_len=None, ...)" (entrypoints/openai/api_server.py
// run_server). Top-level items are split at commas outside quotes and brackets; nested values
// (compilation_config, ...) are skipped as a whole.
void vllm_read_arg_dict(std::string_view dict, char open_char, char close_char, std::string_view separator, EngineLog& out) {
  const auto open = dict.find(open_char);
  if (open == std::string_view::npos) return;
  dict.remove_prefix(open + 1);
  int depth = 0;
  char quote = 0;
  std::size_t start = 0;
  auto item = [&](std::string_view text) {
    const auto colon = text.find(separator);
    if (colon == std::string_view::npos) return;
    std::string_view key = text.substr(0, colon), value = text.substr(colon + separator.size());
    while (!key.empty() && key.front() == ' ') key.remove_prefix(1);
    vllm_take_arg(out, vllm_unquote(key), value);
  };
  for (std::size_t i = 0; i < dict.size(); ++i) {
    const char c = dict[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    else if (c == close_char && depth == 0) {
      item(dict.substr(start, i - start));
      return;
    } else if (c == '{' || c == '[' || c == '(') ++depth;
    else if ((c == '}' || c == ']' || c == ')') && depth > 0) --depth;
    else if (c == ',' && depth == 0) {
      item(dict.substr(start, i - start));
      start = i + 1;
    }
  }
}

// "key=value" in the engine config line (vllm/v1/engine/core.py: "Initializing a V1 LLM engine
// (v%s) with config: %s", VllmConfig.__str__): a value runs to the next ", ".
std::optional<std::string_view> vllm_config_value(std::string_view line, std::string_view key) {
  for (const std::string_view lead : {": ", ", "}) {
    const std::string needle = std::string(lead) + std::string(key) + "=";
    const auto at = line.find(needle);
    if (at == std::string_view::npos) continue;
    std::string_view v = line.substr(at + needle.size());
    return v.substr(0, v.find(", "));
  }
  return std::nullopt;
}

void vllm_read_config_line(std::string_view m, EngineLog& out) {
  const auto v = m.find("(v");
  if (v != std::string_view::npos && out.engine_version.empty()) {
    const auto end = m.find(')', v);
    out.engine_version = std::string(m.substr(v + 2, end - v - 2));
  }
  if (const auto model = vllm_config_value(m, "model"); model && out.model.empty()) out.model = vllm_unquote(*model);
  for (const std::string_view key : {"tensor_parallel_size", "pipeline_parallel_size", "kv_cache_dtype", "enforce_eager"})
    if (const auto value = vllm_config_value(m, key); value && *value != "auto") vllm_take_arg(out, key, *value);
  if (const auto dtype = vllm_config_value(m, "dtype")) {
    std::string_view d = *dtype;
    if (d.starts_with("torch.")) d.remove_prefix(6);
    vllm_take_arg(out, "dtype", d);
  }
  if (const auto len = vllm_config_value(m, "max_seq_len")) vllm_take_arg(out, "max_model_len", *len);
  ++out.recognised;
}

// "Maximum concurrency for %s tokens per request: %.2fx" (its own line up to 0.27, the end of the
// KV-size line from 0.28).
void vllm_read_concurrency(std::string_view m, std::size_t number, EngineLog& out) {
  const auto n = log_text::leading_count(m.substr(24));
  const auto colon = m.find(": ");
  if (!n || colon == std::string_view::npos) vllm_bad_figure(out, number, "Maximum concurrency", m);
  double x = 0;
  const std::string_view v = m.substr(colon + 2);
  if (std::from_chars(v.data(), v.data() + v.size(), x).ec != std::errc{}) vllm_bad_figure(out, number, "Maximum concurrency", v);
  if (!out.max_concurrency) {
    out.max_concurrency = x;
    out.concurrency_tokens = *n;
    out.concurrency_line = number;
  }
  ++out.recognised;
}

}  // namespace

bool vllm_claims_line(std::string_view line) { return vllm_message(line).has_value() || vllm_v0_claims_line(line); }

void vllm_read_line(std::string_view line, std::size_t number, EngineLog& out) {
  const auto msg = vllm_message(line);
  if (!msg) return vllm_v0_read_line(line, number, out);
  const std::string_view m = *msg;
  // vllm/v1/worker/gpu_model_runner.py load_model: "Model loading took %.4f GiB memory and %.6f seconds"
  if (m.starts_with("Model loading took ")) {
    vllm_keep_first(out.weights, vllm_size_after(out, number, m, "Model loading took "), out);
  } else if (m.starts_with("Memory profiling takes")) {
    // vllm/v1/worker/gpu_worker.py determine_available_memory
    if (m.find("torch peak memory increase: ") != std::string_view::npos)
      vllm_keep_first(out.activation, vllm_size_after(out, number, m, "torch peak memory increase: "), out);
    if (m.find("non-torch forward increase memory: ") != std::string_view::npos)
      vllm_keep_first(out.non_torch, vllm_size_after(out, number, m, "non-torch forward increase memory: "), out);
  } else if (m.starts_with("Available KV cache memory: ")) {
    vllm_keep_first(out.kv_cache, vllm_size_after(out, number, m, "Available KV cache memory: "), out);
  } else if (m.starts_with("GPU KV cache size: ")) {
    // vllm/v1/core/kv_cache_utils.py _report_kv_cache_config
    const auto tokens = log_text::leading_count(m.substr(19));
    if (!tokens) vllm_bad_figure(out, number, "GPU KV cache size", m.substr(19));
    if (!out.kv_tokens) out.kv_tokens_line = number;
    vllm_keep_first(out.kv_tokens, *tokens, out);
    // 0.28+ prints the concurrency on the same line: "GPU KV cache size: %s tokens, Maximum
    // concurrency for %s tokens per request: %.2fx".
    if (const auto c = m.find(", Maximum concurrency for "); c != std::string_view::npos)
      vllm_read_concurrency(m.substr(c + 2), number, out);
  } else if (m.starts_with("Maximum concurrency for ")) {
    vllm_read_concurrency(m, number, out);
  } else if (m.starts_with("Graph capturing finished")) {
    // gpu_model_runner.py capture_model: "Graph capturing finished in %.0f secs, took %.2f GiB".
    // From 0.29 Model Runner V2's memory estimate captures once more before the real capture and
    // prints the line too: the last one is the pool's.
    if (m.find(", took ") != std::string_view::npos) {
      const auto size = vllm_size_after(out, number, m, ", took ");
      if (const auto v = release_numbers(out.engine_version); !v.empty() && v >= std::vector<std::uint64_t>{0, 29}) {
        out.cuda_graphs = size;
        ++out.recognised;
      } else {
        vllm_keep_first(out.cuda_graphs, size, out);
      }
    }
  } else if (m.starts_with("Free memory on device (")) {
    // gpu_worker.py (0.19, DEBUG): "Free memory on device (%.2f/%.2f GiB) on startup. Desired GPU
    // memory utilization is (%s, %.2f GiB). ..."
    const auto slash = m.find('/');
    if (slash != std::string_view::npos) vllm_keep_first(out.gpu_total, vllm_size_after(out, number, m, "/"), out);
    const std::string_view util_key = "utilization is (";
    if (const auto u = m.find(util_key); u != std::string_view::npos) {
      const std::string_view rest = m.substr(u + util_key.size());
      vllm_set_arg(out, "gpu-memory-utilization", std::string(rest.substr(0, rest.find(','))));
    }
  } else if (const auto g = m.find("num_gpu_blocks is: "); g != std::string_view::npos) {
    // v1/metrics/loggers.py log_engine_initialized: "vllm cache_config_info with initialization
    // after num_gpu_blocks is: %d".
    const auto blocks = log_text::leading_count(m.substr(g + 19));
    if (!blocks) vllm_bad_figure(out, number, "num_gpu_blocks", m.substr(g + 19));
    if (!out.gpu_blocks) out.gpu_blocks_line = number;
    vllm_keep_first(out.gpu_blocks, *blocks, out);
  } else if (m.starts_with("non-default args: ")) {
    vllm_read_arg_dict(m, '{', '}', ": ", out);
    ++out.recognised;
  } else if (m.starts_with("args: Namespace(")) {
    vllm_read_arg_dict(m, '(', ')', "=", out);
    ++out.recognised;
  } else if (m.starts_with("Initializing a V1 LLM engine")) {
    vllm_read_config_line(m, out);
  } else if (m.starts_with("Using max model len ")) {
    vllm_take_arg(out, "max_model_len", m.substr(20));
    ++out.recognised;
  } else if (const auto v = m.find("vLLM API server version "); v != std::string_view::npos) {
    if (out.engine_version.empty()) out.engine_version = std::string(m.substr(v + 24, m.find(' ', v + 24) - v - 24));
    out.api_version_lines.push_back(number);
    ++out.recognised;
  } else if (const auto b = m.find(" version "); b != std::string_view::npos && m.find("\xe2\x96\x88") != std::string_view::npos) {
    // The 0.11+ start-up banner (entrypoints/utils.py): block characters, then "version 0.19.0".
    if (out.engine_version.empty()) out.engine_version = std::string(m.substr(b + 9, m.find(' ', b + 9) - b - 9));
    out.banner_lines.push_back(number);
    ++out.recognised;
  } else {
    // V0 messages in a bracketed logger line (the V0 engine ran until 0.10).
    vllm_v0_read_line(m, number, out);
  }
}

}  // namespace vramplan
