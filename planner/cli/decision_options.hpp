// decision_options.hpp — the options `check`, `sweep` and `explain` share with `plan`: model,
// GPU, engine and the engine's own flags (declared by the engine, so --tp means what the chosen
// engine calls it), plus the decision options (--headroom, --conservative, --replicas).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/plan_request.hpp"
#include "vramplan/plan/check.hpp"

namespace vramplan::cli {

//! The --engine value in `args` ("vllm" when absent), read before parsing: the engine's flags
//! depend on it.
std::string engine_spec_of(const std::vector<std::string>& args);

//! Adds the section "Engine flags (<engine>)" to `desc`: every option of `engine` not yet in
//! `declared` (aliases included).
void add_engine_options(po::options_description& desc, const memory::Engine& engine, std::set<std::string>& declared);
//! The engine flags the user set, under their canonical names. `command_own`: spellings the
//! command declared itself before the engine section (sweep's --tp / --pp lists), not read here.
memory::EngineArgs read_engine_args(const po::variables_map& vm, const memory::Engine& engine,
                                    const std::set<std::string>& command_own = {});

//! The options `check` and `explain` share (model, GPU, engine, weights, workload, --replicas,
//! --headroom, --conservative), added to `desc` and their names to `declared`.
//! --node-gpus and --network-gbit (the user's cluster: hardware/gpu_catalog.hpp ClusterShape),
//! part of the check and plan-target option sets; read_cluster reads them (unset when absent).
void add_cluster_options(po::options_description& desc, std::set<std::string>& declared);
ClusterShape read_cluster(const po::variables_map& vm);
void add_check_options(po::options_description& desc, std::set<std::string>& declared);
//! The check those options describe under engine `engine_spec`, with the engine flags the user set.
plan::CheckRequest read_check_request(const po::variables_map& vm, const std::string& engine_spec,
                                      const memory::Engine& engine);

//! The engine instance `simulate` and `trial` plan (model, GPU, --gpu-memory, engine, weights),
//! added to `desc` and their names to `declared`; read_plan_target fills a PlanRequest from them
//! and the engine flags the user set.
void add_plan_target_options(po::options_description& desc, std::set<std::string>& declared);
memory::PlanRequest read_plan_target(const po::variables_map& vm, const std::string& engine_spec,
                                     const memory::Engine& engine);

//! --spec-accept-length, for every command that simulates (simulate, trial, check --rate, sweep
//! --rate, report --simulate): with speculative decoding, the mean tokens one verify keeps.
void add_spec_accept_option(po::options_description& desc, std::set<std::string>& declared);
std::optional<double> read_spec_accept(const po::variables_map& vm);

//! "10%", "10 %" or "0.1" -> 0.1, in [0, 1). Throws Error(Usage) naming `option`.
double parse_fraction(const std::string& text, const std::string& option);

}  // namespace vramplan::cli
