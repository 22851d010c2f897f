// A request trace (sim/trace_reader.cpp open_trace): JSONL, every request read to the end.
#include "fuzz_support.hpp"
#include "vramplan/sim/trace_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  const auto path = fuzz::write_input(data, size, "trace.jsonl");
  return fuzz::refuse_cleanly([&] {
    const auto source = sim::open_trace(path);
    while (source->next()) {
    }
  });
}
