// engine_plans.hpp — one engine profile of the source tree's data/ planning a model, as the
// engine tests do it: the GPU they plan on, the call, and looking up a component by name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/memory/engine.hpp"

namespace vramplan::test {

inline constexpr const char* kH100Name = "NVIDIA H100 80GB HBM3";

//! A GPU reporting `total` per device (an H100 SXM, compute capability 9.0, unless given).
memory::GpuTarget gpu_target(Bytes total, const std::string& name = kH100Name, std::uint64_t count = 1,
                             const std::string& compute_capability = "9.0");

//! `model` planned by engine `spec` ("sglang", "vllm@0.19") on `gpu` with the full quantization
//! catalogue (test::quant_catalog) and no calibration.
memory::MemoryPlan plan_engine(const std::string& spec, const ModelSpec& model, const memory::GpuTarget& gpu,
                               memory::EngineArgs args, memory::Workload workload = {});

//! The component called `name`; throws std::runtime_error when there is none.
const memory::Component& component(const std::vector<memory::Component>& parts, const std::string& name);

}  // namespace vramplan::test
