// The one rule that estimates a runtime-reported total when no measurement was found, and the
// names of the enums that say where a total comes from.
#include <algorithm>

#include "vramplan/core/error.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"

namespace vramplan {

std::string_view gpu_kind_name(GpuKind kind) { return kind == GpuKind::Mig ? "mig" : "gpu"; }

std::string_view memory_basis_name(MemoryBasis basis) {
  switch (basis) {
    case MemoryBasis::Measured: return "measured";
    case MemoryBasis::Estimated: return "estimated";
    case MemoryBasis::UserSupplied: return "user";
  }
  return "unknown";
}

Bytes estimation_base(Bytes physical, bool ecc_carveout) {
  // GDDR ECC stores check bits in-band: 1/16 of the memory (24576 -> 23040 MiB on an A10/L4,
  // 49152 -> 46080 MiB on an L40S, 16384 -> 15360 MiB on a T4). HBM keeps ECC out of band.
  if (!ecc_carveout) return physical;
  return Bytes(physical.count() / 16 * 15);
}

Bytes estimate_runtime_total(Bytes base) {
  // Measured runtime totals sit 0.36-1.05 GiB under base on every catalogued card with a
  // measurement (docs/gpus.md lists them); 1 GiB covers small cards, 1.5 % large ones
  // (B200: 180 GiB base, 178.35 GiB reported). The test EstimationRule.IsBelowEveryMeasuredCard
  // keeps this conservative as entries are added.
  const std::uint64_t percent_part = ceil_div(checked_mul(base.count(), 15, "estimated reserve"), 1000);
  const std::uint64_t reserve = std::max<std::uint64_t>(kGiB, percent_part);
  if (base.count() <= reserve)
    throw_usage("memory of " + format_binary(base) + " is too small to estimate a runtime total (" +
                std::string(estimation_rule_text()) + ")");
  const std::uint64_t estimate = base.count() - reserve;
  return Bytes(estimate / kMiB * kMiB);
}

Bytes estimate_card_runtime_total(Bytes physical, bool ecc_carveout, std::optional<Bytes> nvidia_smi_total) {
  const Bytes rule = estimate_runtime_total(estimation_base(physical, ecc_carveout));
  // NVML's total includes the driver's reservation, so a runtime total is always below it: by
  // 0.35 GiB (RTX 4090) to 0.90 GiB (B300) on the catalogued cards that have both. 1 GiB is the
  // rule's own minimum reserve. Without this cap a card that exposes less than its marketed
  // size (B300: 275040 MiB of 288 GiB) would be over-promised.
  if (!nvidia_smi_total || nvidia_smi_total->count() <= kGiB) return rule;
  const Bytes cap((nvidia_smi_total->count() - kGiB) / kMiB * kMiB);
  return std::min(rule, cap);
}

std::string_view estimation_rule_text() {
  return "estimated: physical memory (less 1/16 for GDDR with ECC; MIG: its memory fraction) "
         "minus max(1 GiB, 1.5%), rounded down to a MiB, and at most the nvidia-smi total minus 1 GiB";
}

void require_plannable(const GpuSpec& gpu) {
  if (!gpu.not_plannable.empty())
    throw_usage("GPU '" + gpu.id + "' is listed in the catalogue but cannot be planned: " + gpu.not_plannable);
}

}  // namespace vramplan
