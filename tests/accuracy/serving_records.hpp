// serving_records.hpp — the measured serving runs (tests/accuracy/data/serving_records.jsonl, copied
// verbatim from the ground truth) re-simulated through sim::run_simulation, the code path of
// `vramplan simulate`, each from the setup serving_sim_setup.json states for it (catalogue model,
// GPU, engine flags, workload), and set against what the load generator printed.
#pragma once

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <optional>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "accuracy/accuracy_doc.hpp"   // fmt()
#include "accuracy/bench_serving_lengths.hpp"
#include "accuracy/vllm_records.hpp"  // accuracy_data(), pct(), median_abs()
#include "vramplan/sim/simulate.hpp"

namespace vramplan::test {

//! The metric families the issue sets targets for (issue 12, "Against real runs").
//! Timeline: the engine's periodic log (running, waiting, KV usage), no target.
enum class MetricKind { Throughput, MedianLatency, P99Latency, Timeline };

//! One figure: what the simulator predicts against what the run printed.
struct ServingMetric {
  std::string name;   //!< "req/s", "out tok/s", "TTFT p50", "TPOT p50", "ITL p50", "TPOT (means)", ...
  MetricKind kind = MetricKind::Throughput;
  double predicted = 0, measured = 0;
  double err() const { return pct(predicted, measured); }
};

struct ServingComparison {
  std::string id, engine, model, gpu, workload, notes;
  //! Why this record's figures stay out of the medians (shown beside it in the document); empty
  //! for most.
  std::string median_exclusion;
  std::string verdict;  //!< the simulator's: stable, overloaded, closed-loop, offline
  nlohmann::json record;  //!< verbatim
  std::uint64_t completed = 0, rejected = 0, preemptions = 0;
  double itl_p50_s = 0;  //!< the simulated median ITL, also where the record's TPOT is compared
  //! Simulated as a server's run with --cold-start (setup "cold_start"): the server, the
  //! first-use stalls this run paid.
  std::string cold_server;
  std::uint64_t cold_first_uses = 0;
  double cold_stalled_s = 0;
  std::vector<ServingMetric> metrics;
  const ServingMetric* find(const std::string& name) const {
    for (const auto& m : metrics)
      if (m.name == name) return &m;
    return nullptr;
  }
};

inline nlohmann::json serving_setup() {
  std::ifstream in(accuracy_data() / "serving_sim_setup.json");
  return nlohmann::json::parse(in);
}

inline std::vector<nlohmann::json> jsonl_records(const char* file) {
  std::vector<nlohmann::json> out;
  std::ifstream in(accuracy_data() / file);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

inline std::vector<nlohmann::json> serving_records() { return jsonl_records("serving_records.jsonl"); }

//! Serving runs beyond the ground truth, transcribed by vramplan from public pages
//! (serving_extra_records.jsonl, set up by serving_extra_setup.json): shown beside the records in
//! docs/accuracy-sim.md, never in issue 12's targets.
inline std::vector<nlohmann::json> serving_extra_records() { return jsonl_records("serving_extra_records.jsonl"); }
inline nlohmann::json serving_extra_setup() {
  std::ifstream in(accuracy_data() / "serving_extra_setup.json");
  return nlohmann::json::parse(in);
}

//! A directory of this process's own under the system temp dir for the traces the tests write:
//! ctest runs every test in its own process, in parallel, and each simulates the records.
inline std::filesystem::path serving_trace_dir() {
  static const std::filesystem::path dir = [] {
    std::random_device rd;
    return std::filesystem::temp_directory_path() /
           ("vramplan_sim_accuracy_" + std::to_string(rd()) + "_" + std::to_string(rd()));
  }();
  std::filesystem::create_directories(dir);
  return dir;
}

//! inference-perf shared_prefix as a trace: constant arrivals at `rate`, every request with the
//! printed mean lengths, the system prompt of group (i mod groups) as its shared prefix.
inline std::filesystem::path shared_prefix_trace(const std::string& id, const nlohmann::json& w) {
  const auto path = serving_trace_dir() / (id + ".jsonl");
  std::ofstream out(path);
  const double rate = w.at("rate");
  const std::uint64_t n = w.at("num_prompts"), groups = w.at("prefix_groups");
  for (std::uint64_t i = 0; i < n; ++i)
    out << nlohmann::json{{"arrival_s", static_cast<double>(i) / rate},
                          {"input_tokens", w.at("input_tokens")},
                          {"output_tokens", w.at("output_tokens")},
                          {"prefix_id", i % groups + 1},
                          {"prefix_tokens", w.at("prefix_tokens")}}
                .dump()
        << "\n";
  return path;
}

//! The run's own requests.jsonl (arrival_time in epoch seconds, input_toks, output_toks) as a
//! trace with arrivals relative to the first request.
inline std::filesystem::path replay_trace(const std::string& id, const std::string& file) {
  const auto path = serving_trace_dir() / (id + ".jsonl");
  std::ifstream in(accuracy_data() / file);
  std::ofstream out(path);
  std::string line;
  std::optional<double> t0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto r = nlohmann::json::parse(line);
    const double t = r.at("arrival_time");
    if (!t0) t0 = t;
    out << nlohmann::json{{"arrival_s", t - *t0}, {"input_tokens", r.at("input_toks")}, {"output_tokens", r.at("output_toks")}}
               .dump()
        << "\n";
  }
  return path;
}

//! A run of bench_serving's random dataset replayed with its own requests.
struct BenchServingReplay {
  std::filesystem::path trace;
  //! Prompt 0, which bench_serving sends once as its warm-up before the run (`benchmark`:
  //! `test_request = input_requests[0]`, at most 32 output tokens): cached when the run starts.
  sim::CachedPrefix warmup;
};

//! A load generator's requests as a trace: arrival i with prompt in[i] (its own declared prefix,
//! i + 1, its whole length) and output max(out[i], 1) (the simulator's least), prompt 0 cached by
//! bench_serving's warm-up (`benchmark`: `test_request = input_requests[0]`).
inline BenchServingReplay write_replay(const std::string& id, const std::vector<double>& arrivals,
                                       const std::vector<std::uint32_t>& in, const std::vector<std::uint32_t>& out) {
  const auto path = serving_trace_dir() / (id + ".jsonl");
  std::ofstream file(path);
  for (std::size_t i = 0; i < in.size(); ++i)
    file << nlohmann::json{{"arrival_s", arrivals[i]},
                           {"input_tokens", in[i]},
                           {"output_tokens", std::max<std::uint32_t>(out[i], 1)},
                           {"prefix_id", i + 1},
                           {"prefix_tokens", in[i]}}
                .dump()
         << "\n";
  return BenchServingReplay{path, {1, in.empty() ? 0 : in[0]}};
}

//! A `uniform` workload of bench_serving's random dataset as the run's own requests
//! (bench_serving_lengths.hpp), when the record's printed total of input tokens is the total of
//! the re-drawn lengths: a trace of those lengths, with the arrival times `spec` generates (all at
//! t = 0 for a closed loop or an infinite rate). A drawn output of 0 tokens is replayed as 1 (the
//! simulator's least). Each prompt is its own declared prefix (i + 1, its whole length): the run's
//! first request finds prompt 0 cached by the warm-up. nullopt when the totals differ: the run
//! drew from another stream.
inline std::optional<BenchServingReplay> bench_serving_trace(const std::string& id, const nlohmann::json& w,
                                                               const nlohmann::json& record, sim::WorkloadSpec spec) {
  const auto& res = record.at("results");
  if (w.at("kind") != "uniform" || w.at("input_low") != 1 || w.at("output_low") != 1 ||
      !res.contains("total_input_tokens") || res.at("total_input_tokens").is_null())
    return std::nullopt;
  const std::size_t n = w.at("num_prompts");
  DrawnLengths d = bench_serving_random_lengths(w.at("input_high"), w.at("output_high"), n);
  // bench_serving.py sample_random_requests (0.5.x): with text prompts it takes the tokenizer's
  // num_special_tokens_to_add() off every drawn length ("server encode will add special token")
  // and prints those shorter lengths; the server adds the token back, so it prefills the draw.
  // A printed total one or two tokens a prompt under the draw's is that run (MiniMax-M2.5's and
  // Step-3.5-Flash's tokenizers add one).
  const std::uint64_t printed = res.at("total_input_tokens").get<std::uint64_t>();
  std::uint64_t specials = 0;
  while (specials <= 2 && total(d.input) != printed + specials * n) ++specials;
  if (specials > 2) return std::nullopt;
  for (auto& l : d.input) l = std::max<std::uint32_t>(l, static_cast<std::uint32_t>(specials));
  // From 0.5.6.post2 the outputs are drawn from [1, O]: the printed total of generated tokens says
  // which draw the run made.
  if (res.contains("total_output_tokens") && !res.at("total_output_tokens").is_null()) {
    const DrawnLengths from_one = bench_serving_random_lengths(w.at("input_high"), w.at("output_high"), n, 1);
    if (total(d.output) != res.at("total_output_tokens").get<std::uint64_t>() &&
        total(from_one.output) == res.at("total_output_tokens").get<std::uint64_t>())
      d = from_one;
  }
  spec.input = spec.output = sim::LengthSpec{};
  spec.input.fixed = spec.output.fixed = 1;
  const auto source = sim::make_request_source(spec);
  std::vector<double> arrivals;
  for (std::size_t i = 0; i < n; ++i) arrivals.push_back(source->next().value().arrival_s);
  return write_replay(id, arrivals, d.input, d.output);
}

//! Lengths drawn for `n` requests, scaled so that they add up to `total` (each at least 1):
//! every length times total / drawn total, rounded down, the tokens rounding dropped handed out
//! one each to the longest.
inline std::vector<std::uint32_t> scaled_to_total(std::vector<std::uint32_t> lengths, std::uint64_t total) {
  std::uint64_t drawn = 0;
  for (auto l : lengths) drawn += l;
  if (lengths.empty() || drawn == 0) return lengths;
  const double f = static_cast<double>(total) / static_cast<double>(drawn);
  std::uint64_t sum = 0;
  std::vector<std::size_t> order(lengths.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    lengths[i] = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::floor(lengths[i] * f)));
    sum += lengths[i];
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return lengths[a] > lengths[b]; });
  for (std::size_t k = 0; sum < total; ++k, ++sum) ++lengths[order[k % order.size()]];
  return lengths;
}

//! A `sharegpt` workload (a built-in of data/workloads/, the population bench_serving draws from)
//! for a record that prints its totals: `spec`'s draw (seed 1) with its prompt and output lengths
//! scaled to the printed total input and output tokens, so that the replay has the run's mean
//! lengths though not its own requests (the run's draw needs the full dataset and the model's
//! tokenizer). Arrival times as `spec` generates them; each prompt its own declared prefix, prompt
//! 0 cached by bench_serving's warm-up. nullopt when the record prints no totals.
inline std::optional<BenchServingReplay> sharegpt_trace(const std::string& id, const nlohmann::json& w,
                                                        const nlohmann::json& record, const sim::WorkloadSpec& spec) {
  const auto& res = record.at("results");
  const auto printed_total = [&](const char* key) -> std::optional<std::uint64_t> {
    if (!res.contains(key) || res.at(key).is_null()) return std::nullopt;
    return res.at(key).get<std::uint64_t>();
  };
  const auto in_total = printed_total("total_input_tokens"), out_total = printed_total("total_output_tokens");
  if (w.at("kind") != "sharegpt" || !in_total || !out_total) return std::nullopt;
  const std::size_t n = w.at("num_prompts");
  const auto source = sim::make_request_source(spec);
  std::vector<double> arrivals;
  std::vector<std::uint32_t> in, out;
  for (std::size_t i = 0; i < n; ++i) {
    const sim::Request r = source->next().value();
    arrivals.push_back(r.arrival_s);
    in.push_back(r.input_tokens);
    out.push_back(r.output_tokens);
  }
  return write_replay(id, arrivals, scaled_to_total(std::move(in), *in_total), scaled_to_total(std::move(out), *out_total));
}

//! The workload a setup states, as `vramplan simulate` flags would give it. Seed 1 for every
//! record (a fixed choice, not tuned).
inline sim::WorkloadSpec serving_workload(const std::string& id, const nlohmann::json& w, const DataRoot& root) {
  sim::WorkloadSpec s;
  s.seed = 1;
  s.requests = w.at("num_prompts").get<std::uint64_t>();
  const std::string kind = w.at("kind");
  if (w.contains("concurrency")) s.concurrency = w.at("concurrency").get<std::uint64_t>();
  if (w.contains("rate")) {
    const auto& r = w.at("rate");
    s.arrivals.rate_per_s = r.is_string() ? sim::parse_rate(r.get<std::string>(), "--rate") : r.get<double>();
  }
  const std::string arrivals = w.value("arrivals", "poisson");
  if (arrivals == "constant") s.arrivals.process = sim::ArrivalProcess::Constant;
  if (kind == "shared_prefix") {
    s.trace = shared_prefix_trace(id, w);
  } else if (kind == "trace") {
    s.trace = replay_trace(id, w.at("trace"));
  } else if (kind == "sharegpt") {  // a built-in of data/workloads/: "sharegpt" or "sharegpt-sglang"
    const std::string lengths = w.value("lengths", "sharegpt");
    s.input = sim::parse_length(lengths, "--input-len", root);
    s.output = sim::parse_length(lengths, "--output-len", root);
  } else if (kind == "uniform") {
    const auto range = [](const nlohmann::json& lo, const nlohmann::json& hi) {
      return "uniform:" + std::to_string(lo.get<std::uint64_t>()) + ".." + std::to_string(hi.get<std::uint64_t>());
    };
    s.input = sim::parse_length(range(w.at("input_low"), w.at("input_high")), "--input-len", root);
    s.output = sim::parse_length(range(w.at("output_low"), w.at("output_high")), "--output-len", root);
  } else {  // fixed
    s.input = sim::parse_length(std::to_string(w.at("input_tokens").get<std::uint64_t>()), "--input-len", root);
    s.output = sim::parse_length(std::to_string(w.at("output_tokens").get<std::uint64_t>()), "--output-len", root);
  }
  return s;
}

//! One line saying what was replayed ("poisson 4 req/s, sharegpt, 1200 requests").
inline std::string workload_text(const nlohmann::json& w) {
  std::string s;
  if (w.contains("concurrency")) s = "closed loop C=" + std::to_string(w.at("concurrency").get<std::uint64_t>());
  else if (w.contains("rate")) {
    const auto& r = w.at("rate");
    s = r.is_string() ? "all at t=0" : w.value("arrivals", "poisson") + " " + fmt("%g", r.get<double>()) + " req/s";
  } else {
    s = "trace arrivals";
  }
  const std::string kind = w.at("kind");
  if (kind == "uniform")
    s += ", uniform 1.." + std::to_string(w.at("input_high").get<int>()) + " / 1.." + std::to_string(w.at("output_high").get<int>());
  else if (kind == "fixed" || kind == "shared_prefix")
    s += ", " + std::to_string(w.at("input_tokens").get<int>()) + " / " + std::to_string(w.at("output_tokens").get<int>()) +
         (kind == "shared_prefix" ? " (" + std::to_string(w.at("prefix_groups").get<int>()) + " shared prefixes of " +
                                        std::to_string(w.at("prefix_tokens").get<int>()) + ")"
                                  : "");
  else if (kind == "sharegpt")
    s += ", " + w.value("lengths", std::string("sharegpt"));
  else
    s += ", replayed trace";
  return s + ", " + std::to_string(w.at("num_prompts").get<std::uint64_t>()) + " requests";
}

inline std::optional<double> printed(const nlohmann::json& results, const char* key) {
  if (!results.contains(key) || results.at(key).is_null()) return std::nullopt;
  return results.at(key).get<double>();
}

//! The measured request throughput at the best precision the record gives. bench_serving
//! computes it as `completed / dur_s` and prints it with two decimals (sglang 0.5.9
//! bench_serving.py `calculate_metrics`, `print("{:<40} {:<10.2f}" ...)`; vLLM's
//! benchmark_serving the same), so a one-user run of 10 requests in 411.34 s prints 0.02 for
//! 0.0243: 18 % off before anything is simulated. Where the printed completed count and
//! duration give the printed rate back at its two decimals, their quotient is that rate unrounded;
//! where they do not (a page that mixes lines of two runs), the printed rate is kept.
inline std::optional<double> measured_request_throughput(const nlohmann::json& results) {
  const auto rate = printed(results, "request_throughput");
  const auto completed = printed(results, "completed"), duration = printed(results, "duration_s");
  if (!rate || !completed || !duration || *duration <= 0) return rate;
  const double exact = *completed / *duration;
  // Half the last printed digit, plus what the duration's own rounding (0.005 s) moves the quotient.
  const double tolerance = 0.005 + exact * 0.005 / *duration;
  return std::abs(exact - *rate) <= tolerance ? std::optional(exact) : rate;
}

//! Predicted vs printed for every figure the record has. TPOT as the setup says: "field" (the
//! printed median TPOT, benchmark_serving's (e2e - TTFT) / (output - 1)), "derived" (the blis
//! records, whose TPOT field is not that figure: (mean E2E - mean TTFT) / (mean output - 1) on
//! both sides, README of the ground truth), "itl" (no TPOT printed: median ITL), "none".
//! `measured_output_tokens`: the tokens each request really generated where the client's count
//! is known to be wrong (the setup says why); the measured output throughput and derived TPOT
//! then use it instead of the printed output_throughput and mean_output_len.
inline void add_metrics(ServingComparison& c, const sim::SimResult& r, const std::string& tpot,
                        std::optional<double> measured_output_tokens = std::nullopt) {
  const auto& res = c.record.at("results");
  const double d = r.duration_s;
  auto add = [&](const char* name, MetricKind kind, double pred, std::optional<double> meas) {
    if (meas && *meas > 0) c.metrics.push_back({name, kind, pred, *meas});
  };
  const auto request_throughput = measured_request_throughput(res);
  add("req/s", MetricKind::Throughput, static_cast<double>(r.completed) / d, request_throughput);
  add("out tok/s", MetricKind::Throughput, r.output_tokens / d,
      measured_output_tokens && request_throughput ? std::optional(*request_throughput * *measured_output_tokens)
                                                   : printed(res, "output_throughput"));
  add("TTFT p50", MetricKind::MedianLatency, r.ttft.p50 * 1e3, printed(res, "median_ttft_ms"));
  if (tpot == "field") {
    add("TPOT p50", MetricKind::MedianLatency, r.tpot.p50 * 1e3, printed(res, "median_tpot_ms"));
    add("TPOT p99", MetricKind::P99Latency, r.tpot.p99 * 1e3, printed(res, "p99_tpot_ms"));
  } else if (tpot == "derived") {
    const auto e2e = printed(res, "mean_e2e_ms"), ttft = printed(res, "mean_ttft_ms");
    const auto out = measured_output_tokens ? measured_output_tokens : printed(res, "mean_output_len");
    const double sim_out = r.output_tokens / static_cast<double>(r.completed);
    add("TPOT (means)", MetricKind::MedianLatency, (r.e2e.mean - r.ttft.mean) * 1e3 / (sim_out - 1),
        e2e && ttft && out ? std::optional((*e2e - *ttft) / (*out - 1)) : std::nullopt);
  } else if (tpot == "itl") {
    add("ITL p50", MetricKind::MedianLatency, r.itl.p50 * 1e3, printed(res, "median_itl_ms"));
    add("ITL p99", MetricKind::P99Latency, r.itl.p99 * 1e3, printed(res, "p99_itl_ms"));
  }
  add("TTFT p99", MetricKind::P99Latency, r.ttft.p99 * 1e3, printed(res, "p99_ttft_ms"));
}

//! A timeline record (the engine's 1 s log lines): peaks and sample means of running / waiting
//! requests and KV usage against the simulated run's maxima and time-weighted means.
inline void add_timeline_metrics(ServingComparison& c, const sim::SimResult& r) {
  const auto& res = c.record.at("results");
  double running = 0, waiting = 0;
  const auto& samples = res.at("timeline");
  for (const auto& x : samples) {
    running += x.at("running").get<double>();
    waiting += x.at("waiting").get<double>();
  }
  const double n = static_cast<double>(samples.size());
  c.metrics.push_back({"max running", MetricKind::Timeline, r.running.max, res.at("max_running")});
  c.metrics.push_back({"max waiting", MetricKind::Timeline, r.waiting.max, res.at("max_waiting")});
  c.metrics.push_back({"max KV usage %", MetricKind::Timeline, r.kv_usage.max * 100, res.at("max_kv_usage_pct")});
  c.metrics.push_back({"mean running", MetricKind::Timeline, r.running.mean, running / n});
  c.metrics.push_back({"mean waiting", MetricKind::Timeline, r.waiting.mean, waiting / n});
}

//! The kernel variants each server has compiled, by the setup's "cold_start" "server" name:
//! records of one server are simulated in file order (the order the source ran them), each
//! starting from what the earlier ones compiled.
using ColdServers = std::map<std::string, std::set<sim::FusedMoeVariant>>;

//! `root`: the data and models read (a test may swap one data file, e.g. to re-run a fit).
//! `servers`: where a "cold_start" record finds and leaves its server's compiled variants (null:
//! a fresh server); `compile_s`: a first use's cost instead of data/cold_start.json's (the fit).
inline ServingComparison simulate_record(const nlohmann::json& record, const nlohmann::json& setup,
                                         const DataRoot& root = DataRoot{source_dir()},
                                         ColdServers* servers = nullptr,
                                         std::optional<double> compile_s = std::nullopt) {
  ServingComparison c;
  c.record = record;
  c.id = record.at("id");
  c.engine = setup.at("engine");
  c.model = setup.at("model");
  c.gpu = setup.at("gpu");
  c.notes = setup.value("notes", "");
  c.median_exclusion = setup.value("exclude_from_medians", "");
  const auto& w = setup.at("workload");
  c.workload = workload_text(w);
  sim::SimulateRequest q;
  q.plan.model = c.model;
  q.plan.gpu = c.gpu;
  q.plan.engine = c.engine;
  for (const auto& [k, v] : setup.at("args").items()) q.plan.args[k] = v.get<std::string>();
  // A stored weight format the catalogue config does not carry (`vramplan simulate --weights`):
  // a quantized checkpoint of the same dimensions whose own config.json has no copy.
  if (setup.contains("weights")) q.plan.weights = setup.at("weights").get<std::string>();
  // Speculative decoding: the mean tokens a verify kept, as the run's load generator printed it.
  if (setup.contains("spec_accept_length")) q.plan.spec_accept_length = setup.at("spec_accept_length").get<double>();
  q.workload = serving_workload(c.id, w, root);
  if (auto replay = bench_serving_trace(c.id, w, record, q.workload)) {
    q.workload.trace = std::move(replay->trace);
    q.options.warm_prefixes = {replay->warmup};
    c.workload += " (the run's own lengths, re-drawn)";
  } else if (auto scaled = sharegpt_trace(c.id, w, record, q.workload)) {
    q.workload.trace = std::move(scaled->trace);
    q.options.warm_prefixes = {scaled->warmup};
    c.workload += " (a seed-1 draw of the population scaled to the printed totals, not the run's own requests)";
  } else if (w.at("kind") == "sharegpt") {
    c.workload += " (a seed-1 draw of the population, not the run's own requests)";
  }
  if (setup.contains("cold_start")) {
    c.cold_server = setup.at("cold_start").at("server").get<std::string>();
    q.cold_start.enabled = true;
    q.cold_start.compile_s = compile_s;
    if (servers) q.cold_start.compiled = (*servers)[c.cold_server];
  }
  const sim::SimulateOutcome out = sim::run_simulation(q, root);
  if (out.cold) {
    c.cold_first_uses = out.cold->first_uses;
    c.cold_stalled_s = out.cold->stalled_s;
    if (servers) (*servers)[c.cold_server] = out.cold->compiled;
  }
  if (q.workload.trace) {  // the trace and, once empty, its directory
    std::error_code ec;
    std::filesystem::remove(*q.workload.trace, ec);
    std::filesystem::remove(q.workload.trace->parent_path(), ec);
  }
  c.completed = out.result.completed;
  c.itl_p50_s = out.result.itl.p50;
  c.rejected = out.result.rejected;
  c.preemptions = out.result.preemptions;
  c.verdict = out.result.verdict.state;
  if (record.at("record_type") == "timeline") add_timeline_metrics(c, out.result);
  else
    add_metrics(c, out.result, setup.at("tpot"),
                setup.contains("measured_output_tokens") ? std::optional(setup.at("measured_output_tokens").get<double>())
                                                         : std::nullopt);
  return c;
}

//! The records SGLang's MoE-layer overheads are fitted on (data/perf_defaults.json
//! step_overhead.sglang; SimAccuracy.SglangMoeOverheadIsTheFittedValue re-runs the fit): the
//! one-user cookbook runs on NVIDIA GPUs of the two models whose weights SGLang runs natively.
inline const std::vector<std::string>& sglang_overhead_fit_records() {
  static const std::vector<std::string> ids = {
      "sglcookbook-deepseek-r1-00", "sglcookbook-deepseek-r1-03", "sglcookbook-deepseek-r1-06",
      "sglcookbook-qwen3-00",       "sglcookbook-qwen3-03",       "sglcookbook-qwen3-06"};
  return ids;
}

//! The records SGLang's per-GEMM cost of block-scaled FP8 weights on AMD GPUs is fitted on
//! (step_overhead.sglang block_fp8_gemm_us.amd; SimAccuracy.SglangAmdBlockFp8OverheadIsTheFittedValue):
//! the one-user cookbook runs on 8 x MI300X of the two models with 128 x 128 FP8 weights.
inline const std::vector<std::string>& sglang_amd_block_fp8_fit_records() {
  static const std::vector<std::string> ids = {"sglcookbook-deepseek-v3-1-00", "sglcookbook-deepseek-v3-1-03",
                                               "sglcookbook-deepseek-v3-1-06", "sglcookbook-qwen3-coder-00"};
  return ids;
}

//! The record vLLM's first-use compile stall is fitted on (data/cold_start.json vllm.compile_s;
//! SimAccuracy.VllmColdStartCompileIsTheFittedValue): a fresh server's first stage of Mixtral-8x7B.
inline const std::vector<std::string>& vllm_cold_start_fit_records() {
  static const std::vector<std::string> ids = {"blis-train-20260218-120914-mixtral-8x7b-v0-1-tp2-codegen-stage0"};
  return ids;
}

//! The record SGLang's per-kernel decode cost on Hopper is fitted on (kernel_counts.kernel_us_by_capability
//! "9"; SimAccuracy.SglangHopperDecodeKernelCostIsTheFittedValue): the one one-user run of a counted
//! architecture on H200 in the ground truth.
inline const std::vector<std::string>& sglang_hopper_kernel_fit_records() {
  static const std::vector<std::string> ids = {"sglcookbook-step3-5-00"};
  return ids;
}

inline bool is_fit_record(const std::string& id) {
  for (const auto* f : {&sglang_overhead_fit_records(), &sglang_amd_block_fp8_fit_records(), &vllm_cold_start_fit_records(),
                        &sglang_hopper_kernel_fit_records()})
    if (std::find(f->begin(), f->end(), id) != f->end()) return true;
  return false;
}

//! Each of `records` simulated as `setup` ("simulated" by id) says, the servers of one file kept
//! across its records (ColdServers).
inline std::vector<ServingComparison> simulate_all(const std::vector<nlohmann::json>& records,
                                                   const nlohmann::json& setup) {
  std::vector<ServingComparison> v;
  ColdServers servers;
  for (const auto& r : records)
    v.push_back(simulate_record(r, setup.at("simulated").at(r.at("id").get<std::string>()), DataRoot{source_dir()}, &servers));
  return v;
}

//! Every record of serving_records.jsonl, simulated once per test run.
inline const std::vector<ServingComparison>& serving_comparisons() {
  static const std::vector<ServingComparison> all = simulate_all(serving_records(), serving_setup());
  return all;
}

//! Every record of serving_extra_records.jsonl, simulated once per test run.
inline const std::vector<ServingComparison>& serving_extra_comparisons() {
  static const std::vector<ServingComparison> all = simulate_all(serving_extra_records(), serving_extra_setup());
  return all;
}

}  // namespace vramplan::test
