// An engine start-up log (io/engine_log.cpp read_engine_log): every line through the reader.
#include "fuzz_support.hpp"
#include "vramplan/io/engine_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  const auto path = fuzz::write_input(data, size, "engine.log");
  return fuzz::refuse_cleanly([&] { read_engine_log(path); });
}
