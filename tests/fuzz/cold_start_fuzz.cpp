// data/cold_start.json (sim/cold_start.cpp cold_start_compile_seconds), then the value in use: a
// fresh vLLM server of an 8-expert top-2 model charging first uses (ColdStartState::charge).
// The scratch directory is the data root; the input is its data/cold_start.json.
#include <cstdint>

#include "fuzz_support.hpp"
#include "vramplan/sim/cold_start.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  fuzz::write_input(data, size, "data/cold_start.json");
  const DataRoot root{fuzz::scratch_dir()};
  return fuzz::refuse_cleanly([&] {
    const double compile_s = sim::cold_start_compile_seconds(root);
    // max_num_seqs 256, max_num_batched_tokens 8192: graphs up to 512 tokens, so 8 tokens replay
    // one; 1000, 9000 and 9001 (another divisibility) compile; the second 9000 is compiled.
    sim::ColdStartState state = sim::vllm_fresh_server(8, 2, 256, 8192, false, compile_s);
    for (std::uint64_t tokens : {8u, 1000u, 9000u, 9001u, 9000u}) (void)state.charge(tokens);
  });
}
