// data/prices.json attached to the real GPU catalogue (GpuCatalog::attach_prices).
#include "fuzz_support.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  const auto path = fuzz::write_input(data, size, "prices.json");
  return fuzz::refuse_cleanly([&] {
    auto catalog = GpuCatalog::load(fuzz::data_file("gpus.json"));
    catalog.attach_prices(path);
  });
}
