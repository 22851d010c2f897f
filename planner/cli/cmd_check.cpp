// `vramplan check` — a pre-flight check for scripts: does this configuration fit, with the
// requested headroom? One line and the launch command (or JSON / Markdown); exit 0 FITS, 6 MARGINAL, 1 DOES NOT FIT, 2-5 bad input
// (exit_codes.hpp). --limits and --batch-range add the limits and the recommended batch range;
// --rate R (with --batch-range) adds its simulator view (plan/batch_at_rate.hpp).
#include <set>

#include "cli_common.hpp"
#include "commands.hpp"
#include "diffusion_commands.hpp"
#include "decision_options.hpp"
#include "exit_codes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/plan/check.hpp"
#include "vramplan/plan/cotenancy.hpp"
#include "vramplan/sim/workload_spec.hpp"

namespace vramplan::cli {
namespace {

// 0 FITS, 6 MARGINAL (0 with --accept-marginal, 1 with --conservative), 1 DOES NOT FIT: the same
// for one instance and for co-tenants.
int check_exit_code(plan::Verdict verdict, const plan::FitPolicy& policy) {
  switch (verdict) {
    case plan::Verdict::Fits: return kExitOk;
    case plan::Verdict::DoesNotFit: return kExitDoesNotFit;
    case plan::Verdict::Marginal:
      if (policy.conservative) return kExitDoesNotFit;
      return policy.accept_marginal ? kExitOk : kExitMarginal;
  }
  return kExitInternal;
}

// --tenant / --tenants / --mig-layout: several instances on one GPU or MIG layout
// (plan/cotenancy.hpp). The single-instance options do not apply; each tenant carries its own.
int run_cotenancy_check(const po::variables_map& vm, const CommonOptions& opts, const memory::Engine& engine) {
  if (!read_engine_args(vm, engine).empty() || !vm["engine"].defaulted())
    throw_usage("engine and engine flags apply to one instance: give them inside each --tenant (engine=E,flag=value)");
  for (const char* single : {"model", "weights", "batch", "context", "limits", "batch-range", "max-tpot", "max-ttft",
                             "input-len", "output-len", "rate", "slo"})
    if (vm.count(single) && !vm[single].defaulted() && !(vm[single].value().type() == typeid(bool) && !vm[single].as<bool>()))
      throw_usage(std::string("--") + single + " applies to one instance: give it inside each --tenant instead");
  if (vm["replicas"].as<std::uint64_t>() != 1) throw_usage("--replicas applies to one instance; list each tenant");
  plan::CotenancyRequest req;
  if (vm.count("gpu")) req.gpu = vm["gpu"].as<std::string>();
  if (vm.count("gpu-memory")) req.gpu_memory = parse_gpu_memory(vm["gpu-memory"].as<std::string>(), "--gpu-memory");
  if (vm.count("tenant"))
    for (const auto& t : vm["tenant"].as<std::vector<std::string>>()) req.tenants.push_back(plan::parse_tenant(t));
  if (vm.count("tenants"))
    for (auto& t : plan::load_tenants_file(vm["tenants"].as<std::string>())) req.tenants.push_back(std::move(t));
  if (vm.count("mig-layout")) {
    const std::string layout = vm["mig-layout"].as<std::string>();
    for (std::size_t start = 0; start <= layout.size();) {
      const std::size_t comma = std::min(layout.find(',', start), layout.size());
      if (comma == start)
        throw_usage("--mig-layout " + excerpt(layout) + ": an empty profile; give MIG profiles separated by commas, e.g. 3g.40gb,3g.40gb");
      req.mig_layout.push_back(layout.substr(start, comma - start));
      start = comma + 1;
    }
  }
  req.policy.headroom = parse_fraction(vm["headroom"].as<std::string>(), "--headroom");
  req.policy.conservative = vm["conservative"].as<bool>();
  req.policy.accept_marginal = vm["accept-marginal"].as<bool>();
  if (req.policy.conservative && req.policy.accept_marginal)
    throw_usage("--conservative and --accept-marginal contradict each other: give one");
  const auto outcome = plan::run_cotenancy(req, data_root());
  emit(opts, plan::cotenancy_json(outcome), plan::cotenancy_text(outcome, opts.format == OutputFormat::Markdown));
  return check_exit_code(outcome.verdict, req.policy);
}

}  // namespace

int run_check(const std::vector<std::string>& args) {
  // A diffusion pipeline (models/diffusion/<id>, a diffusers directory) has its own options.
  if (names_diffusion_pipeline(args, false)) return run_diffusion_check(args);
  const std::string spec = engine_spec_of(args);
  auto engine = memory::make_engine(spec, data_root().data());
  po::options_description desc("Options");
  std::set<std::string> declared;
  add_check_options(desc, declared);
  desc.add_options()
      ("limits", po::bool_switch(), "also report max batch, max context, max concurrency, min GPUs, smallest card")
      ("batch-range", po::bool_switch(), "also report the batch table and the recommended batch range")
      ("max-tpot", po::value<double>(), "latency target for the batch range: time per output token, ms")
      ("max-ttft", po::value<double>(), "latency target for the batch range: time to first token, ms")
      ("input-len", po::value<std::uint64_t>(), "batch range without --context: prompt tokens per sequence (default 1024)")
      ("output-len", po::value<std::uint64_t>(), "batch range without --context: output tokens per sequence (default 256)")
      ("rate", po::value<std::string>(), "batch range at this load too: requests/s over all replicas (each batch row simulated as the engine's running-request cap)")
      ("slo", po::value<std::string>(), "latency targets at --rate, e.g. \"p99_ttft<=2s,p99_tpot<=60ms\" (default: --max-ttft / --max-tpot as p99)")
      ("probe-requests", po::value<std::uint64_t>()->default_value(3000), "with --rate: requests simulated per cap")
      ("max-gpus", po::value<std::uint64_t>()->default_value(8), "largest GPU count --limits tries for min GPUs")
      ("tenant", po::value<std::vector<std::string>>(),
       "co-tenancy: one engine instance on the GPU, \"model=M,engine=E,flag=value,batch=B,context=C\" (repeat)")
      ("tenants", po::value<std::string>(), "co-tenancy: the instances from a vramplan.tenants/1 JSON file")
      ("mig-layout", po::value<std::string>(), "co-tenancy: MIG profiles of the card, one tenant per slice (3g.40gb,3g.40gb)");
  declared.insert({"limits", "batch-range", "max-tpot", "max-ttft", "input-len", "output-len", "rate", "slo", "probe-requests",
                   "max-gpus", "tenant", "tenants", "mig-layout"});
  add_spec_accept_option(desc, declared);
  add_engine_options(desc, *engine, declared);
  add_common_options(desc, true);
  po::variables_map vm;
  if (!parse_args("check", "--model M --gpu G [--engine E] [engine flags] [--headroom 0%] [--accept-marginal] [--json]", desc, args, vm))
    return kExitOk;
  const auto opts = read_common_options(vm);
  if (vm.count("tenant") || vm.count("tenants") || vm.count("mig-layout")) return run_cotenancy_check(vm, opts, *engine);

  plan::CheckRequest req = read_check_request(vm, spec, *engine);
  req.limits = vm["limits"].as<bool>();
  req.batch_range = vm["batch-range"].as<bool>();
  if (vm.count("max-tpot")) req.targets.max_tpot_s = vm["max-tpot"].as<double>() / 1e3;
  if (vm.count("max-ttft")) req.targets.max_ttft_s = vm["max-ttft"].as<double>() / 1e3;
  if ((req.targets.max_tpot_s || req.targets.max_ttft_s) && !req.batch_range)
    throw_usage("--max-tpot / --max-ttft apply to the batch range: add --batch-range");
  if (vm.count("input-len") || vm.count("output-len")) {
    if (!req.batch_range) throw_usage("--input-len / --output-len apply to the batch range: add --batch-range");
    if (req.context) throw_usage("--input-len / --output-len describe the sequences when --context is not given: give one or the other");
    if (vm.count("input-len")) req.range_workload.input_len = vm["input-len"].as<std::uint64_t>();
    if (vm.count("output-len")) req.range_workload.output_len = vm["output-len"].as<std::uint64_t>();
    req.range_workload.defaulted = false;
  }
  if (!vm["max-gpus"].defaulted() && !req.limits) throw_usage("--max-gpus applies to the limits: add --limits");
  // (With --slo and no --rate, run_check's "--slo applies to the batch range at a rate" says more.)
  if (!vm["probe-requests"].defaulted() && !vm.count("rate") && !vm.count("slo"))
    throw_usage("--probe-requests applies to the simulated batch range: add --batch-range --rate R");
  req.max_gpus = vm["max-gpus"].as<std::uint64_t>();
  if (vm.count("rate")) req.rate = sim::parse_rate(vm["rate"].as<std::string>(), "--rate");
  if (vm.count("slo")) req.slo = plan::parse_slo(vm["slo"].as<std::string>());
  req.probe_requests = vm["probe-requests"].as<std::uint64_t>();
  req.spec_accept_length = read_spec_accept(vm);
  if (req.spec_accept_length && !req.rate)
    throw_usage("--spec-accept-length applies to the simulated batch range: add --batch-range --rate R");

  const auto outcome = plan::run_check(req, data_root(), std::move(engine));
  if (opts.format == OutputFormat::Markdown) emit(opts, {}, plan::check_markdown(outcome));
  else emit(opts, plan::check_json(outcome), plan::check_text(outcome));
  // UNSUPPORTED (it would not run) exits as DOES NOT FIT does.
  if (outcome.compat.support == compat::Support::Unsupported) return kExitDoesNotFit;
  return check_exit_code(outcome.eval.fit.verdict, req.policy);
}

}  // namespace vramplan::cli
