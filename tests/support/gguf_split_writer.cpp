#include "support/gguf_split_writer.hpp"

#include <cstdint>
#include <string>

namespace vramplan::test {
namespace {

GgufKv kv_u16_split(std::string key, std::uint16_t v) {  // GGUF type 2 = u16, little-endian
  return kv_raw(std::move(key), 2, std::string{static_cast<char>(v & 0xFF), static_cast<char>(v >> 8)});
}

}  // namespace

std::vector<GgufDesc> split_gguf(const GgufDesc& whole, const std::vector<std::size_t>& first_tensor) {
  std::vector<GgufDesc> out;
  const auto count = static_cast<std::uint16_t>(first_tensor.size());
  for (std::size_t k = 0; k < first_tensor.size(); ++k) {
    GgufDesc d;
    d.alignment = whole.alignment;
    if (k == 0) d.kvs = whole.kvs;
    d.kvs.push_back(kv_u16_split("split.no", static_cast<std::uint16_t>(k)));
    d.kvs.push_back(kv_u16_split("split.count", count));
    d.kvs.push_back(kv_i32("split.tensors.count", static_cast<std::int32_t>(whole.tensors.size())));
    const std::size_t end = k + 1 < first_tensor.size() ? first_tensor[k + 1] : whole.tensors.size();
    for (std::size_t t = first_tensor[k]; t < end; ++t) d.tensors.push_back(whole.tensors[t]);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace vramplan::test
