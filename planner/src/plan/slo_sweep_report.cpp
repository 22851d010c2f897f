// Rendering of `vramplan sweep --rate R --slo ...` (slo_sweep.hpp).
#include <cmath>
#include <cstdio>

#include "vramplan/core/text.hpp"
#include "vramplan/plan/slo_sweep.hpp"

namespace vramplan::plan {
namespace {

double round6(double v) { return rounded(v, 6); }

std::string layout(const std::string& gpu, std::uint64_t tp, std::uint64_t pp) {
  return gpu + " tp" + std::to_string(tp) + (pp > 1 ? " pp" + std::to_string(pp) : "");
}

}  // namespace

nlohmann::json slo_sweep_json(const SloSweepRequest& req, const SloSweepResult& r, std::size_t top) {
  nlohmann::json targets = nlohmann::json::array();
  for (const auto& t : req.slo) targets.push_back(t.text);
  nlohmann::json periods = nlohmann::json::array();
  for (const auto& p : r.periods) periods.push_back(p.label);
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < r.rows.size() && i < top; ++i) {
    const SloSweepRow& x = r.rows[i];
    nlohmann::json cost = nlohmann::json::array();
    for (double c : x.cost_usd) cost.push_back(round6(c));
    rows.push_back({{"model", x.model}, {"weights", x.weights}, {"gpu", x.gpu}, {"tp", x.tp}, {"pp", x.pp},
                    {"replicas", x.replicas}, {"gpus", x.gpus}, {"max_rate_per_replica", round6(x.max_rate_per_replica)},
                    {"binding", x.binding}, {"p99_ttft_ms", round6(x.p99_ttft_s * 1e3)},
                    {"p99_tpot_ms", round6(x.p99_tpot_s * 1e3)}, {"kv_usage_p99", round6(x.kv_usage_p99)},
                    {"cost_usd", cost},
                    {"usd_per_million_output_tokens", x.usd_per_million_output_tokens
                                                          ? nlohmann::json(round6(*x.usd_per_million_output_tokens))
                                                          : nlohmann::json(nullptr)},
                    {"price_basis", x.price_basis},
                    {"launch", launch_json(x.launch)}});
  }
  nlohmann::json misses = nlohmann::json::array();
  for (const auto& m : r.misses)
    misses.push_back({{"model", m.model}, {"weights", m.weights}, {"gpu", m.gpu}, {"tp", m.tp}, {"pp", m.pp}, {"why", m.why}});
  return {{"schema", "vramplan.sweep-slo/1"},
          {"rate_per_s", req.rate_per_s},
          {"slo", targets},
          {"router", router_name(req.options.router)},
          {"requests_per_probe", req.options.requests_per_probe},
          {"periods", periods},
          {"simulated_layouts", r.simulated_layouts},
          {"rows", rows},
          {"misses", misses}};
}

std::string slo_sweep_text(const SloSweepRequest& req, const SloSweepResult& r, std::size_t top) {
  std::string targets;
  for (const auto& t : req.slo) targets += (targets.empty() ? "" : ", ") + t.text;
  std::string s = "serving " + format_number("%.4g", req.rate_per_s) + " req/s within " + targets +
                  " (replicas behind a " + router_name(req.options.router) + " router; each layout simulated, " + std::to_string(req.options.requests_per_probe) +
                  " requests per probe)\n";
  std::string head = "  layout                         replicas  GPUs  max req/s/replica  p99 TTFT ms  p99 TPOT ms";
  for (const auto& p : r.periods) head += "  " + p.label + " USD";
  s += head + "  USD/M out tok\n";
  for (std::size_t i = 0; i < r.rows.size() && i < top; ++i) {
    const SloSweepRow& x = r.rows[i];
    char b[200];
    std::snprintf(b, sizeof b, "  %-30s %8llu %5llu %18.3g %12.1f %12.2f", (x.model + " " + layout(x.gpu, x.tp, x.pp)).c_str(),
                  static_cast<unsigned long long>(x.replicas), static_cast<unsigned long long>(x.gpus),
                  x.max_rate_per_replica, x.p99_ttft_s * 1e3, x.p99_tpot_s * 1e3);
    s += b;
    for (double c : x.cost_usd) s += "  " + format_number("%8.0f", c);
    if (x.cost_usd.empty())
      for (std::size_t k = 0; k < r.periods.size(); ++k) s += "         -";
    s += x.usd_per_million_output_tokens ? "  " + format_number("%.3f", *x.usd_per_million_output_tokens) : std::string("  -");
    s += "\n";
  }
  if (r.rows.empty()) s += "  no layout serves this load within the targets\n";
  if (!r.misses.empty()) {
    s += "rejected:\n";
    for (const auto& m : r.misses) s += "  " + m.model + " " + m.weights + " " + layout(m.gpu, m.tp, m.pp) + ": " + m.why + "\n";
  }
  return s;
}

}  // namespace vramplan::plan
