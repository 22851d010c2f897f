// ollama server logs (server.log, `journalctl -u ollama`, `docker logs`). ollama writes its own
// lines with Go's log/slog text handler: `time=... level=INFO source=memory.go:356 msg="offload to
// cuda" key=value ...` (values with spaces quoted, Go escapes); the llama.cpp runner it starts
// writes llama.cpp's own load lines into the same stream (llm/server.go passes the runner's
// stderr through). journald puts "Mon DD HH:MM:SS host ollama[pid]: " before each line, docker
// compose "ollama  | ", Docker Desktop a "YYYY-MM-DD HH:MM:SS " stamp. Read:
//   llm/memory.go (MemoryEstimate).log, the result of EstimateGPULayers, 0.1.3x - 0.11
//   ("offload to cuda"; later llm/server.go "offload" library=cuda): layers.offload, layers.model and
//   the memory.* groups, printed by format.HumanBytes2 (GiB / MiB / KiB with one decimal, binary):
//     memory.required.full  everything EstimateGPULayers places (all layers, KV, graph) when fully offloaded
//     memory.required.partial  what it places on the GPUs for layers.offload
//     memory.required.kv    the KV cache for num_ctx x num_parallel (ggml.GraphSize)
//     memory.weights.total  all layers' tensors; memory.graph.full / .partial  the compute graph estimate
//     memory.available      free memory per GPU ("[46.2 GiB]", the first GPU is kept)
//   llm/server.go NewLlamaServer: msg="starting llama server" cmd="... --ctx-size 8192 --batch-size 512
//     --n-gpu-layers 65 --parallel 4 [--flash-attn] [--kv-cache-type q8_0] ..." (the runner's flags)
//   server/routes.go Serve: msg="Listening on 127.0.0.1:11434 (version 0.5.7)" (the version)
// Every other line whose text (after the prefixes) is llama.cpp's goes to io/llamacpp_log.cpp.
#include <array>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/engine_log.hpp"
#include "log_text.hpp"

namespace vramplan {

namespace {

bool ollama_digits(std::string_view s, std::initializer_list<std::size_t> at) {
  for (const auto i : at)
    if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
  return true;
}

// The line without journald's, docker compose's or Docker Desktop's prefix; `had_prefix` says
// whether an ollama-specific one (journald's "ollama[pid]: ", compose's "ollama | ") was there.
std::string_view ollama_strip(std::string_view line, bool* had_prefix = nullptr) {
  if (had_prefix) *had_prefix = false;
  if (const auto p = line.find("ollama["); p != std::string_view::npos && p < 64) {
    const auto close = line.find("]: ", p);
    if (close != std::string_view::npos && close < p + 16) {
      if (had_prefix) *had_prefix = true;
      return line.substr(close + 3);
    }
  }
  if (line.starts_with("ollama")) {
    const auto bar = line.find(" | ");
    if (bar != std::string_view::npos && bar < 40 && line.substr(6, bar - 6).find_first_not_of(" -_0123456789") == std::string_view::npos) {
      if (had_prefix) *had_prefix = true;
      return line.substr(bar + 3);
    }
  }
  // "2025-03-05 08:58:54 " (Docker Desktop's log view).
  if (line.size() > 20 && ollama_digits(line, {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18}) && line[4] == '-' &&
      line[13] == ':' && line[19] == ' ')
    return line.substr(20);
  return line;
}

bool ollama_is_slog(std::string_view s) { return s.starts_with("time=") && s.find(" level=") != std::string_view::npos; }

// key=value pairs of a slog text line; a quoted value keeps Go's escapes \" and \\ undone.
std::vector<std::pair<std::string, std::string>> ollama_pairs(std::string_view s) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    const auto eq = s.find('=', i);
    if (eq == std::string_view::npos) break;
    std::string key(s.substr(i, eq - i));
    std::string value;
    i = eq + 1;
    if (i < s.size() && s[i] == '"') {
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] == '\\' && i + 1 < s.size()) ++i;
        value += s[i];
      }
      ++i;
    } else {
      const auto end = s.find(' ', i);
      value = std::string(s.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i));
      i = end == std::string_view::npos ? s.size() : end;
    }
    out.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

// The memory.* keys of the offload line, as EngineLog::engine_estimate keeps them.
constexpr std::array<std::string_view, 7> kOllamaEstimateKeys = {
    "memory.available",     "memory.required.full", "memory.required.partial", "memory.required.kv",
    "memory.weights.total", "memory.graph.full",    "memory.graph.partial"};

// The runner's flags (llama.cpp's names, which the llama.cpp plan takes).
constexpr std::array<std::pair<std::string_view, const char*>, 5> kOllamaRunnerFlags = {
    {{"ctx_size", "ctx-size"}, {"batch_size", "batch-size"}, {"n_gpu_layers", "n-gpu-layers"}, {"parallel", "parallel"},
     {"flash_attn", "flash-attn"}}};

void ollama_set_arg(EngineLog& out, const char* flag, std::string value) {
  if (out.args.emplace(flag, std::move(value)).second) ++out.recognised;
}

void ollama_read_offload(const std::vector<std::pair<std::string, std::string>>& pairs, std::size_t number, EngineLog& out) {
  if (!out.engine_estimate.empty()) return;  // the first load's estimate (a log may hold several loads)
  for (const auto& [key, value] : pairs) {
    for (const auto k : kOllamaEstimateKeys) {
      if (key != k) continue;
      // "[46.2 GiB 46.2 GiB]": per GPU; the first GPU's, as every other figure here.
      std::string v = value;
      if (v.starts_with("[")) v = v.substr(1, v.find_first_of("]") - 1);
      if (const auto sp = v.find(' '); sp != std::string::npos && v.find(' ', sp + 1) != std::string::npos)
        v = v.substr(0, v.find(' ', sp + 1));
      try {
        out.engine_estimate.push_back({std::string(k), LoggedSize{parse_bytes(v, k), number}});
      } catch (const Error&) {
        throw Error(ErrorKind::InputFile, out.origin + ":" + std::to_string(number) + ": " + std::string(k) +
                                              ": cannot read " + excerpt(value, 40));
      }
    }
    if (key == "layers.offload") out.estimate_layers = log_text::leading_count(value);
  }
  ++out.recognised;
}

}  // namespace

bool ollama_claims_line(std::string_view line) {
  bool prefixed = false;
  const std::string_view s = ollama_strip(line, &prefixed);
  return prefixed || ollama_is_slog(s);
}

bool ollama_also_reads(std::string_view line) { return llamacpp_claims_line(ollama_strip(line)); }

void ollama_read_line(std::string_view line, std::size_t number, EngineLog& out) {
  const std::string_view s = ollama_strip(line);
  if (llamacpp_claims_line(s)) {
    llamacpp_read_line(s, number, out);
    return;
  }
  if (!ollama_is_slog(s)) return;
  const auto pairs = ollama_pairs(s);
  std::string msg;
  for (const auto& [k, v] : pairs)
    if (k == "msg") msg = v;
  if (msg.starts_with("offload to ") || msg == "offload") {
    ollama_read_offload(pairs, number, out);
  } else if (msg == "starting llama server") {
    for (const auto& [k, v] : pairs) {
      if (k != "cmd") continue;
      for (const auto& [flag, value] : log_text::command_flags(log_text::command_words(v)))
        for (const auto& [name, arg] : kOllamaRunnerFlags)
          if (flag == name) ollama_set_arg(out, arg, name == "flash_attn" ? "on" : value);
      // "--kv-cache-type q8_0" (OLLAMA_KV_CACHE_TYPE): both caches.
      for (const auto& [flag, value] : log_text::command_flags(log_text::command_words(v)))
        if (flag == "kv_cache_type") {
          ollama_set_arg(out, "cache-type-k", value);
          ollama_set_arg(out, "cache-type-v", value);
        }
    }
  } else if (msg.starts_with("Listening on ")) {
    // "Listening on 127.0.0.1:11434 (version 0.5.7)"
    if (const auto v = msg.find("(version "); v != std::string::npos && out.engine_version.empty())
      out.engine_version = msg.substr(v + 9, msg.find(')', v) - v - 9);
  }
}

}  // namespace vramplan
