// vLLM V0 start-up logs (0.6 - 0.10; the V0 engine was removed in 0.11). V0's logger wrote
//   [(VllmWorkerProcess pid=N) ]LEVEL MM-DD HH:MM:SS file.py:line] message
// (vllm/logger.py _FORMAT of 0.6 - 0.7: "%(levelname)s %(asctime)s %(filename)s:%(lineno)d]
// %(message)s", no bracket before the file), and its memory report is one message over several
// lines, the continuation lines without a prefix. Logs pasted into issues often lose the prefix,
// so a line is also V0's when its text starts with one of V0's own messages (kV0Messages). The
// figures, each from the engine's source (docs/reconcile.md):
//   worker/model_runner.py load_model: "Loading model weights took %.4f GB" (GiB: / float(2**30))
//   worker/worker.py determine_num_available_blocks
//     0.6.4: "Memory profiling results: total_gpu_memory=%.2fGiB initial_memory_usage=...
//             peak_torch_memory=...GiB memory_usage_post_profile=... non_torch_memory=...GiB
//             kv_cache_size=...GiB gpu_memory_utilization=%.2f"
//     0.6.5 - 0.10: "Memory profiling takes %.2f seconds\n the current vLLM instance can use
//             total_gpu_memory (%.2fGiB) x gpu_memory_utilization (%.2f) = %.2fGiB\n model weights
//             take %.2fGiB; non_torch_memory takes %.2fGiB; PyTorch activation peak memory takes
//             %.2fGiB; the rest of the memory reserved for KV Cache is %.2fGiB."
//     (PR #10511's development build printed the same figures one per line, "name   value").
//   executor/gpu_executor.py initialize_cache: "# GPU blocks: %d, # CPU blocks: %d"
//   worker/worker.py raise_if_cache_size_invalid: "The model's max seq len (N) is larger than the
//             maximum number of tokens that can be stored in KV cache (M). ..."
//   engine/llm_engine.py: "Initializing an LLM engine (v%s) with config: ..." (version)
// and the command line (`vllm serve MODEL --flag value`), whose flags are EngineArgs fields.
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

// What a V0 figure is read into.
enum class V0Field { GpuTotal, Utilization, Weights, NonTorch, Activation, PeakTorch, KvCache };

// "name<separator>value" in the memory report, in its three shapes. Longer names first where one
// is a prefix of another's text.
struct V0Figure {
  std::string_view name;
  V0Field field;
};
constexpr std::array<V0Figure, 17> kV0Figures = {{
    {"total_gpu_memory=", V0Field::GpuTotal},
    {"total_gpu_memory (", V0Field::GpuTotal},
    {"total_gpu_memory ", V0Field::GpuTotal},
    {"gpu_memory_utilization=", V0Field::Utilization},
    {"gpu_memory_utilization (", V0Field::Utilization},
    {"gpu_memory_utilization ", V0Field::Utilization},
    {"peak_torch_memory=", V0Field::PeakTorch},
    {"non_torch_memory=", V0Field::NonTorch},
    {"non_torch_memory takes ", V0Field::NonTorch},
    {"non_torch_memory ", V0Field::NonTorch},
    {"kv_cache_size=", V0Field::KvCache},
    {"the rest of the memory reserved for KV Cache is ", V0Field::KvCache},
    {"available_kv_cache_memory ", V0Field::KvCache},
    {"model weights take ", V0Field::Weights},
    {"PyTorch activation peak memory takes ", V0Field::Activation},
    {"PyTorch activation peak memory ", V0Field::Activation},
    {"Loading model weights took ", V0Field::Weights},
}};

// Messages (and report lines) that only vLLM V0 prints: a line whose text starts with one is V0's.
constexpr std::array<std::string_view, 14> kV0Messages = {
    "Loading model weights took ", "Memory profiling results: ", "Memory profiling takes ",
    "the current vLLM instance can use", "model weights take ", "total_gpu_memory ", "gpu_memory_utilization ",
    "non_torch_memory ", "PyTorch activation peak memory ", "available_kv_cache_memory ", "# GPU blocks: ", "GPU blocks: ",
    "Initializing an LLM engine (v", "Maximum concurrency for "};

// The refusal (worker.py raise_if_cache_size_invalid), also when pasted as "ValueError: ...".
constexpr std::string_view kV0Refusal = "maximum number of tokens that can be stored in KV cache (";

bool v0_digit(std::string_view s, std::size_t i) { return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); }

// The message of a line: without the worker prefix, V0's logger prefix, a shell prompt or a
// markdown label ("LOG: `...`" in pasted issue comments).
std::string_view v0_message(std::string_view line) {
  if (!line.empty() && line.front() == '(') {
    const auto close = line.find(") ");
    if (close != std::string_view::npos && close < 64) line.remove_prefix(close + 2);
  }
  for (const std::string_view level : {"DEBUG ", "INFO ", "WARNING ", "ERROR "})
    if (line.starts_with(level) && v0_digit(line, level.size()) && v0_digit(line, level.size() + 1) &&
        line.size() > level.size() + 15 && line[level.size() + 2] == '-') {
      const auto close = line.find("] ");
      if (close != std::string_view::npos) return line.substr(close + 2);
    }
  if (line.starts_with("$ ")) line.remove_prefix(2);
  if (const auto tick = line.find(": `"); tick != std::string_view::npos && tick < 16) {
    line.remove_prefix(tick + 3);
    if (line.ends_with('`')) line.remove_suffix(1);
  }
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  return line;
}

bool v0_is_command(std::string_view m) {
  return m.starts_with("vllm serve ") || (m.starts_with("'--") || m.starts_with("--")) ||
         m.find("vllm.entrypoints.openai.api_server") != std::string_view::npos;
}

[[noreturn]] void v0_bad_figure(const EngineLog& out, std::size_t number, std::string_view what, std::string_view text) {
  throw Error(ErrorKind::InputFile, out.origin + ":" + std::to_string(number) + ": " + std::string(what) + ": cannot read " +
                                        excerpt(text, 40));
}

// The number after `name` (spaces and "(" skipped) and its unit; "GB" is GiB in vLLM's prints.
std::optional<std::pair<std::string, std::string>> v0_number(std::string_view rest) {
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '(')) rest.remove_prefix(1);
  std::size_t n = 0;
  while (n < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[n])) || rest[n] == '.')) ++n;
  if (n == 0) return std::nullopt;
  std::size_t u = n;
  while (u < rest.size() && rest[u] == ' ') ++u;
  std::size_t e = u;
  while (e < rest.size() && std::isalpha(static_cast<unsigned char>(rest[e]))) ++e;
  return std::pair{std::string(rest.substr(0, n)), std::string(rest.substr(u, e - u))};
}

void v0_take_figure(EngineLog& out, std::size_t number, std::string_view m, const V0Figure& f, std::size_t at) {
  const auto value = v0_number(m.substr(at + f.name.size()));
  if (!value) v0_bad_figure(out, number, f.name, m.substr(at + f.name.size()));
  if (f.field == V0Field::Utilization) {
    out.args.emplace("gpu-memory-utilization", value->first);
    return;
  }
  const auto& unit = value->second;
  if (unit != "GiB" && unit != "GB" && unit != "MiB") v0_bad_figure(out, number, f.name, m.substr(at + f.name.size()));
  LoggedSize size;
  try {
    size = {parse_bytes(value->first + (unit == "MiB" ? "MiB" : "GiB"), f.name), number};
  } catch (const Error&) {
    v0_bad_figure(out, number, f.name, m.substr(at + f.name.size()));
  }
  std::optional<LoggedSize>* slot = nullptr;
  switch (f.field) {
    case V0Field::GpuTotal: slot = &out.gpu_total; break;
    case V0Field::Weights: slot = &out.weights; break;
    case V0Field::NonTorch: slot = &out.non_torch; break;
    case V0Field::Activation: slot = &out.activation; break;
    case V0Field::PeakTorch: slot = &out.peak_torch; break;
    case V0Field::KvCache: slot = &out.kv_cache; break;
    case V0Field::Utilization: break;
  }
  if (slot && !*slot) *slot = size;  // the first worker's figure
  // 0.6.4 prints torch's peak with the weights in it (worker.py: peak_memory is
  // torch.cuda.max_memory_allocated() since the profile started): the activation is the rest.
  if (f.field == V0Field::PeakTorch && out.weights && !out.activation && size.bytes >= out.weights->bytes)
    out.activation = LoggedSize{size.bytes - out.weights->bytes, number};
  ++out.recognised;
}


// `vllm serve MODEL --tensor_parallel_size 2 --gpu_memory_utilization=0.98 ...` or the quoted
// argument list of a container command ('--model' 'X' '--max-model-len' '4096').
void v0_read_command(std::string_view m, EngineLog& out) {
  const std::vector<std::string> words = log_text::command_words(m);
  for (std::size_t i = 0; i + 1 < words.size(); ++i)
    if (words[i] == "serve" && !words[i + 1].starts_with("--")) vllm_take_arg(out, "model", words[i + 1]);
  for (auto [key, value] : log_text::command_flags(words)) vllm_take_arg(out, key == "tp" ? "tensor_parallel_size" : key, value);
  ++out.recognised;
}

}  // namespace

bool vllm_v0_claims_line(std::string_view line) {
  const std::string_view m = v0_message(line);
  for (const auto start : kV0Messages)
    if (m.starts_with(start)) return true;
  return m.find(kV0Refusal) != std::string_view::npos || m.starts_with("vllm serve ") ||
         (line.find(": `") != std::string_view::npos && v0_is_command(m));
}

void vllm_v0_read_line(std::string_view line, std::size_t number, EngineLog& out) {
  const std::string_view m = v0_message(line);
  if (v0_is_command(m)) return v0_read_command(m, out);
  if (m.starts_with("Initializing an LLM engine (v")) {
    if (out.engine_version.empty()) out.engine_version = std::string(m.substr(29, m.find(')') - 29));
    ++out.recognised;
    return;
  }
  if (m.starts_with("# GPU blocks: ") || m.starts_with("GPU blocks: ")) {
    const auto n = log_text::leading_count(m.substr(m.find(": ") + 2));
    if (!n) v0_bad_figure(out, number, "GPU blocks", m);
    if (!out.gpu_blocks) {
      out.gpu_blocks = *n;
      out.gpu_blocks_line = number;
    }
    ++out.recognised;
    return;
  }
  if (const auto r = m.find(kV0Refusal); r != std::string_view::npos) {
    const auto n = log_text::leading_count(m.substr(r + kV0Refusal.size()));
    if (!n) v0_bad_figure(out, number, "KV cache tokens", m.substr(r));
    if (!out.kv_tokens) {
      out.kv_tokens = *n;
      out.kv_tokens_line = number;
    }
    // "The model's max seq len (N)": max_model_len.
    if (const auto l = m.find("max seq len ("); l != std::string_view::npos)
      if (const auto len = log_text::leading_count(m.substr(l + 13))) out.args.emplace("max-model-len", std::to_string(*len));
    ++out.recognised;
    return;
  }
  if (m.starts_with("Maximum concurrency for ")) {
    // The same message as V1 (V0: worker.py, 0.6.4+): "... per request: 1.56x".
    const auto colon = m.find(": ");
    const auto n = log_text::leading_count(m.substr(24));
    double x = 0;
    const std::string_view v = colon == std::string_view::npos ? std::string_view{} : m.substr(colon + 2);
    if (!n || std::from_chars(v.data(), v.data() + v.size(), x).ec != std::errc{}) v0_bad_figure(out, number, "Maximum concurrency", m);
    if (!out.max_concurrency) {
      out.max_concurrency = x;
      out.concurrency_tokens = *n;
      out.concurrency_line = number;
    }
    ++out.recognised;
    return;
  }
  // The memory report: every figure the line carries, once each.
  for (const auto& f : kV0Figures) {
    const auto at = m.find(f.name);
    if (at == std::string_view::npos) continue;
    // "total_gpu_memory (" and "total_gpu_memory " both match one figure: the first row wins.
    bool shadowed = false;
    for (const auto& g : kV0Figures) {
      if (&g == &f) break;
      if (g.field == f.field && m.find(g.name) == at) shadowed = true;
    }
    if (!shadowed) v0_take_figure(out, number, m, f, at);
  }
}

}  // namespace vramplan
