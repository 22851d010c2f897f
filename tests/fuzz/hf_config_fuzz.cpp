// An HF config.json -> ModelSpec (model/hf_config.cpp and every family handler).
#include "fuzz_support.hpp"
#include "vramplan/model/hf_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  const auto path = fuzz::write_input(data, size, "config.json");
  return fuzz::refuse_cleanly([&] { model_from_hf_config_file(path, {}); });
}
