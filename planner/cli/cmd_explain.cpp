// `vramplan explain` — every number of a check with its formula and inputs: the engine's
// components (each carries its explain string), the KV per token and per sequence, and the fit
// arithmetic (used, headroom, the decision), expected and upper bound.
#include <set>

#include "cli_common.hpp"
#include "commands.hpp"
#include "decision_options.hpp"
#include "exit_codes.hpp"
#include "vramplan/plan/check.hpp"
#include "vramplan/plan/explain.hpp"

namespace vramplan::cli {

int run_explain(const std::vector<std::string>& args) {
  const std::string spec = engine_spec_of(args);
  auto engine = memory::make_engine(spec, data_root().data());
  po::options_description desc("Options");
  desc.add_options()
      ("model", po::value<std::string>(), "model: catalogue id, config.json, directory or .gguf")
      ("gpu", po::value<std::string>(), "GPU catalogue id, card/MIG-profile, or custom:<size>")
      ("gpu-memory", po::value<std::string>(), "runtime-reported total per GPU")
      ("engine", po::value<std::string>()->default_value("vllm"), "engine, optionally @version")
      ("weights", po::value<std::string>(), "weight format for the linear layers")
      ("batch", po::value<std::uint64_t>(), "concurrent sequences over all replicas")
      ("context", po::value<std::uint64_t>(), "tokens per sequence")
      ("replicas", po::value<std::uint64_t>()->default_value(1), "data-parallel engine instances")
      ("headroom", po::value<std::string>()->default_value("10%"), "required free share of each GPU")
      ("conservative", po::bool_switch(), "decide on the upper bounds");
  std::set<std::string> declared = {"model", "gpu", "gpu-memory", "engine", "weights", "batch", "context",
                                    "replicas", "headroom", "conservative"};
  po::options_description eng("Engine flags (" + std::string(engine->name()) + ")");
  add_engine_options(eng, *engine, declared);
  desc.add(eng);
  add_common_options(desc, true);
  po::variables_map vm;
  if (!parse_args("explain", "--model M --gpu G [--engine E] [engine flags] [--json]", desc, args, vm)) return kExitOk;
  const auto opts = read_common_options(vm);
  plan::CheckRequest req;
  req.engine = spec;
  if (vm.count("model")) req.model = vm["model"].as<std::string>();
  if (vm.count("gpu")) req.gpu = vm["gpu"].as<std::string>();
  if (vm.count("gpu-memory")) req.gpu_memory = parse_bytes(vm["gpu-memory"].as<std::string>(), "--gpu-memory");
  if (vm.count("weights")) req.weights = vm["weights"].as<std::string>();
  if (vm.count("batch")) req.batch = vm["batch"].as<std::uint64_t>();
  if (vm.count("context")) req.context = vm["context"].as<std::uint64_t>();
  req.replicas = vm["replicas"].as<std::uint64_t>();
  req.policy.headroom = parse_fraction(vm["headroom"].as<std::string>(), "--headroom");
  req.policy.conservative = vm["conservative"].as<bool>();
  req.args = read_engine_args(vm, *engine);
  const auto outcome = plan::run_check(req, data_root(), std::move(engine));
  const auto lines = plan::explain_lines(outcome);
  emit(opts, plan::explain_json(outcome, lines), plan::explain_text(lines, opts.format == OutputFormat::Markdown));
  return kExitOk;
}

}  // namespace vramplan::cli
