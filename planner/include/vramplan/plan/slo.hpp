// vramplan/plan/slo.hpp — latency targets ("p99_ttft<=2s,p99_tpot<=60ms") and whether a
// simulated run meets them. The capacity answers (capacity.hpp) search on top of this.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/sim/simulator.hpp"

namespace vramplan::plan {

enum class SloMetric { Ttft, Tpot, Itl, E2e, Queue };
enum class SloStat { Mean, P50, P90, P99 };

struct SloTarget {
  SloMetric metric = SloMetric::Ttft;
  SloStat stat = SloStat::P99;
  double limit_s = 0;
  std::string text;  //!< as written: "p99_ttft<=2s"
};

//! Comma-separated `STAT_METRIC<=VALUE UNIT`: STAT p50 / p90 / p99 / mean, METRIC ttft / tpot /
//! itl / e2e / queue, UNIT s or ms. Throws Error(Usage) naming `flag` and the part at fault.
std::vector<SloTarget> parse_slo(std::string_view text, std::string_view flag = "--slo");

//! The run's value of `target`'s statistic, seconds.
double slo_value(const sim::SimResult& run, const SloTarget& target);

struct SloReport {
  bool met = true;       //!< every target within its limit AND the run was not overloaded
  bool overloaded = false;
  //! Per target: its value in the run (seconds) and value / limit.
  std::vector<double> values, ratios;
  //! The target closest to (or furthest past) its limit: what binds first as load grows.
  std::optional<std::size_t> binding;
};

SloReport check_slo(const sim::SimResult& run, const std::vector<SloTarget>& targets);

}  // namespace vramplan::plan
