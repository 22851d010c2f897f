// data/quant_formats.json (quant/format.cpp QuantCatalog::load).
#include "fuzz_support.hpp"
#include "vramplan/quant/format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  const auto path = fuzz::write_input(data, size, "quant_formats.json");
  return fuzz::refuse_cleanly([&] { QuantCatalog::load(path); });
}
