// `vramplan sweep --mode train` — training layouts (GPU x count x sharding x recomputation) for one
// run, ranked by the run's cost (plan/train_sweep.hpp). The setup options are `train`'s
// (train_options.hpp); --gpu, --gpus, --sharding and --grad-checkpointing are lists here.
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "commands.hpp"
#include "sweep_common.hpp"
#include "train_options.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/plan/train_sweep.hpp"
#include "vramplan/sim/workload_spec.hpp"

namespace vramplan::cli {

int run_sweep_train(const std::vector<std::string>& args) {
  po::options_description desc("Options");
  add_train_setup_options(desc);
  desc.add_options()
      ("mode", po::value<std::string>()->default_value("train"), "train (serve: inference layouts)")
      ("gpu", po::value<std::string>(), "GPUs, comma-separated (default: every card in the catalogue)")
      ("gpus", po::value<std::string>()->default_value("1,2,4,8"), "GPU counts, comma-separated")
      ("sharding", po::value<std::string>()->default_value("none,zero3"), "shardings, comma-separated (none, zero1..3, fsdp, hsdp)")
      ("grad-checkpointing", po::value<std::string>()->default_value("none,full"),
       "recomputations, comma-separated (none, selective, selective-op, full)")
      ("top", po::value<std::size_t>()->default_value(20), "rows shown");
  add_train_run_options(desc);
  add_common_options(desc);
  po::variables_map vm;
  if (!parse_args("sweep", "--mode train --model M --tokens N [--gpu G,G] [--gpus 1,2,4,8] [--sharding none,zero3] "
                           "[--grad-checkpointing none,full] [--json]",
                  desc, args, vm))
    return 0;
  const auto opts = read_common_options(vm);
  plan::TrainSweepRequest req;
  if (vm.count("gpu-memory")) throw Error(ErrorKind::Usage, "--gpu-memory sets one GPU's total: give it to `train`, not to a sweep over GPUs");
  req.base = read_train_setup(vm);
  if (const auto tokens = read_run_tokens(vm)) req.run_tokens = *tokens;
  if (vm.count("gpu")) req.gpus = vm["gpu"].as<std::string>();
  req.counts = split_positive_list(vm["gpus"].as<std::string>(), "--gpus");
  req.shardings.clear();
  for (const auto& s : split_list(vm["sharding"].as<std::string>())) req.shardings.push_back(train::sharding_from_name(s));
  req.recomputes = plan::recompute_choices(split_list(vm["grad-checkpointing"].as<std::string>()));
  req.margin_h = sim::parse_duration(vm["margin"].as<std::string>(), "--margin") / 3600;
  req.periods = plan::parse_periods(vm["periods"].as<std::string>());
  if (vm.count("prices")) req.prices_file = vm["prices"].as<std::string>();
  const std::size_t top = vm["top"].as<std::size_t>();
  const auto result = plan::run_train_sweep(req, data_root());
  emit(opts, plan::train_sweep_json(req, result, top), plan::train_sweep_text(req, result, top));
  return 0;
}

}  // namespace vramplan::cli
