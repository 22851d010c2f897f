// `vramplan reconcile --log FILE` — an engine's start-up log beside vramplan's plan of the same
// configuration (plan/reconcile.hpp, docs/reconcile.md). Exit 0 when the log was read and planned,
// also when components lie outside their bounds (the table says which, and why it may be).
#include <string>
#include <string_view>
#include <vector>

#include "cli_common.hpp"
#include "commands.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/engine_log.hpp"
#include "vramplan/plan/reconcile.hpp"
#include "vramplan/core/table.hpp"

namespace vramplan::cli {

namespace {

std::string reconcile_cell(double v, const std::string& unit) {
  if (unit == "tokens" || unit == "blocks") return format_number("%.0f", v);
  return fixed(v, 2);
}

std::string reconcile_text(const plan::Reconciliation& r) {
  std::string out = r.log.origin + ": " + r.log.engine + (r.log.engine_version.empty() ? "" : " " + r.log.engine_version) +
                    " start-up log, " + std::to_string(r.log.recognised) + " lines read\n";
  out += "planned as: --model " + r.request.model + " (" + r.model_basis + ") --gpu " + r.request.gpu + " (" + r.gpu_basis +
         ") --engine " + r.request.engine;
  if (r.request.weights) out += " --weights " + *r.request.weights;
  for (const auto& [k, v] : r.request.args) out += " --" + k + (v == "true" ? "" : " " + v);
  // A log that names no release is planned on the default profile: the figures depend on it.
  if (r.log.engine_version.empty() && r.outcome.plan.engine_profile_note.find("assumed because no version") != std::string::npos)
    out += "\n  (the log names no " + r.log.engine + " version: planned on the " + r.outcome.plan.engine_version +
           " profile; give --engine " + r.outcome.plan.engine + "@<version> for another)";
  for (const auto& m : r.model_mismatch)
    out += "\nmodel: " + m + ": another model than the log's, the likely cause of the differences below";
  if (!r.outcome.plan.fits) out += "\nthe planned configuration does not fit: " + r.outcome.plan.reason;
  out += "\n\n";
  Table t({{"component"}, {"log", Align::Right}, {"plan", Align::Right}, {"diff", Align::Right}, {"diff %", Align::Right},
           {"bound", Align::Right}, {"line", Align::Right}, {"verdict"}});
  for (const auto& x : r.rows)
    t.add_row({x.component + " (" + x.unit + ")", reconcile_cell(x.logged, x.unit), reconcile_cell(x.planned, x.unit),
               (x.difference() >= 0 ? "+" : "") + reconcile_cell(x.difference(), x.unit),
               x.has_difference_pct() ? format_number("%+.2f %%", x.difference_pct()) : "-", reconcile_cell(x.bound, x.unit), std::to_string(x.line),
               x.outside ? "OUTSIDE the bound" : "within"});
  out += t.render_text();
  for (const auto& x : r.rows)
    if (x.outside) out += "\n" + x.component + ": likely cause: " + x.likely_cause;
  out += "\n" + std::to_string(r.outside()) + " of " + std::to_string(r.rows.size()) +
         " components outside their bound (data/accuracy_bounds.json; diff = log - plan)\n";
  if (!r.estimate.empty()) {
    // ollama's own estimate before it started the runner (llm/memory.go EstimateGPULayers).
    out += "\n" + r.log.engine + "'s own estimate (GiB, one decimal as printed) beside the plan:\n";
    Table e({{"estimate"}, {"engine", Align::Right}, {"plan", Align::Right}, {"line", Align::Right}, {"planned as"}});
    for (const auto& x : r.estimate)
      e.add_row({x.key, fixed(x.logged_gib, 2), x.planned_gib ? fixed(*x.planned_gib, 2) : "-", std::to_string(x.line),
                 x.planned_gib ? x.planned_as : "(nothing planned is the same figure)"});
    out += e.render_text();
  }
  return out;
}

}  // namespace

int run_reconcile(const std::vector<std::string>& args) {
  po::options_description desc("Options");
  desc.add_options()
      ("log", po::value<std::string>(), "the engine's start-up log (vLLM V0 / V1, SGLang, llama.cpp, TensorRT-LLM, ollama)")
      ("model", po::value<std::string>(), "model to plan instead of the log's (catalogue id, config.json, dir)")
      ("gpu", po::value<std::string>(), "GPU catalogue id (default: a custom card of the total the log prints)")
      ("engine", po::value<std::string>(), "engine profile to plan with (default: the log's engine and version)")
      ("weights", po::value<std::string>(), "weight format when the log does not state it (int8, fp8, ...)")
      ("engine-arg", po::value<std::vector<std::string>>()->composing(),
       "KEY=VALUE: an engine flag the log does not print (repeatable), e.g. max-batch-size=25")
      ("update-calibration", po::value<std::string>(),
       "write the deployment's logged figures into this calibration file (created or updated) for plan --calibration");
  add_common_options(desc);
  po::variables_map vm;
  if (!parse_args("reconcile", "--log FILE [--model M] [--gpu G] [--engine E] [--engine-arg K=V] [--update-calibration FILE] [--json]", desc, args, vm)) return 0;
  const auto opts = read_common_options(vm);
  if (!vm.count("log")) throw_usage("reconcile: --log FILE is required (the engine's start-up log)");
  const auto log = read_engine_log(vm["log"].as<std::string>());
  plan::ReconcileOptions o;
  if (vm.count("model")) o.model = vm["model"].as<std::string>();
  if (vm.count("gpu")) o.gpu = vm["gpu"].as<std::string>();
  if (vm.count("engine")) o.engine = vm["engine"].as<std::string>();
  if (vm.count("weights")) o.weights = vm["weights"].as<std::string>();
  if (vm.count("engine-arg"))
    for (const auto& kv : vm["engine-arg"].as<std::vector<std::string>>()) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0)
        throw_usage("reconcile: --engine-arg expects KEY=VALUE (an engine flag without its dashes), got '" + kv + "'");
      std::string key = kv.substr(0, eq);
      while (key.starts_with("-")) key.erase(0, 1);
      if (!o.args.emplace(key, kv.substr(eq + 1)).second)
        throw_usage("reconcile: --engine-arg " + key + " is given twice: give it once");
    }
  // An error planning the log's configuration names the log: its values (a TP of 0, a version
  // with stray bytes) or its flags under another --engine are the cause more often than ours.
  const auto r = [&] {
    try {
      return plan::reconcile(log, o, data_root());
    } catch (const Error& e) {
      if (std::string_view(e.what()).starts_with(log.origin)) throw;
      throw Error(e.kind(), log.origin + " (" + log.engine + " start-up log): planning its configuration: " + e.what());
    }
  }();
  auto json = plan::reconcile_json(r);
  auto text = reconcile_text(r);
  if (vm.count("update-calibration")) {
    const std::string file = vm["update-calibration"].as<std::string>();
    if (file.empty()) throw_usage("--update-calibration: give the calibration file to write");
    const auto d = plan::update_calibration(r, file);
    const std::string replan = plan::replan_command(r, file);
    json["calibration_updated"] = {{"file", file}, {"deployment", calib::deployment_to_json(d)}, {"replan", replan}};
    text += "\n" + file + ": deployment figures of " + d.model + " / " + d.engine + "@" + d.engine_version + " / " + d.gpu +
            " written (" + d.source + "); re-plan with:\n  " + replan + "\n";
  }
  emit(opts, json, text);
  return 0;
}

}  // namespace vramplan::cli
