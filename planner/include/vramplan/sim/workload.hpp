// vramplan/sim/workload.hpp — what the serving simulator replays: requests (arrival time, prompt
// and output lengths, an optional shared prefix), produced one at a time in arrival order so that
// a run holds only the requests in the system, never the whole workload (docs/simulator.md).
//
// Two halves, one per file:
//   * generators (workload_generators.cpp): arrival processes (poisson, gamma:CV, constant, inf)
//     and length distributions (fixed, uniform:A..B, lognormal:MEAN,SIGMA, hist:FILE, sharegpt),
//     driven by one seeded generator so that the same seed gives the same requests;
//   * traces (trace_reader.cpp): JSONL or CSV files streamed line by line.
// A closed-loop run (--concurrency C) pulls the next request when a user becomes free and sets
// its arrival time itself; an open-loop run uses the arrival times the source gives.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace vramplan::sim {

//! One request as the workload describes it.
struct Request {
  std::uint64_t id = 0;             //!< 0, 1, 2, ... in arrival order
  double arrival_s = 0;             //!< seconds from the start of the run; +inf never used
  std::uint32_t input_tokens = 0;   //!< prompt tokens, including the shared prefix
  std::uint32_t output_tokens = 0;  //!< tokens to generate (>= 1)
  //! A shared prompt prefix (system prompt, few-shot block, conversation so far): requests with
  //! the same non-zero prefix_id begin with the same prefix_tokens tokens. 0 = no shared prefix.
  std::uint64_t prefix_id = 0;
  std::uint32_t prefix_tokens = 0;  //!< <= input_tokens
};

//! Requests in arrival order. next() returns nullopt when the workload is exhausted. Errors in
//! the source (a trace line that does not parse) throw Error(InputFile) naming file, line, field.
class RequestSource {
 public:
  virtual ~RequestSource() = default;
  virtual std::optional<Request> next() = 0;
  //! Requests the source will produce in all, when known (progress bars, memory reservation).
  virtual std::optional<std::uint64_t> expected_count() const { return std::nullopt; }
};

}  // namespace vramplan::sim
