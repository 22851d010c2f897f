#include "sweep_common.hpp"

#include <algorithm>
#include <string>

#include "decision_options.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"

namespace vramplan::cli {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<std::uint64_t> split_positive_list(const std::string& text, const std::string& option, std::uint64_t max) {
  const std::vector<std::string> items = split_list(text);
  if (items.size() > kMaxListEntries)
    throw_usage(option + ": at most " + std::to_string(kMaxListEntries) + " entries, got " + std::to_string(items.size()));
  std::vector<std::uint64_t> out;
  for (const auto& item : items) {
    // Digits only: strtoull would take "-1" (wrapping it) and saturate past 2^64.
    const bool digits = !item.empty() && item.size() <= 19 && item.find_first_not_of("0123456789") == std::string::npos;
    const std::uint64_t v = digits ? std::stoull(item) : 0;
    if (v == 0 || v > max)
      throw_usage(option + ": expected a comma-separated list of whole numbers in 1.." + std::to_string(max) + ", got '" +
                  text + "'");
    out.push_back(v);
  }
  return out;
}

void add_sweep_options(po::options_description& desc, std::set<std::string>& declared) {
  desc.add_options()
      ("model", po::value<std::string>(), "models, comma-separated (catalogue ids or paths)")
      ("weights", po::value<std::string>(), "weight precisions, comma-separated (default: the checkpoint's)")
      ("gpu", po::value<std::string>(), "GPUs, comma-separated (default: every card in the catalogue)")
      ("mig", po::bool_switch(), "without --gpu: include MIG slices")
      ("min-memory", po::value<std::string>(), "without --gpu: only GPUs reporting at least SIZE")
      ("tp", po::value<std::string>()->default_value("1,2,4,8"), "tensor-parallel sizes, comma-separated")
      ("pp", po::value<std::string>()->default_value("1"), "pipeline-parallel sizes, comma-separated (engines with a PP flag)")
      ("replicas", po::value<std::string>()->default_value("1"), "data-parallel instance counts, comma-separated")
      ("context", po::value<std::string>(), "tokens per sequence, comma-separated (default: the engine's length)")
      ("batch", po::value<std::string>()->default_value("1"), "concurrent sequences, comma-separated")
      ("engine", po::value<std::string>()->default_value("vllm"), "engine, optionally @version")
      ("headroom", po::value<std::string>()->default_value("0%"), "spare KV pool required, as a share of each GPU's total memory (default 0%)")
      ("conservative", po::bool_switch(), "leave out MARGINAL points (fit on the expected values only)")
      ("periods", po::value<std::string>()->default_value("3d,7d,30d"), "rental periods (h, d, w)")
      ("prices", po::value<std::string>(), "your own prices (vramplan.prices/1 JSON) instead of the catalogue's");
  declared.insert({"model", "weights", "gpu", "mig", "min-memory", "tp", "pp", "replicas", "context", "batch", "engine",
                   "headroom", "conservative", "periods", "prices"});
}

plan::SweepRequest read_sweep_request(const po::variables_map& vm, const std::string& engine_spec,
                                      const memory::Engine& engine, const std::set<std::string>& own) {
  plan::SweepRequest req;
  req.engine = engine_spec;
  // A value listed twice is one point: the sweep would print the same rows twice.
  const auto once = [](auto list) {
    auto out = list;
    out.clear();
    for (auto& v : list)
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(std::move(v));
    return out;
  };
  if (vm.count("model")) req.models = once(split_list(vm["model"].as<std::string>()));
  if (vm.count("weights")) {
    req.weights.clear();
    // "checkpoint" is what the rows call the checkpoint's own weights: it may be listed too.
    for (const auto& w : once(split_list(vm["weights"].as<std::string>())))
      req.weights.push_back(w == "checkpoint" ? std::nullopt : std::optional<std::string>(w));
    req.weights = once(req.weights);
  }
  if (vm.count("gpu")) req.gpus = vm["gpu"].as<std::string>();
  req.include_mig = vm["mig"].as<bool>();
  if (vm.count("gpu") && (req.include_mig || vm.count("min-memory")))
    throw_usage("--mig and --min-memory choose among the catalogue's GPUs: they apply without --gpu");
  if (vm.count("min-memory")) req.min_memory = parse_gpu_memory(vm["min-memory"].as<std::string>(), "--min-memory");
  req.tps = once(split_positive_list(vm["tp"].as<std::string>(), "--tp"));
  req.pps = once(split_positive_list(vm["pp"].as<std::string>(), "--pp"));
  req.tps_given = !vm["tp"].defaulted();
  req.pps_given = !vm["pp"].defaulted();
  req.replicas = once(split_positive_list(vm["replicas"].as<std::string>(), "--replicas"));
  if (vm.count("context")) req.contexts = once(split_positive_list(vm["context"].as<std::string>(), "--context", kMaxContextTokens));
  req.batches = once(split_positive_list(vm["batch"].as<std::string>(), "--batch"));
  req.batches_given = !vm["batch"].defaulted();
  req.policy.headroom = parse_fraction(vm["headroom"].as<std::string>(), "--headroom");
  req.policy.conservative = vm["conservative"].as<bool>();
  req.periods = plan::parse_periods(vm["periods"].as<std::string>());
  if (vm.count("prices")) req.prices_file = vm["prices"].as<std::string>();
  req.args = read_engine_args(vm, engine, own);
  return req;
}

Table sweep_table(const plan::SweepResult& r, std::size_t top) {
  std::vector<Table::Column> cols = {{"#", Align::Right}, {"model", Align::Left}, {"weights", Align::Left}, {"gpu", Align::Left},
                                     {"GPUs", Align::Right}, {"ctx", Align::Right}, {"batch", Align::Right},
                                     {"verdict", Align::Left}, {"needs GiB/GPU", Align::Right},
                                     {"held/total GiB", Align::Right}, {"est. tok/s", Align::Right}};
  for (const auto& p : r.periods) cols.push_back({"$ " + p.label, Align::Right});
  Table t(cols);
  for (std::size_t i = 0; i < r.rows.size() && i < top; ++i) {
    const auto& x = r.rows[i];
    std::string layout;
    if (x.tp > 1) layout += " tp" + std::to_string(x.tp);
    if (x.pp > 1) layout += " pp" + std::to_string(x.pp);
    if (x.replicas > 1) layout += " dp" + std::to_string(x.replicas);
    std::vector<std::string> cells = {std::to_string(i + 1), x.model, x.weights, x.gpu,
                                      std::to_string(x.gpus) + (layout.empty() ? "" : " (" + layout.substr(1) + ")") +
                                          (x.billed_gpus != x.gpus ? ", billed " + std::to_string(x.billed_gpus) : ""),
                                      std::to_string(x.context), std::to_string(x.batch),
                                      std::string(plan::verdict_name(x.verdict)), fixed(x.needed_per_gpu.gib(), 1),
                                      fixed(x.held_per_gpu.gib(), 1) + "/" + fixed(x.capacity.gib(), 1),
                                      x.tokens_per_s > 0 ? fixed(x.tokens_per_s, 0) : "-"};
    for (std::size_t k = 0; k < r.periods.size(); ++k)
      cells.push_back(x.cost_usd.empty() ? "-" : fixed(x.cost_usd[k], 0));
    t.add_row(cells);
  }
  return t;
}

}  // namespace vramplan::cli
