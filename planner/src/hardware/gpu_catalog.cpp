// Looking GPUs up in the catalogue: ids, aliases, MIG "<card>/<profile>", custom:SIZE, and the
// user's override of the reported total.
#include <algorithm>
#include <cctype>

#include "vramplan/core/error.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"

namespace vramplan {
namespace {

constexpr std::string_view kCustomPrefix = "custom:";

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower_trimmed(std::string_view s) {
  std::string out(trimmed(s));
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// Up to five known names nearest to `wanted`: names containing it first, then by edit distance.
std::vector<std::string> closest_names(const std::string& wanted, const std::vector<std::string>& names) {
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& n : names) {
    const bool contains = n.find(wanted) != std::string::npos || wanted.find(n) != std::string::npos;
    const std::size_t d = contains ? 0 : edit_distance(wanted, n);
    if (d <= std::max<std::size_t>(3, wanted.size() / 3)) scored.emplace_back(d, n);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (const auto& [d, n] : scored) {
    if (out.size() == 5) break;
    out.push_back(n);
  }
  return out;
}

}  // namespace

const GpuSpec& GpuCatalog::find(std::string_view id) const {
  std::string key = lower_trimmed(id);
  if (const auto a = aliases_.find(key); a != aliases_.end()) key = a->second;
  // "<alias>/<profile>": the alias names the parent card.
  if (const auto slash = key.find('/'); slash != std::string::npos) {
    if (const auto a = aliases_.find(key.substr(0, slash)); a != aliases_.end())
      key = a->second + key.substr(slash);
  }
  if (const auto it = index_.find(key); it != index_.end()) return specs_[it->second];

  std::vector<std::string> names;
  for (const auto& s : specs_) names.push_back(s.id);
  for (const auto& [alias, target] : aliases_) names.push_back(alias);
  const auto near = closest_names(key, names);
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
  if (lower_trimmed(id).rfind(kCustomPrefix, 0) == 0) return custom_gpu(trimmed(id));
  return find(id);
}

std::vector<GpuSpec> GpuCatalog::resolve(std::string_view list) const {
  std::vector<GpuSpec> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view item = trimmed(list.substr(start, comma - start));
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
  const std::string size_text(trimmed(text.substr(text.find(':') + 1)));
  const Bytes total = parse_bytes(size_text, "custom GPU memory");
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

GpuSpec with_reported_total(GpuSpec spec, Bytes total) {
  if (total.count() == 0) throw_usage("GPU memory for '" + spec.id + "' must be more than 0");
  spec.reported_total = total;
  spec.reported_basis = MemoryBasis::UserSupplied;
  spec.reported_note = "given on the command line (catalogue figure replaced)";
  return spec;
}

}  // namespace vramplan
