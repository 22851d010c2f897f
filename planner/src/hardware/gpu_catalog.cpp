// Looking GPUs up in the catalogue: ids, aliases, MIG "<card>/<profile>", custom:SIZE, and the
// user's override of the reported total.
#include "vramplan/hardware/gpu_catalog.hpp"

#include <algorithm>
#include <cctype>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"

namespace vramplan {
namespace {

constexpr std::string_view kCustomPrefix = "custom:";

std::string lower_trimmed(std::string_view s) { return to_lower(trim(s)); }

}  // namespace

const GpuSpec& GpuCatalog::find(std::string_view id) const {
  std::string key = lower_trimmed(id);
  if (const auto a = aliases_.find(key); a != aliases_.end()) key = a->second;
  // "<alias>/<profile>": the alias names the parent card.
  if (const auto slash = key.find('/'); slash != std::string::npos) {
    if (const auto a = aliases_.find(key.substr(0, slash)); a != aliases_.end())
      key = a->second + key.substr(slash);
  }
  if (const auto it = index_.find(key); it != index_.end()) return spec(it->second);

  std::vector<std::string> names;
  for (const auto& e : entries_) names.push_back(e.id);
  for (const auto& [alias, target] : aliases_) names.push_back(alias);
  // A blank id is close to nothing: no list of near names.
  const auto near = key.empty() ? std::vector<std::string>{} : closest_names(key, names);
  std::string message = "unknown GPU '" + std::string(id) + "'";
  if (!near.empty()) {
    message += " (closest:";
    for (std::size_t k = 0; k < near.size(); ++k) message += (k ? ", " : " ") + near[k];
    message += ")";
  }
  throw_unknown(message + "; 'vramplan gpus --all' lists every id, or use custom:<size> such as custom:46068MiB");
}

GpuSpec GpuCatalog::resolve_one(std::string_view id) const {
  // custom:SIZE keeps the user's spelling of the size ("46068MiB") in its id.
  if (lower_trimmed(id).rfind(kCustomPrefix, 0) == 0) return custom_gpu(trim(id));
  return find(id);
}

std::vector<GpuSpec> GpuCatalog::resolve(std::string_view list) const {
  std::vector<GpuSpec> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view item = trim(list.substr(start, comma - start));
    if (item.empty()) throw_usage("empty GPU name in the list '" + std::string(list) + "'");
    out.push_back(resolve_one(item));
    start = comma + 1;
  }
  return out;
}

GpuSpec custom_gpu(std::string_view text) {
  const std::string key = lower_trimmed(text);
  if (key.rfind(kCustomPrefix, 0) != 0)
    throw_usage("'" + std::string(text) + "' is not a custom GPU (expected custom:<size>, e.g. custom:46068MiB)");
  const std::string size_text(trim(text.substr(text.find(':') + 1)));
  const Bytes total = parse_gpu_memory(size_text, "custom GPU memory");
  if (total.count() == 0) throw_usage("custom GPU memory must be more than 0, got '" + size_text + "'");
  GpuSpec g;
  g.id = "custom:" + size_text;
  g.name = "custom GPU (" + format_binary(total) + ")";
  g.vendor = "unknown";
  g.reported_total = total;
  g.reported_basis = MemoryBasis::UserSupplied;
  g.reported_note = "given on the command line";
  return g;
}

Bytes parse_gpu_memory(std::string_view text, const std::string& what) {
  const Bytes b = parse_bytes(text, what);
  const bool bare = std::none_of(text.begin(), text.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) && c != 'e' && c != 'E'; });
  if (bare && b.count() < kGiB)
    throw_usage(what + " '" + std::string(text) + "' is " + std::to_string(b.count()) +
                " bytes: give a unit, e.g. 80GB or 79.19GiB");
  return b;
}

std::optional<std::uint64_t> fabric_gpus(const GpuSpec& gpu) {
  if (gpu.mig || !gpu.node_gpus) return std::nullopt;
  return gpu.interconnect.nvlink_domain_gpus.value_or(*gpu.node_gpus);
}

GpuSpec with_reported_total(GpuSpec spec, Bytes total) {
  if (total.count() == 0) throw_usage("GPU memory for '" + spec.id + "' must be more than 0");
  const double physical = spec.marketed_gb * static_cast<double>(kGiB);
  if (spec.marketed_gb > 0 && static_cast<double>(total.count()) > physical)
    throw_usage("GPU memory " + format_binary(total) + " is more than " + spec.id + " has (" +
                std::to_string(static_cast<int>(spec.marketed_gb)) + " GB marketed, at most " +
                format_binary(Bytes(static_cast<std::uint64_t>(physical))) + ")");
  spec.reported_total = total;
  spec.reported_basis = MemoryBasis::UserSupplied;
  spec.reported_note = "given on the command line (catalogue figure replaced)";
  return spec;
}

GpuSpec with_cluster(GpuSpec spec, const ClusterShape& cluster) {
  if (spec.mig && (cluster.node_gpus || cluster.network_gbit))
    throw_usage(std::string(cluster.node_gpus ? kNodeGpusFlag : kNetworkGbitFlag) + ": '" + spec.id +
                "' is a MIG slice, one card: it never spans hosts");
  if (cluster.node_gpus) {
    if (*cluster.node_gpus == 0 || *cluster.node_gpus > 1024)
      throw_usage("--node-gpus: GPUs per host must be in 1..1024, got " + std::to_string(*cluster.node_gpus));
    spec.node_gpus = cluster.node_gpus;
    spec.sources["node_gpus"] = {kNodeGpusFlag};
  }
  if (cluster.network_gbit) {
    const double g = *cluster.network_gbit;
    if (!(g > 0 && g <= 100000))
      throw_usage("--network-gbit: the network per GPU between hosts must be in (0, 100000] Gb/s, got " + format_number("%g", g));
    spec.interconnect.network_gbit = g;
    spec.sources["network"] = {kNetworkGbitFlag};
  }
  return spec;
}

}  // namespace vramplan
