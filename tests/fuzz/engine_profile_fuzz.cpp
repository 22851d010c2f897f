// An engine profile file, data/engines/<engine>.json (memory/engine_data.cpp), read as vLLM's.
#include "fuzz_support.hpp"
#include "vramplan/memory/engine_data.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  const auto path = fuzz::write_input(data, size, "data/engines/vllm.json");
  return fuzz::refuse_cleanly([&] { memory::EngineProfileData::load(path.parent_path().parent_path(), "vllm", ""); });
}
