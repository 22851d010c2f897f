#include "vramplan/memory/sglang_pipeline.hpp"

#include <cmath>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"

namespace vramplan::memory {

SglangPipeline sglang_pipeline(const ModelSpec& model, const ResolvedWeights& weights, const ShardOptions& shard,
                               const SglangLoadExtras& extras, const KvLayout& kv, std::uint64_t cell,
                               double static_budget) {
  const std::uint64_t pp = shard.pp;
  if (pp < 2) throw_internal("sglang_pipeline: fewer than two stages");
  std::uint64_t layer_sum = 0;
  for (const LayerKv& l : kv.layers) layer_sum = checked_add(layer_sum, l.bytes_per_token, "KV bytes per token");
  if (layer_sum != kv.bytes_per_token || kv.bytes_per_token == 0)
    throw_usage("--pp-size " + std::to_string(pp) + ": " + model.arch.architecture +
                "'s token pool spans layers without attention (or has none): its split over pipeline stages is not modelled");
  struct Stage {
    std::uint64_t first = 0, end = 0, weights = 0, kv = 0, cell = 0, tokens = 0;
    std::vector<Component> components;
  };
  std::vector<Stage> stages(pp);
  SglangPipeline out;
  for (std::uint64_t s = 0; s < pp; ++s) {
    Stage& st = stages[s];
    ShardOptions so = shard;
    so.stage = s;
    st.components = shard_weights(model, weights, so);
    for (auto& c : sglang_load_extras(model, weights, so, extras)) st.components.push_back(std::move(c));
    st.weights = sum_bytes(st.components).count();
    std::tie(st.first, st.end) = pp_layer_range(model.arch.num_layers, pp, s, so.pp_extra_layers_last);
    for (const LayerKv& l : kv.layers)
      if (static_cast<std::uint64_t>(l.layer) >= st.first && static_cast<std::uint64_t>(l.layer) < st.end)
        st.kv = checked_add(st.kv, l.bytes_per_token, "KV bytes per token");
    // The release's count per token (DSA before 0.5.17 counts other bytes than it allocates)
    // scales with the stage's share of the layers, all alike there.
    st.cell = cell == kv.bytes_per_token ? st.kv
                                         : static_cast<std::uint64_t>(static_cast<double>(cell) * static_cast<double>(st.kv) /
                                                                      static_cast<double>(kv.bytes_per_token));
    const double rest = static_budget - static_cast<double>(st.weights);
    st.tokens = rest > 0 && st.cell > 0 ? static_cast<std::uint64_t>(std::floor(rest / static_cast<double>(st.cell))) : 0;
    if (s == 0 || st.tokens < out.min_tokens) {
      out.min_tokens = st.tokens;
      out.binding = s;
    }
  }
  double most = -1;
  std::string each;
  for (std::uint64_t s = 0; s < pp; ++s) {
    const Stage& st = stages[s];
    const double held = static_cast<double>(st.weights) + static_cast<double>(out.min_tokens) * static_cast<double>(st.kv);
    if (held > most) {
      most = held;
      out.shown = s;
    }
    each += (s ? "; " : "") + std::string("stage ") + std::to_string(s) + " layers " + std::to_string(st.first) + "-" +
            std::to_string(st.end - 1) + ", weights " + format_gib(Bytes(st.weights)) + ", " + grouped(st.tokens) + " tokens";
  }
  const Stage& shown = stages[out.shown];
  out.shown_layers = std::to_string(shown.first) + "-" + std::to_string(shown.end - 1);
  out.shown_weights = shown.components;
  out.shown_kv_bytes = shown.kv;
  out.shown_cell = shown.cell;
  out.explain = "PP " + std::to_string(pp) + ": each stage sizes its pool from its own weights and layers, every rank takes the "
                "smallest (stage " + std::to_string(out.binding) + "'s, " + grouped(out.min_tokens) + " tokens): " + each +
                "; shown: stage " + std::to_string(out.shown) +
                ", the most memory (distributed/utils.py get_pp_indices, the extra layers on the last stages; "
                "model_runner_kv_cache_mixin.py all_reduce MIN of max_total_num_tokens)";
  return out;
}

}  // namespace vramplan::memory
