#include "vramplan/quant/compatibility.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace vramplan {
namespace {

std::vector<std::string> split_parts(const std::string& format) {
  std::vector<std::string> out;
  std::stringstream in(format);
  for (std::string part; std::getline(in, part, '+');) out.push_back(part);
  return out;
}

}  // namespace

std::vector<std::string> compatibility_warnings(const PrecisionPlan& plan, const QuantCatalog& catalog,
                                                const GpuCapabilities& gpu, std::string_view engine) {
  std::vector<std::string> out;
  const SchemeTable& table = catalog.schemes();
  std::set<std::string> formats;
  for (const auto& f : plan.by_format)
    for (const auto& part : split_parts(f.format)) formats.insert(part);
  const EngineSupport* support = engine.empty() ? nullptr : table.find_engine(engine);
  if (!engine.empty() && !support)
    out.push_back("engine '" + std::string(engine) + "' is not in the format-support table; formats unchecked");
  std::set<std::string> reported_families, reported_features;
  for (const auto& name : formats) {
    const QuantFormat& f = catalog.get(name);
    if (support && std::find(support->families.begin(), support->families.end(), f.family) == support->families.end() &&
        reported_families.insert(f.family).second)
      out.push_back(std::string(engine) + " does not load " + f.family + " weights (" + f.name + ") (" + support->source + ")");
    if (f.min_hardware.empty() || !reported_features.insert(f.min_hardware).second) continue;
    const HardwareNeed* need = table.find_hardware(f.min_hardware);
    if (!need) continue;
    const bool flag = f.min_hardware == "fp8" ? gpu.fp8 : f.min_hardware == "fp4" ? gpu.fp4 : false;
    if (!flag && gpu.compute_capability + 1e-9 < need->min_compute_capability) {
      std::ostringstream msg;
      msg << f.name << " on compute capability " << gpu.compute_capability << ": " << need->message << " ("
          << need->source << ")";
      out.push_back(msg.str());
    }
  }
  return out;
}

}  // namespace vramplan
