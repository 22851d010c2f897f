// `vramplan report` — one self-contained HTML file for a proposal: the inputs, the recommended
// layout and the alternatives of a sweep with their rental cost, memory per component for each
// GPU option against its capacity, the batch table with throughput and latency charts, on request
// a simulated run's timeline (--simulate) and a training plan (--train), and the accuracy basis.
// The page has no script and loads nothing (docs/report.md); stdout gets one line naming it.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "decision_options.hpp"
#include "exit_codes.hpp"
#include "report_sections.hpp"
#include "sweep_common.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/model/encoder.hpp"
#include "vramplan/plan/session.hpp"
#include "vramplan/train/train_setup.hpp"

namespace vramplan::cli {
namespace {

// The engine flags of one sweep row: the user's flags with the row's TP / PP in the engine's
// own spelling (as sweep_launch.cpp plans a row).
memory::EngineArgs report_row_args(const plan::PlanSession& session, const plan::SweepRequest& req, const plan::SweepRow& row) {
  memory::EngineArgs args = req.args;
  if (!session.tp_flag().empty()) args.erase(session.tp_flag());
  if (!session.pp_flag().empty()) args.erase(session.pp_flag());
  return session.with_parallel(args, {row.tp, row.pp});
}

std::optional<std::string> report_row_weights(const plan::SweepRow& row) {
  return row.weights == "checkpoint" ? std::nullopt : std::optional<std::string>(row.weights);
}

// The GPU options charted: the cheapest fitting row of each GPU, in the sweep's order.
std::vector<std::size_t> report_option_rows(const plan::SweepResult& r, std::size_t max_options) {
  std::vector<std::size_t> rows;
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < r.rows.size() && rows.size() < max_options; ++i) {
    if (std::find(seen.begin(), seen.end(), r.rows[i].gpu) != seen.end()) continue;
    seen.push_back(r.rows[i].gpu);
    rows.push_back(i);
  }
  return rows;
}

std::string report_command_line(const std::vector<std::string>& args) {
  std::string s = "vramplan report";
  for (const auto& a : args) s += " " + (a.find_first_of(" \"'$") == std::string::npos ? a : "'" + a + "'");
  return s;
}

}  // namespace

int run_report(const std::vector<std::string>& args) {
  const std::string spec = engine_spec_of(args);
  const auto engine = memory::make_engine(spec, data_root().data());
  po::options_description desc("Options");
  std::set<std::string> declared;
  add_sweep_options(desc, declared);
  desc.add_options()
      ("out", po::value<std::string>(), "write the HTML page to FILE (required)")
      ("title", po::value<std::string>(), "the page's title (default: the model and the GPUs)")
      ("top", po::value<std::size_t>()->default_value(10), "alternatives shown")
      ("options", po::value<std::size_t>()->default_value(4), "GPU options charted (the cheapest fitting row of each GPU)")
      ("simulate", po::bool_switch(), "add a simulated serving run of the recommended layout with its timeline")
      ("rate", po::value<std::string>()->default_value("2"), "with --simulate: requests per second")
      ("requests", po::value<std::uint64_t>()->default_value(600), "with --simulate: requests replayed")
      ("input-len", po::value<std::string>()->default_value("sharegpt"), "with --simulate: prompt tokens (512, uniform:A..B, lognormal:M,S, sharegpt, sharegpt-sglang, sharegpt-multiturn)")
      ("output-len", po::value<std::string>()->default_value("sharegpt"), "with --simulate: output tokens (same forms)")
      ("seed", po::value<std::uint64_t>()->default_value(0), "with --simulate: random seed")
      ("train", po::value<std::string>(), "add a training plan on the recommended GPU: full, lora, dora, qlora")
      ("train-seq-len", po::value<std::uint64_t>()->default_value(2048), "with --train: tokens per sequence")
      ("train-micro-batch", po::value<std::uint64_t>()->default_value(1), "with --train: sequences per micro-batch")
      ("train-gpus", po::value<std::uint64_t>()->default_value(1), "with --train: GPUs in the run")
      ("train-sharding", po::value<std::string>()->default_value("none"), "with --train: none, ddp, zero1..3, fsdp, hsdp");
  declared.insert({"out", "title", "top", "options", "simulate", "rate", "requests", "input-len", "output-len", "seed", "train",
                   "train-seq-len", "train-micro-batch", "train-gpus", "train-sharding"});
  add_spec_accept_option(desc, declared);
  const std::set<std::string> own = declared;
  add_engine_options(desc, *engine, declared);
  add_common_options(desc, false);
  po::variables_map vm;
  if (!parse_args("report", "--model M --gpu G[,G] [sweep options] [--simulate] [--train METHOD] --out FILE", desc, args, vm))
    return kExitOk;
  if (!vm.count("out")) throw_usage("report: --out FILE is required (the HTML page is written there)");
  if (!vm.count("model")) throw_usage("--model is required");
  const std::string out_path = vm["out"].as<std::string>();
  const auto opts = read_common_options(vm);
  plan::SweepRequest req = read_sweep_request(vm, spec, *engine, own);
  const bool simulate = vm["simulate"].as<bool>();
  for (const char* o : {"rate", "requests", "input-len", "output-len", "seed"})
    if (!simulate && !vm[o].defaulted()) throw_usage(std::string("--") + o + " applies to the simulated run: add --simulate");
  if (!simulate && vm.count("spec-accept-length")) throw_usage("--spec-accept-length applies to the simulated run: add --simulate");
  for (const char* o : {"train-seq-len", "train-micro-batch", "train-gpus", "train-sharding"})
    if (!vm.count("train") && !vm[o].defaulted()) throw_usage(std::string("--") + o + " applies to the training plan: add --train METHOD");
  // Fail on an unwritable --out before the work, not after it; a failure after this point removes
  // the file it opened, so no empty or partial page is left behind.
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(ErrorKind::Io, "--out: cannot write " + out_path);
  struct RemoveUnlessWritten {
    std::ofstream& stream;
    const std::string& path;
    bool written = false;
    ~RemoveUnlessWritten() {
      if (written) return;
      stream.close();
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  } cleanup{out, out_path};

  const bool progress = show_progress(opts);
  auto sweep = plan::run_sweep(req, data_root(), [&](std::size_t done, std::size_t total) {
    if (progress) err() << "\rreport: sweep " << done << "/" << total << (done == total ? "\n" : "") << std::flush;
  });
  const std::size_t top = vm["top"].as<std::size_t>();
  plan::attach_launch_commands(sweep, req, data_root(), top);

  // One session per model id, with the model as the user gave it (for its TP / PP flags).
  std::map<std::string, std::pair<std::string, std::unique_ptr<plan::PlanSession>>> sessions;
  for (const auto& given : req.models) {
    auto s = std::make_unique<plan::PlanSession>(data_root(), given, spec);
    const std::string id = s->model().id;
    if (!sessions.count(id)) sessions.emplace(id, std::pair{given, std::move(s)});
  }
  std::vector<ReportOption> options;
  // The batch table is `check --batch-range` of the recommended layout for the same flags
  // (docs/report.md): at --context when given, else over check's default workload (--input-len +
  // --output-len, 1024 + 256), not at the sweep's planning length.
  std::optional<plan::CheckOutcome> batch_check;
  for (std::size_t i : report_option_rows(sweep, vm["options"].as<std::size_t>())) {
    const plan::SweepRow& row = sweep.rows[i];
    const auto& [given, session] = sessions.at(row.model);
    plan::CheckRequest c;
    c.model = given;
    c.gpu = row.gpu;
    c.engine = spec;
    c.args = report_row_args(*session, req, row);
    c.weights = report_row_weights(row);
    c.batch = row.batch;
    c.context = row.context;
    c.replicas = row.replicas;
    c.policy = req.policy;
    // A pooling model takes a batch or a length only where its engine has one (hf: the encode
    // batch and padded length; vllm: the length as --max-model-len; tei: neither), and has no
    // batch table: it generates nothing (check refuses --batch-range for it).
    const bool pooling = is_pooling_model(session->model());
    if (pooling && session->engine().name() != "hf") c.batch = std::nullopt;
    if (pooling && session->engine().name() == "tei") c.context = std::nullopt;
    if (options.empty() && !pooling) {  // the recommended one
      plan::CheckRequest ranged = c;
      ranged.batch_range = true;
      if (!vm.count("context")) ranged.context = std::nullopt;
      batch_check = plan::run_check(ranged, data_root());
    }
    options.push_back({i, plan::run_check(c, data_root())});
  }

  std::string title = vm.count("title") ? vm["title"].as<std::string>() : "";
  if (title.empty()) {
    title = "GPU capacity quote: ";
    for (std::size_t i = 0; i < req.models.size(); ++i) title += (i ? ", " : "") + req.models[i];
    title += " on " + (req.gpus.empty() ? std::string("the GPU catalogue") : req.gpus);
  }
  report::HtmlPage page(title);
  page.heading("Inputs");
  std::vector<std::pair<std::string, std::string>> inputs = {
      {"command", report_command_line(args)},
      {"models", vm["model"].as<std::string>()},
      {"GPUs", req.gpus.empty() ? "every card of data/gpus.json" : req.gpus},
      {"engine", spec},
      {"weights", vm.count("weights") ? vm["weights"].as<std::string>() : "the checkpoint's"},
      {"tensor / pipeline parallel, replicas", vm["tp"].as<std::string>() + " / " + vm["pp"].as<std::string>() + ", " +
                                                   vm["replicas"].as<std::string>()},
      {"context", vm.count("context") ? vm["context"].as<std::string>() + " tokens" : "the engine's max length"},
      {"batch", vm["batch"].as<std::string>() + " concurrent sequences"},
      {"extra headroom", percent(req.policy.headroom, 1) + (req.policy.conservative ? ", conservative" : "")},
      {"rental periods", vm["periods"].as<std::string>()},
      {"prices", vm.count("prices") ? vm["prices"].as<std::string>() : "data/prices.json (indicative catalogue prices)"}};
  for (const auto& [flag, value] : req.args) inputs.emplace_back("engine flag --" + flag, value);
  page.key_values(inputs);
  add_options_section(page, sweep, top);
  add_memory_section(page, sweep, options);
  if (batch_check) add_batch_section(page, *batch_check);
  else if (!options.empty()) add_batch_section(page, options.front().check);  // a pooling model: why there is none

  if (simulate && !sweep.rows.empty()) {
    const plan::SweepRow& row = sweep.rows.front();
    const auto& [given, session] = sessions.at(row.model);
    plan::SimulateQuestions q;
    q.request.plan.model = given;
    q.request.plan.gpu = row.gpu;
    q.request.plan.engine = spec;
    q.request.plan.args = report_row_args(*session, req, row);
    q.request.plan.weights = report_row_weights(row);
    q.request.plan.spec_accept_length = read_spec_accept(vm);
    sim::WorkloadSpec& w = q.request.workload;
    w.arrivals.rate_per_s = sim::parse_rate(vm["rate"].as<std::string>(), "--rate");
    w.requests = vm["requests"].as<std::uint64_t>();
    w.input = sim::parse_length(vm["input-len"].as<std::string>(), "--input-len", data_root());
    w.output = sim::parse_length(vm["output-len"].as<std::string>(), "--output-len", data_root());
    w.seed = vm["seed"].as<std::uint64_t>();
    q.periods = req.periods;
    // About 60 samples over the arrival window (requests / rate), at least 0.1 s apart: windows
    // wide enough that most hold a few requests for the latency percentiles.
    const double span = std::isinf(w.arrivals.rate_per_s) ? 60.0 : static_cast<double>(*w.requests) / w.arrivals.rate_per_s;
    std::vector<sim::TimelineSample> timeline;
    q.request.options.sample_every_s = std::max(0.1, span / 60);
    q.request.options.on_sample = [&timeline](const sim::TimelineSample& t) {
      if (timeline.size() < 20000) timeline.push_back(t);
    };
    add_simulation_section(page, plan::answer_simulate(q, data_root()), timeline);
  }
  if (vm.count("train")) {
    if (sweep.rows.empty()) throw Error(ErrorKind::DoesNotFit, "--train: no layout fits, so no GPU to train on");
    train::TrainRequest t;
    t.model = sessions.at(sweep.rows.front().model).first;
    t.gpu = sweep.rows.front().gpu;
    t.method = train::method_from_name(vm["train"].as<std::string>());
    if (t.method == train::Method::Qlora) t.adapter.base_format = train::kQloraDefaultBase;
    t.seq_len = vm["train-seq-len"].as<std::uint64_t>();
    t.micro_batch = vm["train-micro-batch"].as<std::uint64_t>();
    t.parallel.gpus = vm["train-gpus"].as<std::uint64_t>();
    t.sharding = train::sharding_from_name(vm["train-sharding"].as<std::string>());
    add_training_section(page, train::plan_training(t, data_root()));
  }
  add_accuracy_section(page, sweep, options);

  const std::string html = page.render("vramplan " VRAMPLAN_VERSION " report");
  out << html;
  out.close();
  if (!out) throw Error(ErrorKind::Io, "--out: cannot write " + out_path);
  cleanup.written = true;
  emit(opts, {{"schema", "vramplan.report/1"}, {"out", out_path}, {"bytes", html.size()}, {"fitting", sweep.rows.size()}},
       "wrote " + out_path + " (" + std::to_string(html.size()) + " bytes; " + std::to_string(sweep.rows.size()) +
           " fitting configurations" + (sweep.rows.empty() ? ", none fits" : ", recommended: " + sweep.rows.front().gpu) + ")\n");
  return kExitOk;
}

}  // namespace vramplan::cli
