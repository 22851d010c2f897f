#include "support/engine_plans.hpp"

#include <stdexcept>

#include "support/catalogs.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {

memory::GpuTarget gpu_target(Bytes total, const std::string& name, std::uint64_t count,
                             const std::string& compute_capability) {
  return memory::GpuTarget{"test", name, total, count, compute_capability, "", std::nullopt};
}

memory::MemoryPlan plan_engine(const std::string& spec, const ModelSpec& model, const memory::GpuTarget& gpu,
                               memory::EngineArgs args, memory::Workload workload) {
  const auto engine = memory::make_engine(spec, source_dir() / "data");
  return engine->plan(memory::PlanInput{model, quant_catalog(), gpu, workload, std::move(args), std::nullopt,
                                        std::nullopt, ""});
}

const memory::Component& component(const std::vector<memory::Component>& parts, const std::string& name) {
  for (const auto& c : parts)
    if (c.name == name) return c;
  throw std::runtime_error("no component " + name);
}

}  // namespace vramplan::test
