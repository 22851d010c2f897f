// `vramplan report`: the batch table of the recommended layout with its throughput and latency
// charts, and the accuracy basis (report_sections.hpp).
#include <cmath>
#include <limits>

#include "report_sections.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/model/load.hpp"
#include "vramplan/report/svg_chart.hpp"

namespace vramplan::cli {
namespace {

// The summary's lines as separate notes (it is written for a terminal, one fact per line).
void add_lines_as_notes(report::HtmlPage& page, const std::string& text) {
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    if (end > start) page.note(text.substr(start, end - start));
    start = end + 1;
  }
}

}  // namespace

void add_batch_section(report::HtmlPage& page, const plan::CheckOutcome& o) {
  page.heading("Batch range of the recommended layout");
  if (!o.range) {
    // A pooling model generates nothing: no decode or TTFT to chart against the batch. Its figure
    // is what plan prints, inputs/s (sim/serving_plan.cpp pooling_performance).
    if (o.eval.plan.engine_view.value("runner", "") == "pooling")
      page.paragraph(o.model_id + " is a pooling model: it generates no tokens, so there is no batch table of decode "
                     "throughput, TPOT or TTFT. Its throughput in inputs/s is in vramplan plan --model " + o.model_id +
                     " --gpu " + o.gpu.id + " --engine " + o.eval.plan.engine + ", an offline job's in plan --documents N.");
    else
      page.paragraph("Not computed.");
    return;
  }
  page.table_html(plan::batch_range_table(o).render_html());
  add_lines_as_notes(page, plan::batch_range_summary(o));
  const double none = std::numeric_limits<double>::quiet_NaN();
  report::LineChart tput{"batch (concurrent sequences, all replicas; log2 scale)", "output tokens/s", {}, {}, true};
  report::LineChart tpot{tput.x_label, "TPOT, ms per output token", {}, {}, true};
  report::LineChart ttft{tput.x_label, "burst TTFT, s", {}, {}, true};
  report::Series tokens{"est. output tokens/s (expected)", {}}, tpot_ms{"TPOT (expected)", {}}, ttft_s{"burst TTFT (expected)", {}};
  for (const auto& row : o.range->rows) {
    tput.x.push_back(static_cast<double>(row.batch));
    tokens.values.push_back(row.tokens_per_s ? row.tokens_per_s->expected : none);
    tpot_ms.values.push_back(row.tpot_s ? row.tpot_s->expected * 1e3 : none);
    ttft_s.values.push_back(row.ttft_s ? row.ttft_s->expected : none);
  }
  if (!o.range->unavailable.empty() || tput.x.empty()) return;  // no throughput estimate: nothing to draw
  tpot.x = ttft.x = tput.x;
  tput.series = {tokens};
  tpot.series = {tpot_ms};
  ttft.series = {ttft_s};
  page.figure(report::svg_line_chart(tput, "estimated output tokens per second vs batch"), "Throughput vs batch");
  page.figure(report::svg_line_chart(tpot, "time per output token vs batch"), "Latency vs batch: time per output token");
  page.figure(report::svg_line_chart(ttft, "burst time to first token vs batch"),
              "Latency vs batch: time to first token when the whole batch arrives at once");
}

void add_accuracy_section(report::HtmlPage& page, const plan::SweepResult& sweep, const std::vector<ReportOption>& options) {
  page.heading("Accuracy basis and upper bounds");
  if (options.empty()) {
    page.paragraph("No option fits: no plan to state the basis of.");
    return;
  }
  const plan::CheckOutcome& o = options.front().check;
  page.key_values({{"engine profile", o.eval.plan.engine_profile_note},
                   {"model read from", model_source_text(o.model_source)},
                   {"upper bounds", "data/" + o.bounds_source + ": per component, the largest under-prediction the "
                                    "engine's accuracy records show"},
                   {"decision", "FITS holds on the upper bounds; MARGINAL fits on the expected values only"}});
  std::vector<memory::Component> non_kv = o.eval.plan.weights;
  non_kv.insert(non_kv.end(), o.eval.plan.activation.begin(), o.eval.plan.activation.end());
  non_kv.insert(non_kv.end(), o.eval.plan.overhead.begin(), o.eval.plan.overhead.end());
  Table margins({{"components", Align::Left}, {"expected GiB", Align::Right}, {"bound adds GiB", Align::Right},
                 {"records behind the bound", Align::Left}});
  for (const auto& use : o.bounds.uses(non_kv))
    margins.add_row({use.margin->prefix + "*", fixed(use.expected.gib(), 2), fixed(use.extra.gib(), 2), use.margin->source});
  page.heading("Margins applied to the recommended layout (per GPU)", 3);
  if (margins.rows() == 0) page.paragraph("None: this engine has no margins in data/" + o.bounds_source + ".");
  else page.table_html(margins.render_html());

  Table sides({{"option", Align::Left}, {"needed GiB", Align::Right}, {"needed, upper GiB", Align::Right},
               {"held GiB", Align::Right}, {"held, upper GiB", Align::Right}, {"KV pool GiB", Align::Right},
               {"KV pool, upper GiB", Align::Right}, {"capacity GiB", Align::Right}, {"verdict", Align::Left}});
  for (const auto& opt : options) {
    const plan::FitResult& f = opt.check.eval.fit;
    sides.add_row({"#" + std::to_string(opt.row + 1) + " " + sweep.rows[opt.row].gpu, fixed(f.expected.needed.gib(), 2),
                   fixed(f.upper.needed.gib(), 2), fixed(f.expected.held.gib(), 2), fixed(f.upper.held.gib(), 2),
                   fixed(f.expected.kv_pool.gib(), 2), fixed(f.upper.kv_pool.gib(), 2), fixed(f.expected.capacity.gib(), 2),
                   std::string(plan::verdict_name(f.verdict)) + (f.reason.empty() ? "" : ": " + f.reason)});
  }
  page.heading("Expected values and upper bounds per option", 3);
  page.table_html(sides.render_html());
}

}  // namespace vramplan::cli
