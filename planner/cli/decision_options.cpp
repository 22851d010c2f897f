#include "decision_options.hpp"

#include <cstdlib>
#include <iostream>

#include "vramplan/core/error.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/memory/inert_flags.hpp"

namespace vramplan::cli {

std::string engine_spec_of(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--engine" && i + 1 < args.size()) return args[i + 1];
    if (args[i].rfind("--engine=", 0) == 0) return args[i].substr(9);
  }
  return "vllm";
}

void add_engine_options(po::options_description& desc, const memory::Engine& engine, std::set<std::string>& declared) {
  po::options_description section("Engine flags (" + std::string(engine.name()) + ")");
  for (const auto& o : engine.options()) {
    std::vector<std::string> names = {o.name};
    names.insert(names.end(), o.aliases.begin(), o.aliases.end());
    for (const auto& n : names) {
      if (!declared.insert(n).second) continue;
      if (o.is_switch) section.add_options()(n.c_str(), po::bool_switch(), o.help.c_str());
      else section.add_options()(n.c_str(), po::value<std::string>(), (o.help + (n != o.name ? " (= --" + o.name + ")" : "")).c_str());
    }
  }
  desc.add(section);
  po::options_description inert("Accepted without effect on memory or step time (" + std::string(engine.name()) + ")");
  for (const auto& f : memory::inert_flags(engine.name())) {
    const std::string n(f.name);
    if (!declared.insert(n).second) continue;
    if (f.takes_value) inert.add_options()(n.c_str(), po::value<std::string>(), std::string(f.what).c_str());
    else inert.add_options()(n.c_str(), po::bool_switch(), std::string(f.what).c_str());
  }
  if (!inert.options().empty()) desc.add(inert);
}

memory::EngineArgs read_engine_args(const po::variables_map& vm, const memory::Engine& engine,
                                    const std::set<std::string>& command_own) {
  memory::EngineArgs args;
  for (const auto& o : engine.options()) {
    std::vector<std::string> names = {o.name};
    names.insert(names.end(), o.aliases.begin(), o.aliases.end());
    for (const auto& n : names) {
      if (!vm.count(n) || vm[n].defaulted() || command_own.count(n)) continue;
      if (o.is_switch) {
        if (vm[n].as<bool>()) args[o.name] = "true";
      } else {
        // Two spellings of one flag (--tp 2 --tensor-parallel-size 4) must agree.
        const std::string& value = vm[n].as<std::string>();
        if (const auto it = args.find(o.name); it != args.end() && it->second != value)
          throw_usage("--" + o.name + " is given twice with different values (" + it->second + " and " + value +
                      " as --" + n + "): give it once");
        args[o.name] = value;
      }
    }
  }
  // The engine's inert flags (memory/inert_flags.hpp): taken, and named.
  std::string inert;
  for (const auto& f : memory::inert_flags(engine.name())) {
    const std::string n(f.name);
    if (!vm.count(n) || vm[n].defaulted() || command_own.count(n)) continue;
    // A command's own option of that name (simulate's --seed, a std::uint64_t) is not the engine's:
    // add_engine_options registered the inert flag only where the command had none, as a string
    // or a switch.
    if (vm[n].value().type() != (f.takes_value ? typeid(std::string) : typeid(bool))) continue;
    if (!f.takes_value && !vm[n].as<bool>()) continue;
    inert += (inert.empty() ? "" : ", ") + ("--" + n) + " (" + std::string(f.what) + ")";
  }
  if (!inert.empty()) std::cerr << "vramplan: note: accepted without effect on memory or step time: " << inert << "\n";
  return args;
}

void add_cluster_options(po::options_description& desc, std::set<std::string>& declared) {
  desc.add_options()
      ("node-gpus", po::value<std::uint64_t>(), "GPUs per host in your cluster (default: the card's platform, data/gpus.json); "
                                                "collectives beyond a host cross the network")
      ("network-gbit", po::value<double>(), "network per GPU between hosts, Gb/s (default: the card's reference platform, "
                                            "else an assumed 100-400 Gb/s)");
  declared.insert({"node-gpus", "network-gbit"});
}

ClusterShape read_cluster(const po::variables_map& vm) {
  ClusterShape c;
  if (vm.count("node-gpus")) c.node_gpus = vm["node-gpus"].as<std::uint64_t>();
  if (vm.count("network-gbit")) c.network_gbit = vm["network-gbit"].as<double>();
  return c;
}

void add_check_options(po::options_description& desc, std::set<std::string>& declared) {
  desc.add_options()
      ("model", po::value<std::string>(), "model: catalogue id, config.json, directory or .gguf")
      ("gpu", po::value<std::string>(), "GPU catalogue id, card/MIG-profile, or custom:<size>")
      ("gpu-memory", po::value<std::string>(), "runtime-reported total per GPU (e.g. 79.18GiB)")
      ("engine", po::value<std::string>()->default_value("vllm"), "vllm|sglang|trtllm|llamacpp|hf|tei, optionally @version")
      ("weights", po::value<std::string>(), "linear weights: bf16, fp8, awq-4bit-g128, gguf:Q4_K_M, ...")
      ("batch", po::value<std::uint64_t>(), "concurrent sequences over all replicas (default 1 per replica)")
      ("context", po::value<std::uint64_t>(), "tokens per sequence (default: the engine's max length)")
      ("replicas", po::value<std::uint64_t>()->default_value(1), "data-parallel engine instances (model copies)")
      ("headroom", po::value<std::string>()->default_value("0%"),
       "spare KV pool required, as a share of each GPU's total memory (default 0%)")
      ("conservative", po::bool_switch(), "MARGINAL (fits on the expected values only) counts as DOES NOT FIT")
      ("accept-marginal", po::bool_switch(), "MARGINAL counts as FITS: exit 0 instead of 6");
  declared.insert({"model", "gpu", "gpu-memory", "engine", "weights", "batch", "context", "replicas", "headroom",
                   "conservative", "accept-marginal"});
  add_cluster_options(desc, declared);
}

plan::CheckRequest read_check_request(const po::variables_map& vm, const std::string& engine_spec,
                                      const memory::Engine& engine) {
  plan::CheckRequest req;
  req.engine = engine_spec;
  if (vm.count("model")) req.model = vm["model"].as<std::string>();
  if (vm.count("gpu")) req.gpu = vm["gpu"].as<std::string>();
  if (vm.count("gpu-memory")) req.gpu_memory = parse_gpu_memory(vm["gpu-memory"].as<std::string>(), "--gpu-memory");
  req.cluster = read_cluster(vm);
  if (vm.count("weights")) req.weights = vm["weights"].as<std::string>();
  if (vm.count("batch")) req.batch = vm["batch"].as<std::uint64_t>();
  if (vm.count("context")) req.context = vm["context"].as<std::uint64_t>();
  req.replicas = vm["replicas"].as<std::uint64_t>();
  req.policy.headroom = parse_fraction(vm["headroom"].as<std::string>(), "--headroom");
  req.policy.conservative = vm["conservative"].as<bool>();
  req.policy.accept_marginal = vm["accept-marginal"].as<bool>();
  if (req.policy.conservative && req.policy.accept_marginal)
    throw_usage("--conservative and --accept-marginal contradict each other: give one");
  req.args = read_engine_args(vm, engine);
  return req;
}

double parse_fraction(const std::string& text, const std::string& option) {
  std::string t;
  for (const char c : text)
    if (c != ' ') t += c;
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  char* end = nullptr;
  const double v = t.empty() ? -1 : std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !(v >= 0))
    throw_usage(option + ": expected a percentage such as 10% (or a fraction such as 0.1), got '" + text + "'");
  // A spare share of the whole card or more leaves nothing to plan with (NaN and inf included).
  const double fraction = percent ? v / 100.0 : v;
  if (!(fraction < 1)) throw_usage(option + " must be in [0%, 100%)");
  return fraction;
}

void add_spec_accept_option(po::options_description& desc, std::set<std::string>& declared) {
  desc.add_options()("spec-accept-length", po::value<double>(),
                     "with speculative decoding: mean tokens one verify keeps, 1..1+drafts (SGLang bench_serving's 'Accept length')");
  declared.insert("spec-accept-length");
}

std::optional<double> read_spec_accept(const po::variables_map& vm) {
  if (!vm.count("spec-accept-length")) return std::nullopt;
  return vm["spec-accept-length"].as<double>();
}

void add_plan_target_options(po::options_description& desc, std::set<std::string>& declared) {
  desc.add_options()
      ("model", po::value<std::string>(), "model: catalogue id, config.json, directory or .gguf")
      ("gpu", po::value<std::string>(), "GPU catalogue id or custom:<size>")
      ("gpu-memory", po::value<std::string>(), "runtime-reported total per GPU (e.g. 79.18GiB)")
      ("engine", po::value<std::string>()->default_value("vllm"), "engine, optionally @version")
      ("weights", po::value<std::string>(), "weight format for the linear layers (bf16, fp8, ...)")
      ("calibration", po::value<std::string>(), "calibration file for the step times (default: matching file in data/calibration)");
  declared.insert({"model", "gpu", "gpu-memory", "engine", "weights", "calibration"});
  add_cluster_options(desc, declared);
  add_spec_accept_option(desc, declared);
}

memory::PlanRequest read_plan_target(const po::variables_map& vm, const std::string& engine_spec,
                                     const memory::Engine& engine) {
  memory::PlanRequest r;
  r.engine = engine_spec;
  if (vm.count("model")) r.model = vm["model"].as<std::string>();
  if (vm.count("gpu")) r.gpu = vm["gpu"].as<std::string>();
  if (vm.count("gpu-memory")) r.gpu_memory = parse_gpu_memory(vm["gpu-memory"].as<std::string>(), "--gpu-memory");
  r.cluster = read_cluster(vm);
  if (vm.count("weights")) r.weights = vm["weights"].as<std::string>();
  if (vm.count("calibration")) r.calibration = vm["calibration"].as<std::string>();
  r.args = read_engine_args(vm, engine);
  r.spec_accept_length = read_spec_accept(vm);
  return r;
}

}  // namespace vramplan::cli
