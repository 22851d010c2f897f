#include "vramplan/plan/mig_layout.hpp"

#include <map>
#include <numeric>

#include "vramplan/core/error.hpp"

namespace vramplan::plan {
namespace {

// Sum of fractions as num / den over a common denominator (MIG fractions are x/8 and x/7).
struct FractionSum {
  std::uint64_t num = 0, den = 1;
  void add(const Fraction& f) {
    const std::uint64_t l = std::lcm(den, static_cast<std::uint64_t>(f.den));
    num = num * (l / den) + f.num * (l / f.den);
    den = l;
  }
  bool over_one() const { return num > den; }
  std::string str() const { return std::to_string(num) + "/" + std::to_string(den); }
};

}  // namespace

std::vector<GpuSpec> resolve_mig_layout(const GpuCatalog& catalog, const GpuSpec& card,
                                        const std::vector<std::string>& profiles) {
  std::string layout;
  for (const auto& p : profiles) layout += (layout.empty() ? "" : ",") + p;
  const std::string prefix = "MIG layout " + layout + " is invalid for " + card.id + ": ";
  if (card.kind != GpuKind::Card) throw_usage("--mig-layout needs a card, not the MIG slice " + card.id);
  if (!card.mig_max_instances) throw_usage(prefix + "the card does not support MIG (data/gpus.json mig_max_instances)");
  if (profiles.empty()) throw_usage("--mig-layout: expected a comma-separated list of MIG profiles");
  std::vector<GpuSpec> slices;
  std::map<std::string, std::uint64_t> count;
  FractionSum memory, compute;
  for (const auto& p : profiles) {
    const GpuSpec& slice = catalog.find(card.id + "/" + p);
    slices.push_back(slice);
    const MigSlice& m = *slice.mig;
    if (++count[m.profile] > static_cast<std::uint64_t>(m.max_instances))
      throw_usage(prefix + std::to_string(count[m.profile]) + " x " + m.profile + ", the card holds at most " +
                  std::to_string(m.max_instances) + " (data/gpus.json mig_profiles)");
    memory.add(m.memory_fraction);
    compute.add(m.sm_fraction);
  }
  if (slices.size() > static_cast<std::size_t>(*card.mig_max_instances))
    throw_usage(prefix + std::to_string(slices.size()) + " slices, the card offers at most " +
                std::to_string(*card.mig_max_instances) + " MIG instances");
  if (memory.over_one())
    throw_usage(prefix + "the slices take " + memory.str() + " of the card's memory (more than all of it)");
  if (compute.over_one())
    throw_usage(prefix + "the slices take " + compute.str() + " of the card's compute slices (more than all of them)");
  return slices;
}

}  // namespace vramplan::plan
