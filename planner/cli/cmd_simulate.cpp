// `vramplan simulate` — a serving workload replayed over time on one engine replica: arrivals,
// continuous batching, paged KV, preemption and queueing (docs/simulator.md). Prints latency
// percentiles, throughput, KV usage, memory and a verdict (stable, overloaded, inconclusive, ...);
// --timeline writes the state over time. Exit 0 whenever the inputs are valid, overloaded or not;
// 1 when the engine would not start at all (the plan's reason).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <unistd.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "decision_options.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/memory/flag_equivalents.hpp"
#include "vramplan/plan/capacity_report.hpp"
#include "vramplan/sim/simulate.hpp"

namespace vramplan::cli {
namespace {

// Timeline samples streamed to FILE as they are produced: memory stays O(1) in the run length.
// .json -> one JSON array; .csv -> CSV with a header row; any other name is refused before the
// file is created. Each sample: the engine's state (counts, KV, memory), the latency percentiles of
// the requests whose first / last token came since the previous sample (empty / null when none),
// and the seconds the queue's head has been held back so far by each limit (docs/simulator.md).
class TimelineWriter {
 public:
  // The extension in any case (x.CSV), as a trace's is read (sim/workload_parse.cpp is_csv).
  explicit TimelineWriter(const std::string& path) : path_(path), json_(to_lower(path).ends_with(".json")) {
    if (!json_ && !to_lower(path).ends_with(".csv")) throw_usage("--timeline: '" + path + "' must end in .csv or .json (the format)");
    out_.open(path);
    if (!out_) throw Error(ErrorKind::Io, "--timeline: cannot write " + path);
    if (json_) {
      out_ << "[\n";
    } else {
      out_ << "t_s,running,waiting,completed,preemptions,kv_blocks_used,kv_blocks_cached,kv_usage,memory_gib,"
              "ttft_p50_s,ttft_p99_s,tpot_p50_s,tpot_p99_s";
      for (const char* key : sim::kHeldLimitKeys) out_ << ",held_" << key << "_s";
      out_ << "\n";
    }
  }
  void write(const sim::TimelineSample& t) {
    char b[320];
    const double gib = t.memory_bytes / 1073741824.0;
    if (json_)
      std::snprintf(b, sizeof b,
                    "%s{\"t_s\": %.6f, \"running\": %llu, \"waiting\": %llu, \"completed\": %llu, \"preemptions\": %llu, "
                    "\"kv_blocks_used\": %llu, \"kv_blocks_cached\": %llu, \"kv_usage\": %.6f, \"memory_gib\": %.6f",
                    first_ ? "  " : ",\n  ", t.t_s, ull(t.running), ull(t.waiting), ull(t.completed), ull(t.preemptions),
                    ull(t.kv_blocks_used), ull(t.kv_blocks_cached), t.kv_usage, gib);
    else
      std::snprintf(b, sizeof b, "%.6f,%llu,%llu,%llu,%llu,%llu,%llu,%.6f,%.6f", t.t_s, ull(t.running), ull(t.waiting),
                    ull(t.completed), ull(t.preemptions), ull(t.kv_blocks_used), ull(t.kv_blocks_cached), t.kv_usage, gib);
    out_ << b;
    const bool ttft = t.ttft_window.count > 0, tpot = t.tpot_window.count > 0;
    field("ttft_p50_s", ttft, t.ttft_window.p50);
    field("ttft_p99_s", ttft, t.ttft_window.p99);
    field("tpot_p50_s", tpot, t.tpot_window.p50);
    field("tpot_p99_s", tpot, t.tpot_window.p99);
    for (int i = 0; i < sim::kHeldLimits; ++i)
      field(std::string("held_") + sim::kHeldLimitKeys[i] + "_s", true, t.held_back.seconds[i]);
    out_ << (json_ ? "}" : "\n");
    first_ = false;
  }
  void close() {
    if (json_) out_ << "\n]\n";
    out_.close();
    if (!out_) throw Error(ErrorKind::Io, "--timeline: cannot write " + path_);
  }

 private:
  static unsigned long long ull(std::uint64_t v) { return static_cast<unsigned long long>(v); }
  // One more value, or null (JSON) / an empty field (CSV) when absent: a window's percentile
  // when no request's first or last token came in it.
  void field(const std::string& key, bool present, double v) {
    const std::string text = present ? format_number("%.6f", v) : std::string(json_ ? "null" : "");
    if (json_) out_ << ", \"" << key << "\": " << text;
    else out_ << "," << text;
  }
  std::string path_;
  bool json_;
  std::ofstream out_;
  bool first_ = true;
};

}  // namespace

int run_simulate(const std::vector<std::string>& args) {
  const std::string spec = engine_spec_of(args);
  const auto engine = memory::make_engine(spec, data_root().data());
  po::options_description desc("Options");
  std::set<std::string> declared;
  add_plan_target_options(desc, declared);
  desc.add_options()
      ("rate", po::value<std::string>(), "requests per second (open loop), or inf: everything queued at t = 0")
      ("arrivals", po::value<std::string>()->default_value("poisson"), "arrival process: poisson, gamma:CV, constant")
      ("requests", po::value<std::uint64_t>(), "number of requests")
      ("duration", po::value<std::string>(), "stop arrivals after this long: 600, 600s, 10m, 2h")
      ("concurrency", po::value<std::uint64_t>(), "closed loop: at most C requests outstanding (benchmark_serving --max-concurrency)")
      ("input-len", po::value<std::string>()->default_value("sharegpt"), "prompt tokens: 512, uniform:A..B, lognormal:MEAN,SIGMA, hist:FILE, sharegpt, sharegpt-sglang, sharegpt-multiturn")
      ("output-len", po::value<std::string>()->default_value("sharegpt"), "output tokens (same forms)")
      ("trace", po::value<std::string>(), "replay a trace: JSONL or CSV of arrival_s, input_tokens, output_tokens[, prefix_id, prefix_tokens]")
      ("seed", po::value<std::uint64_t>()->default_value(0), "random seed (same seed, same output)")
      ("timeout", po::value<std::string>(), "report when a request first stays unfinished this long after it was sent (nothing is cancelled; it runs to the end): 30, 30s, 2m")
      ("timeline", po::value<std::string>(), "write running / waiting / KV usage / memory over time to FILE (.csv or .json)")
      ("sample-every", po::value<double>()->default_value(1.0), "timeline sample spacing, simulated seconds")
      ("slo", po::value<std::string>(), "latency targets, e.g. \"p99_ttft<=2s,p99_tpot<=60ms\" (p50|p90|p99|mean of ttft|tpot|itl|e2e|queue)")
      ("find-max-rate", po::bool_switch(), "search the highest arrival rate one replica serves within --slo")
      ("target-rate", po::value<std::string>(), "replicas (round-robin router) needed to serve this many requests/s within --slo, with cost")
      ("workers", po::value<std::uint64_t>(), "offline job (--rate inf): split the requests over K replicas; makespan, GPU-hours, rental period")
      ("margin", po::value<std::string>()->default_value("24h"), "time added to an offline job for installation, checks and export")
      ("periods", po::value<std::string>()->default_value("3d,7d,30d"), "rental periods to price")
      ("prices", po::value<std::string>(), "your own GPU prices (vramplan.prices/1) instead of data/prices.json")
      ("probe-requests", po::value<std::uint64_t>()->default_value(3000), "requests simulated per capacity probe")
      ("router", po::value<std::string>()->default_value("least-outstanding"), "with --target-rate: least-outstanding or round-robin")
      ("cold-start", po::bool_switch(), "a freshly started server (vllm): a step whose forward needs a fused-MoE kernel variant not compiled at start-up stalls for the compile")
      ("batch", po::value<std::uint64_t>(), "HF transformers (--engine hf): the static batch generate() runs, each finished before the next starts (default 1)");
  declared.insert({"rate", "arrivals", "requests", "duration", "concurrency", "input-len", "output-len", "trace", "seed",
                   "timeout", "timeline", "sample-every", "slo", "find-max-rate", "target-rate", "workers", "margin",
                   "periods", "prices", "probe-requests", "router", "cold-start", "batch"});
  add_engine_options(desc, *engine, declared);
  add_common_options(desc, true);
  po::variables_map vm;
  if (!parse_args("simulate", "--model M --gpu G [--engine E] (--rate R | --concurrency C) (--requests N | --duration D) [engine flags]",
                  desc, args, vm))
    return 0;
  const auto opts = read_common_options(vm);

  plan::SimulateQuestions q;
  sim::SimulateRequest& req = q.request;
  req.plan = read_plan_target(vm, spec, *engine);
  if (vm.count("batch")) {
    // Only HF's generate() batches statically; a serving engine's continuous batch has a running
    // cap of its own, which the message names in the engine's flag.
    if (engine->name() != "hf") {
      const std::string_view cap = memory::flag_for_setting(memory::kSettingRunningCap, engine->name());
      throw_usage("--batch: a static batch is HF transformers' generate() (--engine hf); " + std::string(engine->name()) +
                  " batches continuously" + (cap.empty() ? std::string() : ", up to --" + std::string(cap)));
    }
    const std::uint64_t batch = vm["batch"].as<std::uint64_t>();
    if (batch == 0 || batch > 1048576) throw_usage("--batch: expected a whole number in 1..1048576, got " + std::to_string(batch));
    req.plan.workload.batch = batch;
  }

  sim::WorkloadSpec& w = req.workload;
  w.arrivals = sim::parse_arrivals(vm["arrivals"].as<std::string>(), "--arrivals");
  if (vm.count("rate")) w.arrivals.rate_per_s = sim::parse_rate(vm["rate"].as<std::string>(), "--rate");
  else if (!vm.count("concurrency") && !vm.count("trace") && !vm["find-max-rate"].as<bool>() && !vm.count("target-rate"))
    throw_usage("simulate: give --rate R (requests per second, or inf) or --concurrency C (a closed loop)");
  if (vm.count("requests")) w.requests = vm["requests"].as<std::uint64_t>();
  if (vm.count("duration")) w.duration_s = sim::parse_duration(vm["duration"].as<std::string>(), "--duration");
  if (vm.count("concurrency")) w.concurrency = vm["concurrency"].as<std::uint64_t>();
  if (vm.count("trace")) {
    // A trace fixes its own arrivals and lengths: a flag that would set them is refused, not ignored.
    // --seed too: the seed draws only arrivals and lengths.
    for (const char* f : {"rate", "arrivals", "input-len", "output-len", "seed"})
      if (vm.count(f) && !vm[f].defaulted()) throw_usage(std::string("--") + f + ": a --trace sets arrivals and lengths itself");
    w.trace = vm["trace"].as<std::string>();
  } else {
    const bool searched_rate = vm["find-max-rate"].as<bool>() || vm.count("target-rate");
    // Poisson, the default, may be named anywhere; another process needs arrivals to space.
    const bool process_given = !vm["arrivals"].defaulted() && w.arrivals.process != sim::ArrivalProcess::Poisson;
    if (process_given && !searched_rate && !(vm.count("rate") && std::isfinite(w.arrivals.rate_per_s)))
      throw_usage("--arrivals: spaces the arrivals of a finite --rate R; without one every request is ready at once");
    w.input = sim::parse_length(vm["input-len"].as<std::string>(), "--input-len", data_root());
    w.output = sim::parse_length(vm["output-len"].as<std::string>(), "--output-len", data_root());
  }
  w.seed = vm["seed"].as<std::uint64_t>();
  req.cold_start.enabled = vm["cold-start"].as<bool>();
  if (vm.count("timeout")) req.options.timeout_s = sim::parse_duration(vm["timeout"].as<std::string>(), "--timeout");

  if (vm.count("slo")) q.slo = plan::parse_slo(vm["slo"].as<std::string>());
  q.find_max_rate = vm["find-max-rate"].as<bool>();
  if (vm.count("target-rate")) q.target_rate = sim::parse_rate(vm["target-rate"].as<std::string>(), "--target-rate");
  if (vm.count("workers")) q.workers = vm["workers"].as<std::uint64_t>();
  q.margin_hours = sim::parse_duration(vm["margin"].as<std::string>(), "--margin", /*zero_allowed=*/true) / 3600;
  q.periods = plan::parse_periods(vm["periods"].as<std::string>());
  if (vm.count("prices")) q.prices_file = vm["prices"].as<std::string>();
  q.options.requests_per_probe = vm["probe-requests"].as<std::uint64_t>();
  q.options.router = plan::parse_router(vm["router"].as<std::string>());
  plan::check_probe_requests(q.options.requests_per_probe);
  if ((q.find_max_rate || q.target_rate) && (vm.count("timeline") || vm.count("concurrency")))
    throw_usage("--find-max-rate / --target-rate run many probes: --timeline and --concurrency do not apply");

  if (!vm["sample-every"].defaulted() && !vm.count("timeline"))
    throw_usage("--sample-every: spaces the samples of --timeline FILE, which is not given");
  // Options of the capacity answers are refused, not ignored, without the answer they shape.
  const auto given = [&vm](const char* f) { return vm.count(f) && !vm[f].defaulted(); };
  if (given("router") && !q.target_rate)
    throw_usage("--router: the router in front of --target-rate's replicas, which is not given");
  if (given("margin") && !q.workers)
    throw_usage("--margin: time added to the offline job of --workers K, which is not given");
  for (const char* f : {"periods", "prices"})
    if (given(f) && !q.target_rate && !q.workers)
      throw_usage(std::string("--") + f + ": prices the replicas of --target-rate or the offline job of --workers, neither given");
  if (given("probe-requests") && !q.find_max_rate && !q.target_rate)
    throw_usage("--probe-requests: the requests of each probe of --find-max-rate or --target-rate, neither given");
  std::optional<TimelineWriter> timeline;
  if (vm.count("timeline")) {
    const double every = vm["sample-every"].as<double>();
    // Below a millisecond (shorter than any engine step) the samples only repeat one state, and
    // a spacing under the clock's resolution would never advance it.
    if (!(every >= 1e-3) || !std::isfinite(every)) throw_usage("--sample-every: must be at least 0.001 seconds");
    timeline.emplace(vm["timeline"].as<std::string>());
    req.options.sample_every_s = every;
    req.options.on_sample = [&timeline](const sim::TimelineSample& t) { timeline->write(t); };
  }
  const bool progress = show_progress(opts);
  if (progress) {
    const std::string total = w.requests ? " / " + std::to_string(*w.requests) : std::string();
    req.options.on_progress = [total](std::uint64_t done) {
      std::fprintf(stderr, "\rsimulate: %llu%s requests finished", static_cast<unsigned long long>(done), total.c_str());
    };
  }
  const plan::SimulateAnswers answers = plan::answer_simulate(q, data_root());
  if (progress) std::fprintf(stderr, "\r\033[K");
  if (timeline) timeline->close();
  if (opts.format == OutputFormat::Markdown) emit(opts, {}, plan::simulate_answers_markdown(answers));
  else emit(opts, plan::simulate_answers_json(answers), plan::simulate_answers_text(answers));
  return 0;
}

}  // namespace vramplan::cli
