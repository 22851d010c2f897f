#include "vramplan/model/inventory.hpp"

#include <algorithm>
#include <set>

#include "vramplan/core/bytes.hpp"
#include "vramplan/io/format_table.hpp"

namespace vramplan {
namespace {

bool is_tower(TensorRole role) { return role == TensorRole::Vision || role == TensorRole::Audio; }

//! One token's share of a routed-expert tensor: k of E experts (exact when E divides
//! elements, which it does for stacked {E, ...} tensors).
std::uint64_t active_share(const TensorInfo& t, const ModelArch& a) {
  const auto n = t.elements();
  if (!is_routed_expert_role(t.role) || a.num_experts == 0) return n;
  return n / a.num_experts * a.experts_per_token;
}

}  // namespace

ParamCounts count_params(const ModelSpec& spec) {
  ParamCounts c;
  for (const auto& t : spec.tensors) {
    const auto n = t.elements();
    if (t.role == TensorRole::Mtp) {
      c.mtp = checked_add(c.mtp, n, "MTP parameter count");
      continue;
    }
    c.total = checked_add(c.total, n, "parameter count");
    c.active = checked_add(c.active, active_share(t, spec.arch), "active parameter count");
    if (is_tower(t.role)) c.vision = checked_add(c.vision, n, "vision parameter count");
    if (t.role == TensorRole::TokenEmbedding || t.role == TensorRole::PositionEmbedding)
      c.embedding = checked_add(c.embedding, n, "embedding parameter count");
  }
  return c;
}

std::optional<std::uint64_t> stored_tensor_bytes(const TensorInfo& t, const FormatTable& formats) {
  if (t.stored_bytes) return t.stored_bytes;
  if (t.stored_format.empty()) return std::nullopt;
  return tensor_bytes(formats.get(t.stored_format), t.shape, t.name);
}

namespace {

void add_bytes(std::optional<std::uint64_t>& sum, std::optional<std::uint64_t> bytes, bool& unknown) {
  if (!bytes) unknown = true;
  if (unknown) {
    sum.reset();
    return;
  }
  sum = checked_add(sum.value_or(0), *bytes, "tensor bytes");
}

}  // namespace

std::vector<RoleTotals> totals_by_role(const ModelSpec& spec, const FormatTable& formats) {
  std::vector<RoleTotals> out;
  std::vector<bool> unknown;
  std::vector<std::set<std::string>> fmts;
  for (const auto& t : spec.tensors) {
    auto it = std::find_if(out.begin(), out.end(), [&](const RoleTotals& r) { return r.role == t.role; });
    if (it == out.end()) {
      out.push_back({t.role, 0, 0, std::uint64_t{0}, ""});
      unknown.push_back(false);
      fmts.emplace_back();
      it = out.end() - 1;
    }
    const auto i = static_cast<std::size_t>(it - out.begin());
    it->tensors += 1;
    it->params = checked_add(it->params, t.elements(), "parameter count");
    bool u = unknown[i];
    add_bytes(it->bytes, stored_tensor_bytes(t, formats), u);
    unknown[i] = u;
    fmts[i].insert(t.stored_format.empty() ? "?" : t.stored_format);
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    for (const auto& f : fmts[i]) out[i].formats += (out[i].formats.empty() ? "" : ",") + f;
  std::vector<std::size_t> order(out.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return static_cast<int>(out[x].role) < static_cast<int>(out[y].role);
  });
  std::vector<RoleTotals> sorted;
  for (auto i : order) sorted.push_back(out[i]);
  return sorted;
}

std::vector<LayerTotals> totals_by_layer(const ModelSpec& spec, const FormatTable& formats) {
  std::vector<LayerTotals> out;
  std::vector<bool> unknown;
  auto slot = [&](std::optional<int> layer) -> std::size_t {
    for (std::size_t i = 0; i < out.size(); ++i)
      if (out[i].layer == layer) return i;
    out.push_back({layer, 0, std::uint64_t{0}});
    unknown.push_back(false);
    return out.size() - 1;
  };
  slot(std::nullopt);  // global tensors first
  for (const auto& t : spec.tensors) {
    const auto i = slot(t.layer);
    out[i].params = checked_add(out[i].params, t.elements(), "parameter count");
    bool u = unknown[i];
    add_bytes(out[i].bytes, stored_tensor_bytes(t, formats), u);
    unknown[i] = u;
  }
  std::stable_sort(out.begin() + 1, out.end(),
                   [](const LayerTotals& x, const LayerTotals& y) { return *x.layer < *y.layer; });
  return out;
}

}  // namespace vramplan
