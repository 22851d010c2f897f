// SGLang start-up logs (0.4 - 0.5). SGLang's logger writes
//   [YYYY-MM-DD HH:MM:SS TP0] message
// (python/sglang/srt/utils.py configure_logger: format "[%(asctime)s{prefix}] %(message)s",
// datefmt "%Y-%m-%d %H:%M:%S", prefix " TP<rank>" / " DP<r> TP<r>" for the scheduler processes);
// a container runtime may put its own timestamp before it. Pasted logs also carry the messages
// without the prefix, so a line whose text starts with one of SGLang's own messages is SGLang's.
// Read (figures per GPU, the first rank's; "GB" is GiB: get_available_gpu_memory divides by 1 << 30):
//   model_executor/model_runner.py load_model:
//     "Load weight begin. avail mem=%.2f GB"               free memory before loading
//     "Load weight end. type=..., dtype=..., avail mem=%.2f GB[, mem usage=%.2f GB]."  weights
//   model_runner.py init_memory_pool:
//     "KV Cache is allocated. [#tokens: N, ]K size: %.2f GB, V size: %.2f GB"  KV pool = K + V
//     "Memory pool end. avail mem=%.2f GB"                 what the pool leaves
//   model_runner.py init_cuda_graphs (CUDA graphs, captured after the pool):
//     "Capture cuda graph begin. This can take up to several minutes. avail mem=%.2f GB"
//     "Capture cuda graph end. Time elapsed: %.2f s. mem usage=%.2f GB. avail mem=%.2f GB."  graphs
//     (0.4.3 printed "avail mem=... GB. mem usage=... GB."; builds before 0.4.3 print neither
//     figure; one with "avail mem" alone gives begin - end, which is how mem usage is computed)
//   managers/scheduler.py: "max_total_num_tokens=N, ..., context_len=N"  KV tokens, context
//   server_args.py: "server_args=ServerArgs(tp_size=..., mem_fraction_static=..., ...)" and the
//   launch command `python3 -m sglang.launch_server --tp 4 --mem-fraction-static 0.93 ...`.
// Without "mem usage" (0.4.1 - 0.4.2) the weights are begin - end avail (docs/accuracy-sglang.md).
#include <array>
#include <cctype>
#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/engine_log.hpp"
#include "log_text.hpp"

namespace vramplan {

namespace {

bool sglang_digit(std::string_view s, std::size_t i) { return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); }

// "2025-01-23 19:35:15": the logger's date format.
bool sglang_is_date(std::string_view s) {
  for (const std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18})
    if (!sglang_digit(s, i)) return false;
  return s.size() >= 19 && s[4] == '-' && s[7] == '-' && s[10] == ' ' && s[13] == ':' && s[16] == ':';
}

// Messages only SGLang prints (also pasted without the logger prefix).
constexpr std::array<std::string_view, 9> kSglangMessages = {
    "Load weight begin.",      "Load weight end.",          "KV Cache is allocated.",
    "Memory pool end.",        "max_total_num_tokens=",     "server_args=ServerArgs(",
    "Capture cuda graph begin.", "Capture cuda graph end.", "Init torch distributed ends."};

// The message of a logger line; nullopt when the line has not the logger's shape.
std::optional<std::string_view> sglang_logged(std::string_view line) {
  if (sglang_is_date(line) && line.size() > 20 && line[19] == ' ') line.remove_prefix(20);  // a container's timestamp
  if (line.empty() || line.front() != '[' || !sglang_is_date(line.substr(1))) return std::nullopt;
  const auto close = line.find("] ");
  if (close == std::string_view::npos || close > 48) return std::nullopt;
  return line.substr(close + 2);
}

std::string_view sglang_message(std::string_view line) {
  if (const auto m = sglang_logged(line)) return *m;
  return line;
}

bool sglang_is_command(std::string_view m) { return m.find("sglang.launch_server") != std::string_view::npos; }

// SGLang's ServerArgs fields (server_args.py) -> vramplan's SGLang flags (memory/sglang_engine.cpp).
struct SglangArgRow {
  std::string_view python;
  std::string_view flag;
  bool is_switch;
};
constexpr std::array<SglangArgRow, 17> kSglangArgs = {{
    {"tp_size", "tp-size", false},
    {"tp", "tp-size", false},
    {"mem_fraction_static", "mem-fraction-static", false},
    {"context_length", "context-length", false},
    {"dtype", "dtype", false},
    {"kv_cache_dtype", "kv-cache-dtype", false},
    {"quantization", "quantization", false},
    {"chunked_prefill_size", "chunked-prefill-size", false},
    {"cuda_graph_max_bs", "cuda-graph-max-bs", false},
    {"max_running_requests", "max-running-requests", false},
    {"max_total_tokens", "max-total-tokens", false},
    {"page_size", "page-size", false},
    {"attention_backend", "attention-backend", false},
    {"decode_attention_backend", "decode-attention-backend", false},
    {"prefill_attention_backend", "prefill-attention-backend", false},
    {"max_prefill_tokens", "max-prefill-tokens", false},
    {"disable_cuda_graph", "disable-cuda-graph", true},
}};

std::string sglang_unquote(std::string_view v) {
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
  return std::string(v);
}

void sglang_take_arg(EngineLog& out, std::string_view key, std::string_view raw) {
  const std::string value = sglang_unquote(raw);
  if (value.empty() || value == "None" || value == "auto") return;
  if (key == "model_path" || key == "model") {
    if (out.model.empty()) out.model = value;
    return;
  }
  for (const auto& row : kSglangArgs) {
    if (row.python != key) continue;
    if (!row.is_switch) out.args.emplace(std::string(row.flag), value);
    else if (value == "True") out.args.emplace(std::string(row.flag), "true");
    return;
  }
}

// "server_args=ServerArgs(model_path='x', tp_size=1, ...)": top-level "key=value" items; the
// "..." of a clipped copy and nested values are skipped.
void sglang_read_server_args(std::string_view m, EngineLog& out) {
  m.remove_prefix(m.find('(') + 1);
  int depth = 0;
  char quote = 0;
  std::size_t start = 0;
  auto item = [&](std::string_view text) {
    const auto eq = text.find('=');
    if (eq == std::string_view::npos) return;
    std::string_view key = text.substr(0, eq);
    while (!key.empty() && key.front() == ' ') key.remove_prefix(1);
    sglang_take_arg(out, key, text.substr(eq + 1));
  };
  for (std::size_t i = 0; i < m.size(); ++i) {
    const char c = m[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    else if (c == ')' && depth == 0) return item(m.substr(start, i - start));
    else if (c == '(' || c == '[' || c == '{') ++depth;
    else if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    else if (c == ',' && depth == 0) {
      item(m.substr(start, i - start));
      start = i + 1;
    }
  }
}

// `python3 -m sglang.launch_server --model-path X --tp 4 --mem-fraction-static 0.93 ...`
void sglang_read_command(std::string_view m, EngineLog& out) {
  for (const auto& [key, value] : log_text::command_flags(log_text::command_words(m))) sglang_take_arg(out, key, value);
}

[[noreturn]] void sglang_bad_figure(const EngineLog& out, std::size_t number, std::string_view what, std::string_view text) {
  throw Error(ErrorKind::InputFile, out.origin + ":" + std::to_string(number) + ": " + std::string(what) + ": cannot read " +
                                        excerpt(text, 40));
}

// "avail mem=78.81 GB" -> 78.81 GiB; nullopt when `key` is not in the message.
std::optional<LoggedSize> sglang_size(const EngineLog& out, std::size_t number, std::string_view m, std::string_view key) {
  const auto at = m.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view rest = m.substr(at + key.size());
  std::size_t n = 0;
  while (n < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[n])) || rest[n] == '.')) ++n;
  if (n == 0 || !(rest.substr(n).starts_with(" GB") || rest.substr(n).starts_with("GB")))
    sglang_bad_figure(out, number, key, rest);
  try {
    return LoggedSize{parse_bytes(std::string(rest.substr(0, n)) + "GiB", key), number};
  } catch (const Error&) {
    sglang_bad_figure(out, number, key, rest);
  }
}

std::optional<std::uint64_t> sglang_count(std::string_view m, std::string_view key) {
  const auto at = m.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view rest = m.substr(at + key.size());
  std::uint64_t v = 0;
  if (std::from_chars(rest.data(), rest.data() + rest.size(), v).ec != std::errc{}) return std::nullopt;
  return v;
}

void sglang_keep(std::optional<LoggedSize>& slot, const std::optional<LoggedSize>& value, EngineLog& out) {
  if (!value) return;
  if (!slot) slot = value;
  ++out.recognised;
}

// A phase's "... end." line: its "mem usage", or, in releases that print none, what the phase
// took = the begin line's "avail mem" - this line's (init_cuda_graphs and the weight loader log
// "mem usage" as exactly that difference).
void sglang_keep_usage(std::optional<LoggedSize>& slot, const std::optional<LoggedSize>& begin, std::string_view m,
                       std::size_t number, EngineLog& out) {
  if (const auto usage = sglang_size(out, number, m, "mem usage=")) {
    sglang_keep(slot, usage, out);
  } else if (const auto end = sglang_size(out, number, m, "avail mem="); end && begin && !slot) {
    if (end->bytes > begin->bytes) sglang_bad_figure(out, number, "avail mem", m);
    slot = LoggedSize{begin->bytes - end->bytes, number};
    ++out.recognised;
  }
}

}  // namespace

bool sglang_claims_line(std::string_view line) {
  if (sglang_logged(line)) return true;
  for (const auto start : kSglangMessages)
    if (line.starts_with(start)) return true;
  return sglang_is_command(line);
}

void sglang_read_line(std::string_view line, std::size_t number, EngineLog& out) {
  const std::string_view m = sglang_message(line);
  if (m.starts_with("Load weight begin.")) {
    sglang_keep(out.free_before_load, sglang_size(out, number, m, "avail mem="), out);
  } else if (m.starts_with("Load weight end.")) {
    sglang_keep_usage(out.weights, out.free_before_load, m, number, out);  // 0.4.1 - 0.4.2 print no "mem usage"
    if (const auto end = sglang_size(out, number, m, "avail mem="); end && out.weights && !out.free_before_load)
      out.free_before_load = LoggedSize{end->bytes + out.weights->bytes, number};  // what loading started from
  } else if (m.starts_with("KV Cache is allocated.")) {
    const auto k = sglang_size(out, number, m, "K size: "), v = sglang_size(out, number, m, "V size: ");
    if (k && v) sglang_keep(out.kv_cache, LoggedSize{k->bytes + v->bytes, number}, out);
    if (const auto t = sglang_count(m, "#tokens: "); t && !out.kv_tokens) {
      out.kv_tokens = *t;
      out.kv_tokens_line = number;
    }
  } else if (m.starts_with("Memory pool end.")) {
    sglang_keep(out.after_pool, sglang_size(out, number, m, "avail mem="), out);
  } else if (m.starts_with("Capture cuda graph begin.")) {
    sglang_keep(out.free_before_graphs, sglang_size(out, number, m, "avail mem="), out);
  } else if (m.starts_with("Capture cuda graph end.")) {
    sglang_keep_usage(out.cuda_graphs, out.free_before_graphs, m, number, out);
  } else if (m.starts_with("max_total_num_tokens=")) {
    if (const auto t = sglang_count(m, "max_total_num_tokens="); t && !out.kv_tokens) {
      out.kv_tokens = *t;
      out.kv_tokens_line = number;
    }
    if (const auto c = sglang_count(m, "context_len=")) out.args.emplace("context-length", std::to_string(*c));
    ++out.recognised;
  } else if (m.starts_with("server_args=ServerArgs(")) {
    sglang_read_server_args(m, out);
    ++out.recognised;
  } else if (sglang_is_command(m)) {
    sglang_read_command(m, out);
    ++out.recognised;
  }
}

}  // namespace vramplan
