// `vramplan trial` — the batch trial ladder (plan/trial.hpp): for each length group, batch 1, 2,
// 4, ... until the first limit, the predicted inputs completed, total time, peak memory and
// error. `--format csv` writes the table with empty measured columns to fill on the rented card;
// `--compare FILE` reads that file back and prints predicted against measured.
#include <algorithm>
#include <ostream>
#include <set>

#include "cli_common.hpp"
#include "commands.hpp"
#include "decision_options.hpp"
#include "exit_codes.hpp"
#include "sweep_common.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/plan/trial.hpp"
#include "vramplan/sim/workload_spec.hpp"

namespace vramplan::cli {

int run_trial(const std::vector<std::string>& args) {
  const std::string spec = engine_spec_of(args);
  const auto engine = memory::make_engine(spec, data_root().data());
  po::options_description desc("Options");
  std::set<std::string> declared;
  add_plan_target_options(desc, declared);
  desc.add_options()
      ("lengths", po::value<std::string>()->default_value("short,typical,limit"),
       "length groups: short, typical, limit, or prompt token counts (comma-separated)")
      ("input-len", po::value<std::string>()->default_value("1024"), "the typical prompt: tokens, or a distribution whose mean is used")
      ("output-len", po::value<std::uint64_t>()->default_value(256), "output tokens per input")
      ("batches", po::value<std::string>()->default_value("1,2,4,8,16,32,64"), "batch sizes (tried in increasing order)")
      ("max-latency", po::value<std::string>(), "a batch whose slowest input takes longer is a limit: 60s, 2m")
      ("compare", po::value<std::string>(), "read a filled-in trial CSV and print predicted vs measured");
  declared.insert({"lengths", "input-len", "output-len", "batches", "max-latency", "compare"});
  add_engine_options(desc, *engine, declared);
  // --format csv (the table with empty measured columns) is this command's own: taken out before
  // the common parser, which knows table | json | markdown.
  std::vector<std::string> rest;
  bool csv = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--format" && i + 1 < args.size() && args[i + 1] == "csv") {
      csv = true;
      ++i;
    } else if (args[i] == "--format=csv") {
      csv = true;
    } else {
      rest.push_back(args[i]);
    }
  }
  add_common_options(desc, false, true);
  po::variables_map vm;
  if (!parse_args("trial", "--model M --gpu G [--engine E] [--lengths short,typical,limit] [--batches 1,2,4] [--format csv] | --compare FILE",
                  desc, rest, vm))
    return kExitOk;
  const auto opts = read_common_options(vm);
  if (csv && ((vm.count("json") && vm["json"].as<bool>()) || (vm.count("format") && !vm["format"].defaulted())))
    throw_usage("--format csv and " + std::string(vm["json"].as<bool>() ? "--json" : "--format " + vm["format"].as<std::string>()) +
                " ask for two output formats: give one");
  if (csv && vm.count("compare"))
    throw_usage("--format csv writes the trial table to fill in, --compare reads one back: give one");
  if (vm.count("compare")) {
    const auto rows = plan::read_trial_csv(vm["compare"].as<std::string>());
    emit(opts, plan::trial_comparison_json(rows), plan::trial_comparison_text(rows));
    return kExitOk;
  }
  plan::TrialRequest req;
  req.plan = read_plan_target(vm, spec, *engine);
  req.groups = split_list(vm["lengths"].as<std::string>());
  const sim::LengthSpec typical = sim::parse_length(vm["input-len"].as<std::string>(), "--input-len", data_root());
  req.typical_input = static_cast<std::uint64_t>(std::llround(typical.expected()));
  req.output_tokens = vm["output-len"].as<std::uint64_t>();
  req.batches = split_positive_list(vm["batches"].as<std::string>(), "--batches");
  // Each group stops at its first limit: the ladder climbs, whatever order the list was typed in.
  std::sort(req.batches.begin(), req.batches.end());
  req.batches.erase(std::unique(req.batches.begin(), req.batches.end()), req.batches.end());
  if (vm.count("max-latency")) req.max_latency_s = sim::parse_duration(vm["max-latency"].as<std::string>(), "--max-latency");
  const auto result = plan::run_trial(req, data_root());
  if (csv) {
    out() << escape_control_keep_lines(plan::trial_csv(result));
    return kExitOk;
  }
  emit(opts, plan::trial_json(result), plan::trial_text(result));
  return kExitOk;
}

}  // namespace vramplan::cli
