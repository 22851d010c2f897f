// vramplan/memory/kv_cache.hpp — KV-cache bytes per token, per layer, per GPU.
//
// Engine-independent facts (memory-model.md §3): K and V per token per layer for MHA/GQA/MQA
// (num_kv_heads x head_dim, V may have its own head dim), MLA's compressed latent
// (kv_lora_rank + qk_rope_head_dim, no V, replicated on every TP rank), sliding-window / chunked
// layers (window recorded; whether it saves memory is the engine's business), recurrent layers
// (fixed state per sequence, no per-token KV), layers that share another layer's KV (zero).
// TP: kv heads per rank = max(1, num_kv_heads / TP) (vLLM replicates heads when TP > heads).
// PP: a stage holds the layers [first, end).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/model/spec.hpp"

namespace vramplan {
class QuantCatalog;
}

namespace vramplan::memory {

//! Storage of one KV element run: `block_bytes` per `block_elems` values (fp16: 2 per 1;
//! fp8: 1 per 1; q8_0: 34 per 32 — the block scales included).
struct KvDtype {
  std::string name;  //!< canonical quant-format name ("bf16", "fp8-e4m3", "Q8_0")
  std::uint64_t block_elems = 1;
  std::uint64_t block_bytes = 2;
};

//! Resolves a --kv-cache-dtype / -ctk value: "auto" -> `model_dtype`; "fp8" -> fp8-e4m3;
//! any name or alias of data/quant_formats.json with a Block layout. Throws Error(UnknownName).
KvDtype resolve_kv_dtype(std::string_view requested, std::string_view model_dtype,
                         const QuantCatalog& quant);

//! Bytes of `elems` values in `dtype` (whole blocks).
std::uint64_t kv_bytes(const KvDtype& dtype, std::uint64_t elems);

struct LayerKv {
  int layer = 0;
  LayerAttention kind = LayerAttention::Full;
  std::uint64_t k_elems = 0;          //!< K values per token on this GPU
  std::uint64_t v_elems = 0;          //!< V values per token on this GPU
  std::uint64_t bytes_per_token = 0;  //!< K + V bytes per token on this GPU
  std::uint64_t window = 0;           //!< sliding window / attention chunk (tokens); 0 = full
  std::uint64_t state_bytes = 0;      //!< recurrent layers: bytes per sequence on this GPU
  bool shared = false;                //!< reuses another layer's KV
};

struct KvLayout {
  std::vector<LayerKv> layers;
  std::uint64_t bytes_per_token = 0;      //!< sum over layers (sliding layers counted in full)
  std::uint64_t state_bytes_per_seq = 0;  //!< recurrent state, per sequence
  std::uint64_t kv_heads_per_gpu = 0;
  std::string explain;                    //!< "KV/token = 2 x 32 layers x 8 kv_heads x 128 x 2 B = 131,072 B"
};

//! How an fp8 cache stores DeepSeek sparse attention's latent: "fp8_ds_mla" rows (fp8 values, an
//! fp32 scale per 128, the rope part in bf16: 656 B) or plain fp8 (576 B: SGLang's trtllm NSA
//! backend, memory/sglang_dsa.hpp).
enum class DsaFp8Latent { Scaled, Plain };

//! KV per token for the layers [first_layer, end_layer) on one of `tp` tensor-parallel ranks.
//! Throws Error(Usage) when TP cannot split the KV heads (neither divides the other), with
//! the engine's wording.
KvLayout kv_layout(const ModelArch& arch, const KvDtype& dtype, std::uint64_t tp,
                   std::uint64_t first_layer, std::uint64_t end_layer,
                   DsaFp8Latent dsa_latent = DsaFp8Latent::Scaled);

//! The whole model on one rank of `tp`.
KvLayout kv_layout(const ModelArch& arch, const KvDtype& dtype, std::uint64_t tp,
                   DsaFp8Latent dsa_latent = DsaFp8Latent::Scaled);

//! Per-layer attention kinds, defaulting to Full (Mla when kv_lora_rank > 0) when the arch
//! lists none.
std::vector<LayerAttention> layer_kinds(const ModelArch& arch);

}  // namespace vramplan::memory
