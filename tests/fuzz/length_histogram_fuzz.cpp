// A --input-len / --output-len hist:FILE (sim/workload_parse.cpp read_length_histogram): the same
// bytes read as the JSON form and as the CSV form (upper_edge,weight), each to its mean.
#include "fuzz_support.hpp"
#include "vramplan/sim/workload_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  for (const char* name : {"hist.json", "hist.csv"}) {
    const auto path = fuzz::write_input(data, size, name);
    fuzz::refuse_cleanly([&] { (void)sim::read_length_histogram(path).expected(); });
  }
  return 0;
}
