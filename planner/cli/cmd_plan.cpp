// `vramplan plan` — memory per GPU for one model on one GPU type under one engine profile:
// every component with its formula, total, capacity, headroom, KV capacity and concurrency, and
// the performance model's decode / TTFT / throughput-knee figures beside it (docs/performance.md §5).
// Exit 0 whenever the inputs are valid, also when it does not fit (fits:false says why).
#include <set>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "vramplan/calib/rehearsal.hpp"
#include "commands.hpp"
#include "diffusion_commands.hpp"
#include "decision_options.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/plan_request.hpp"
#include "vramplan/plan/plan_output.hpp"
#include "vramplan/plan/rehearsal_input.hpp"
#include "vramplan/sim/serving_plan.hpp"

namespace vramplan::cli {

int run_plan(const std::vector<std::string>& args) {
  // A diffusion pipeline (models/diffusion/<id>, a diffusers directory) has its own options.
  if (names_diffusion_pipeline(args, false)) return run_diffusion_plan(args);
  const std::string spec = engine_spec_of(args);
  const auto engine = memory::make_engine(spec, data_root().data());

  std::string engines;
  for (const auto& e : memory::engine_registry()) engines += "\n  " + std::string(e.name) + ": " + std::string(e.summary);
  const std::string engine_help = "engine, optionally @version (default vllm = newest profile):" + engines;
  po::options_description desc("Options");
  desc.add_options()
      ("model", po::value<std::string>(), "model: catalogue id, config.json, directory or .gguf")
      ("gpu", po::value<std::string>(), "GPU catalogue id or custom:<size> (e.g. custom:46068MiB)")
      ("gpu-memory", po::value<std::string>(), "runtime-reported total per GPU (e.g. 79.18GiB)")
      ("engine", po::value<std::string>()->default_value("vllm"), engine_help.c_str())
      ("weights", po::value<std::string>(), "weight format for the linear layers (bf16, fp8, Q4_K, ...)")
      ("batch", po::value<std::uint64_t>(), "concurrent sequences wanted (performance: decoding together; default 1)")
      ("context", po::value<std::uint64_t>(), "tokens per sequence (performance: the decode context; default --prompt-len)")
      ("prompt-len", po::value<std::uint64_t>(), "prompt tokens for the TTFT estimate (default 1024)")
      ("calibration", po::value<std::string>(), "calibration file (vramplan-probe) replacing documented defaults "
                                                "(default: the matching file in data/calibration, if any)")
      ("emit-rehearsal", po::value<std::string>(), "also write the plan's fit-rehearsal input (vramplan-probe --rehearse) to FILE");
  std::set<std::string> declared = {"model", "gpu", "gpu-memory", "engine", "weights", "batch", "context", "prompt-len",
                                    "calibration", "emit-rehearsal"};
  add_engine_options(desc, *engine, declared);
  add_common_options(desc);
  po::variables_map vm;
  if (!parse_args("plan", "--model M --gpu G [--engine E] [engine flags] [--format json]", desc, args, vm)) return 0;
  const auto opts = read_common_options(vm);

  memory::PlanRequest req = read_plan_target(vm, spec, *engine);
  if (vm.count("batch")) req.workload.batch = vm["batch"].as<std::uint64_t>();
  if (vm.count("context")) req.workload.context = vm["context"].as<std::uint64_t>();
  if (vm.count("prompt-len")) req.prompt_tokens = vm["prompt-len"].as<std::uint64_t>();
  const auto outcome = sim::run_serving_plan(req, data_root());
  if (vm.count("emit-rehearsal"))
    calib::write_rehearsal(plan::rehearsal_input(outcome), vm["emit-rehearsal"].as<std::string>());
  emit(opts, plan::plan_json(outcome), plan::plan_text(outcome));
  return 0;
}

}  // namespace vramplan::cli
