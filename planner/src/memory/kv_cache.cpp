#include "vramplan/memory/kv_cache.hpp"

#include <map>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/component.hpp"
#include "vramplan/model/dsa_cache_rows.hpp"
#include "vramplan/model/recurrent_state.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan::memory {

KvDtype resolve_kv_dtype(std::string_view requested, std::string_view model_dtype,
                         const QuantCatalog& quant) {
  std::string_view name = requested;
  if (name.empty() || name == "auto") name = model_dtype;
  if (name == "fp8" || name == "fp8_e4m3") name = "fp8-e4m3";  // vLLM: fp8 means e4m3
  const QuantFormat* f = quant.find(name);
  if (f == nullptr || f->layout != QuantLayout::Block)
    throw_unknown("unknown KV-cache dtype '" + std::string(requested) +
                  "' (auto, fp16, bf16, fp32, fp8, fp8_e4m3, fp8_e5m2, int8, q8_0, q4_0, ...)");
  return {f->name, f->block_elems, f->block_bytes};
}

std::uint64_t kv_bytes(const KvDtype& dtype, std::uint64_t elems) {
  return checked_mul(ceil_div(elems, dtype.block_elems), dtype.block_bytes, "KV bytes");
}

std::vector<LayerAttention> layer_kinds(const ModelArch& arch) {
  if (!arch.layer_attention.empty()) return arch.layer_attention;
  const auto kind = arch.kv_lora_rank > 0 ? LayerAttention::Mla : LayerAttention::Full;
  return std::vector<LayerAttention>(arch.num_layers, kind);
}

namespace {

std::uint64_t kv_heads_on_rank(std::uint64_t n, std::uint64_t tp) {
  if (n == 0) return 0;
  if (n >= tp ? n % tp != 0 : tp % n != 0)
    throw_usage("tensor parallel size " + std::to_string(tp) + " cannot split " +
                std::to_string(n) + " KV heads (vLLM requires one to divide the other)");
  return std::max<std::uint64_t>(1, n / tp);
}

std::string kind_label(LayerAttention kind, std::uint64_t window) {
  std::string s(layer_attention_name(kind));
  if (window != 0) s += " " + std::to_string(window);
  return s;
}

}  // namespace

KvLayout kv_layout(const ModelArch& arch, const KvDtype& dtype, std::uint64_t tp, DsaFp8Latent dsa_latent) {
  return kv_layout(arch, dtype, tp, 0, arch.num_layers, dsa_latent);
}

KvLayout kv_layout(const ModelArch& arch, const KvDtype& dtype, std::uint64_t tp,
                   std::uint64_t first_layer, std::uint64_t end_layer, DsaFp8Latent dsa_latent) {
  if (tp == 0) throw_usage("tensor parallel size must be at least 1");
  const auto kinds = layer_kinds(arch);
  if (end_layer > kinds.size() || first_layer > end_layer)
    throw_internal("kv_layout: layer range outside the model");
  KvLayout out;
  const bool any_attention_heads = arch.num_kv_heads > 0;
  out.kv_heads_per_gpu = any_attention_heads ? kv_heads_on_rank(arch.num_kv_heads, tp) : 0;
  const std::uint64_t elem_bytes_num = dtype.block_bytes, elem_bytes_den = dtype.block_elems;
  const bool fp8_ds_mla = dsa_latent == DsaFp8Latent::Scaled && dtype.name.starts_with("fp8") &&
                          dtype.block_bytes == 1 && dtype.block_elems == 1;
  const std::string per_elem = elem_bytes_den == 1
                                   ? std::to_string(elem_bytes_num) + " B"
                                   : std::to_string(elem_bytes_num) + "/" +
                                         std::to_string(elem_bytes_den) + " B";

  // For the explain text: count layers per (kind, bytes) class.
  std::map<std::string, std::pair<std::uint64_t, std::string>> classes;
  for (std::uint64_t i = first_layer; i < end_layer; ++i) {
    LayerKv l;
    std::uint64_t extra = 0;  // bytes outside the dtype's elements (DeepSeek sparse attention rows)
    l.layer = static_cast<int>(i);
    l.kind = kinds[i];
    l.shared = i < arch.kv_shared_with.size() && arch.kv_shared_with[i] >= 0;
    std::string formula;
    bool in_bytes = false;  // the formula already states bytes (no "x dtype size" to append)
    switch (l.kind) {
      case LayerAttention::Full:
      case LayerAttention::Sliding:
      case LayerAttention::Chunked: {
        // Gemma 4's full layers have their own head size and KV-head count (ModelArch::layer_*).
        const std::uint64_t hd = arch.layer_head_dim(i), vd = arch.layer_v_head_dim(i);
        const std::uint64_t heads = kv_heads_on_rank(arch.layer_kv_heads(i), tp);
        l.k_elems = heads * hd;
        l.v_elems = heads * vd;
        l.window = l.kind == LayerAttention::Sliding ? arch.sliding_window
                   : l.kind == LayerAttention::Chunked ? arch.attention_chunk_size : 0;
        formula = hd == vd ? "2 x " + std::to_string(heads) + " kv_heads x " + std::to_string(hd)
                           : std::to_string(heads) + " kv_heads x (" + std::to_string(hd) + " + " +
                                 std::to_string(vd) + ")";
        break;
      }
      case LayerAttention::Mla:
        // The latent has one "head" and is replicated on every TP rank.
        l.k_elems = arch.kv_lora_rank + arch.qk_rope_head_dim;
        formula = "(" + std::to_string(arch.kv_lora_rank) + " kv_lora_rank + " +
                  std::to_string(arch.qk_rope_head_dim) + " rope)";
        if (arch.index_topk > 0) {  // stated in bytes: the rows mix dtypes
          in_bytes = true;
          if (fp8_ds_mla) {
            extra = fp8_ds_mla_row(arch);
            l.k_elems = 0;
            formula = "((" + std::to_string(arch.kv_lora_rank) + " fp8 + " +
                      std::to_string(arch.kv_lora_rank / kDsaQuantBlock) + " x 4 B scales + " +
                      std::to_string(arch.qk_rope_head_dim) + " x 2 B rope: fp8_ds_mla, " +
                      std::to_string(extra) + " B)";
          } else {
            formula = "(" + formula + " x " + per_elem + " (" + dtype.name + ")";
          }
          if (i < arch.layer_has_indexer.size() && arch.layer_has_indexer[i]) {
            extra = checked_add(extra, dsa_indexer_row(arch), "KV bytes per token");
            formula += " + indexer key " + std::to_string(dsa_indexer_row(arch)) + " B (" +
                       std::to_string(arch.index_head_dim) + " fp8 + fp32 scales)";
          }
          formula += ")";
        }
        break;
      case LayerAttention::Recurrent:
        l.state_bytes = recurrent_state_bytes(arch, tp);
        break;
      case LayerAttention::None:
        break;
    }
    // Falcon-H1: the Mamba mixer beside every layer's attention keeps its own state.
    if (arch.recurrent_in_every_layer && l.kind != LayerAttention::None) l.state_bytes = recurrent_state_bytes(arch, tp);
    out.state_bytes_per_seq += l.state_bytes;
    if (!in_bytes) formula += " x " + per_elem + " (" + dtype.name + ")";
    if (l.shared) l.k_elems = l.v_elems = extra = 0;
    l.bytes_per_token = checked_add(checked_add(kv_bytes(dtype, l.k_elems), kv_bytes(dtype, l.v_elems)), extra);
    out.bytes_per_token = checked_add(out.bytes_per_token, l.bytes_per_token, "KV bytes per token");
    if (l.bytes_per_token > 0) {
      auto& cls = classes[kind_label(l.kind, l.window) + "|" + formula + "|" +
                          std::to_string(l.bytes_per_token)];
      cls.first += 1;
      cls.second = formula;
    }
    out.layers.push_back(l);
  }
  std::string terms;
  for (const auto& [key, cls] : classes) {
    const std::string kind = key.substr(0, key.find('|'));
    terms += (terms.empty() ? "" : " + ") + std::to_string(cls.first) + " " + kind + " layers x " + cls.second;
  }
  if (terms.empty()) terms = "0 (no attention layers)";
  out.explain = "KV/token/GPU = " + terms + " = " + grouped(out.bytes_per_token) + " B";
  if (tp > 1 && arch.num_kv_heads > 0 && arch.num_kv_heads < tp)
    out.explain += " (KV heads replicated: " + std::to_string(arch.num_kv_heads) +
                   " heads < TP " + std::to_string(tp) + ")";
  else if (tp > 1 && arch.global_kv_heads > 0 && arch.global_kv_heads < tp)
    out.explain += " (full layers' KV heads replicated: " + std::to_string(arch.global_kv_heads) +
                   " heads < TP " + std::to_string(tp) + ")";
  if (out.state_bytes_per_seq > 0)
    out.explain += "; recurrent state " + grouped(out.state_bytes_per_seq) + " B per sequence";
  return out;
}

}  // namespace vramplan::memory
