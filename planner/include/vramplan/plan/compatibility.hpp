// vramplan/plan/compatibility.hpp — the compatibility verdict of one scenario (engine, GPU,
// weights, KV dtype, TP, model architecture), asked by check / sweep / plan before memory, and
// how it reads in a one-line answer and in JSON.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vramplan/compat/compat.hpp"
#include "vramplan/plan/session.hpp"

namespace vramplan::plan {

//! The rules of data/compat that hold for the session's engine and model on `gpu` with these
//! engine flags (TP, --kv-cache-dtype, --dtype) and --weights (nullopt: the checkpoint's own).
compat::Verdict scenario_compatibility(const PlanSession& session, const GpuSpec& gpu,
                                       const memory::EngineArgs& args, const std::optional<std::string>& weights);

//! "UNSUPPORTED: <why> [<rule>; <source>]; instead: <what would work>" for the first
//! unsupported finding ("" when the verdict is not unsupported).
std::string unsupported_line(const compat::Verdict& v);

//! One warning per fallback and per unchecked fact (what runs differently, and why).
std::vector<std::string> compatibility_warnings(const compat::Verdict& v);

}  // namespace vramplan::plan
