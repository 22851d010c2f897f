// Parsing sizes sits on every command line; keep it far below a microsecond.
#include <benchmark/benchmark.h>

#include "vramplan/core/bytes.hpp"

static void BM_ParseBytes(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(vramplan::parse_bytes("79.22GiB"));
}
BENCHMARK(BM_ParseBytes);

BENCHMARK_MAIN();
