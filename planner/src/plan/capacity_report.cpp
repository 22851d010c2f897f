#include "vramplan/core/text.hpp"
#include "vramplan/plan/capacity_report.hpp"

#include <cmath>
#include <cstdio>

#include "vramplan/core/error.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"

namespace vramplan::plan {
namespace {

double round6(double v) { return rounded(v, 6); }
nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(round6(*v)) : nlohmann::json(nullptr); }

PriceBook price_book(const SimulateQuestions& q, const DataRoot& root) {
  return load_price_book(root, q.prices_file ? std::optional<std::filesystem::path>(*q.prices_file) : std::nullopt);
}

nlohmann::json slo_json(const std::vector<SloTarget>& slo, const SloReport& rep) {
  nlohmann::json targets = nlohmann::json::array();
  for (std::size_t i = 0; i < slo.size(); ++i)
    targets.push_back({{"target", slo[i].text}, {"limit_ms", round6(slo[i].limit_s * 1e3)},
                       {"value_ms", round6(rep.values[i] * 1e3)}, {"met", rep.ratios[i] <= 1}});
  return {{"met", rep.met}, {"overloaded", rep.overloaded}, {"targets", targets}};
}

}  // namespace

SimulateAnswers answer_simulate(const SimulateQuestions& q, const DataRoot& root) {
  if ((q.find_max_rate || q.target_rate) && q.slo.empty())
    throw_usage("--find-max-rate and --target-rate need latency targets: --slo \"p99_ttft<=2s,p99_tpot<=60ms\"");
  if (q.workers && !std::isinf(q.request.workload.arrivals.rate_per_s))
    throw_usage("--workers: an offline job queues everything at t = 0; give --rate inf");
  if (q.request.cold_start.enabled && (q.find_max_rate || q.target_rate || q.workers))
    throw_usage("--cold-start applies to one run of a freshly started server, not to --find-max-rate, --target-rate or --workers");
  SimulateAnswers a;
  a.slo = q.slo;
  a.periods = q.periods;
  a.run.engine = sim::prepare_engine(q.request.plan, root);
  a.run.workload = q.request.workload;
  a.run.workload.trace_max_total_tokens = a.run.engine.rules.max_model_len;
  a.run.timeout_s = q.request.options.timeout_s;
  a.launch = launch_command(a.run.engine.plan, q.request.plan.args, q.request.plan.model);
  const sim::PreparedEngine& engine = a.run.engine;
  if (q.find_max_rate || q.target_rate) {
    a.max_rate = find_max_rate(engine, q.request.workload, q.slo, q.options);
    a.run.result = a.max_rate->at_rate;
    a.run.workload.arrivals.rate_per_s = a.max_rate->rate_per_s;
    a.run.workload.requests = q.options.requests_per_probe;
    if (q.target_rate) {
      a.replicas = replicas_for(engine, q.request.workload, q.slo, *q.target_rate, *a.max_rate, price_book(q, root),
                                q.periods, q.options);
      if (a.replicas->replicas > 0) {
        // The replica shown: its share of the load, and the requests the router sent it (of
        // requests_simulated in all).
        a.run.result = a.replicas->per_replica;
        a.run.workload.arrivals.rate_per_s = *q.target_rate / static_cast<double>(a.replicas->replicas);
        a.run.workload.requests = a.run.result.arrived;
      }
    }
  } else if (q.workers) {
    // An offline job: the run shown is the slowest worker's share (whose time is the makespan),
    // not one engine with every request of the job.
    a.offline = offline_job(engine, q.request.workload, *q.workers, q.margin_hours, price_book(q, root), q.periods);
    const sim::SimOptions options = sim::client_options(q.request.workload, q.request.options);
    a.run.result = offline_worker_run(engine, a.run.workload, *q.workers, a.offline->slowest_worker, options);
    a.run.workload.requests = a.run.result.arrived;
    a.run_is_slowest_worker = true;
  } else {
    const sim::SimOptions options = sim::client_options(q.request.workload, q.request.options);
    const auto source = sim::make_request_source(a.run.workload);
    auto [clock, cold] = sim::step_clock_for(engine, q.request, root);
    a.run.result = sim::simulate_on(engine, clock, *source, options);
    if (cold) a.run.cold = *cold;
  }
  if (!q.slo.empty()) a.slo_report = check_slo(a.run.result, q.slo);
  if (q.workers && !a.offline)
    a.offline = offline_job(engine, q.request.workload, *q.workers, q.margin_hours, price_book(q, root), q.periods);
  return a;
}

nlohmann::json simulate_answers_json(const SimulateAnswers& a) {
  nlohmann::json j = sim::simulate_json(a.run);
  j["launch"] = launch_json(a.launch);
  if (a.slo_report) j["slo"] = slo_json(a.slo, *a.slo_report);
  nlohmann::json cap = nlohmann::json::object();
  if (a.max_rate) {
    const MaxRateAnswer& m = *a.max_rate;
    nlohmann::json probes = nlohmann::json::array();
    for (const auto& p : m.probes)
      probes.push_back({{"rate_per_s", round6(p.rate_per_s)}, {"met", p.met}, {"overloaded", p.overloaded},
                        {"binding", p.binding}, {"binding_ratio", round6(p.binding_ratio)},
                        {"kv_usage_p99", round6(p.kv_usage_p99)}, {"running_mean", round6(p.running_mean)}});
    cap["max_rate"] = {{"found", m.found}, {"rate_per_s", round6(m.rate_per_s)},
                       {"offline_capacity_per_s", round6(m.capacity_per_s)},
                       {"offline_average_per_s", round6(m.offline_average_per_s)},
                       {"binding", m.binding.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.binding)},
                       {"requests_per_probe", m.requests_per_probe}, {"kv_usage_p99", round6(m.at_rate.kv_usage.p99)},
                       {"running_mean", round6(m.at_rate.running.mean)}, {"probes", probes}};
  }
  if (a.replicas) {
    const ReplicaAnswer& r = *a.replicas;
    nlohmann::json periods = nlohmann::json::array();
    for (const auto& p : r.periods) periods.push_back({{"period", p.label}, {"usd", round6(p.usd)}});
    cap["replicas"] = {{"target_rate_per_s", r.target_rate_per_s}, {"replicas", r.replicas}, {"gpus", r.gpus},
                       {"router", r.router}, {"met", r.met}, {"usd_per_hour", opt(r.usd_per_hour)},
                       {"periods", periods}, {"usd_per_million_output_tokens", opt(r.usd_per_million_output_tokens)},
                       {"price_basis", r.price_basis}, {"requests_simulated", r.requests_simulated}};
  }
  if (a.offline) {
    const OfflineAnswer& o = *a.offline;
    cap["offline"] = {{"requests", o.requests}, {"workers", o.workers}, {"makespan_s", round6(o.makespan_s)},
                      {"gpu_hours", round6(o.gpu_hours)}, {"output_tokens_per_s", round6(o.output_tokens_per_s)},
                      {"margin_hours", o.margin_hours}, {"period", o.period.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.period)},
                      {"period_usd", opt(o.period_usd)}, {"price_basis", o.price_basis},
                      {"slowest_worker", o.slowest_worker}, {"slowest_worker_requests", o.slowest_requests}};
  }
  if (!cap.empty()) j["capacity"] = cap;
  return j;
}

std::string simulate_answers_text(const SimulateAnswers& a) {
  std::string s = sim::simulate_text(a.run);
  if (!a.launch.argv.empty()) s += "launch: " + a.launch.line() + "\n";
  if (!a.launch.note.empty()) s += "  (" + a.launch.note + ")\n";
  if (a.slo_report) {
    s += "latency targets: " + std::string(a.slo_report->met ? "met" : "NOT met") +
         (a.slo_report->overloaded ? " (overloaded)" : "") + "\n";
    for (std::size_t i = 0; i < a.slo.size(); ++i)
      s += "  " + a.slo[i].text + ": " + format_number("%.2f", a.slo_report->values[i] * 1e3) + " ms" +
           (a.slo_report->ratios[i] <= 1 ? "" : "  (over)") + "\n";
  }
  if (a.max_rate) {
    const MaxRateAnswer& m = *a.max_rate;
    if (m.found)
      s += "max rate per replica meeting every target: " + format_number("%.3g", m.rate_per_s) + " req/s (" +
           (m.binding.empty()              ? std::string("no probe above it failed")
            : m.binding == "inconclusive" ? std::string("above it a probe was too short to tell: more --probe-requests")
                                          : "bound by " + m.binding + " above it") +
           "; offline capacity " + format_number("%.3g", m.capacity_per_s) + " req/s; " +
           std::to_string(m.probes.size()) + " probes of " + std::to_string(m.requests_per_probe) + " requests)\n";
    else
      s += "no rate meets the targets: at " + format_number("%.3g", m.probes.front().rate_per_s) + " req/s already " + m.binding +
           (m.binding == "inconclusive" ? " (too short to tell: more --probe-requests)" : "") + "\n";
  }
  if (a.replicas) {
    const ReplicaAnswer& r = *a.replicas;
    s += "replicas for " + format_number("%.4g", r.target_rate_per_s) + " req/s: " + std::to_string(r.replicas) + " (" +
         std::to_string(r.gpus) + " GPUs, " + r.router + " router)" + (r.met ? "" : " - targets still not met") +
         "; the run above is the replica furthest from the targets, " + std::to_string(a.run.result.arrived) + " of the " +
         std::to_string(r.requests_simulated) + " requests simulated\n";
    if (r.usd_per_hour) {
      s += "  cost: " + format_number("%.2f", *r.usd_per_hour) + " USD/h";
      for (const auto& p : r.periods) s += ", " + p.label + " " + format_number("%.0f", p.usd) + " USD";
      if (r.usd_per_million_output_tokens) s += "; " + format_number("%.3f", *r.usd_per_million_output_tokens) + " USD per million output tokens";
      s += "\n";
    }
  }
  if (a.offline) {
    const OfflineAnswer& o = *a.offline;
    s += "offline job: " + std::to_string(o.requests) + " requests on " + std::to_string(o.workers) + " worker(s): " +
         format_number("%.2f", o.makespan_s / 3600) + " h (" + format_number("%.1f", o.gpu_hours) + " GPU-hours, " +
         format_number("%.0f", o.output_tokens_per_s) + " output tok/s); with a " + format_number("%.4g", o.margin_hours) +
         " h margin for installation, checks and export: " +
         (o.period.empty() ? std::string("longer than every rental period given") : "the " + o.period + " period") +
         (o.period_usd ? " (" + format_number("%.0f", *o.period_usd) + " USD)" : std::string()) + "\n";
    if (a.run_is_slowest_worker)
      s += "  (the run above is the slowest worker's share: " + std::to_string(o.slowest_requests) + " of the " +
           std::to_string(o.requests) + " requests)\n";
  }
  return s;
}

}  // namespace vramplan::plan
