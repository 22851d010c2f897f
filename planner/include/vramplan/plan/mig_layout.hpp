// vramplan/plan/mig_layout.hpp — a MIG layout ("3g.40gb,3g.40gb") checked against the card's MIG
// data in data/gpus.json (mig_profiles: memory and compute fractions, instances per card).
//
// A layout is refused when a profile is not offered on the card, when a profile appears more
// often than its max_instances, when all slices together take more than the card's memory slices
// (sum of memory fractions > 1) or compute slices (sum of SM fractions > 1), or when it has more
// slices than the card's mig_max_instances. These are necessary conditions: NVIDIA's placement
// rules (which start offsets a profile may take) can refuse a few layouts that pass them.
#pragma once

#include <string>
#include <vector>

#include "vramplan/hardware/gpu_catalog.hpp"

namespace vramplan::plan {

//! The slices of `profiles` on `card`, in order. Throws Error(Usage) naming the rule broken,
//! Error(UnknownName) for a profile the catalogue does not know for this card.
std::vector<GpuSpec> resolve_mig_layout(const GpuCatalog& catalog, const GpuSpec& card,
                                        const std::vector<std::string>& profiles);

}  // namespace vramplan::plan
