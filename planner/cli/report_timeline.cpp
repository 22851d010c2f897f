// `vramplan report --simulate`: the simulated run of the recommended layout and its timeline
// charts (KV usage, running / waiting, latency percentiles per sample window).
#include <algorithm>
#include <cmath>
#include <limits>

#include "report_sections.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/report/svg_chart.hpp"

namespace vramplan::cli {
namespace {

std::string percentiles_ms(const sim::Summary& s) {
  return "p50 " + fixed(s.p50 * 1e3, 1) + " / p90 " + fixed(s.p90 * 1e3, 1) + " / p99 " + fixed(s.p99 * 1e3, 1) + " ms";
}

// A sent request left waiting: each limit's share of the run, or that nothing held one.
std::string held_back_words(const sim::HeldShares& h) {
  return h.most ? sim::held_shares_text(h) : "never: every request joined the first step formed after it was sent";
}

}  // namespace

void add_simulation_section(report::HtmlPage& page, const plan::SimulateAnswers& a,
                            const std::vector<sim::TimelineSample>& timeline) {
  const sim::SimResult& r = a.run.result;
  const memory::PlanOutcome& plan = a.run.engine.plan;
  page.heading("Simulated serving run");
  page.paragraph("The recommended layout (one replica: " + plan.gpu.id + ", tp" + std::to_string(plan.tp) +
                 (plan.pp > 1 ? " pp" + std::to_string(plan.pp) : "") + ", " + plan.plan.engine + " " +
                 plan.plan.engine_version + ") replaying the workload below: continuous batching over its paged KV pool, "
                 "each step timed by the performance model (docs/simulator.md).");
  const sim::WorkloadSpec& w = a.run.workload;
  page.key_values({{"arrivals", std::isinf(w.arrivals.rate_per_s) ? std::string("all requests queued at t = 0")
                                                                   : format_number("%.4g", w.arrivals.rate_per_s) + " requests/s"},
                   {"request lengths", "prompt " + w.input.source + ", output " + w.output.source},
                   {"requests completed", std::to_string(r.completed) + " of " + std::to_string(r.arrived) +
                                              (r.rejected ? " (" + std::to_string(r.rejected) + " rejected)" : "")},
                   {"duration", fixed(r.duration_s, 1) + " s"},
                   {"output tokens/s", r.duration_s > 0 ? fixed(r.output_tokens / r.duration_s, 0) : "-"},
                   {"TTFT", percentiles_ms(r.ttft)},
                   {"TPOT", percentiles_ms(r.tpot)},
                   {"end-to-end", percentiles_ms(r.e2e)},
                   {"KV cache usage", "mean " + percent(r.kv_usage.mean, 1) + ", p99 " + percent(r.kv_usage.p99, 1)},
                   {"preemptions", std::to_string(r.preemptions)},
                   {"held back in the queue", held_back_words(sim::held_shares(r, a.run.engine.rules.dp_ranks))},
                   {"verdict", r.verdict.explanation}});
  if (timeline.size() < 2) {
    page.note("The run was shorter than two timeline samples: no timeline to draw.");
    return;
  }
  const double none = std::numeric_limits<double>::quiet_NaN();
  const std::string x_label = "simulated time, s";
  report::LineChart kv{x_label, "KV in use, % of pool", {}, {{"KV blocks in use", {}}}, false};
  report::LineChart queue{x_label, "requests", {}, {{"running", {}}, {"waiting", {}}}, false};
  report::LineChart ttft{x_label, "TTFT, s", {}, {{"TTFT p50", {}}, {"TTFT p99", {}}}, false};
  report::LineChart tpot{x_label, "TPOT, ms", {}, {{"TPOT p50", {}}, {"TPOT p99", {}}}, false};
  for (const auto& t : timeline) {
    kv.x.push_back(t.t_s);
    kv.series[0].values.push_back(t.kv_usage * 100);
    queue.series[0].values.push_back(static_cast<double>(t.running));
    queue.series[1].values.push_back(static_cast<double>(t.waiting));
    ttft.series[0].values.push_back(t.ttft_window.count ? t.ttft_window.p50 : none);
    ttft.series[1].values.push_back(t.ttft_window.count ? t.ttft_window.p99 : none);
    tpot.series[0].values.push_back(t.tpot_window.count ? t.tpot_window.p50 * 1e3 : none);
    tpot.series[1].values.push_back(t.tpot_window.count ? t.tpot_window.p99 * 1e3 : none);
  }
  queue.x = ttft.x = tpot.x = kv.x;
  const std::string every = format_number("%.3g", timeline.size() > 1 ? timeline[1].t_s - timeline[0].t_s : 0);
  page.figure(report::svg_line_chart(kv, "KV cache usage over time"), "KV cache usage over time");
  page.figure(report::svg_line_chart(queue, "running and waiting requests over time"), "Requests running and waiting over time");
  page.figure(report::svg_line_chart(ttft, "time to first token percentiles over time"),
              "Time to first token over time (requests whose first token came in each " + every + " s window)");
  page.figure(report::svg_line_chart(tpot, "time per output token percentiles over time"),
              "Time per output token over time (requests finished in each " + every + " s window)");
  if (!(r.held_back.total() > 0)) return;
  // What held the queue, per window: the growth of each limit's held seconds between two samples
  // over the window (per engine of a DP server). A step longer than the window counts where it
  // ends, so a share is capped at 100 %.
  const double engines = static_cast<double>(std::max<std::uint64_t>(1, a.run.engine.rules.dp_ranks));
  report::LineChart held{x_label, "share of the window, %", kv.x, {}, false};
  for (int l = 0; l < sim::kHeldLimits; ++l) {
    report::Series series{sim::kHeldLimitWords[l], {none}};
    for (std::size_t i = 1; i < timeline.size(); ++i) {
      const double window = (timeline[i].t_s - timeline[i - 1].t_s) * engines;
      const double grew = timeline[i].held_back.seconds[l] - timeline[i - 1].held_back.seconds[l];
      series.values.push_back(window > 0 ? std::min(100.0, 100 * grew / window) : none);
    }
    held.series.push_back(std::move(series));
  }
  page.figure(report::svg_line_chart(held, "what held sent requests in the queue over time"),
              "What held sent requests in the queue: each limit's share of each " + every +
                  " s window (docs/simulator.md#held-back)");
}

void add_training_section(report::HtmlPage& page, const train::TrainPlan& p) {
  page.heading("Training plan");
  page.paragraph(p.model_id + " on " + p.gpu_name + ": " + std::string(train::method_name(p.request.method)) + ", " +
                 std::string(train::optimizer_name(p.request.optimizer)) + ", sharding " +
                 std::string(train::sharding_name(p.request.sharding)) + ", over " +
                 std::to_string(p.request.parallel.gpus) + " GPU(s), micro-batch " + std::to_string(p.request.micro_batch) +
                 " x " + std::to_string(p.request.seq_len) + " tokens. Peak allocated per GPU: " +
                 fixed(p.peak_allocated.gib(), 2) + " GiB in the " + p.peak_phase + " phase of " +
                 fixed(p.capacity.gib(), 2) + " GiB: " + (p.fits ? "fits." : "does not fit."));
  report::StackedBarChart c;
  c.value_label = "memory per GPU, GiB (2^30 bytes)";
  c.unit = "GiB";
  c.limit_label = "GPU capacity";
  c.groups = {{p.gpu_id + ": capacity " + fixed(p.capacity.gib(), 1) + " GiB", p.capacity.gib()}};
  c.bars = {{"forward/backward", 0}, {"optimizer step", 0}};
  const double resident = p.resident.gib();
  c.stacks = {{"resident: weights, optimizer states", {resident, resident}},
              {"forward/backward: activations, logits", {p.forward_backward.gib(), 0}},
              {"optimizer step: gradients, temporaries", {0, p.optimizer_step.gib()}}};
  page.figure(report::svg_stacked_bars(c, "training memory per phase"),
              "Training memory per GPU at the peak of each phase (GiB per GPU)");
  Table t({{"component", Align::Left}, {"phase", Align::Left}, {"GiB", Align::Right}, {"formula", Align::Left}});
  for (const auto& g : p.gpu) t.add_row({g.part.name, g.phase, fixed(g.part.bytes.gib(), 3), g.part.explain});
  page.table_html(t.render_html());
  for (const auto& n : p.notes) page.note(n);
}

}  // namespace vramplan::cli
