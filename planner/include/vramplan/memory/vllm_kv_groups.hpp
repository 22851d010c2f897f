// vramplan/memory/vllm_kv_groups.hpp — vLLM V1's block pool: hybrid-allocator groups, blocks,
// printed token capacity and max concurrency (engine-mechanisms.md item 3;
// vllm/v1/core/kv_cache_utils.py, vllm/v1/kv_cache_interface.py).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/memory/kv_cache.hpp"

namespace vramplan::memory {

struct VllmKvGroups {
  std::uint64_t group_size = 0;        //!< layers per group (smallest count of any layer type)
  std::uint64_t num_groups = 0;        //!< sum over types of ceil(count / group_size)
  std::uint64_t page_bytes_per_layer = 0;  //!< block_size x largest per-layer bytes/token
  std::uint64_t block_bytes = 0;       //!< page x group_size: what one block id costs
  std::uint64_t blocks_per_request = 0;  //!< for one max_model_len request, all groups
  std::uint64_t bytes_one_request = 0;   //!< sum over layers of their max memory usage
  std::string explain;
};

//! `hybrid` false = sliding / chunked layers allocated as full attention
//! (--disable-hybrid-kv-cache-manager).
VllmKvGroups vllm_kv_groups(const KvLayout& layout, std::uint64_t block_size,
                            std::uint64_t max_model_len, std::uint64_t max_num_batched_tokens,
                            bool hybrid);

}  // namespace vramplan::memory
