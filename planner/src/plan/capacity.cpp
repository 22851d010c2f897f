#include "vramplan/plan/capacity.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/plan/prices.hpp"

namespace vramplan::plan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Every `k`-th request of a stream, starting at `first`: one replica's share under a
// round-robin router, or one worker's partition of an offline job.
class RoundRobinShare : public sim::RequestSource {
 public:
  RoundRobinShare(std::unique_ptr<sim::RequestSource> all, std::uint64_t k, std::uint64_t first)
      : all_(std::move(all)), k_(k), first_(first) {}
  std::optional<sim::Request> next() override {
    while (auto r = all_->next())
      if (index_++ % k_ == first_) return r;
    return std::nullopt;
  }

 private:
  std::unique_ptr<sim::RequestSource> all_;
  std::uint64_t k_, first_, index_ = 0;
};

sim::SimResult run(const sim::PreparedEngine& engine, const sim::WorkloadSpec& spec, std::uint64_t k = 1,
                   std::uint64_t first = 0, const sim::SimOptions& options = {}) {
  RoundRobinShare share(sim::make_request_source(spec), k, first);
  return sim::simulate_on(engine, engine.clock(), share, options);
}

// An "inconclusive" run (its running batch still filling when the arrivals ended) is too short to
// tell whether its rate is served.
bool too_short_to_tell(const sim::SimResult& r) { return r.verdict.state == "inconclusive"; }

sim::WorkloadSpec at_rate(const sim::WorkloadSpec& base, double rate, std::uint64_t requests) {
  sim::WorkloadSpec w = base;
  w.arrivals.rate_per_s = rate;
  w.requests = requests;
  w.duration_s.reset();
  w.concurrency.reset();
  return w;
}

// A rate is served when its run is judged stable (not overloaded, nor too short to tell: an
// "inconclusive" probe, its running batch still filling when the arrivals ended, shows nothing
// about that rate) and meets every target.
RateProbe probe_of(double rate, const sim::SimResult& r, const std::vector<SloTarget>& targets) {
  const SloReport rep = check_slo(r, targets);
  RateProbe p;
  p.rate_per_s = rate;
  const bool inconclusive = too_short_to_tell(r);
  p.met = rep.met && !inconclusive;
  p.overloaded = rep.overloaded;
  if (rep.binding) {
    p.binding = targets[*rep.binding].text;
    p.binding_ratio = rep.ratios[*rep.binding];
  }
  if (rep.met && inconclusive) p.binding = "inconclusive";
  if (rep.overloaded) p.binding = "overloaded";
  p.kv_usage_p99 = r.kv_usage.p99;
  p.running_mean = r.running.mean;
  return p;
}

std::uint64_t gpus_per_replica(const sim::PreparedEngine& e) { return e.plan.tp * e.plan.pp; }

}  // namespace

MaxRateAnswer find_max_rate(const sim::PreparedEngine& engine, const sim::WorkloadSpec& base,
                            const std::vector<SloTarget>& targets, const CapacityOptions& options) {
  if (base.trace) throw_usage("--find-max-rate: a trace fixes its own arrival times; use generated arrivals");
  if (targets.empty()) throw_usage("--find-max-rate: give the latency targets with --slo");
  MaxRateAnswer a;
  a.requests_per_probe = options.requests_per_probe;
  // The ceiling: what the engine completes per second with everything queued at once, measured
  // while requests still wait (sim::Verdict::served_per_s of an offline run): a finite batch's
  // finishing tail, when the batch empties, lowers its average and is no bound on an open loop's
  // rate. The whole run's average where that stretch holds no completion.
  const sim::SimResult offline = run(engine, at_rate(base, kInf, options.requests_per_probe));
  a.offline_average_per_s = offline.duration_s > 0 ? static_cast<double>(offline.completed) / offline.duration_s : 0;
  a.capacity_per_s = std::max(offline.verdict.served_per_s, a.offline_average_per_s);
  // Nothing completes when the engine refuses every request (a prompt longer than its context):
  // no rate serves such a workload, which is the workload's fault, not a search result.
  if (!(a.capacity_per_s > 0))
    throw_usage("--find-max-rate / --target-rate: the engine completes none of these requests" +
                (offline.rejections.empty() ? std::string(" (it runs none of them)")
                                            : ": it refuses them (" + offline.rejections.front().reason + ")"));
  auto probe = [&](double rate) {
    sim::SimResult r = run(engine, at_rate(base, rate, options.requests_per_probe));
    a.probes.push_back(probe_of(rate, r, targets));
    return std::pair{a.probes.back(), std::move(r)};
  };
  // A light load first: if even that misses a target, no rate meets them.
  double lo = 0.05 * a.capacity_per_s, hi = a.capacity_per_s;
  auto [low, low_run] = probe(lo);
  a.at_rate = low_run;
  if (!low.met) {
    a.binding = low.binding;
    return a;
  }
  a.found = true;
  a.rate_per_s = lo;
  // Bisection while some probe above the best rate failed; the binding is what failed nearest
  // above it. The ceiling is an estimate, not a probe: when every probe met, it is probed, and
  // raised by a quarter while it meets too (at most kRaises times), so "bound by" always names a
  // probe that failed.
  constexpr int kRaises = 4;
  bool failed_above = false;
  for (int raises = 0;;) {
    while ((hi - lo) > options.precision * hi) {
      const double mid = (lo + hi) / 2;
      auto [p, r] = probe(mid);
      if (p.met) {
        lo = mid;
        a.rate_per_s = mid;
        a.at_rate = std::move(r);
      } else {
        hi = mid;
        a.binding = p.binding;
        failed_above = true;
      }
    }
    if (failed_above) break;
    auto [p, r] = probe(hi);
    if (!p.met) {
      a.binding = p.binding;
      break;
    }
    lo = hi;
    a.rate_per_s = hi;
    a.at_rate = std::move(r);
    if (++raises > kRaises) break;  // binding stays "": no probe failed
    hi *= 1.25;
  }
  return a;
}

void check_probe_requests(std::uint64_t requests_per_probe) {
  if (requests_per_probe < 100) throw_usage("--probe-requests: at least 100, or the p99 means nothing");
  if (requests_per_probe > 1'000'000) throw_usage("--probe-requests: at most 1000000 (each probe simulates that many requests)");
}

sim::Router parse_router(const std::string& text) {
  if (text == "least-outstanding") return sim::Router::LeastOutstanding;
  if (text == "round-robin") return sim::Router::RoundRobin;
  throw_usage("--router: '" + text + "' is not least-outstanding or round-robin");
}

std::string router_name(sim::Router router) {
  return router == sim::Router::LeastOutstanding ? "least-outstanding" : "round-robin";
}

std::uint64_t replicas_at_least(double target_rate, const MaxRateAnswer& max_rate) {
  const double k = std::ceil(target_rate / max_rate.rate_per_s - 1e-9);
  // Compared as a double: a count past 2^64 must not wrap on the way to the cap.
  return k >= static_cast<double>(kMaxReplicas + 1) ? kMaxReplicas + 1 : std::max<std::uint64_t>(1, static_cast<std::uint64_t>(k));
}

ReplicaAnswer replicas_for(const sim::PreparedEngine& engine, const sim::WorkloadSpec& base,
                           const std::vector<SloTarget>& targets, double target_rate, const MaxRateAnswer& max_rate,
                           const PriceBook& prices, const std::vector<RentalPeriod>& periods,
                           const CapacityOptions& options) {
  if (!(target_rate > 0) || std::isinf(target_rate)) throw_usage("--target-rate: must be a positive number of requests/s");
  if (engine.dp_ranks() > 1)
    throw_usage("--target-rate: replicas of a server of " + engine.rules.dp_name +
                " behind a router are not modelled (each server's ranks are: simulate one at the rate it would take)");
  ReplicaAnswer a;
  a.target_rate_per_s = target_rate;
  a.router = router_name(options.router);
  if (!max_rate.found) return a;
  const std::uint64_t start = replicas_at_least(target_rate, max_rate);
  if (start > kMaxReplicas)
    throw_usage("--target-rate: " + format_number("%.4g", target_rate) + " requests/s needs more than " +
                std::to_string(kMaxReplicas) + " replicas of " + format_number("%.4g", max_rate.rate_per_s) +
                " requests/s each, more than vramplan simulates");
  // K replicas behind the router on K x requests_per_probe requests: whether every one meets the
  // targets, the one furthest from them, and the output tokens of a request on average.
  struct Trial {
    bool met = true;
    sim::SimResult worst;
    double output_per_request = 0;
  };
  auto attempt = [&](std::uint64_t k) {
    const auto source = sim::make_request_source(at_rate(base, target_rate, options.requests_per_probe * k));
    const std::vector<sim::SimResult> runs =
        sim::simulate_replicas(engine.rules, engine.clock(), *source, k, options.router, {});
    Trial t;
    double worst = -1, output = 0, arrived = 0;
    for (const sim::SimResult& run : runs) {
      const SloReport rep = check_slo(run, targets);
      t.met = t.met && rep.met && !too_short_to_tell(run);  // as probe_of
      const double ratio = rep.overloaded ? 1e300 : rep.binding ? rep.ratios[*rep.binding] : 0;
      if (ratio > worst) worst = ratio, t.worst = run;
      output += run.output_tokens;
      arrived += static_cast<double>(run.arrived);
    }
    t.output_per_request = arrived > 0 ? output / arrived : 0;
    return t;
  };
  // ceil(R / max rate) is an estimate from one replica's probes: when it meets the targets, fewer
  // are tried (at most kSteps less), else more (at most kSteps more).
  constexpr std::uint64_t kSteps = 4;
  std::uint64_t k = start;
  Trial best = attempt(k);
  if (best.met) {
    for (std::uint64_t down = 0; down < kSteps && k > 1; ++down) {
      Trial fewer = attempt(k - 1);
      if (!fewer.met) break;
      --k;
      best = std::move(fewer);
    }
  } else {
    for (std::uint64_t up = 0; up < kSteps && !best.met; ++up) best = attempt(++k);
  }
  a.replicas = k;
  a.met = best.met;
  a.per_replica = std::move(best.worst);
  a.requests_simulated = options.requests_per_probe * k;
  a.gpus = a.replicas * gpus_per_replica(engine);
  if (const auto price = prices.price(engine.plan.gpu.id)) {
    const double billed = static_cast<double>(billed_gpus(a.gpus, price->lot_sizes));
    a.usd_per_hour = billed * price->usd_per_gpu_hour;
    a.price_basis = price->basis;
    for (const auto& p : periods) a.periods.push_back({p.label, *a.usd_per_hour * p.hours});
    // The load served (the target rate) x the output tokens a request asks for, on average over
    // every replica: what the bill buys per hour. (A replica's own output over its run, finishing
    // tail included, undercounts it.)
    const double tokens_per_s = target_rate * best.output_per_request;
    if (tokens_per_s > 0) a.usd_per_million_output_tokens = *a.usd_per_hour / (tokens_per_s * 3600) * 1e6;
  }
  return a;
}

OfflineAnswer offline_job(const sim::PreparedEngine& engine, const sim::WorkloadSpec& base, std::uint64_t workers,
                          double margin_hours, const PriceBook& prices, const std::vector<RentalPeriod>& periods) {
  if (!base.requests) throw_usage("--workers: an offline job needs --requests N");
  if (workers == 0) throw_usage("--workers: must be at least 1");
  if (workers > kMaxReplicas || workers > *base.requests)
    throw_usage("--workers: at most " + std::to_string(std::min(kMaxReplicas, *base.requests)) +
                " (one request per worker at the least, and at most " + std::to_string(kMaxReplicas) + " workers)");
  if (!(margin_hours >= 0)) throw_usage("--margin: must not be negative");
  OfflineAnswer a;
  a.requests = *base.requests;
  a.workers = workers;
  a.margin_hours = margin_hours;
  double output_tokens = 0;
  for (std::uint64_t i = 0; i < workers; ++i) {
    const sim::SimResult r = run(engine, at_rate(base, kInf, *base.requests), workers, i);
    if (i == 0 || r.end_s - r.first_arrival_s > a.makespan_s) {
      a.makespan_s = r.end_s - r.first_arrival_s;
      a.slowest_worker = i;
      a.slowest_requests = r.arrived;
    }
    output_tokens += r.output_tokens;
  }
  const double gpus = static_cast<double>(workers * gpus_per_replica(engine));
  a.gpu_hours = gpus * a.makespan_s / 3600;
  a.output_tokens_per_s = a.makespan_s > 0 ? output_tokens / a.makespan_s : 0;
  const RentalCover cover = cover_hours(engine.plan.gpu.id, workers * gpus_per_replica(engine),
                                        a.makespan_s / 3600 + margin_hours, prices, periods);
  a.period = cover.period;
  a.period_usd = cover.usd;
  a.price_basis = cover.price_basis;
  return a;
}

sim::SimResult offline_worker_run(const sim::PreparedEngine& engine, const sim::WorkloadSpec& base, std::uint64_t workers,
                                  std::uint64_t worker, const sim::SimOptions& options) {
  if (!base.requests) throw_usage("--workers: an offline job needs --requests N");
  return run(engine, at_rate(base, kInf, *base.requests), workers, worker, options);
}

}  // namespace vramplan::plan
