// Engine start-up logs: pick the reader whose line shape the log has, feed it every line.
#include "vramplan/io/engine_log.hpp"

#include <array>
#include <fstream>
#include <sstream>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/input_file.hpp"

namespace vramplan {

namespace {

// One row per engine whose start-up log vramplan reads; the first reader that claims a line
// reads the whole log.
const std::array<LogReader, 5>& log_readers() {
  static const std::array<LogReader, 5> readers = {{
      {"vllm", "vLLM", "'Model loading took', 'Memory profiling takes', 'Available KV cache memory', 'GPU KV cache size', "
                       "'Graph capturing finished', 'Loading model weights took', 'Memory profiling results', "
                       "'# GPU blocks'", vllm_claims_line, vllm_read_line},
      {"sglang", "SGLang", "'Load weight begin/end', 'KV Cache is allocated', 'Memory pool end', 'max_total_num_tokens='",
       sglang_claims_line, sglang_read_line},
      // Before llama.cpp: an ollama log carries llama.cpp's lines too, behind ollama's prefixes.
      {"ollama", "ollama", "'CUDA0 buffer size', 'CUDA0 KV buffer size', 'CUDA0 compute buffer size' (the llama.cpp "
                           "runner's lines; ollama's own estimate alone is not a figure of the deployment)",
       ollama_claims_line, ollama_read_line, ollama_also_reads},
      {"llamacpp", "llama.cpp", "'CUDA0 buffer size', 'CUDA0 KV buffer size', 'CUDA0 compute buffer size'",
       llamacpp_claims_line, llamacpp_read_line},
      {"trtllm", "TensorRT-LLM", "'Memory usage when calculating max tokens in paged kv cache', 'Number of blocks in KV cache primary pool', "
                                 "'Allocated ... for max tokens in paged KV cache', 'Using N tokens in paged KV cache', 'Loaded engine size'",
       trtllm_claims_line, trtllm_read_line},
  }};
  return readers;
}

// A log far larger than any start-up log (a DEBUG vLLM start-up is under 1 MiB) is refused
// before it is read: the whole file is held in memory.
constexpr std::uintmax_t kMaxLogBytes = 64ull << 20;

std::string_view trim_line_end(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  return line;
}

}  // namespace

EngineLog parse_engine_log(std::string_view text, std::string_view origin) {
  EngineLog out;
  out.origin = std::string(origin);
  const LogReader* reader = nullptr;
  std::size_t first_nonempty = 0;
  std::string_view first_text;
  std::size_t number = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view line = trim_line_end(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    ++number;
    if (line.empty()) continue;
    if (first_nonempty == 0) {
      first_nonempty = number;
      first_text = line;
    }
    if (!reader)
      for (const auto& r : log_readers())
        if (r.claims(line)) {
          reader = &r;
          out.engine = std::string(r.engine);
          break;
        }
    if (reader && (reader->claims(line) || (reader->also_reads && reader->also_reads(line)))) {
      // A line counts once however many figures it gives (vLLM's "Memory profiling takes ..."
      // states the activation peak and non-torch): recognised lines never exceed the lines.
      const std::size_t before = out.recognised;
      reader->read(line, number, out);
      if (out.recognised > before) out.recognised = before + 1;
    }
  }
  out.lines = number;
  if (!reader) {
    if (first_nonempty == 0) throw UnrecognisedLog(std::string(origin) + ": empty log, no recognised start-up lines");
    throw UnrecognisedLog(
                std::string(origin) + ":" + std::to_string(first_nonempty) + ": not a line of a vLLM, SGLang, llama.cpp, ollama or TensorRT-LLM start-up log (the formats reconcile reads): " +
                    excerpt(first_text, 60));
  }
  // Each kept figure is the first of its kind: two start-ups in one file would mix their figures.
  for (const auto* starts : {&out.banner_lines, &out.api_version_lines})
    if (starts->size() > 1)
      throw_input(std::string(origin), "", std::to_string(starts->size()) + " start-ups in one log (the version banner at lines " +
                                               std::to_string(starts->front()) + " and " + std::to_string((*starts)[1]) +
                                               "): reconcile reads one; cut the log to a single start-up");
  if (!out.has_figures())
    throw UnrecognisedLog(
                std::string(origin) + ": no recognised start-up lines (" + std::string(reader->label) +
                    " log lines, but none of " + std::string(reader->figures) + ")");
  return out;
}

EngineLog read_engine_log(const std::filesystem::path& file) {
  require_regular_file(file);
  const auto size = std::filesystem::file_size(file);
  if (size > kMaxLogBytes)
    throw Error(ErrorKind::InputFile, file.string() + ": " + std::to_string(size) + " bytes, above the 64 MiB limit for a start-up log (cut it to the start-up)");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(ErrorKind::Io, file.string() + ": cannot be opened");
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse_engine_log(buf.str(), file.string());
}

}  // namespace vramplan
