// decision_options.hpp — the options `check`, `sweep` and `explain` share with `plan`: model,
// GPU, engine and the engine's own flags (declared by the engine, so --tp means what the chosen
// engine calls it), plus the decision options (--headroom, --conservative, --replicas).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "vramplan/memory/engine.hpp"

namespace vramplan::cli {

//! The --engine value in `args` ("vllm" when absent), read before parsing: the engine's flags
//! depend on it.
std::string engine_spec_of(const std::vector<std::string>& args);

//! Adds every option of `engine` not yet in `declared` (aliases included) to `desc`.
void add_engine_options(po::options_description& desc, const memory::Engine& engine, std::set<std::string>& declared);
//! The engine flags the user set, under their canonical names.
memory::EngineArgs read_engine_args(const po::variables_map& vm, const memory::Engine& engine);

//! "10%", "10 %" or "0.1" -> 0.1. Throws Error(Usage) naming `option`.
double parse_fraction(const std::string& text, const std::string& option);

}  // namespace vramplan::cli
