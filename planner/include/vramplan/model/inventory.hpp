// vramplan/model/inventory.hpp — sums over a ModelSpec's tensor inventory.
//
// Parameter counts are sums over the inventory, never separate formulas. "Total" is what a
// serving engine keeps resident for the main model: every tensor except the multi-token-
// prediction module (role Mtp, reported on its own). "Active" counts each routed-expert tensor
// at experts_per_token / num_experts of its size (the experts one token uses) and everything
// else in full — the convention of Mixtral's 12.9 B and DeepSeek-V3's 37 B figures.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/model/spec.hpp"

namespace vramplan {

class FormatTable;

struct ParamCounts {
  std::uint64_t total = 0;      //!< main model incl. vision tower (MTP excluded)
  std::uint64_t active = 0;     //!< per token (routed experts at k/E)
  std::uint64_t mtp = 0;        //!< multi-token-prediction module (not in total)
  std::uint64_t vision = 0;     //!< vision / audio towers (included in total)
  std::uint64_t embedding = 0;  //!< token + position embeddings (included in total)
};

ParamCounts count_params(const ModelSpec& spec);

//! Bytes of one tensor at its stored format: stored_bytes when read from a file, else the exact
//! formula of its stored_format; nullopt when the format is empty (not known yet).
std::optional<std::uint64_t> stored_tensor_bytes(const TensorInfo& tensor, const FormatTable& formats);

struct RoleTotals {
  TensorRole role = TensorRole::Other;
  std::uint64_t tensors = 0;
  std::uint64_t params = 0;
  std::optional<std::uint64_t> bytes;  //!< nullopt when any tensor's format is unknown
  std::string formats;                 //!< distinct stored formats, comma-separated
};
//! Per-role sums in TensorRole order (roles with no tensors omitted).
std::vector<RoleTotals> totals_by_role(const ModelSpec& spec, const FormatTable& formats);

struct LayerTotals {
  std::optional<int> layer;  //!< nullopt: global tensors
  std::uint64_t params = 0;
  std::optional<std::uint64_t> bytes;
};
//! Per-layer sums (global tensors first), MTP layers included and marked by their index.
std::vector<LayerTotals> totals_by_layer(const ModelSpec& spec, const FormatTable& formats);

}  // namespace vramplan
