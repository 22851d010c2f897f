// One safetensors file's header (io/safetensors_reader.cpp read_safetensors_file).
#include "fuzz_support.hpp"
#include "vramplan/io/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  const auto path = fuzz::write_input(data, size, "model.safetensors");
  return fuzz::refuse_cleanly([&] { read_safetensors_file(path, fuzz::quant_formats()); });
}
