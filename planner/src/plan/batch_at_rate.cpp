#include "vramplan/plan/batch_at_rate.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/sim/simulate.hpp"

namespace vramplan::plan {
namespace {

// The flag that caps running requests, per engine; what each scheduler reads it as is in
// docs/simulator.md (vllm/v1/core/sched/scheduler.py max_num_seqs; SGLang
// scheduler.py max_running_requests; TensorRT-LLM max_batch_size; llama.cpp -np slots). HF
// transformers has no flag: its cap is the static batch of the workload.
struct RunningCap {
  std::string_view engine, flag;
};
constexpr RunningCap kRunningCaps[] = {{"vllm", "max-num-seqs"},
                                       {"sglang", "max-running-requests"},
                                       {"trtllm", "max-batch-size"},
                                       {"llamacpp", "parallel"},
                                       {"hf", ""}};

}  // namespace

std::string running_cap_flag(const std::string& engine) {
  const std::string_view name = std::string_view(engine).substr(0, engine.find('@'));
  for (const auto& c : kRunningCaps)
    if (c.engine == name) return std::string(c.flag);
  throw_usage("the batch range at a rate: no running-request cap known for engine '" + std::string(name) + "'");
}

std::uint64_t largest_meeting(const std::vector<std::uint64_t>& ladder,
                              const std::function<bool(std::uint64_t)>& meets) {
  std::uint64_t best = 0;
  for (const std::uint64_t v : ladder)
    if (meets(v)) best = v;
  if (best == 0) return 0;
  const auto next = std::upper_bound(ladder.begin(), ladder.end(), best);
  if (next == ladder.end()) return best;
  std::uint64_t lo = best, hi = *next;  // meets at lo, fails at hi
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    (meets(mid) ? lo : hi) = mid;
  }
  return lo;
}

const RateBatchProbe* BatchAtRate::at(std::uint64_t cap) const {
  for (const auto& p : probes)
    if (p.cap == cap) return &p;
  return nullptr;
}

BatchAtRate batch_at_rate(const BatchAtRateRequest& r, const DataRoot& root) {
  if (!(r.rate_per_s > 0) || !std::isfinite(r.rate_per_s))
    throw_usage("--rate: the batch range at a rate needs a positive, finite number of requests/s");
  if (r.input_len == 0 || r.output_len == 0) throw_usage("--input-len / --output-len must be >= 1");
  if (r.ladder.empty()) throw_usage("the batch range at a rate: no batch fits, so there is no cap to try");
  if (r.replicas == 0) throw_usage("--replicas must be >= 1");
  BatchAtRate out;
  out.rate_per_s = r.rate_per_s;
  out.replicas = r.replicas;
  out.slo = r.slo;
  out.slo_basis = r.slo_basis;
  out.flag = running_cap_flag(r.plan.engine);
  out.requests_per_probe = r.requests_per_probe;

  sim::WorkloadSpec w;
  w.arrivals.process = sim::ArrivalProcess::Poisson;
  w.arrivals.rate_per_s = r.rate_per_s / static_cast<double>(r.replicas);
  w.requests = r.requests_per_probe;
  w.input = sim::parse_length(std::to_string(r.input_len), "--input-len", root);
  w.output = sim::parse_length(std::to_string(r.output_len), "--output-len", root);
  w.seed = r.seed;
  out.workload = "Poisson arrivals at " + format_number("%.4g", w.arrivals.rate_per_s) + " req/s per replica" +
                 (r.replicas > 1 ? " (" + format_number("%.4g", r.rate_per_s) + " over " + std::to_string(r.replicas) +
                                       " replicas, split evenly)"
                                 : std::string()) +
                 ", " + std::to_string(r.input_len) + " prompt + " + std::to_string(r.output_len) + " output tokens, " +
                 std::to_string(r.requests_per_probe) + " requests per cap, seed " + std::to_string(r.seed);

  std::map<std::uint64_t, RateBatchProbe> probes;
  std::map<std::uint64_t, LaunchCommand> launches;
  const auto meets = [&](std::uint64_t cap) {
    if (const auto it = probes.find(cap); it != probes.end()) return it->second.met;
    RateBatchProbe p;
    p.cap = cap;
    memory::PlanRequest plan = r.plan;
    if (out.flag.empty()) plan.workload.batch = cap;
    else plan.args[out.flag] = std::to_string(cap);
    try {
      const sim::PreparedEngine engine = sim::prepare_engine(plan, root);
      const auto source = sim::make_request_source(w);
      const sim::SimResult res = sim::simulate_on(engine, engine.clock(), *source, {});
      const SloReport rep = check_slo(res, r.slo);
      p.met = rep.met;
      p.overloaded = rep.overloaded;
      if (rep.overloaded) p.binding = "overloaded";
      else if (rep.binding) p.binding = r.slo[*rep.binding].text;
      // A request the engine refuses or cuts short (a llama.cpp slot of n_ctx / np cells) is not
      // served, whatever the latency of the others.
      if (res.rejected > 0) p.unserved = std::to_string(res.rejected) + " requests refused (" + res.rejections.front().reason + ")";
      else if (res.truncated > 0) p.unserved = std::to_string(res.truncated) + " answers cut short at the slot";
      if (!p.unserved.empty()) p.met = false;
      p.ttft_p99_s = res.ttft.p99;
      p.tpot_p99_s = res.tpot.p99;
      p.kv_usage_p99 = res.kv_usage.p99;
      p.running_mean = res.running.mean;
      p.served_per_s = res.verdict.served_per_s;
      p.held_most = sim::held_shares(res, engine.rules.dp_ranks).most;
      launches[cap] = launch_command(engine.plan, plan.args, plan.model);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::DoesNotFit && e.kind() != ErrorKind::Usage) throw;
      p.error = e.what();
      p.binding = "does not start";
    }
    probes.emplace(cap, p);
    return p.met;
  };
  out.best = largest_meeting(r.ladder, meets);
  // What fails at the next cap tried above the answer; when none meets, at the largest tried (cap 1
  // failing says least about why no cap does).
  if (out.best == 0 && !probes.empty()) {
    out.above = probe_failure(probes.rbegin()->second);
  } else if (const auto above = probes.upper_bound(out.best); above != probes.end()) {
    out.above = probe_failure(above->second);
  }
  for (auto& [cap, p] : probes) out.probes.push_back(std::move(p));
  if (out.best > 0) out.launch = launches.at(out.best);
  return out;
}

std::string probe_failure(const RateBatchProbe& p) {
  const std::string why = !p.error.empty()    ? "does not start (" + p.error + ")"
                          : p.overloaded      ? "overloaded" + (p.held_most ? std::string(", the queue held most by the ") +
                                                                                  sim::held_limit_words(*p.held_most)
                                                                            : std::string(", every sent request admitted: the steps are too long"))
                          : !p.unserved.empty() ? p.unserved
                                                : p.binding + " missed";
  return "at " + std::to_string(p.cap) + ": " + why;
}

}  // namespace vramplan::plan
