// `vramplan simulate --format markdown`: the capacity answers as a quote section (issue 15,
// item 8). Only what was asked for appears: the targets with --slo, the max rate with
// --find-max-rate, the replicas and their cost with --target-rate, the offline job with --workers.
#include <cmath>

#include "vramplan/core/text.hpp"
#include "vramplan/plan/capacity_report.hpp"
#include "vramplan/core/table.hpp"

namespace vramplan::plan {
namespace {

std::string process_words(const sim::ArrivalSpec& a) {
  switch (a.process) {
    case sim::ArrivalProcess::Poisson: return "Poisson arrivals";
    case sim::ArrivalProcess::Constant: return "constant arrivals";
    case sim::ArrivalProcess::Gamma: return "gamma arrivals (CV " + format_number("%.3g", a.cv) + ")";
  }
  return "";
}

std::string arrivals_words(const sim::WorkloadSpec& w) {
  if (w.trace) return "replayed trace " + w.trace->filename().string();
  if (w.concurrency) return "closed loop of " + std::to_string(*w.concurrency) + " users";
  if (std::isinf(w.arrivals.rate_per_s)) return "all requests queued at t = 0 (offline)";
  return format_number("%.4g", w.arrivals.rate_per_s) + " requests/s, " + process_words(w.arrivals);
}

std::string ms_cell(double seconds) { return format_number("%.1f", seconds * 1e3); }

// A job's length in the unit a reader plans with.
std::string duration_words(double seconds) {
  if (seconds < 120) return format_number("%.0f", seconds) + " s";
  if (seconds < 7200) return format_number("%.1f", seconds / 60) + " min";
  return format_number("%.2f", seconds / 3600) + " h";
}

std::string gpus_words(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " GPU" : " GPUs"); }

}  // namespace

std::string simulate_answers_markdown(const SimulateAnswers& a) {
  const memory::PlanOutcome& plan = a.run.engine.plan;
  const sim::WorkloadSpec& w = a.run.workload;
  const sim::SimResult& r = a.run.result;
  const std::uint64_t gpus = plan.tp * plan.pp;
  std::string s = "## " + plan.model.id + " on " + std::to_string(gpus) + " x " + plan.gpu.name + " (" + plan.plan.engine + ")\n\n";
  Table cfg({{"item", Align::Left}, {"value", Align::Left}});
  cfg.add_row({"model", plan.model.id});
  cfg.add_row({"GPU", plan.gpu.id + ", tp" + std::to_string(plan.tp) + (plan.pp > 1 ? " pp" + std::to_string(plan.pp) : "") +
                          " (" + gpus_words(gpus) + " per replica)"});
  cfg.add_row({"engine", plan.plan.engine + " " + plan.plan.engine_version});
  if (!w.trace)
    cfg.add_row({"request lengths", "prompt " + w.input.source + ", output " + w.output.source});
  if (a.offline) {
    cfg.add_row({"offline job", std::to_string(a.offline->requests) + " requests, all queued at t = 0, split over " +
                                    std::to_string(a.offline->workers) + " worker(s)"});
  } else if (a.replicas) {
    cfg.add_row({"load (--target-rate)", format_number("%.4g", a.replicas->target_rate_per_s) + " requests/s, " +
                                             process_words(w.arrivals)});
  } else if (!a.max_rate) {
    cfg.add_row({"load", arrivals_words(w)});
  }
  if (!a.slo.empty()) {
    std::string targets;
    for (const auto& t : a.slo) targets += (targets.empty() ? "" : ", ") + t.text;
    cfg.add_row({"latency targets (--slo)", targets});
  }
  s += cfg.render_markdown() + "\n";

  if (a.max_rate) {
    const MaxRateAnswer& m = *a.max_rate;
    s += m.found ? "**Max rate per replica within the targets: " + format_number("%.3g", m.rate_per_s) + " requests/s** (above it: " +
                       (m.binding.empty() ? std::string("no probe failed") : m.binding) + "; offline capacity " +
                       format_number("%.3g", m.capacity_per_s) + " requests/s; " +
                       std::to_string(m.probes.size()) + " probes of " + std::to_string(m.requests_per_probe) + " requests).\n\n"
                 : "**No rate meets the targets**: at " + format_number("%.3g", m.probes.front().rate_per_s) +
                       " requests/s already " + m.binding + ".\n\n";
  }
  if (a.replicas) {
    const ReplicaAnswer& rep = *a.replicas;
    s += "**Replicas for " + format_number("%.4g", rep.target_rate_per_s) + " requests/s: " + std::to_string(rep.replicas) + " (" +
         gpus_words(rep.gpus) + ")**, behind a " + rep.router + " router" +
         (rep.met ? "" : "; the targets are still not met at this count") + ".\n\n";
    if (rep.usd_per_hour) {
      Table cost({{"period", Align::Left}, {"USD", Align::Right}});
      cost.add_row({"per hour", format_number("%.2f", *rep.usd_per_hour)});
      for (const auto& p : rep.periods) cost.add_row({p.label, format_number("%.0f", p.usd)});
      if (rep.usd_per_million_output_tokens)
        cost.add_row({"per million output tokens", format_number("%.3f", *rep.usd_per_million_output_tokens)});
      s += cost.render_markdown() + "\nPrices: " + rep.price_basis + ".\n\n";
    }
  }
  if (a.offline) {
    const OfflineAnswer& o = *a.offline;
    s += "**Offline job: " + duration_words(o.makespan_s) + "** for " + std::to_string(o.requests) +
         " requests on " + std::to_string(o.workers) + " worker(s) (" + format_number("%.3g", o.gpu_hours) + " GPU-hours, " +
         format_number("%.0f", o.output_tokens_per_s) + " output tokens/s). With " + format_number("%.4g", o.margin_hours) +
         " h for installation, checks and export (--margin): " +
         (o.period.empty() ? std::string("longer than every rental period given") : "the " + o.period + " rental period") +
         (o.period_usd ? ", " + format_number("%.0f", *o.period_usd) + " USD" : std::string()) + ".\n\n";
    if (!o.price_basis.empty()) s += "Prices: " + o.price_basis + ".\n\n";
  }

  const std::string which =
      a.max_rate && !a.replicas ? "at the max rate, one replica"
      : a.replicas              ? "one replica at its share of the load (the one furthest from the targets, " +
                                      std::to_string(r.arrived) + " of " + std::to_string(a.replicas->requests_simulated) +
                                      " requests simulated)"
      : a.run_is_slowest_worker ? "the slowest worker's share of the job (" + std::to_string(r.arrived) + " of " +
                                      std::to_string(a.offline->requests) + " requests)"
                                : "the workload as given";
  // llama.cpp stops a request whose prompt + output outgrow its slot: it completes, shorter.
  const std::string truncated =
      r.truncated ? ", " + std::to_string(r.truncated) + " of them truncated at the slot's size" : std::string();
  s += "Latency, " + which + " (ms; " + std::to_string(r.completed) + " requests completed" + truncated +
       ", verdict: " + r.verdict.state + "):\n\n";
  Table lat({{"", Align::Left}, {"p50", Align::Right}, {"p90", Align::Right}, {"p99", Align::Right}});
  const auto row = [&](const char* name, const sim::Summary& x) { lat.add_row({name, ms_cell(x.p50), ms_cell(x.p90), ms_cell(x.p99)}); };
  row("TTFT", r.ttft);
  row("TPOT", r.tpot);
  row("end-to-end", r.e2e);
  s += lat.render_markdown() + "\n";
  if (const sim::HeldShares h = sim::held_shares(r, a.run.engine.rules.dp_ranks); h.most)
    s += "Sent requests held back in the queue (share of the run): " + sim::held_shares_text(h) +
         " (docs/simulator.md#held-back).\n\n";
  if (a.slo_report) {
    s += "Targets " + std::string(a.slo_report->met ? "met" : "**not met**") + (a.slo_report->overloaded ? " (overloaded)" : "") + ":";
    for (std::size_t i = 0; i < a.slo.size(); ++i)
      s += std::string(i ? "," : "") + " " + a.slo[i].text + " at " + format_number("%.1f", a.slo_report->values[i] * 1e3) + " ms";
    s += ".\n\n";
  }
  if (!a.launch.argv.empty()) {
    s += "Start " + std::string(a.replicas || a.offline ? "each replica" : "the engine") + ":\n\n```sh\n" + a.launch.line() + "\n```\n\n";
  }
  if (!a.launch.note.empty()) s += a.launch.note + ".\n\n";
  s += "Simulated (docs/simulator.md); step times " +
       std::string(a.run.engine.calibrated ? "calibrated" : "uncalibrated (published card figures x default efficiency)") + ".\n";
  return s;
}

}  // namespace vramplan::plan
