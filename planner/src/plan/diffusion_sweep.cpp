// `sweep` over diffusion pipelines: plan_diffusion per (pipeline, GPU, batch, memory mode), ranked
// by the cost of an image across all of them. Formulas: plan/diffusion_sweep.hpp, docs/diffusion.md "Sweep".
#include "vramplan/plan/diffusion_sweep.hpp"

#include <algorithm>
#include <limits>

#include "vramplan/core/error.hpp"
#include "vramplan/core/table.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "plan/sweep_gpus.hpp"

namespace vramplan::plan {
namespace {

std::string denoiser_format(const diffusion::DiffusionPlan& p) {
  for (const auto& w : p.weights)
    if (w.role == diffusion::Role::Denoiser) return w.format;
  return p.dtype;
}

// Cheapest image first; points without a price or a time after those with one; then faster, then
// the smaller batch and the lighter memory mode (fewer host transfers).
bool cheaper(const DiffusionSweepRow& a, const DiffusionSweepRow& b) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double ca = a.usd_per_1000_images.value_or(inf), cb = b.usd_per_1000_images.value_or(inf);
  if (ca != cb) return ca < cb;
  const double sa = a.seconds_per_image.value_or(inf), sb = b.seconds_per_image.value_or(inf);
  if (sa != sb) return sa < sb;
  if (a.offload != b.offload) return a.offload < b.offload;
  if (a.offload_text != b.offload_text) return a.offload_text < b.offload_text;
  if (a.batch != b.batch) return a.batch < b.batch;
  if (a.gpu != b.gpu) return a.gpu < b.gpu;
  return a.pipeline < b.pipeline;
}

}  // namespace

DiffusionSweepResult run_diffusion_sweep(const DiffusionSweepRequest& r, const DataRoot& root) {
  if (r.batches.empty() || r.offloads.empty()) throw_usage("sweep: --batch and --offload need at least one value");
  DiffusionSweepResult out;
  out.periods = r.periods;
  GpuCatalog catalog = GpuCatalog::load(root.data_file("gpus.json"));
  const std::vector<GpuSpec> gpus = sweep_candidates(catalog, r.gpus, r.include_mig);
  if (gpus.empty()) throw_usage("no GPU matches the sweep's GPU selection");
  const PriceBook prices = load_price_book(root, r.prices_file);
  const std::vector<std::string> models = r.models.empty() ? std::vector<std::string>{r.base.model} : r.models;
  for (const auto& model : models) {
    if (std::count(models.begin(), models.end(), model) > 1) throw_usage("--model names " + model + " twice");
  }
  for (const auto& model : models) {
    DiffusionSweepPipeline seen;
    for (const auto& gpu : gpus)
      for (const auto& mode : r.offloads)
        for (const auto batch : r.batches) {
          diffusion::DiffusionRequest q = r.base;
          q.model = model;
          q.gpu = gpu.id;
          q.batch = batch;
          q.offload = mode.kind;
          q.group = mode.group;
          const diffusion::Offload offload = mode.kind;
          const std::string offload_text = diffusion::offload_text(mode.kind, mode.group);
          const auto p = diffusion::plan_diffusion(q, root);  // a bad request fails here, on the first point
          ++out.evaluations;
          seen = {p.pipeline.id, p.pipeline.class_name, p.width, p.height, p.steps};
          if (!p.fits || (r.conservative && p.marginal)) {
            out.misses.push_back({p.pipeline.id, gpu.id, batch, offload, offload_text,
                                  "needs " + format_gib(p.required) + " of " + format_gib(p.capacity) +
                                      (p.fits ? " (MARGINAL: " + format_gib(p.upper_required) +
                                                    " on the accuracy records' upper bound; --conservative)"
                                              : "")});
            continue;
          }
          DiffusionSweepRow row;
          row.pipeline = p.pipeline.id;
          row.steps = p.steps;
          row.gpu = gpu.id;
          row.batch = batch;
          row.offload = offload;
          row.offload_text = offload_text;
          row.weights = denoiser_format(p);
          row.required = p.required;
          row.capacity = p.capacity;
          row.spare_fraction = p.capacity.count() ? 1.0 - p.required.gib() / p.capacity.gib() : 0;
          if (p.seconds_per_call && *p.seconds_per_call > 0) {
            row.seconds_per_image = *p.seconds_per_call / static_cast<double>(batch);
            row.images_per_s = p.images_per_s;
          }
          if (offload == diffusion::Offload::Sequential)
            row.note = "sequential offload streams every weight each step: the time is a lower bound";
          if (offload == diffusion::Offload::Group)
            row.note = "group offloading copies the offloaded groups each step: the time is a lower bound";
          if (p.marginal)
            row.note = "MARGINAL: " + format_gib(p.upper_required) + " on the accuracy records' upper bound" +
                       (row.note.empty() ? "" : "; " + row.note);
          if (const auto price = prices.price(gpu.id)) {
            row.billed_gpus = billed_gpus(1, price->lot_sizes);
            row.price_basis = price->basis;
            const double usd_per_hour = static_cast<double>(row.billed_gpus) * price->usd_per_gpu_hour;
            for (const auto& period : r.periods) row.cost_usd.push_back(usd_per_hour * period.hours);
            // USD per hour / images per hour x 1000: the rented lot serves one pipeline.
            if (row.seconds_per_image) row.usd_per_1000_images = usd_per_hour * *row.seconds_per_image / 3600 * 1000;
          }
          out.rows.push_back(std::move(row));
        }
    out.pipelines.push_back(seen);
  }
  for (const auto& x : out.pipelines) {
    out.pipeline += (out.pipeline.empty() ? "" : ",") + x.id;
    out.class_name += (out.class_name.empty() ? "" : ",") + x.class_name;
  }
  out.width = out.pipelines.front().width;
  out.height = out.pipelines.front().height;
  out.steps = out.pipelines.front().steps;
  std::stable_sort(out.rows.begin(), out.rows.end(), cheaper);
  return out;
}

nlohmann::json diffusion_sweep_json(const DiffusionSweepResult& r, std::size_t top) {
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json rows = nlohmann::json::array(), misses = nlohmann::json::array(), periods = nlohmann::json::array();
  for (const auto& p : r.periods) periods.push_back({{"label", p.label}, {"hours", p.hours}});
  nlohmann::json pipelines = nlohmann::json::array();
  for (const auto& p : r.pipelines)
    pipelines.push_back({{"id", p.id}, {"class_name", p.class_name}, {"width", p.width}, {"height", p.height}, {"steps", p.steps}});
  for (std::size_t i = 0; i < r.rows.size() && i < top; ++i) {
    const auto& x = r.rows[i];
    rows.push_back({{"pipeline", x.pipeline}, {"steps", x.steps}, {"gpu", x.gpu}, {"batch", x.batch}, {"offload", x.offload_text},
                    {"weights", x.weights}, {"required_bytes", x.required.count()}, {"capacity_bytes", x.capacity.count()},
                    {"spare_fraction", x.spare_fraction}, {"seconds_per_image", opt(x.seconds_per_image)},
                    {"images_per_s", opt(x.images_per_s)}, {"usd_per_1000_images", opt(x.usd_per_1000_images)},
                    {"billed_gpus", x.billed_gpus},
                    {"cost_usd", x.cost_usd.empty() ? nlohmann::json(nullptr) : nlohmann::json(x.cost_usd)},
                    {"price_basis", x.price_basis}, {"note", x.note}});
  }
  for (const auto& m : r.misses)
    misses.push_back({{"pipeline", m.pipeline}, {"gpu", m.gpu}, {"batch", m.batch},
                      {"offload", m.offload_text}, {"why", m.why},
                      {"verdict", "DOES NOT FIT"}});
  return {{"schema", "vramplan.diffusion_sweep/1"}, {"pipeline", r.pipeline}, {"class_name", r.class_name},
          {"width", r.width}, {"height", r.height}, {"steps", r.steps}, {"pipelines", pipelines},
          {"evaluations", r.evaluations}, {"fitting", r.rows.size()}, {"periods", periods}, {"rows", rows},
          {"not_fitting", misses}};
}

std::string diffusion_sweep_text(const DiffusionSweepResult& r, std::size_t top) {
  const bool several = r.pipelines.size() > 1;  // then each row names its pipeline
  std::vector<Table::Column> cols = {{"#", Align::Right}};
  if (several) cols.push_back({"pipeline", Align::Left});
  for (const Table::Column& c : std::vector<Table::Column>{
           {"gpu", Align::Left}, {"batch", Align::Right}, {"offload", Align::Left}, {"denoiser", Align::Left},
           {"GiB need/cap", Align::Right}, {"s/image", Align::Right}, {"$/1k img", Align::Right}})
    cols.push_back(c);
  for (const auto& p : r.periods) cols.push_back({"$ " + p.label, Align::Right});
  Table t(cols);
  for (std::size_t i = 0; i < r.rows.size() && i < top; ++i) {
    const auto& x = r.rows[i];
    std::vector<std::string> cells = {std::to_string(i + 1)};
    if (several) cells.push_back(x.pipeline);
    for (std::string c : {x.gpu, std::to_string(x.batch), x.offload_text, x.weights,
                          fixed(x.required.gib(), 1) + "/" + fixed(x.capacity.gib(), 1),
                          x.seconds_per_image ? fixed(*x.seconds_per_image, 2) : std::string("-"),
                          x.usd_per_1000_images ? fixed(*x.usd_per_1000_images, 2) : std::string("-")})
      cells.push_back(std::move(c));
    for (std::size_t k = 0; k < r.periods.size(); ++k)
      cells.push_back(k < x.cost_usd.size() ? format_number("%.0f", x.cost_usd[k]) : "-");
    t.add_row(cells);
  }
  auto describe = [](const DiffusionSweepPipeline& p) {
    return p.id + " (" + p.class_name + "), " + std::to_string(p.width) + "x" + std::to_string(p.height) + ", " +
           std::to_string(p.steps) + " steps";
  };
  std::string s;
  if (several) {
    s = std::to_string(r.pipelines.size()) + " pipelines, cheapest image first across them:\n";
    for (const auto& p : r.pipelines) s += "  " + describe(p) + "\n";
  } else {
    s = describe(r.pipelines.front()) + ": cheapest image first\n";
  }
  s += t.render_text();
  s += "\n" + std::to_string(r.rows.size()) + " fitting of " + std::to_string(r.evaluations) + " points evaluated";
  if (r.rows.size() > top) s += "; first " + std::to_string(top) + " shown (--top)";
  s += "\n";
  if (!r.misses.empty()) {
    s += "not fitting:\n";
    for (const auto& m : r.misses)
      s += "  " + (several ? m.pipeline + " on " : std::string()) + m.gpu + " batch " + std::to_string(m.batch) +
           " offload " + m.offload_text + ": " + m.why + "\n";
  }
  s += "s/image: seconds per call / batch (compute-bound step time, docs/diffusion.md); $/1k img: the GPU's hourly "
       "price (billed lot) x s/image / 3600 x 1000; sequential offload's time is a lower bound\n";
  return s;
}

}  // namespace vramplan::plan
