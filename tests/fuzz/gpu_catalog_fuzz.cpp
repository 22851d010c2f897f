// data/gpus.json (hardware/gpu_catalog_loader.cpp): the skimmed structure, then every entry.
#include "fuzz_support.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  const auto path = fuzz::write_input(data, size, "gpus.json");
  return fuzz::refuse_cleanly([&] { GpuCatalog::load(path).all(); });
}
