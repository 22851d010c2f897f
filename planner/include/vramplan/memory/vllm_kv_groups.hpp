// vramplan/memory/vllm_kv_groups.hpp — vLLM V1's block pool: hybrid-allocator groups, blocks,
// printed token capacity and max concurrency (engine-mechanisms.md item 3;
// vllm/v1/core/kv_cache_utils.py, vllm/v1/kv_cache_interface.py).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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
//! (--disable-hybrid-kv-cache-manager). `mamba_blocks` > 0: recurrent layers are paged as vLLM's
//! MambaSpec, each request holding that many pages in every recurrent group (1 with
//! mamba_cache_mode "none", 2 with "align"); 0: recurrent state is left out of the pool.
VllmKvGroups vllm_kv_groups(const KvLayout& layout, std::uint64_t block_size,
                            std::uint64_t max_model_len, std::uint64_t max_num_batched_tokens,
                            bool hybrid, std::uint64_t mamba_blocks = 0);

//! The "GPU KV cache size: N tokens" line (kv_cache_utils.py _report_kv_cache_config). Up to 0.20:
//! num_blocks // groups x the smallest block size. From 0.21: int(max_concurrency x max_model_len),
//! max_concurrency = num_blocks / the blocks one max_model_len request needs, which counts a
//! sliding-window group's window only ("handles hybrid layouts correctly"). `release` "" = current.
std::uint64_t vllm_printed_kv_tokens(std::string_view release, std::uint64_t num_blocks, const VllmKvGroups& groups,
                                     std::uint64_t block_size, std::uint64_t max_model_len);

//! Attention + Mamba / linear-attention hybrids (vllm/model_executor/models/config.py
//! HybridAttentionMambaModelConfig.verify_and_update_config): the attention block size is raised
//! to the smallest multiple of 16 tokens whose page (one layer, this GPU) holds one recurrent
//! layer's state, and the state page is padded to that attention page.
struct VllmMambaPages {
  std::uint64_t attn_bytes_per_token = 0;  //!< one attention layer, K+V, this GPU
  std::uint64_t state_bytes = 0;           //!< one recurrent layer's conv + SSM state, this GPU
  std::uint64_t block_size = 0;            //!< attention block size vLLM settles on
  std::uint64_t page_bytes = 0;            //!< block_size x attn_bytes_per_token (state padded to it)
  std::uint64_t recurrent_layers = 0;
  std::string explain;
};
//! nullopt when the layout has no recurrent state or no attention layer. A --block-size at or
//! above the aligned size is kept; a smaller one is raised.
std::optional<VllmMambaPages> vllm_mamba_pages(const KvLayout& layout,
                                               std::optional<std::uint64_t> user_block_size);

}  // namespace vramplan::memory
