// A request trace (sim/trace_reader.cpp open_trace): the same bytes read as JSONL and as CSV (the
// reader picks the form by the extension), every request read to the end.
#include "fuzz_support.hpp"
#include "vramplan/sim/trace_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  for (const char* name : {"trace.jsonl", "trace.csv"}) {
    const auto path = fuzz::write_input(data, size, name);
    fuzz::refuse_cleanly([&] {
      const auto source = sim::open_trace(path);
      while (source->next()) {
      }
    });
  }
  return 0;
}
