#include "vramplan/memory/vllm_cuda_graphs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace vramplan::memory {

std::uint64_t vllm_capture_size_count(std::uint64_t max_num_seqs, std::uint64_t max_num_batched_tokens) {
  const std::uint64_t max_size = std::min<std::uint64_t>({2 * max_num_seqs, 512, max_num_batched_tokens});
  std::uint64_t n = 0;
  for (std::uint64_t s : {1, 2, 4}) n += s <= max_size ? 1 : 0;
  for (std::uint64_t s = 8; s < 256 && s <= max_size; s += 8) ++n;
  for (std::uint64_t s = 256; s <= max_size; s += 16) ++n;
  return n;
}

Component vllm_cuda_graphs(std::uint64_t layers, std::uint64_t max_num_seqs,
                           std::uint64_t max_num_batched_tokens, const VllmGraphCoefficients& c) {
  const std::uint64_t sizes = vllm_capture_size_count(max_num_seqs, max_num_batched_tokens);
  const double bytes = c.base_bytes + c.per_piece_bytes * static_cast<double>(sizes * layers);
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.3f GiB + %llu captured sizes x %llu layers x %.3f MiB",
                c.base_bytes / static_cast<double>(kGiB), static_cast<unsigned long long>(sizes),
                static_cast<unsigned long long>(layers), c.per_piece_bytes / static_cast<double>(kMiB));
  return {"overhead.cuda_graphs", Bytes(static_cast<std::uint64_t>(std::llround(std::max(0.0, bytes)))),
          std::string("CUDA graph pool (estimate, fitted on vLLM 0.19 logs; captured after the KV budget) = ") + buf};
}

}  // namespace vramplan::memory
