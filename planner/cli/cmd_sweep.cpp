// `vramplan sweep` — models x precisions x GPUs x TP x context x batch: the fitting
// configurations ranked by rental cost for --periods (catalogue prices or --prices FILE).
// Progress on a terminal; quiet when piped, with --json or --quiet.
#include <algorithm>
#include <cstdio>
#include <ostream>
#include <set>

#include "cli_common.hpp"
#include "commands.hpp"
#include "decision_options.hpp"
#include "diffusion_commands.hpp"
#include "exit_codes.hpp"
#include "sweep_common.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/plan/slo_sweep.hpp"
#include "vramplan/plan/sweep.hpp"
#include "vramplan/core/table.hpp"

namespace vramplan::cli {
namespace {

nlohmann::json sweep_json(const plan::SweepResult& r, std::size_t top) {
  nlohmann::json rows = nlohmann::json::array(), misses = nlohmann::json::array(), periods = nlohmann::json::array();
  for (const auto& p : r.periods) periods.push_back({{"label", p.label}, {"hours", p.hours}});
  for (std::size_t i = 0; i < r.rows.size() && i < top; ++i) {
    const auto& x = r.rows[i];
    rows.push_back({{"model", x.model}, {"weights", x.weights}, {"gpu", x.gpu}, {"tp", x.tp}, {"pp", x.pp},
                    {"replicas", x.replicas}, {"gpus", x.gpus}, {"pipeline_bubble", x.pipeline_bubble},
                    {"billed_gpus", x.billed_gpus}, {"context", x.context}, {"batch", x.batch},
                    {"verdict", std::string(plan::verdict_name(x.verdict))},
                    {"needed_bytes_per_gpu", x.needed_per_gpu.count()}, {"held_bytes_per_gpu", x.held_per_gpu.count()},
                    {"capacity_bytes", x.capacity.count()}, {"spare_fraction", x.spare_fraction},
                    {"tokens_per_s", x.tokens_per_s > 0 ? nlohmann::json(x.tokens_per_s) : nlohmann::json(nullptr)},
                    {"tpot_s", x.tpot_s > 0 ? nlohmann::json(x.tpot_s) : nlohmann::json(nullptr)},
                    {"cost_usd", x.cost_usd.empty() ? nlohmann::json(nullptr) : nlohmann::json(x.cost_usd)},
                    {"price_basis", x.price_basis},
                    {"throughput_scaled_from",
                     x.throughput_scaled_from.empty() ? nlohmann::json(nullptr) : nlohmann::json(x.throughput_scaled_from)},
                    {"compatibility_fallbacks", x.fallbacks},
                    {"launch", x.launch ? plan::launch_json(*x.launch) : nlohmann::json(nullptr)}});
  }
  for (const auto& m : r.misses)
    misses.push_back({{"model", m.model}, {"weights", m.weights}, {"gpu", m.gpu}, {"tp", m.tp}, {"pp", m.pp}, {"why", m.why},
                      {"verdict", m.unsupported ? "UNSUPPORTED" : "DOES NOT FIT"}});
  return {{"schema", "vramplan.sweep/1"}, {"evaluations", r.evaluations}, {"fitting", r.rows.size()},
          {"periods", periods}, {"rows", rows}, {"not_fitting", misses}};
}

// The commands that start the rows shown, one replica each; rows that start the same way share
// one entry ("#1, #3").
std::string launch_text(const plan::SweepResult& r, std::size_t top, bool markdown) {
  std::vector<std::pair<std::string, std::string>> commands;  // (rows, line), in row order
  std::set<std::string> notes;
  for (std::size_t i = 0; i < r.rows.size() && i < top; ++i) {
    const auto& l = r.rows[i].launch;
    if (!l) continue;
    if (!l->note.empty()) notes.insert(l->note);
    if (l->argv.empty()) continue;
    const std::string line = l->line(), row = "#" + std::to_string(i + 1);
    const auto same = std::find_if(commands.begin(), commands.end(), [&](const auto& c) { return c.second == line; });
    if (same == commands.end()) commands.emplace_back(row, line);
    else same->first += ", " + row;
  }
  if (commands.empty() && notes.empty()) return "";
  std::string s = markdown ? "\nStart each configuration (one replica; --replicas N means N of them):\n\n"
                           : "launch (one replica each):\n";
  for (const auto& [rows, line] : commands)
    s += markdown ? "- " + rows + ":\n\n  ```sh\n  " + line + "\n  ```\n\n" : "  " + rows + ": " + line + "\n";
  for (const auto& n : notes) s += markdown ? n + ".\n\n" : "  (" + n + ")\n";
  return s;
}

std::string sweep_text(const plan::SweepResult& r, std::size_t top, bool markdown) {
  const Table t = sweep_table(r, top);
  std::set<std::string> bases, fallbacks, scaled;
  for (std::size_t i = 0; i < r.rows.size() && i < top; ++i) {
    const auto& x = r.rows[i];
    for (const auto& rule : x.fallbacks) fallbacks.insert(x.gpu + ": " + rule);
    if (!x.price_basis.empty()) bases.insert(x.gpu + ": " + x.price_basis);
    if (!x.throughput_scaled_from.empty()) scaled.insert(x.gpu + ": " + x.throughput_scaled_from);
  }
  std::string s = markdown ? "### Configurations that fit, cheapest first\n\n" + t.render_markdown() : t.render_text();
  // Appended piece by piece: g++ 12 gives a false -Wrestrict on literal + std::string chains.
  s += "\n";
  s += std::to_string(r.rows.size());
  s += " fitting of ";
  s += std::to_string(r.evaluations);
  s += " points evaluated";
  if (r.rows.size() > top) s += "; first " + std::to_string(top) + " shown (--top)";
  s += "\n";
  s += launch_text(r, top, markdown);
  if (!fallbacks.empty()) {
    s += "runs through a fallback (data/compat rule; docs/compatibility.md):\n";
    for (const auto& f : fallbacks) s += "  " + f + "\n";
  }
  if (!r.misses.empty()) {
    s += "not fitting:\n";
    for (const auto& m : r.misses)
      s += "  " + m.model + " " + m.weights + " " + m.gpu + " tp" + std::to_string(m.tp) +
           (m.pp > 1 ? " pp" + std::to_string(m.pp) : "") + ": " + m.why + "\n";
  }
  if (!scaled.empty()) {
    s += "est. tok/s of MIG slices, scaled from the full card:\n";
    for (const auto& m : scaled) s += "  " + m + "\n";
  }
  if (!bases.empty()) {
    s += "prices (USD per GPU-hour, indicative):\n";
    for (const auto& b : bases) s += "  " + b + "\n";
  }
  s += "needs: non-KV memory + the KV of the point's sequences; held: what the engine allocates (vLLM, SGLang, "
       "TensorRT-LLM: the whole KV pool); MARGINAL: fits on the expected values, not on the upper bounds of "
       "data/accuracy_bounds.json\n";
  s += "est. tok/s: decode roofline at the full context, all replicas (datasheet x data/perf_defaults.json "
       "efficiencies; PP with its pipeline bubble)\n";
  return s;
}

}  // namespace

int run_sweep(const std::vector<std::string>& args) {
  // --mode train has options of its own (train's setup, GPU counts, shardings): its own parser.
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string mode = args[i] == "--mode" && i + 1 < args.size() ? args[i + 1]
                             : args[i].rfind("--mode=", 0) == 0     ? args[i].substr(7)
                                                                    : "";
    if (mode == "train") return run_sweep_train(args);
    if (!mode.empty() && mode != "serve") throw_usage("--mode must be serve or train, got '" + escape_control(mode) + "'");
  }
  // Diffusion pipelines (models/diffusion/<id>, diffusers directories; a comma-separated list is
  // ranked together): GPUs x batch x memory mode.
  if (names_diffusion_pipelines(args)) return run_diffusion_sweep(args);
  const std::string spec = engine_spec_of(args);
  const auto engine = memory::make_engine(spec, data_root().data());
  po::options_description desc("Options");
  std::set<std::string> declared;
  add_sweep_options(desc, declared);
  desc.add_options()
      ("mode", po::value<std::string>()->default_value("serve"), "serve (inference layouts) | train (training layouts: sweep --mode train --help)")
      ("top", po::value<std::size_t>()->default_value(20), "rows shown")
      ("rate", po::value<std::string>(), "serve this many requests/s within --slo: layouts ranked by cost (each simulated)")
      ("slo", po::value<std::string>(), "latency targets for --rate, e.g. \"p99_ttft<=2s,p99_tpot<=60ms\"")
      ("arrivals", po::value<std::string>()->default_value("poisson"), "with --rate: poisson, gamma:CV, constant")
      ("input-len", po::value<std::string>()->default_value("sharegpt"), "with --rate: prompt tokens (512, uniform:A..B, lognormal:M,S, hist:FILE, sharegpt, sharegpt-sglang, sharegpt-multiturn)")
      ("output-len", po::value<std::string>()->default_value("sharegpt"), "with --rate: output tokens (same forms)")
      ("seed", po::value<std::uint64_t>()->default_value(0), "with --rate: random seed")
      ("probe-requests", po::value<std::uint64_t>()->default_value(3000), "with --rate: requests simulated per probe")
      ("router", po::value<std::string>()->default_value("least-outstanding"), "with --rate: least-outstanding or round-robin");
  declared.insert({"mode", "top", "rate", "slo", "arrivals", "input-len", "output-len", "seed", "probe-requests", "router"});
  add_spec_accept_option(desc, declared);
  const std::set<std::string> own = declared;  // --tp / --pp here are the sweep's lists, not engine flags
  add_engine_options(desc, *engine, declared);
  add_common_options(desc, true);
  po::variables_map vm;
  if (!parse_args("sweep", "--model M[,M] [--gpu G,G | --mig] [--tp 1,2] [--pp 1,2] [--replicas 1,2] [--context C,C] [--batch B,B] [--json]",
                  desc, args, vm))
    return kExitOk;
  const auto opts = read_common_options(vm);
  const plan::SweepRequest req = read_sweep_request(vm, spec, *engine, own);
  const std::size_t top = vm["top"].as<std::size_t>();

  const bool progress = show_progress(opts);
  if (vm.count("spec-accept-length") && !vm.count("rate"))
    throw_usage("--spec-accept-length applies to the simulated sweep: add --rate R --slo T");
  for (const char* o : {"arrivals", "input-len", "output-len", "seed", "probe-requests", "router"})
    if (!vm.count("rate") && !vm[o].defaulted())
      throw_usage(std::string("--") + o + " applies to the simulated sweep: add --rate R --slo T");
  if (vm.count("rate") || vm.count("slo")) {
    if (!vm.count("rate") || !vm.count("slo")) throw_usage("sweep: --rate and --slo go together (serve R requests/s within the targets)");
    plan::SloSweepRequest sr;
    sr.sweep = req;
    sr.rate_per_s = sim::parse_rate(vm["rate"].as<std::string>(), "--rate");
    sr.slo = plan::parse_slo(vm["slo"].as<std::string>());
    sr.workload.arrivals = sim::parse_arrivals(vm["arrivals"].as<std::string>(), "--arrivals");
    sr.workload.input = sim::parse_length(vm["input-len"].as<std::string>(), "--input-len", data_root());
    sr.workload.output = sim::parse_length(vm["output-len"].as<std::string>(), "--output-len", data_root());
    sr.workload.seed = vm["seed"].as<std::uint64_t>();
    sr.options.requests_per_probe = vm["probe-requests"].as<std::uint64_t>();
    sr.options.router = plan::parse_router(vm["router"].as<std::string>());
    sr.spec_accept_length = read_spec_accept(vm);
    plan::check_probe_requests(sr.options.requests_per_probe);
    const auto slo_result = plan::run_slo_sweep(sr, data_root(), [&](std::size_t done, std::size_t total) {
      if (progress) err() << "\rsweep: layout " << done + 1 << "/" << total << std::flush;
    });
    if (progress) err() << "\r\033[K" << std::flush;
    emit(opts, plan::slo_sweep_json(sr, slo_result, top),
         plan::slo_sweep_text(sr, slo_result, top, opts.format == OutputFormat::Markdown));
    return kExitOk;
  }
  auto result = plan::run_sweep(req, data_root(), [&](std::size_t done, std::size_t total) {
    if (!progress) return;
    err() << "\rsweep: " << done << "/" << total << " (model, precision, TP, PP) groups" << (done == total ? "\n" : "")
              << std::flush;
  });
  plan::attach_launch_commands(result, req, data_root(), top);
  emit(opts, sweep_json(result, top), sweep_text(result, top, opts.format == OutputFormat::Markdown));
  return kExitOk;
}

}  // namespace vramplan::cli
