// numbers.hpp (internal to the decision layer) — the two number renderings its one-line verdicts
// use: "61.2" (GiB without the unit, for "61.2/79.1 GiB") and "22.6%".
#pragma once

#include <cstdio>
#include <string>

#include "vramplan/core/bytes.hpp"

namespace vramplan::plan {

inline std::string gib1(Bytes b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", b.gib());
  return buf;
}

inline std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100.0);
  return buf;
}

}  // namespace vramplan::plan
