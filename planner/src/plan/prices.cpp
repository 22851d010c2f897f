#include "vramplan/plan/prices.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/sim/workload_spec.hpp"

namespace vramplan::plan {
namespace {

std::string fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// Median of the on-demand quotes; quotes in other pricing models (spot, serverless, reserved
// capacity blocks) are not comparable rental prices and are left out.
std::optional<GpuPrice> catalogue_price(const GpuSpec& g) {
  std::vector<const PriceQuote*> quotes;
  for (const auto& q : g.prices)
    if (q.pricing == "on-demand") quotes.push_back(&q);
  if (quotes.empty()) return std::nullopt;
  std::sort(quotes.begin(), quotes.end(),
            [](const PriceQuote* a, const PriceQuote* b) { return a->usd_per_gpu_hour < b->usd_per_gpu_hour; });
  const std::size_t n = quotes.size();
  GpuPrice p;
  p.usd_per_gpu_hour = n % 2 ? quotes[n / 2]->usd_per_gpu_hour
                             : (quotes[n / 2 - 1]->usd_per_gpu_hour + quotes[n / 2]->usd_per_gpu_hour) / 2;
  p.basis = "median of " + std::to_string(n) + " on-demand quote" + (n > 1 ? "s" : "") + " in data/prices.json (";
  for (std::size_t i = 0; i < n; ++i)
    p.basis += (i ? "; " : "") + quotes[i]->provider + " $" + fixed2(quotes[i]->usd_per_gpu_hour) + " " + quotes[i]->as_of;
  p.basis += ")";
  // Lots: the card's own (data/prices.json "lots", e.g. B200 in lots of 2) when given; else the
  // lots its quoted offers come in (gpus_per_lot, 1 when a quote does not say). One offer that
  // rents single GPUs means any count can be rented.
  std::set<std::uint64_t> sizes;
  if (g.lots) {
    sizes.insert(g.lots->sizes.begin(), g.lots->sizes.end());
  } else {
    for (const PriceQuote* q : quotes) sizes.insert(q->gpus_per_lot.value_or(1));
  }
  if (!sizes.count(1)) {
    p.lot_sizes.assign(sizes.begin(), sizes.end());
    std::string list;
    for (const std::uint64_t s : p.lot_sizes) list += (list.empty() ? "" : " or ") + std::to_string(s);
    p.basis += "; rented in lots of " + list + " GPUs (" +
               (g.lots ? "data/prices.json lots: " + g.lots->note + ", " + g.lots->source
                       : std::string("the quoted offers' gpus_per_lot")) + ")";
  }
  return p;
}

}  // namespace

std::vector<RentalPeriod> parse_periods(const std::string& text) {
  std::vector<RentalPeriod> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    char* end = nullptr;
    const double n = item.empty() ? 0 : std::strtod(item.c_str(), &end);
    const std::string unit = end ? std::string(end) : "";
    const double per = unit == "h" ? 1 : unit == "d" ? 24 : unit == "w" ? 168 : 0;
    if (!(n > 0) || per == 0) throw_usage("--periods: expected a list such as 3d,7d,30d (units h, d, w), got '" + item + "'");
    // From a minute to the 1e9 s every duration flag is bounded by (31.7 years; 2^64 h had priced
    // a rental at 7e22 USD).
    if (!(n * per >= 1.0 / 60 && n * per <= sim::kMaxDurationS / 3600))
      throw_usage("--periods: each period is from 1 minute to 277,777 h (1e9 s), got " + excerpt(item));
    if (out.size() == 64) throw_usage("--periods: at most 64 periods");
    out.push_back({item, n * per});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

PriceBook PriceBook::from_catalogue(const GpuCatalog& catalog) {
  PriceBook book;
  for (const auto& g : catalog.all()) {
    if (g.kind == GpuKind::Card) {
      if (auto p = catalogue_price(g)) book.prices_[g.id] = *p;
      if (g.lots) book.lots_[g.id] = *g.lots;
    } else if (g.mig && g.mig->max_instances > 0) {
      book.mig_[g.id] = {g.parent_id, g.mig->max_instances};
    }
  }
  return book;
}

void PriceBook::apply_file(const std::filesystem::path& file, const GpuCatalog& catalog) {
  const auto json = read_json_file(file);
  const JsonView root(json, file.string(), "");
  if (const std::string schema = root.req_string("schema"); schema != "vramplan.prices/1")
    root.fail_at("schema", "expected \"vramplan.prices/1\", got \"" + schema + "\"");
  std::map<std::string, std::string> seen;  // catalogue id -> the spelling that priced it first
  for (const auto& item : root.at("prices").items()) {
    const std::string id = item.req_string("gpu");
    GpuPrice p;
    p.usd_per_gpu_hour = item.req_positive("usd_per_gpu_hour");
    // The dearest on-demand GPU-hour in data/prices.json is tens of dollars: beyond $10,000 is a
    // typo (cents, a monthly price), and would print costs of twenty digits.
    if (p.usd_per_gpu_hour > 10000) item.fail_at("usd_per_gpu_hour", "at most 10000 USD per GPU-hour");
    p.basis = file.filename().string() + (item.opt_string("as_of") ? " as of " + *item.opt_string("as_of") : "") +
              (item.opt_string("source") ? " (" + *item.opt_string("source") + ")" : "");
    std::string canonical;
    try {
      canonical = catalog.find(id).id;
    } catch (const Error& e) {
      item.fail_at("gpu", e.what());
    }
    if (const auto lots = item.get("lot_sizes")) {
      // Given (even [] or [1]): the customer's own lots replace the catalogue's.
      for (const auto& l : lots->items()) {
        const std::uint64_t size = l.as_u64();
        if (size == 0) l.fail("lot size must be >= 1");
        p.lot_sizes.push_back(size);
      }
    } else if (const auto it = lots_.find(canonical); it != lots_.end()) {
      p.lot_sizes = it->second.sizes;
      p.basis += "; lots from data/prices.json: " + it->second.note;
    }
    // Two entries for one card used to let the last win silently.
    if (const auto [it, fresh] = seen.emplace(canonical, id); !fresh)
      item.fail_at("gpu", "a second price for " + canonical + " (first given as '" + it->second + "'): give one");
    prices_[canonical] = p;
  }
}

std::optional<GpuPrice> PriceBook::price(const std::string& gpu_id) const {
  if (const auto it = prices_.find(gpu_id); it != prices_.end()) return it->second;
  const auto slice = mig_.find(gpu_id);
  if (slice == mig_.end()) return std::nullopt;
  auto card = price(slice->second.first);
  if (!card) return std::nullopt;
  card->usd_per_gpu_hour /= slice->second.second;
  card->lot_sizes.clear();
  card->basis = "card price / " + std::to_string(slice->second.second) + " slices per card; card: " + card->basis;
  return card;
}

std::uint64_t billed_gpus(std::uint64_t needed, const std::vector<std::uint64_t>& lot_sizes) {
  if (lot_sizes.empty() || needed == 0) return needed;
  // Coin-change over sums up to needed + the largest lot: the smallest reachable sum >= needed.
  const std::uint64_t largest = *std::max_element(lot_sizes.begin(), lot_sizes.end());
  std::vector<bool> reachable(needed + largest + 1, false);
  reachable[0] = true;
  for (std::uint64_t s = 1; s < reachable.size(); ++s)
    for (const std::uint64_t l : lot_sizes)
      if (l <= s && reachable[s - l]) reachable[s] = true;
  for (std::uint64_t s = needed; s < reachable.size(); ++s)
    if (reachable[s]) return s;
  return needed + largest;
}

PriceBook load_price_book(const DataRoot& root, const std::optional<std::filesystem::path>& file) {
  GpuCatalog gpus = GpuCatalog::load(root.data_file("gpus.json"));
  gpus.attach_prices(root.data_file("prices.json"));
  PriceBook prices = PriceBook::from_catalogue(gpus);
  if (file) prices.apply_file(*file, gpus);
  return prices;
}

RentalCover cover_hours(const std::string& gpu_id, std::uint64_t gpus, double hours, const PriceBook& prices,
                        const std::vector<RentalPeriod>& periods) {
  RentalCover c;
  const RentalPeriod* best = nullptr;
  for (const auto& p : periods)
    if (p.hours >= hours && (!best || p.hours < best->hours)) best = &p;
  if (!best) return c;
  c.period = best->label;
  if (const auto price = prices.price(gpu_id)) {
    c.usd = static_cast<double>(billed_gpus(gpus, price->lot_sizes)) * price->usd_per_gpu_hour * best->hours;
    c.price_basis = price->basis;
  }
  return c;
}

}  // namespace vramplan::plan
