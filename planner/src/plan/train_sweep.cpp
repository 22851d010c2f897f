// `sweep --mode train`: training layouts ranked by the cost of the run (plan/train_sweep.hpp).
#include "vramplan/plan/train_sweep.hpp"

#include <algorithm>
#include <cmath>

#include "vramplan/core/error.hpp"
#include "vramplan/core/table.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/plan/train_limits.hpp"
#include "plan/sweep_gpus.hpp"

namespace vramplan::plan {
namespace {

// Layout label for tables and misses: "zero3, recompute full".
std::string layout_text(const std::string& sharding, const std::string& recompute) {
  return sharding + ", recompute " + recompute;
}

}  // namespace

std::vector<RecomputeChoice> recompute_choices(const std::vector<std::string>& names) {
  std::vector<RecomputeChoice> out;
  for (const auto& n : names) {
    const bool op = n == "selective-op";
    out.push_back({train::recompute_from_name(op ? "selective" : n), op, n});
  }
  return out;
}

TrainSweepResult run_train_sweep(const TrainSweepRequest& r, const DataRoot& root) {
  if (r.base.model.empty()) throw Error(ErrorKind::Usage, "--model is required");
  if (!(r.run_tokens > 0))
    throw Error(ErrorKind::Usage, "sweep --mode train ranks layouts by the cost of a run: give --tokens N or --epochs E --dataset-tokens N");
  if (r.counts.empty() || r.shardings.empty() || r.recomputes.empty())
    throw Error(ErrorKind::Usage, "--gpus, --sharding and --grad-checkpointing need at least one value");
  const GpuCatalog catalog = GpuCatalog::load(root.data_file("gpus.json"));
  const std::vector<GpuSpec> gpus = sweep_candidates(catalog, r.gpus, false);
  if (gpus.empty()) throw Error(ErrorKind::Usage, "no GPU matches the sweep's GPU selection");
  const std::uint64_t layouts = gpus.size() * r.counts.size() * r.shardings.size() * r.recomputes.size();
  if (layouts > kMaxTrainSweepLayouts)
    throw Error(ErrorKind::Usage, "sweep --mode train: " + std::to_string(layouts) + " layouts (" + std::to_string(gpus.size()) +
                                      " GPUs x " + std::to_string(r.counts.size()) + " counts x " +
                                      std::to_string(r.shardings.size()) + " shardings x " + std::to_string(r.recomputes.size()) +
                                      " recomputations) is more than the " + std::to_string(kMaxTrainSweepLayouts) +
                                      " searched at most: narrow --gpu, --gpus, --sharding or --grad-checkpointing");
  const PriceBook prices = load_price_book(root, r.prices_file);
  const train::TrainInputs inputs = train::load_train_inputs(r.base.model, root);  // once for every layout
  TrainSweepResult out;
  out.model = inputs.model.id;  // also when no layout fits
  for (const auto& g : gpus) out.gpus.push_back(g.id);
  for (const auto& gpu : gpus) {
    const auto price = prices.price(gpu.id);
    for (const std::uint64_t n : r.counts) {
      for (const train::Sharding sharding : r.shardings) {
        for (const RecomputeChoice& rc : r.recomputes) {
          ++out.layouts;
          train::TrainRequest q = r.base;
          q.gpu = gpu.id;
          q.parallel.gpus = n;
          q.sharding = sharding;
          q.recompute = rc.recompute;
          q.selective_op = rc.selective_op;
          q.run_tokens = r.run_tokens;
          const std::string sname(train::sharding_name(sharding));
          try {
            const train::TrainPlan p = train::plan_training(q, inputs);
            if (!p.fits) {
              out.misses.push_back({gpu.id, sname, rc.label, n, train_overflow(p)});
              continue;
            }
            TrainSweepRow row;
            row.gpu = gpu.id;
            row.sharding = sname;
            row.recompute = rc.label;
            row.gpus = n;
            row.billed_gpus = price ? billed_gpus(n, price->lot_sizes) : n;
            row.peak_allocated = p.peak_allocated;
            row.peak_reserved = p.reserved.peak_reserved;
            row.capacity = p.capacity;
            if (p.run) {
              row.hours = p.run->hours;
              row.tokens_per_s = p.speed->tokens_per_s;
              const RentalCover cover = cover_hours(gpu.id, n, p.run->hours + r.margin_h, prices, r.periods);
              row.rental_period = cover.period;
              row.rental_usd = cover.usd;
              if (price) {
                row.cost_usd = static_cast<double>(row.billed_gpus) * price->usd_per_gpu_hour * p.run->hours;
                row.price_basis = price->basis;
              }
            }
            out.rows.push_back(std::move(row));
          } catch (const Error& e) {
            if (e.kind() != ErrorKind::Usage) throw;
            out.misses.push_back({gpu.id, sname, rc.label, n, e.what()});
          }
        }
      }
    }
  }
  // Cheapest run first (unpriced after), then the shorter run (unknown speed last), then fewer GPUs.
  std::stable_sort(out.rows.begin(), out.rows.end(), [](const TrainSweepRow& a, const TrainSweepRow& b) {
    if (a.cost_usd.has_value() != b.cost_usd.has_value()) return a.cost_usd.has_value();
    if (a.cost_usd && *a.cost_usd != *b.cost_usd) return *a.cost_usd < *b.cost_usd;
    if (a.hours.has_value() != b.hours.has_value()) return a.hours.has_value();
    if (a.hours && *a.hours != *b.hours) return *a.hours < *b.hours;
    return a.gpus < b.gpus;
  });
  return out;
}

nlohmann::json train_sweep_json(const TrainSweepRequest& r, const TrainSweepResult& res, std::size_t top) {
  using nlohmann::json;
  const auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json rows = json::array(), misses = json::array(), periods = json::array(), shardings = json::array(),
       recomputes = json::array();
  for (const auto& p : r.periods) periods.push_back({{"label", p.label}, {"hours", p.hours}});
  for (const auto s : r.shardings) shardings.push_back(train::sharding_name(s));
  for (const auto& c : r.recomputes) recomputes.push_back(c.label);
  for (std::size_t i = 0; i < res.rows.size() && i < top; ++i) {
    const auto& x = res.rows[i];
    rows.push_back({{"gpu", x.gpu}, {"gpus", x.gpus}, {"billed_gpus", x.billed_gpus}, {"sharding", x.sharding},
                    {"recompute", x.recompute}, {"verdict", "FITS"}, {"peak_allocated_bytes", x.peak_allocated.count()},
                    {"peak_reserved_bytes", x.peak_reserved.count()}, {"capacity_bytes", x.capacity.count()},
                    {"tokens_per_s", opt(x.tokens_per_s)}, {"hours", opt(x.hours)}, {"cost_usd", opt(x.cost_usd)},
                    {"rental_period", x.rental_period.empty() ? json(nullptr) : json(x.rental_period)},
                    {"rental_usd", opt(x.rental_usd)}, {"price_basis", x.price_basis}});
  }
  for (const auto& m : res.misses)
    misses.push_back({{"gpu", m.gpu}, {"gpus", m.gpus}, {"sharding", m.sharding}, {"recompute", m.recompute},
                      {"why", m.why}, {"verdict", "DOES NOT FIT"}});
  return {{"schema", "vramplan.train-sweep/1"},
          {"model", res.model},
          {"tokens", r.run_tokens},
          {"margin_hours", r.margin_h},
          {"search_space", {{"gpus", res.gpus}, {"counts", r.counts}, {"shardings", shardings}, {"recomputes", recomputes},
                            {"layouts", res.layouts}, {"bound", kMaxTrainSweepLayouts}}},
          {"evaluations", res.layouts},
          {"fitting", res.rows.size()},
          {"periods", periods},
          {"rows", rows},
          {"not_fitting", misses}};
}

std::string train_sweep_text(const TrainSweepRequest& r, const TrainSweepResult& res, std::size_t top) {
  Table t({{"#", Align::Right}, {"gpu", Align::Left}, {"GPUs", Align::Right}, {"sharding", Align::Left},
           {"recompute", Align::Left}, {"peak/total GiB", Align::Right}, {"tokens/s", Align::Right},
           {"hours", Align::Right}, {"$ run", Align::Right}, {"rent", Align::Left}});
  std::vector<std::string> bases;
  for (std::size_t i = 0; i < res.rows.size() && i < top; ++i) {
    const auto& x = res.rows[i];
    const std::string rent = x.rental_period.empty() ? "-" : x.rental_period + (x.rental_usd ? " $" + fixed(*x.rental_usd, 0) : "");
    t.add_row({std::to_string(i + 1), x.gpu,
               std::to_string(x.gpus) + (x.billed_gpus != x.gpus ? ", billed " + std::to_string(x.billed_gpus) : ""),
               x.sharding, x.recompute, fixed(x.peak_allocated.gib(), 1) + "/" + fixed(x.capacity.gib(), 1),
               x.tokens_per_s ? fixed(*x.tokens_per_s, 0) : "-", x.hours ? fixed(*x.hours, 1) : "-",
               x.cost_usd ? fixed(*x.cost_usd, 0) : "-", rent});
    if (!x.price_basis.empty()) {
      const std::string b = x.gpu + ": " + x.price_basis.substr(0, x.price_basis.find(" ("));
      if (std::find(bases.begin(), bases.end(), b) == bases.end()) bases.push_back(b);
    }
  }
  std::string s = "Training layouts for " + res.model + ", cheapest run first (" + format_number("%.4g", r.run_tokens) +
                  " tokens; micro-batch " + std::to_string(r.base.micro_batch) + " x " + std::to_string(r.base.seq_len) +
                  " tokens, " + std::string(train::method_name(r.base.method)) + ", " +
                  std::string(train::optimizer_name(r.base.optimizer)) + ")\n";
  s += t.render_text();
  s += "\n";
  s += std::to_string(res.rows.size());
  s += " fitting of ";
  s += std::to_string(res.layouts);
  s += " layouts (search bounded at " + std::to_string(kMaxTrainSweepLayouts) + ")";
  if (res.rows.size() > top) s += "; first " + std::to_string(top) + " shown (--top)";
  s += "\n";
  if (!res.misses.empty()) {
    s += "not fitting:\n";
    for (const auto& m : res.misses)
      s += "  " + m.gpu + " x" + std::to_string(m.gpus) + " " + layout_text(m.sharding, m.recompute) + ": " + m.why + "\n";
  }
  if (!bases.empty()) {
    s += "prices (USD per GPU-hour, indicative):\n";
    for (const auto& b : bases) s += "  " + b + "\n";
  }
  s += "$ run: billed GPUs (rental lots) x USD per GPU-hour x the run's expected hours (train step time: FLOPs / "
       "(dense peak x training efficiency)); rent: the shortest period covering the run + " + fixed(r.margin_h, 0) +
       " h margin, and its price\n";
  return s;
}

}  // namespace vramplan::plan
