#include "vramplan/memory/vllm_kv_groups.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/version.hpp"
#include "vramplan/memory/component.hpp"

namespace vramplan::memory {

namespace {

// Blocks one request of max_model_len needs in a layer of this kind
// (FullAttentionSpec / SlidingWindowSpec / ChunkedLocalAttentionSpec.max_memory_usage_bytes).
std::uint64_t blocks_for(const LayerKv& l, std::uint64_t block_size, std::uint64_t max_model_len,
                         std::uint64_t batched, bool hybrid) {
  if (!hybrid || l.window == 0) return ceil_div(max_model_len, block_size);
  if (l.kind == LayerAttention::Chunked)  // the current chunk plus one step's tokens
    return ceil_div(std::min(l.window + batched, max_model_len), block_size);
  // The window minus the current token plus one step, and one block of slack for alignment.
  const std::uint64_t tokens = std::min(l.window - 1 + batched, max_model_len);
  return ceil_div(tokens, block_size) + 1;
}

}  // namespace

VllmKvGroups vllm_kv_groups(const KvLayout& layout, std::uint64_t block_size,
                            std::uint64_t max_model_len, std::uint64_t batched, bool hybrid,
                            std::uint64_t mamba_blocks) {
  if (block_size == 0) throw_usage("--block-size must be at least 1");
  VllmKvGroups g;
  // Layer types: (kind, window, tokens a block) -> (count, blocks one request needs); MLA is its own
  // type; layers without KV are not in the pool.
  std::map<std::tuple<int, std::uint64_t, std::uint64_t>, std::pair<std::uint64_t, std::uint64_t>> types;
  std::uint64_t widest = 0, all_layers = 0;
  bool any_mla = false;
  for (const auto& l : layout.layers) {
    widest = std::max(widest, l.bytes_per_token);
    any_mla = any_mla || l.kind == LayerAttention::Mla;
    all_layers = checked_add(all_layers, l.bytes_per_token, "KV bytes per token");
  }
  // Recurrent layers (MambaSpec): a fixed number of pages per request, each page padded to the
  // attention page (kv_cache_interface.py MambaSpec.max_memory_usage_bytes).
  if (mamba_blocks > 0 && widest > 0)
    for (const auto& l : layout.layers) {
      if (l.state_bytes == 0) continue;  // a Mamba layer, or Falcon-H1's mixer beside attention
      auto& t = types[{static_cast<int>(LayerAttention::Recurrent), 0, block_size}];
      t.first += 1;
      t.second = mamba_blocks;
      g.bytes_one_request = checked_add(
          g.bytes_one_request, checked_mul(checked_mul(mamba_blocks, block_size), widest), "KV bytes");
    }
  for (const auto& l : layout.layers) {
    if (l.bytes_per_token == 0) continue;
    const std::uint64_t window = hybrid ? l.window : 0;
    const int kind = window == 0 && l.kind != LayerAttention::Mla ? static_cast<int>(LayerAttention::Full)
                                                                  : static_cast<int>(l.kind);
    // Layers of different page sizes in one pool (Gemma 4: sliding layers of head_dim 256, full
    // ones of 512 with fewer KV heads): unify_kv_cache_spec_page_size gives the smaller page
    // block_size x (largest page / its page) tokens, and refuses a page that does not divide the
    // largest. Without the hybrid manager every layer is a FullAttentionSpec of the same block
    // size: UniformTypeKVCacheSpecs, one group whose block holds every layer's page.
    std::uint64_t tokens_a_block = block_size;
    if (hybrid && l.kind != LayerAttention::Mla && l.bytes_per_token < widest) {
      if (widest % l.bytes_per_token != 0)
        throw_usage("vLLM cannot unify KV page sizes: a layer of " + grouped(l.bytes_per_token) +
                    " B/token does not divide the largest of " + grouped(widest) +
                    " B/token (kv_cache_utils.py unify_kv_cache_spec_page_size: 'The page size of the layer is not "
                    "divisible by the maximum page size')");
      tokens_a_block = checked_mul(block_size, widest / l.bytes_per_token, "KV block size");
    }
    auto& t = types[{kind, window, tokens_a_block}];
    t.first += 1;
    t.second = blocks_for(l, tokens_a_block, max_model_len, batched, hybrid);
    g.bytes_one_request = checked_add(
        g.bytes_one_request,
        checked_mul(checked_mul(t.second, tokens_a_block), l.bytes_per_token), "KV bytes");
  }
  if (types.empty()) {
    g.explain = "no KV-cache layers";
    return g;
  }
  g.group_size = types.begin()->second.first;
  for (const auto& [k, t] : types) g.group_size = std::min(g.group_size, t.first);
  std::string per_type;
  for (const auto& [k, t] : types) {
    const std::uint64_t groups = ceil_div(t.first, g.group_size);
    g.num_groups += groups;
    g.blocks_per_request += groups * t.second;
    const auto [kind, window, tokens_a_block] = k;
    per_type += (per_type.empty() ? "" : ", ") + std::to_string(t.first) + " " +
                std::string(layer_attention_name(static_cast<LayerAttention>(kind))) +
                (window ? " " + std::to_string(window) : "") +
                (tokens_a_block != block_size ? " (" + std::to_string(tokens_a_block) + "-token blocks)" : "") +
                " -> " + std::to_string(groups) + " group(s)";
  }
  g.page_bytes_per_layer = checked_mul(block_size, widest, "KV page");
  g.block_bytes = checked_mul(g.page_bytes_per_layer, g.group_size, "KV block");
  if (!hybrid && mamba_blocks == 0 && !any_mla) {  // one group of every layer, each with its own page size
    g.page_bytes_per_layer = 0;
    g.block_bytes = checked_mul(block_size, all_layers, "KV block");
    g.explain = "block = " + std::to_string(block_size) + " tokens x " + grouped(all_layers) +
                " B/token over all layers = " + grouped(g.block_bytes) + " B; " + per_type;
    return g;
  }
  g.explain = "block = " + std::to_string(block_size) + " tokens x " + grouped(widest) +
              " B/token/layer x " + std::to_string(g.group_size) + " layers per group = " +
              grouped(g.block_bytes) + " B; " + per_type;
  return g;
}

std::uint64_t vllm_printed_kv_tokens(std::string_view release, std::uint64_t num_blocks, const VllmKvGroups& groups,
                                     std::uint64_t block_size, std::uint64_t max_model_len) {
  const auto v = release_numbers(release);
  if (released_before(v, {0, 21}))
    return num_blocks / std::max<std::uint64_t>(1, groups.num_groups) * block_size;
  if (groups.blocks_per_request == 0) return 0;
  const double concurrency = static_cast<double>(num_blocks) / static_cast<double>(groups.blocks_per_request);
  return static_cast<std::uint64_t>(concurrency * static_cast<double>(max_model_len));
}

std::optional<VllmMambaPages> vllm_mamba_pages(const KvLayout& layout,
                                               std::optional<std::uint64_t> user_block_size) {
  VllmMambaPages m;
  for (const auto& l : layout.layers) {
    m.attn_bytes_per_token = std::max(m.attn_bytes_per_token, l.bytes_per_token);
    if (l.state_bytes > 0) {
      m.state_bytes = std::max(m.state_bytes, l.state_bytes);
      m.recurrent_layers += 1;
    }
  }
  if (m.state_bytes == 0 || m.attn_bytes_per_token == 0) return std::nullopt;
  // attn_block_size = 16 * cdiv(mamba_page_size, 16 * attn_page_size_1_token): 16 because
  // FlashAttention / FlashInfer kernels take block sizes in multiples of 16.
  constexpr std::uint64_t kAlign = 16;
  const std::uint64_t aligned = kAlign * ceil_div(m.state_bytes, kAlign * m.attn_bytes_per_token);
  m.block_size = user_block_size && *user_block_size >= aligned ? *user_block_size : aligned;
  m.page_bytes = checked_mul(m.block_size, m.attn_bytes_per_token, "attention page");
  m.explain = "attention block = 16 x ceil(" + grouped(m.state_bytes) + " B state / (16 x " +
              grouped(m.attn_bytes_per_token) + " B/token)) = " + std::to_string(aligned) + " tokens" +
              (m.block_size != aligned ? " (--block-size " + std::to_string(m.block_size) + " kept)" : "") +
              "; state page padded " + grouped(m.state_bytes) + " -> " + grouped(m.page_bytes) + " B";
  return m;
}

}  // namespace vramplan::memory
