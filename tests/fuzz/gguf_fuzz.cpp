// GGUF header reader and GGUF -> ModelSpec (io/gguf_reader.cpp, io/gguf_model.cpp).
#include "fuzz_support.hpp"
#include "vramplan/io/gguf.hpp"
#include "vramplan/model/gguf_model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  const auto path = fuzz::write_input(data, size, "model.gguf");
  return fuzz::refuse_cleanly([&] { model_from_gguf_file(path, fuzz::quant_formats()); });
}
