// sweep_common.hpp — what `sweep` and `report` share: the options that describe a sweep (models,
// precisions, GPUs, layouts, workload, prices), their reading into a plan::SweepRequest, and the
// table of fitting configurations (the report shows the same table as HTML).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "vramplan/core/limits.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/plan/sweep.hpp"
#include "vramplan/core/table.hpp"

namespace vramplan::cli {

//! "a,b,c" -> {"a", "b", "c"} ("" -> {""}).
std::vector<std::string> split_list(const std::string& text);
//! The most entries one list flag takes: every entry is a plan (or a simulation) per layout.
inline constexpr std::size_t kMaxListEntries = 64;
//! "1,2,4" -> {1, 2, 4}; Error(Usage) naming `option` for anything but whole numbers in
//! 1..`max` (a sign, "1e3" and values past 2^64 included) or more than kMaxListEntries entries.
std::vector<std::uint64_t> split_positive_list(const std::string& text, const std::string& option,
                                               std::uint64_t max = kMaxBatch);

//! --model ... --prices (the sweep's own spellings of --tp / --pp: lists), added to `desc` and
//! their names to `declared`.
void add_sweep_options(po::options_description& desc, std::set<std::string>& declared);
//! The request those options describe. `own`: what the command declared before the engine's
//! flags (so the engine's --tp is not read as well).
plan::SweepRequest read_sweep_request(const po::variables_map& vm, const std::string& engine_spec,
                                      const memory::Engine& engine, const std::set<std::string>& own);

//! The fitting rows, first `top`: #, model, weights, GPU, GPUs (layout), context, batch, verdict,
//! needs and holds per GPU, estimated tok/s, and the cost of each rental period.
Table sweep_table(const plan::SweepResult& result, std::size_t top);

}  // namespace vramplan::cli
