// vramplan/quant/compatibility.hpp — warnings when a plan's formats need hardware the GPU lacks
// (FP8 tensor cores: compute capability >= 8.9; FP4: >= 10.0) or an engine that cannot load them
// (data/quant_schemes.json /engine_support and /hardware). The GPU's capabilities are plain
// parameters: the GPU catalogue is read elsewhere.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vramplan/quant/precision_plan.hpp"

namespace vramplan {

struct GpuCapabilities {
  double compute_capability = 0;  //!< e.g. 8.0 (A100), 8.9 (L40S), 9.0 (H100), 10.0 (B200)
  bool fp8 = false;               //!< native FP8 tensor cores (overrides the capability check)
  bool fp4 = false;               //!< native FP4 tensor cores
};

//! One line per problem, naming the format, the need and the source. `engine` "" skips the
//! engine check; an engine not in the table gives a warning that it is unchecked.
std::vector<std::string> compatibility_warnings(const PrecisionPlan& plan, const QuantCatalog& catalog,
                                                const GpuCapabilities& gpu, std::string_view engine);

}  // namespace vramplan
