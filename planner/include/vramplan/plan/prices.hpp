// vramplan/plan/prices.hpp — what a configuration costs to rent for a period.
//
// Indicative prices come from data/prices.json (attached to the GPU catalogue; each quote with
// provider, date and source): the median of a card's on-demand quotes. A customer's own prices (--prices FILE,
// schema vramplan.prices/1) replace them per GPU. Hardware sold in lots (B200 in lots of 2, an
// HGX offer as an 8-GPU node) is billed for the smallest combination of lot sizes that covers
// the GPUs needed: the lots come from data/prices.json ("lots" per card, "gpus_per_lot" per
// quote), and a --prices entry without lot_sizes keeps the card's catalogue lots. A MIG slice
// costs its card's price / the number of such slices the card holds (the card is shared).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/io/data_root.hpp"

namespace vramplan::plan {

struct GpuPrice {
  double usd_per_gpu_hour = 0;
  std::vector<std::uint64_t> lot_sizes;  //!< empty = any whole number of GPUs
  std::string basis;                     //!< "median of 4 on-demand quotes (RunPod 2026-03-10, ...)"
};

struct RentalPeriod {
  std::string label;  //!< "3d"
  double hours = 0;
};

//! "3d,7d,30d" (h, d, w units) -> periods. Throws Error(Usage).
std::vector<RentalPeriod> parse_periods(const std::string& text);

class PriceBook {
 public:
  //! Catalogue prices for every card (and MIG slices derived from their card).
  static PriceBook from_catalogue(const GpuCatalog& catalog);
  //! Overrides from a customer's file. Errors name the file and JSON pointer.
  void apply_file(const std::filesystem::path& file, const GpuCatalog& catalog);
  //! nullopt when the GPU has no price.
  std::optional<GpuPrice> price(const std::string& gpu_id) const;

 private:
  std::map<std::string, GpuPrice> prices_;
  std::map<std::string, RentalLots> lots_;  //!< card id -> the card's lots in data/prices.json
  std::map<std::string, std::pair<std::string, int>> mig_;  //!< slice id -> (card id, slices per card)
};

//! The catalogue's prices (data/gpus.json + data/prices.json under `root`), with a customer's
//! file (--prices) applied over them when given.
PriceBook load_price_book(const DataRoot& root, const std::optional<std::filesystem::path>& file);

//! GPUs billed for `needed` GPUs: the smallest sum of lot sizes >= needed (needed when no lots).
std::uint64_t billed_gpus(std::uint64_t needed, const std::vector<std::uint64_t>& lot_sizes);

//! The shortest rental period that covers a job, and what renting its GPUs for it costs.
struct RentalCover {
  std::string period;         //!< "7d"; empty when no period is long enough
  std::optional<double> usd;  //!< billed GPUs x $/GPU-hour x the period's hours; nullopt without a price
  std::string price_basis;
};

//! The shortest of `periods` lasting at least `hours`, for `gpus` GPUs of `gpu_id` (billed in the
//! card's lots).
RentalCover cover_hours(const std::string& gpu_id, std::uint64_t gpus, double hours, const PriceBook& prices,
                        const std::vector<RentalPeriod>& periods);

}  // namespace vramplan::plan
