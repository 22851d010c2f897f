// llama.cpp KV cache sizing (llama_kv_cache, llama_kv_cache_iswa).
#include <algorithm>
#include <array>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/llamacpp.hpp"
#include "vramplan/model/recurrent_state.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan::llamacpp {
namespace {

enum class CacheKind { Base, Swa, NoKv };

CacheKind cache_kind(LayerAttention a) {
  switch (a) {
    case LayerAttention::Full:
    case LayerAttention::Mla:
      return CacheKind::Base;
    case LayerAttention::Sliding:
    case LayerAttention::Chunked:  // llama.cpp keeps chunked layers in the SWA cache (swa_type CHUNKED)
      return CacheKind::Swa;
    case LayerAttention::Recurrent:
    case LayerAttention::None:
      return CacheKind::NoKv;
  }
  return CacheKind::NoKv;
}

std::uint64_t swa_window(const ModelArch& arch) {
  for (auto a : arch.layer_attention)
    if (a == LayerAttention::Chunked && arch.attention_chunk_size > 0) return arch.attention_chunk_size;
  return arch.sliding_window;
}

std::uint64_t cache_bytes(const QuantCatalog& quant, const std::string& type, std::uint64_t rows,
                          std::uint64_t row_values, const std::string& what) {
  if (row_values == 0 || rows == 0) return 0;
  const std::array<std::uint64_t, 2> shape{rows, row_values};
  // ggml_row_size: a q8_0 row of 512 values is 16 blocks x 34 B; tensor_bytes() refuses rows that
  // are not whole blocks, as ggml asserts.
  return tensor_bytes(quant.get(type), shape, what);
}

}  // namespace

KvRow kv_row(const ModelArch& arch, int layer) {
  if (arch.kv_lora_rank > 0) {
    // MLA: the cache holds the compressed latent plus the shared rope key; V is read out of the
    // same row (has_v = !is_mla in llama_kv_cache).
    return {arch.kv_lora_rank + arch.qk_rope_head_dim, 0};
  }
  // llama_kv_cache sizes each layer's K / V rows by hparams.n_embd_k_gqa(il) / n_embd_v_gqa(il)
  // (llama-hparams.cpp): n_head_kv(il) x n_embd_head_k(il), the head size of the layer's kind
  // (key_length_swa on a sliding layer). Gemma 4's full layers have their own head size and KV heads
  // (ModelArch::layer_head_dim / layer_kv_heads); a K=V layer still stores a V row (gemma4.cpp:
  // Vcur = Kcur when attn_v is absent, and build_attn writes it).
  const auto l = static_cast<std::size_t>(std::max(layer, 0));
  const std::uint64_t kv_heads = arch.layer_kv_heads(l);
  return {checked_mul(kv_heads, arch.layer_head_dim(l), "n_embd_k_gqa"),
          checked_mul(kv_heads, arch.layer_v_head_dim(l), "n_embd_v_gqa")};
}

// DeepSeek sparse attention (llama_kv_cache_dsa): beside the MLA cache, a second llama_kv_cache holds
// the lightning indexer's keys, one head of index_head_dim per token for each layer with an indexer
// (filter_lid), in the K type; like the MLA cache it stores no V.
void add_indexer_cache(const ModelArch& arch, const Context& c, const Settings& s, const QuantCatalog& quant,
                       std::vector<KvCache>& out) {
  if (arch.index_head_dim == 0) return;
  KvCache kv;
  kv.role = "indexer";
  kv.cells = c.n_ctx_seq;
  kv.streams = c.n_streams;
  kv.type_k = s.type_k;
  kv.type_v = s.type_v;
  const std::uint64_t rows = checked_mul(c.n_ctx_seq, c.n_streams, "KV cells");
  for (std::uint64_t l = 0; l < arch.num_layers; ++l) {
    if (l < arch.layer_has_indexer.size() && !arch.layer_has_indexer[l]) continue;
    kv.layers.push_back(static_cast<int>(l));
    kv.k_bytes = checked_add(kv.k_bytes, cache_bytes(quant, s.type_k, rows, arch.index_head_dim,
                                                     "indexer cache layer " + std::to_string(l)));
  }
  out.push_back(std::move(kv));
}

std::vector<KvCache> kv_caches(const ModelArch& arch, const Context& c, const Settings& s,
                               const QuantCatalog& quant) {
  std::vector<int> base_layers, swa_layers;
  for (std::uint64_t i = 0; i < arch.num_layers; ++i) {
    const auto a = i < arch.layer_attention.size() ? arch.layer_attention[i] : LayerAttention::Full;
    const auto kind = cache_kind(a);
    // A layer that reads another layer's cache (gemma3n from n_layer_kv_from_start on) has none:
    // llama_kv_cache's layer filter skips it (hparams.has_kv).
    if (i < arch.kv_shared_with.size() && arch.kv_shared_with[i] >= 0) continue;
    if (kind == CacheKind::Base) base_layers.push_back(static_cast<int>(i));
    if (kind == CacheKind::Swa) swa_layers.push_back(static_cast<int>(i));
  }

  auto make = [&](std::string role, std::uint64_t cells, const std::vector<int>& layers) {
    KvCache kv;
    kv.role = std::move(role);
    kv.cells = cells;
    kv.streams = c.n_streams;
    kv.layers = layers;
    kv.type_k = s.type_k;
    kv.type_v = s.type_v;
    const std::uint64_t rows = checked_mul(cells, c.n_streams, "KV cells");
    for (int l : layers) {
      const KvRow row = kv_row(arch, l);
      const std::string what = "KV cache layer " + std::to_string(l);
      kv.k_bytes = checked_add(kv.k_bytes, cache_bytes(quant, s.type_k, rows, row.k_values, what + " K"));
      kv.v_bytes = checked_add(kv.v_bytes, cache_bytes(quant, s.type_v, rows, row.v_values, what + " V"));
    }
    return kv;
  };

  std::vector<KvCache> out;
  if (swa_layers.empty()) {
    out.push_back(make("", c.n_ctx_seq, base_layers));
    add_indexer_cache(arch, c, s, quant, out);
    return out;
  }
  const std::uint64_t window = swa_window(arch);
  if (window == 0) throw_usage("model has sliding-window layers but no sliding_window size");
  // llama_kv_cache_iswa: the SWA cache keeps the window (per sequence when unified) plus one
  // micro-batch, padded to 256; --swa-full gives it the full size.
  const std::uint64_t seqs_in_stream = s.kv_unified ? c.n_seq_max : 1;
  std::uint64_t swa_cells = round_up(
      std::min(c.n_ctx_seq, checked_add(checked_mul(window, seqs_in_stream), c.n_ubatch)), c.swa_pad, "SWA cells");
  if (s.swa_full) swa_cells = c.n_ctx_seq;
  out.push_back(make("non-SWA", c.n_ctx_seq, base_layers));
  out.push_back(make("SWA", swa_cells, swa_layers));
  return out;
}

std::optional<RecurrentCache> recurrent_cache(const ModelArch& arch, const Context& c) {
  RecurrentCache rs;
  // Falcon-H1 keeps a state in every layer beside its KV (llama-model.cpp create_memory: both
  // filters of its llama_memory_hybrid accept every layer).
  for (std::uint64_t i = 0; i < arch.num_layers && i < arch.layer_attention.size(); ++i)
    if (arch.recurrent_in_every_layer || arch.layer_attention[i] == LayerAttention::Recurrent)
      rs.layers.push_back(static_cast<int>(i));
  if (rs.layers.empty()) return std::nullopt;
  const auto& sh = arch.recurrent_shape;
  if (sh.ssm_heads == 0 || sh.conv_channels == 0)
    throw_usage("--engine llamacpp: the recurrent layers' state shape (conv channels, state heads) is unknown, so "
                "llama.cpp's recurrent state cache cannot be sized");
  // llama-hparams.cpp n_embd_r: (ssm_d_conv - 1) x (ssm_d_inner + 2 ssm_n_group ssm_d_state); n_embd_s:
  // ssm_d_state x ssm_d_inner: the state of one unsplit (TP 1) layer.
  const RecurrentStateElems elems = recurrent_state_elems(arch, 1);
  rs.r_values = elems.conv;
  rs.s_values = elems.ssm;
  rs.cells = std::max<std::uint64_t>(1, c.n_seq_max);
  const std::uint64_t layers = rs.layers.size();
  rs.r_bytes = checked_mul(checked_mul(checked_mul(rs.r_values, rs.cells), 4), layers, "recurrent state");
  rs.s_bytes = checked_mul(checked_mul(checked_mul(rs.s_values, rs.cells), 4), layers, "recurrent state");
  return rs;
}

}  // namespace vramplan::llamacpp
