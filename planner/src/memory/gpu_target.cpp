// The GPU as an engine sees it, built from a catalogue entry, and its compute capability read back.
#include <charconv>

#include "vramplan/memory/engine.hpp"

namespace vramplan::memory {

std::optional<ComputeCapability> GpuTarget::capability() const {
  const std::string& cc = compute_capability;
  ComputeCapability out;
  const auto parsed = std::from_chars(cc.data(), cc.data() + cc.size(), out.major);
  if (cc.empty() || parsed.ec != std::errc()) return std::nullopt;
  if (parsed.ptr != cc.data() + cc.size() && *parsed.ptr == '.')
    std::from_chars(parsed.ptr + 1, cc.data() + cc.size(), out.minor);
  return out;
}

GpuTarget gpu_target_of(const GpuSpec& gpu) {
  GpuTarget t;
  t.id = gpu.id;
  t.name = gpu.name;
  t.total = gpu.reported_total;
  if (gpu.compute_capability) t.compute_capability = gpu.compute_capability->str();
  t.vendor = gpu.vendor;
  t.node_gpus = gpu.node_gpus;
  return t;
}

}  // namespace vramplan::memory
