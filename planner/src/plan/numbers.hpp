// numbers.hpp (internal to the decision layer) — the number renderings its one-line verdicts use:
// "61.2" (GiB without the unit, for "61.2/79.1 GiB") and, from core/text.hpp, percent(f, 1) = "22.6%".
#pragma once

#include <string>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/text.hpp"

namespace vramplan::plan {

inline std::string gib1(Bytes b) { return fixed(b.gib(), 1); }

}  // namespace vramplan::plan
