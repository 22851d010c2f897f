// sweep_gpus.hpp (internal to the decision layer) — the cards a sweep ranks: the ones named, each
// checked plannable, or else every plannable card of the catalogue (MIG slices when asked, and at
// least `min_memory` when given). One rule for the serving, training and diffusion sweeps.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vramplan/core/bytes.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"

namespace vramplan::plan {

inline std::vector<GpuSpec> sweep_candidates(const GpuCatalog& catalog, const std::string& named_list,
                                             bool include_mig, std::optional<Bytes> min_memory = std::nullopt) {
  if (!named_list.empty()) {
    std::vector<GpuSpec> named = catalog.resolve(named_list);
    for (const auto& g : named) require_plannable(g);
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
