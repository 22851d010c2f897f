#include "vramplan/perf/perf_defaults.hpp"

#include <string>

#include "vramplan/io/json_file.hpp"

namespace vramplan::perf {
namespace {

constexpr std::string_view kSchema = "vramplan.perf-defaults/1";

DefaultRange read_range(const JsonView& root, std::string_view key, double scale, bool fraction) {
  const JsonView r = root.at(key);
  DefaultRange out{r.req_positive("min") * scale, r.req_positive("expected") * scale,
                   r.req_positive("max") * scale};
  if (!(out.min <= out.expected && out.expected <= out.max))
    r.fail("expected min <= expected <= max");
  if (fraction && out.max > 1) r.fail_at("max", "a fraction must be at most 1");
  if (!r.get("sources")) r.fail("every default needs its sources");
  return out;
}

// A fraction that may be zero (read_range demands positive figures).
DefaultRange read_unit_interval(const JsonView& root, std::string_view key) {
  const JsonView r = root.at(key);
  DefaultRange out{r.req_number("min"), r.req_number("expected"), r.req_number("max")};
  if (!(0 <= out.min && out.min <= out.expected && out.expected <= out.max && out.max <= 1))
    r.fail("expected 0 <= min <= expected <= max <= 1");
  if (!r.get("sources")) r.fail("every default needs its sources");
  return out;
}

}  // namespace

PerfDefaults load_perf_defaults(const std::filesystem::path& file) {
  const nlohmann::json doc = read_json_file(file);
  const JsonView root(doc, file.string());
  if (root.req_string("schema") != kSchema)
    root.fail_at("schema", "expected \"" + std::string(kSchema) + "\"");
  PerfDefaults d;
  d.source = file.string();
  d.bandwidth_efficiency = read_range(root, "bandwidth_efficiency", 1, true);
  d.tensor_efficiency = read_range(root, "tensor_efficiency", 1, true);
  d.step_overhead_s = read_range(root, "step_overhead_ms", 1e-3, false);
  d.link_efficiency = read_range(root, "link_efficiency", 1, true);
  d.link_latency_s = read_range(root, "link_latency_us", 1e-6, false);
  d.memory_compute_overlap = read_unit_interval(root, "memory_compute_overlap");
  for (const auto& [gen, value] : root.at("pcie_gbps_per_direction").members()) {
    if (gen == "unit" || gen == "sources") continue;
    int g = 0;
    try {
      g = std::stoi(gen);
    } catch (const std::exception&) {
      value.fail("expected a PCIe generation number as the key");
    }
    const double gbps = value.as_number();
    if (!(gbps > 0)) value.fail("expected a positive number");
    d.pcie_gbps_per_direction[g] = gbps;
  }
  return d;
}

}  // namespace vramplan::perf
