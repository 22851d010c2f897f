// vramplan/model/dsa_cache_rows.hpp — the two rows DeepSeek sparse attention (DeepSeek-V3.2,
// GLM-5) caches per token and layer, in bytes, as the engines lay them out.
//
// vLLM v0.11.0 v1/attention/backends/mla/flashmla_sparse.py and deepseek_v2.py Indexer; SGLang
// 0.5.9 mem_cache/memory_pool.py NSATokenToKVPool:
//   latent, fp8 cache ("fp8_ds_mla"): kv_lora_rank fp8 values + one fp32 scale per 128 + the rope
//                                     part in bf16 (512 + 16 + 128 = 656 B); a bf16 cache keeps
//                                     the plain (kv_lora_rank + rope) x 2 B
//   indexer key:                      index_head_dim fp8 values + one fp32 scale per 128, whatever
//                                     the KV dtype (132 B)
// The memory plan sizes the pool with them; the performance model reads them.
#pragma once

#include <cstdint>

#include "vramplan/model/spec.hpp"

namespace vramplan {

inline constexpr std::uint64_t kDsaQuantBlock = 128;

inline std::uint64_t fp8_ds_mla_row(const ModelArch& a) {
  return a.kv_lora_rank + a.kv_lora_rank / kDsaQuantBlock * 4 + a.qk_rope_head_dim * 2;
}

inline std::uint64_t dsa_indexer_row(const ModelArch& a) {
  return a.index_head_dim + a.index_head_dim / kDsaQuantBlock * 4;
}

}  // namespace vramplan
