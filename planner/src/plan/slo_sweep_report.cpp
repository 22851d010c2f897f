// Rendering of `vramplan sweep --rate R --slo ...` (slo_sweep.hpp).
#include <cmath>
#include <cstdio>

#include "vramplan/core/text.hpp"
#include "vramplan/sim/simulate.hpp"
#include "vramplan/plan/slo_sweep.hpp"
#include "vramplan/core/table.hpp"

namespace vramplan::plan {
namespace {

double round6(double v) { return rounded(v, 6); }

std::string layout(const std::string& gpu, std::uint64_t tp, std::uint64_t pp) {
  return gpu + " tp" + std::to_string(tp) + (pp > 1 ? " pp" + std::to_string(pp) : "");
}

// SloSweepRow::queue_held_by in words, "-" when nothing held requests back.
std::string held_by_words(const std::optional<sim::HeldLimit>& l) {
  return l ? sim::held_limit_words(*l) : "-";
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
                    {"binding", x.binding},
                    {"queue_held_by", sim::held_limit_json(x.queue_held_by)},
                    {"p99_ttft_ms", round6(x.p99_ttft_s * 1e3)},
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

std::string slo_sweep_text(const SloSweepRequest& req, const SloSweepResult& r, std::size_t top, bool markdown) {
  std::string targets;
  for (const auto& t : req.slo) targets += (targets.empty() ? "" : ", ") + t.text;
  const std::string router = router_name(req.options.router);
  std::string s = markdown ? "### Serving " + format_number("%.4g", req.rate_per_s) + " requests/s within " + targets + "\n\n" +
                                 "Replicas behind a " + router + " router; every layout simulated (" +
                                 std::to_string(req.options.requests_per_probe) + " requests per probe; `vramplan sweep --rate`).\n\n"
                           : "serving " + format_number("%.4g", req.rate_per_s) + " req/s within " + targets +
                                 " (replicas behind a " + router + " router; each layout simulated, " +
                                 std::to_string(req.options.requests_per_probe) + " requests per probe)\n";
  std::vector<Table::Column> cols = {{"model", Align::Left},          {"layout", Align::Left},
                                     {"replicas", Align::Right},      {"GPUs", Align::Right},
                                     {"max req/s/replica", Align::Right}, {"queue held by", Align::Left},
                                     {"p99 TTFT ms", Align::Right},
                                     {"p99 TPOT ms", Align::Right}};
  for (const auto& p : r.periods) cols.push_back({"$ " + p.label, Align::Right});
  cols.push_back({"$/M out tok", Align::Right});
  Table t(cols);
  for (std::size_t i = 0; i < r.rows.size() && i < top; ++i) {
    const SloSweepRow& x = r.rows[i];
    std::vector<std::string> cells = {x.model, (x.weights == "checkpoint" ? "" : x.weights + " ") + layout(x.gpu, x.tp, x.pp),
                                      std::to_string(x.replicas), std::to_string(x.gpus),
                                      format_number("%.3g", x.max_rate_per_replica), held_by_words(x.queue_held_by),
                                      format_number("%.1f", x.p99_ttft_s * 1e3),
                                      format_number("%.2f", x.p99_tpot_s * 1e3)};
    for (std::size_t k = 0; k < r.periods.size(); ++k)
      cells.push_back(x.cost_usd.empty() ? "-" : format_number("%.0f", x.cost_usd[k]));
    cells.push_back(x.usd_per_million_output_tokens ? format_number("%.3f", *x.usd_per_million_output_tokens) : "-");
    t.add_row(cells);
  }
  s += r.rows.empty() ? "no layout serves this load within the targets\n" : markdown ? t.render_markdown() : t.render_text();
  if (markdown && !r.rows.empty() && !r.rows.front().launch.argv.empty())
  {
    const LaunchCommand& l = r.rows.front().launch;
    s += "\nStart the cheapest (one replica):\n\n```sh\n" + l.line() + "\n```\n";
    if (!l.note.empty()) s += "\n" + l.note + ".\n";
  }
  if (!r.misses.empty()) {
    s += markdown ? "\nRejected layouts:\n\n" : "rejected:\n";
    for (const auto& m : r.misses)
      s += std::string(markdown ? "- " : "  ") + m.model + " " + m.weights + " " + layout(m.gpu, m.tp, m.pp) + ": " + m.why + "\n";
  }
  return s;
}

}  // namespace vramplan::plan
