// alloc_probe.hpp — how cudaMalloc spends device memory: the granularity it rounds to (read from
// the change in cudaMemGetInfo free, sizes 1 B to 1 GiB), the largest single allocation, the
// largest total in many allocations (all freed again), and how a cudaMallocAsync pool reserves
// and releases. Plain device allocations only, never managed memory.
#pragma once

#include "probe_env.hpp"

namespace vramplan::probe {

struct AllocResult {
  Bytes granularity;      //!< smallest non-zero change of free memory for one allocation
  Bytes largest_single;
  Bytes largest_total;
};

AllocResult probe_allocation(ProbeEnv& env);

}  // namespace vramplan::probe
