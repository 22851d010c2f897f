// vramplan/memory/sglang_dsa.hpp — how an SGLang release lays out and sizes the token pool of a
// DeepSeek sparse attention model (DeepSeek-V3.2, GLM-5: the config has index_topk).
//
// Every layer keeps the MLA latent row and, where it runs its own indexer, a 132 B indexer key
// (model/dsa_cache_rows.hpp). What the release ALLOCATES per token and what it DIVIDES the pool
// budget by (profile_max_num_token's cell size) differed until 0.5.17, read from every PyPI wheel
// 0.5.3rc0-0.5.23 (docs/engines.md, "SGLang and DeepSeek sparse attention"):
//   allocated latent, fp8 cache: fp8_ds_mla 656 B (mem_cache/memory_pool.py NSATokenToKVPool), or
//       plain 576 B under the trtllm NSA backend, SGLang's default for an fp8 cache on compute
//       capability 10+ from 0.5.10 (server_args.py _set_default_nsa_backends);
//   allocated latent, bf16 cache: 576 x 2 B;
//   budgeted: 0.5.3rc2-0.5.3 (kv_lora_rank + rope) x element size, no indexer (model_runner.py
//       profile_max_num_token); 0.5.3.post1-0.5.16 the same + 132 B of indexer; from 0.5.17 what
//       is allocated (pool_configurator.py _compute_cell_size, calculate_mla_kv_cache_dim).
// The token count is budget / cell size, so a release that budgets less than it allocates holds
// more tokens than its budget pays for: the pool outgrows the mem_fraction_static share.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/memory/kv_cache.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::memory {

//! An SGLang release as the DSA rules compare it: its numbers, a two-part one ("0.5", or none
//! given) standing for the newest release of its series, and whether it is a 0.5.3 before .post1.
struct SglangRelease {
  std::vector<std::uint64_t> numbers;  //!< empty = the newest release
  bool before_053_post1 = false;
  static SglangRelease parse(std::string_view release, bool assumed);
  bool at_least(std::vector<std::uint64_t> v) const;
};

struct SglangDsaPool {
  DsaFp8Latent fp8_latent = DsaFp8Latent::Scaled;  //!< how an fp8 cache stores the latent
  std::uint64_t page_size = 64;                    //!< tokens per page (the NSA pool asserts it)
  //! mem_fraction_static the release forces for these models whatever was asked (0.5.3: 0.8), 0 = none.
  double forced_mem_fraction = 0;
};

//! The release's layout rules for a DSA model on a GPU of `vendor` and compute capability major
//! `cc_major` (0 = unknown).
SglangDsaPool sglang_dsa_pool(const SglangRelease& release, std::string_view vendor, int cc_major);

//! Bytes per token the release divides the pool budget by, for the layout it allocates (`kv`).
//! Equal to kv.bytes_per_token from 0.5.17; `explain` says how it differs before.
std::uint64_t sglang_dsa_budget_bytes(const SglangRelease& release, const ModelArch& arch, const KvLayout& kv,
                                      std::uint64_t element_bytes, std::string& explain);

}  // namespace vramplan::memory
