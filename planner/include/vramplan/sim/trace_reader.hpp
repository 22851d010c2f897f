// vramplan/sim/trace_reader.hpp — a request trace file (JSONL or CSV) read one line at a time.
//
// Each record: arrival_s, input_tokens, output_tokens, and optionally prefix_id + prefix_tokens
// (docs/simulator.md, "Workloads"). The format comes from the extension (.jsonl / .json -> JSONL,
// .csv -> CSV) or, for any other name, from the first non-blank character ('{' -> JSONL). Only the
// current line is held, so memory does not grow with the trace. Faults throw Error(InputFile)
// "FILE:LINE: field: message"; lines longer than kMaxTraceLineBytes are refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>

#include "vramplan/sim/workload.hpp"

namespace vramplan::sim {

inline constexpr std::size_t kMaxTraceLineBytes = std::size_t{1} << 20;

//! Opens `path` (Error(Io) when it cannot be read) and returns its requests in file order. With
//! `max_total_tokens` > 0 a line whose input + output exceeds it is an error naming the line
//! (the engine's max_model_len: a trace is the user's own data, so a row the engine can never
//! serve is bad input, not a rejection to count).
std::unique_ptr<RequestSource> open_trace(const std::filesystem::path& path, std::uint64_t max_total_tokens = 0);

}  // namespace vramplan::sim
