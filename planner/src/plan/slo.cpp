#include "vramplan/plan/slo.hpp"

#include <charconv>
#include <cmath>

#include "vramplan/core/error.hpp"

namespace vramplan::plan {
namespace {

struct Named {
  std::string_view name;
  int value;
};
constexpr Named kStats[] = {{"mean", static_cast<int>(SloStat::Mean)}, {"p50", static_cast<int>(SloStat::P50)},
                            {"p90", static_cast<int>(SloStat::P90)}, {"p99", static_cast<int>(SloStat::P99)}};
constexpr Named kMetrics[] = {{"ttft", static_cast<int>(SloMetric::Ttft)}, {"tpot", static_cast<int>(SloMetric::Tpot)},
                              {"itl", static_cast<int>(SloMetric::Itl)}, {"e2e", static_cast<int>(SloMetric::E2e)},
                              {"queue", static_cast<int>(SloMetric::Queue)}};

template <std::size_t N>
std::optional<int> lookup(const Named (&table)[N], std::string_view name) {
  for (const Named& n : table)
    if (n.name == name) return n.value;
  return std::nullopt;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

SloTarget parse_one(std::string_view part, std::string_view flag) {
  const std::string where = std::string(flag) + ": '" + std::string(part) + "'";
  const std::size_t op = part.find("<=");
  const std::size_t us = part.find('_');
  if (op == std::string_view::npos || us == std::string_view::npos || us > op)
    throw_usage(where + ": expected STAT_METRIC<=VALUE, e.g. p99_ttft<=2s (STAT p50|p90|p99|mean, METRIC ttft|tpot|itl|e2e|queue)");
  const auto stat = lookup(kStats, trim(part.substr(0, us)));
  const auto metric = lookup(kMetrics, trim(part.substr(us + 1, op - us - 1)));
  if (!stat) throw_usage(where + ": unknown statistic (p50, p90, p99, mean)");
  if (!metric) throw_usage(where + ": unknown metric (ttft, tpot, itl, e2e, queue)");
  std::string_view value = trim(part.substr(op + 2));
  double scale = 0;
  if (value.ends_with("ms")) scale = 1e-3, value.remove_suffix(2);
  else if (value.ends_with("s")) scale = 1, value.remove_suffix(1);
  else throw_usage(where + ": the limit needs a unit, s or ms");
  double v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || !(v > 0) || !std::isfinite(v))
    throw_usage(where + ": the limit must be a positive number");
  return {static_cast<SloMetric>(*metric), static_cast<SloStat>(*stat), v * scale, std::string(trim(part))};
}

}  // namespace

std::vector<SloTarget> parse_slo(std::string_view text, std::string_view flag) {
  std::vector<SloTarget> out;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view part = trim(text.substr(start, comma - start));
    if (part.empty()) throw_usage(std::string(flag) + ": empty target in '" + std::string(text) + "'");
    out.push_back(parse_one(part, flag));
    start = comma + 1;
  }
  return out;
}

double slo_value(const sim::SimResult& run, const SloTarget& t) {
  const sim::Summary* s = nullptr;
  switch (t.metric) {
    case SloMetric::Ttft: s = &run.ttft; break;
    case SloMetric::Tpot: s = &run.tpot; break;
    case SloMetric::Itl: s = &run.itl; break;
    case SloMetric::E2e: s = &run.e2e; break;
    case SloMetric::Queue: s = &run.queue; break;
  }
  switch (t.stat) {
    case SloStat::Mean: return s->mean;
    case SloStat::P50: return s->p50;
    case SloStat::P90: return s->p90;
    case SloStat::P99: return s->p99;
  }
  return s->p99;
}

SloReport check_slo(const sim::SimResult& run, const std::vector<SloTarget>& targets) {
  SloReport r;
  r.overloaded = run.verdict.state == "overloaded";
  r.met = !r.overloaded;
  double worst = -1;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const double v = slo_value(run, targets[i]);
    const double ratio = v / targets[i].limit_s;
    r.values.push_back(v);
    r.ratios.push_back(ratio);
    if (ratio > 1) r.met = false;
    if (ratio > worst) worst = ratio, r.binding = i;
  }
  return r;
}

}  // namespace vramplan::plan
