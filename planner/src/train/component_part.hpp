// A memory component from a name, a byte count and its derivation: the shorthand every training
// pass uses to list its parts.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "vramplan/memory/component.hpp"

namespace vramplan::train {

inline memory::Component part(std::string name, std::uint64_t bytes, std::string explain) {
  return {std::move(name), Bytes(bytes), std::move(explain)};
}

}  // namespace vramplan::train
