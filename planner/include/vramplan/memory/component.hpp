// vramplan/memory/component.hpp — one named piece of memory with the formula that produced it.
//
// Every memory pass (weights, KV cache, activation peak, runtime overhead) returns Components:
// bytes plus an `explain` line with the numbers filled in, e.g.
//   "KV/token = 2 x 80 layers x 8 kv_heads x 128 x 2 B = 327,680 B".
#pragma once

#include <string>
#include <vector>

#include "vramplan/core/bytes.hpp"

namespace vramplan::memory {

struct Component {
  std::string name;     //!< stable key ("weights", "kv_cache", "non_torch", "cuda_graphs", ...)
  Bytes bytes;
  std::string explain;  //!< the formula with its numbers
  //! Allocated after the engine sizes its KV pool, on top of the pool's budget (vLLM 0.19's CUDA
  //! graphs): an error in it adds to what the engine holds instead of shrinking the pool.
  bool outside_kv_budget = false;
};

//! Sum of the parts (checked).
Bytes sum_bytes(const std::vector<Component>& parts);

//! Throws Error(Internal) unless the parts add up to `total` exactly — the consistency check
//! every plan runs before it is returned.
void check_parts_sum(const std::vector<Component>& parts, Bytes total, const std::string& what);

//! "12,345,678 B" style integer with thousands separators (for explain strings).
std::string grouped(std::uint64_t n);

}  // namespace vramplan::memory
