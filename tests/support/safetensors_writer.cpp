#include "support/safetensors_writer.hpp"

#include <nlohmann/json.hpp>

#include "support/gguf_writer.hpp"

namespace vramplan::test {

std::string build_safetensors(const std::vector<SafetensorsEntry>& entries) {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  std::uint64_t running = 0, data_end = 0;
  for (const auto& e : entries) {
    const auto [begin, end] = e.offsets.value_or(std::pair{running, running + e.nbytes});
    header[e.name] = {{"dtype", e.dtype}, {"shape", e.shape}, {"data_offsets", {begin, end}}};
    running = end;
    data_end = std::max(data_end, end);
  }
  std::string text = header.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');
  return build_safetensors_raw(text, data_end);
}

std::string build_safetensors_raw(const std::string& header, std::uint64_t data_bytes,
                                  std::optional<std::uint64_t> declared_length) {
  ByteWriter w;
  w.u64(declared_length.value_or(header.size())).raw(header);
  std::string out = w.bytes();
  out.resize(out.size() + data_bytes, '\0');
  return out;
}

}  // namespace vramplan::test
