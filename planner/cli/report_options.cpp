// `vramplan report`: the recommended layout, the alternatives with their rental cost, and the
// memory chart of each GPU option (report_sections.hpp).
#include <set>

#include "report_sections.hpp"
#include "sweep_common.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/report/svg_chart.hpp"

namespace vramplan::cli {
namespace {

std::string report_layout_words(const plan::SweepRow& x) {
  std::string s = std::to_string(x.gpus) + (x.gpus == 1 ? " GPU" : " GPUs") + " (tp" + std::to_string(x.tp);
  if (x.pp > 1) s += " pp" + std::to_string(x.pp);
  if (x.replicas > 1) s += ", " + std::to_string(x.replicas) + " replicas";
  return s + ")";
}

}  // namespace

void add_options_section(report::HtmlPage& page, const plan::SweepResult& r, std::size_t top) {
  page.heading("Recommended layout");
  if (r.rows.empty()) {
    page.paragraph("No configuration of the sweep fits: see \"Not fitting\" below for what breaks first in each.");
  } else {
    const plan::SweepRow& x = r.rows.front();
    std::vector<std::pair<std::string, std::string>> kv = {
        {"model", x.model},
        {"weights", x.weights},
        {"GPU", x.gpu},
        {"layout", report_layout_words(x)},
        {"billed GPUs", std::to_string(x.billed_gpus) + (x.billed_gpus != x.gpus ? " (the card is rented in lots)" : "")},
        {"context x batch", std::to_string(x.context) + " tokens x " + std::to_string(x.batch) + " sequences"},
        {"verdict", std::string(plan::verdict_name(x.verdict))},
        {"memory per GPU", "needs " + fixed(x.needed_per_gpu.gib(), 2) + " GiB, engine holds " + fixed(x.held_per_gpu.gib(), 2) +
                               " of " + fixed(x.capacity.gib(), 2) + " GiB"},
        {"est. output tokens/s", x.tokens_per_s > 0 ? fixed(x.tokens_per_s, 0) : "not estimated"}};
    for (std::size_t k = 0; k < r.periods.size(); ++k)
      kv.emplace_back("cost for " + r.periods[k].label,
                      x.cost_usd.empty() ? "no price for " + x.gpu : "USD " + fixed(x.cost_usd[k], 0));
    if (!x.price_basis.empty()) kv.emplace_back("price basis", x.price_basis);
    page.key_values(kv);
    if (x.launch && !x.launch->argv.empty()) {
      page.heading("Start it", 3);
      page.code(x.launch->line());
      if (!x.launch->note.empty()) page.note(x.launch->note + ".");
    }
  }

  page.heading("Alternatives from the sweep");
  page.paragraph("Configurations that fit, cheapest first (the first one is the recommendation). Cost: billed GPUs x "
                 "USD per GPU-hour x the period's hours.");
  page.table_html(sweep_table(r, top).render_html(0));
  std::string counts = std::to_string(r.rows.size()) + " fitting of " + std::to_string(r.evaluations) + " points evaluated";
  if (r.rows.size() > top) counts += "; the first " + std::to_string(top) + " shown (--top)";
  page.note(counts + ". Billed GPUs: the smallest combination of the card's lot sizes (data/prices.json) covering the "
                     "GPUs needed. MARGINAL: fits on the expected values, not on the upper bounds.");
  std::set<std::string> bases;
  for (std::size_t i = 0; i < r.rows.size() && i < top; ++i)
    if (!r.rows[i].price_basis.empty()) bases.insert(r.rows[i].gpu + ": " + r.rows[i].price_basis);
  if (!bases.empty()) {
    page.heading("Prices (USD per GPU-hour, indicative)", 3);
    page.bullets({bases.begin(), bases.end()});
  }
  if (!r.misses.empty()) {
    page.heading("Not fitting", 3);
    std::vector<std::string> items;
    for (const auto& m : r.misses)
      items.push_back(m.model + " " + m.weights + " " + m.gpu + " tp" + std::to_string(m.tp) +
                      (m.pp > 1 ? " pp" + std::to_string(m.pp) : "") + ": " + m.why);
    page.bullets(items);
  }
}

report::StackedBarChart memory_chart(const plan::SweepResult& sweep, const std::vector<ReportOption>& options) {
  report::StackedBarChart c;
  c.value_label = "memory per GPU, GiB (2^30 bytes)";
  c.unit = "GiB";
  c.limit_label = "GPU capacity (as the runtime reports it)";
  c.stacks = {{"weights", {}}, {"activation peak", {}}, {"runtime overhead", {}}, {"KV cache of the workload", {}},
              {"rest of the KV pool the engine holds", {}}};
  const auto add_bar = [&](const std::string& label, const plan::FitFigures& f, bool held) {
    c.bars.push_back({label, c.groups.size() - 1});
    const double rest = held && f.held > f.needed ? (f.held - f.needed).gib() : 0;
    const double values[] = {f.weights.gib(), f.activation.gib(), f.overhead.gib(), f.kv_needed.gib(), rest};
    for (std::size_t k = 0; k < c.stacks.size(); ++k) c.stacks[k].values.push_back(values[k]);
  };
  for (const auto& o : options) {
    const plan::SweepRow& x = sweep.rows[o.row];
    const plan::FitResult& fit = o.check.eval.fit;
    c.groups.push_back({"#" + std::to_string(o.row + 1) + " " + x.gpu + ", " + report_layout_words(x) + ": capacity " +
                            fixed(fit.expected.capacity.gib(), 1) + " GiB, " + std::string(plan::verdict_name(fit.verdict)),
                        fit.expected.capacity.gib()});
    add_bar("needed", fit.expected, false);
    add_bar("needed, upper bound", fit.upper, false);
    add_bar("held by " + fit.engine, fit.expected, true);
  }
  return c;
}

void add_memory_section(report::HtmlPage& page, const plan::SweepResult& sweep, const std::vector<ReportOption>& options) {
  page.heading("Memory per GPU option");
  if (options.empty()) {
    page.paragraph("No option fits: nothing to chart.");
    return;
  }
  page.paragraph("For the cheapest fitting configuration on each GPU: what the workload needs (expected, and on the upper "
                 "bounds of data/accuracy_bounds.json) and what the engine holds on the card, against the card's capacity.");
  page.figure(report::svg_stacked_bars(memory_chart(sweep, options), "memory per component for each GPU option"),
              "Memory per GPU by component: needed vs held (GiB per GPU)");
  page.note("Needed: weights + activation peak + runtime overhead + the KV cache of the requested sequences. Held: what "
            "the engine allocates (vLLM, SGLang, TensorRT-LLM preallocate a KV pool from what their budget leaves), what "
            "nvidia-smi shows. The dashed line is the card's capacity.");
}

}  // namespace vramplan::cli
