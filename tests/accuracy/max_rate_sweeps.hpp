// max_rate_sweeps.hpp — issue 15's last check: for each published request-rate sweep of the
// serving records (tests/accuracy/data/serving_sweeps.json groups the records of one setup), the
// max rate plan::find_max_rate finds under a p99 TTFT target, against the rate at which the
// measured sweep crossed that target. The search runs on the record's own setup (catalogue
// model, GPU, engine flags) and workload; rendered into docs/accuracy-sim.md by
// sim_accuracy_test.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "accuracy/serving_records.hpp"
#include "vramplan/plan/capacity.hpp"

namespace vramplan::test {

//! The targets checked: the issue's own example (p99 TTFT <= 2 s) and a tight interactive one
//! ten times smaller. Neither was chosen from the results; no accuracy target is set for this check.
inline const std::vector<std::string>& max_rate_targets() {
  static const std::vector<std::string> t = {"p99_ttft<=2s", "p99_ttft<=200ms"};
  return t;
}

struct MaxRateCheck {
  std::string label, target, workload_note;
  std::vector<double> rates;          //!< the sweep's offered rates, ascending
  std::vector<double> measured_ttft;  //!< printed p99 TTFT at each rate, s
  std::size_t measured_step = 0;      //!< leading rates whose measured p99 TTFT meets the target
  double predicted_rate = 0;          //!< plan::find_max_rate's answer (0 = none found)
  std::string predicted_binding;
  std::size_t predicted_step = 0;     //!< sweep rates at or below the predicted max rate
  std::size_t distance() const {
    return measured_step > predicted_step ? measured_step - predicted_step : predicted_step - measured_step;
  }
};

struct MaxRateSweeps {
  std::vector<MaxRateCheck> checks;
};

//! The workload find_max_rate searches over for a record's setup: its generator as `vramplan
//! simulate` flags give it. A shared-prefix run becomes fixed lengths at constant arrivals
//! (find_max_rate generates its own arrivals; a trace fixes them), without the shared prefix.
inline sim::WorkloadSpec max_rate_workload(const nlohmann::json& w, const DataRoot& root, std::string& note) {
  if (w.at("kind") != "shared_prefix") return serving_workload("max-rate", w, root);
  nlohmann::json fixed = w;
  fixed["kind"] = "fixed";
  note = "fixed " + std::to_string(w.at("input_tokens").get<int>()) + " / " + std::to_string(w.at("output_tokens").get<int>()) +
         " tokens at constant arrivals; the run's " + std::to_string(w.at("prefix_tokens").get<int>()) +
         "-token shared prefixes left out (find_max_rate generates arrivals, a trace fixes them)";
  return serving_workload("max-rate", fixed, root);
}

inline const MaxRateSweeps& max_rate_sweeps() {
  static const MaxRateSweeps all = [] {
    MaxRateSweeps out;
    const DataRoot root{source_dir()};
    const auto setup = serving_setup();
    std::map<std::string, nlohmann::json> records;
    for (const auto& r : serving_records()) records[r.at("id")] = r;
    std::ifstream in(accuracy_data() / "serving_sweeps.json");
    for (const auto& s : nlohmann::json::parse(in)) {
      const std::string first = s.at("ids").at(0).get<std::string>();
      const auto& st = s.at("setup");
      const std::string label = st.at("engine").get<std::string>() + " " + st.at("model").get<std::string>() + " on " +
                                st.at("gpu_class").get<std::string>() + " (" + first + ", ...)";
      // Request-rate sweeps only: every point an open loop at a finite rate.
      bool rate_sweep = true, simulated = true;
      std::vector<std::pair<double, double>> points;  // (rate, measured p99 TTFT s)
      for (const auto& idj : s.at("ids")) {
        const auto it = records.find(idj.get<std::string>());
        if (it == records.end()) {
          simulated = false;
          continue;
        }
        const auto& rec = it->second;
        if (!rec.at("max_concurrency").is_null() || !rec.at("request_rate").is_number()) {
          rate_sweep = false;
          break;
        }
        const auto ttft = printed(rec.at("results"), "p99_ttft_ms");
        points.emplace_back(rec.at("request_rate").get<double>(), ttft ? *ttft / 1e3 : NAN);
      }
      // A sweep with records left unsimulated is listed, with why, under "Sweeps not evaluated".
      if (!rate_sweep || !simulated || points.empty()) continue;
      std::sort(points.begin(), points.end());
      const auto& cfg = setup.at("simulated").at(first);
      memory::PlanRequest plan;
      plan.model = cfg.at("model");
      plan.gpu = cfg.at("gpu");
      plan.engine = cfg.at("engine");
      for (const auto& [k, v] : cfg.at("args").items()) plan.args[k] = v.get<std::string>();
      const sim::PreparedEngine engine = sim::prepare_engine(plan, root);
      std::string note;
      const sim::WorkloadSpec base = max_rate_workload(cfg.at("workload"), root, note);
      for (const auto& text : max_rate_targets()) {
        MaxRateCheck c;
        c.label = label;
        c.target = text;
        c.workload_note = note;
        const auto targets = plan::parse_slo(text);
        for (const auto& [rate, ttft] : points) {
          c.rates.push_back(rate);
          c.measured_ttft.push_back(ttft);
        }
        while (c.measured_step < points.size() && points[c.measured_step].second <= targets.front().limit_s) ++c.measured_step;
        const plan::MaxRateAnswer a = plan::find_max_rate(engine, base, targets, plan::CapacityOptions{});
        c.predicted_rate = a.found ? a.rate_per_s : 0;
        c.predicted_binding = a.binding;
        c.predicted_step = static_cast<std::size_t>(
            std::count_if(c.rates.begin(), c.rates.end(), [&](double r) { return r <= c.predicted_rate; }));
        out.checks.push_back(std::move(c));
      }
    }
    return out;
  }();
  return all;
}

}  // namespace vramplan::test
