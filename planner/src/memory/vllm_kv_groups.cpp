#include "vramplan/memory/vllm_kv_groups.hpp"

#include <algorithm>
#include <map>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
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
                            std::uint64_t max_model_len, std::uint64_t batched, bool hybrid) {
  if (block_size == 0) throw_usage("--block-size must be at least 1");
  VllmKvGroups g;
  // Layer types: (kind, window); MLA is its own type; layers without KV are not in the pool.
  std::map<std::pair<int, std::uint64_t>, std::pair<std::uint64_t, std::uint64_t>> types;  // -> (count, blocks)
  std::uint64_t widest = 0;
  for (const auto& l : layout.layers) {
    if (l.bytes_per_token == 0) continue;
    const std::uint64_t window = hybrid ? l.window : 0;
    const int kind = window == 0 && l.kind != LayerAttention::Mla ? static_cast<int>(LayerAttention::Full)
                                                                  : static_cast<int>(l.kind);
    auto& t = types[{kind, window}];
    t.first += 1;
    t.second = blocks_for(l, block_size, max_model_len, batched, hybrid);
    widest = std::max(widest, l.bytes_per_token);
    g.bytes_one_request = checked_add(
        g.bytes_one_request,
        checked_mul(checked_mul(t.second, block_size), l.bytes_per_token), "KV bytes");
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
    per_type += (per_type.empty() ? "" : ", ") + std::to_string(t.first) + " " +
                std::string(layer_attention_name(static_cast<LayerAttention>(k.first))) +
                (k.second ? " " + std::to_string(k.second) : "") + " -> " + std::to_string(groups) +
                " group(s)";
  }
  g.page_bytes_per_layer = checked_mul(block_size, widest, "KV page");
  g.block_bytes = checked_mul(g.page_bytes_per_layer, g.group_size, "KV block");
  g.explain = "block = " + std::to_string(block_size) + " tokens x " + grouped(widest) +
              " B/token/layer x " + std::to_string(g.group_size) + " layers per group = " +
              grouped(g.block_bytes) + " B; " + per_type;
  return g;
}

}  // namespace vramplan::memory
