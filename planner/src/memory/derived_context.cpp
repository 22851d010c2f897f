#include "vramplan/memory/derived_context.hpp"

namespace vramplan::memory {

std::optional<std::uint64_t> derived_context_length(const ModelArch& arch) {
  if (arch.max_position_embeddings == 0) return std::nullopt;
  std::uint64_t derived = arch.max_position_embeddings;
  for (const RopeTable& t : arch.rope_tables) {
    if (t.scaling_type.empty() || t.scaling_type == "su" || t.scaling_type == "longrope" || t.scaling_type == "llama3") continue;
    if (t.scaling_type == "yarn") return std::nullopt;
    derived = static_cast<std::uint64_t>(static_cast<double>(arch.max_position_embeddings) * t.scaling_factor);
  }
  return derived;
}

}  // namespace vramplan::memory
