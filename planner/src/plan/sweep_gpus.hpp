// sweep_gpus.hpp (internal to the decision layer) — the cards a sweep ranks: the ones named, each
// checked plannable, or else every plannable card of the catalogue (MIG slices when asked, and at
// least `min_memory` when given). One rule for the serving, training and diffusion sweeps.
#pragma once

#include <algorithm>

#include <optional>
#include <string>
#include <vector>

#include "vramplan/core/bytes.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"

namespace vramplan::plan {

inline std::vector<GpuSpec> sweep_candidates(const GpuCatalog& catalog, const std::string& named_list,
                                             bool include_mig, std::optional<Bytes> min_memory = std::nullopt) {
  if (!named_list.empty()) {
    // A card named twice (l4,L4, or an id and its alias) is one candidate.
    std::vector<GpuSpec> named;
    for (auto& g : catalog.resolve(named_list)) {
      require_plannable(g);
      if (std::none_of(named.begin(), named.end(), [&](const GpuSpec& n) { return n.id == g.id; })) named.push_back(std::move(g));
    }
    return named;
  }
  // Cards the catalogue lists as not plannable (no engine profile serves them) are left out.
  std::vector<GpuSpec> out;
  for (const auto& g : catalog.all())
    if ((g.kind == GpuKind::Card || include_mig) && g.not_plannable.empty() &&
        (!min_memory || g.reported_total >= *min_memory))
      out.push_back(g);
  return out;
}

}  // namespace vramplan::plan
