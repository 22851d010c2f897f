// A sharded checkpoint's model.safetensors.index.json (io/safetensors_reader.cpp
// read_safetensors_dir) beside one valid shard, model-00001-of-00001.safetensors, holding
// "a" (BF16 [2]) and "b" (F32 [1]).
#include <string>

#include "fuzz_support.hpp"
#include "vramplan/io/safetensors.hpp"

namespace {

std::string valid_shard() {
  const std::string header =
      R"({"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  std::string out;
  for (int k = 0; k < 8; ++k) out += static_cast<char>((header.size() >> (8 * k)) & 0xFF);
  return out + header + std::string(8, '\0');
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  static const auto shard = [] {
    const std::string bytes = valid_shard();
    return fuzz::write_input(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(),
                             "ckpt/model-00001-of-00001.safetensors");
  }();
  const auto index = fuzz::write_input(data, size, "ckpt/model.safetensors.index.json");
  return fuzz::refuse_cleanly([&] { read_safetensors_dir(index.parent_path(), fuzz::quant_formats()); });
}
