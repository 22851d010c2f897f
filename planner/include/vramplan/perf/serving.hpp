// vramplan/perf/serving.hpp — the figures `vramplan plan` shows next to the memory plan: decode
// speed at the requested concurrency, time to first token of one prompt, and the throughput-vs-
// batch curve up to the memory-limited maximum concurrency (docs/performance.md §5).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/perf/perf_model.hpp"

namespace vramplan::perf {

//! Prompt length used for TTFT and as the decode context when none is given (docs/performance.md
//! §5): a mid-sized chat / RAG prompt, the same order as the 1000-token inputs of common serving
//! benchmarks.
inline constexpr std::uint64_t kDefaultPromptTokens = 1024;

struct ServingQuery {
  std::uint64_t batch = 1;             //!< sequences decoding together (--batch)
  std::uint64_t prompt_tokens = kDefaultPromptTokens;  //!< TTFT prompt (--prompt-len)
  std::uint64_t decode_context = kDefaultPromptTokens;  //!< tokens each decoding sequence holds
  std::uint64_t token_budget = 0;      //!< prefill chunk (engine's max tokens per step; 0 = whole prompt)
  std::uint64_t max_batch = 0;         //!< memory-limited concurrency at decode_context; 0 = unknown
};

struct ServingEstimate {
  DecodeResult decode;                  //!< at query.batch
  Range ttft_s;                         //!< one prompt alone on an idle replica
  std::optional<ThroughputCurve> curve; //!< nullopt when max_batch is unknown
  std::string basis;
  std::vector<std::string> notes;       //!< the shape's simplifications and what was left out
};

//! Throws Error(Usage) for a zero batch or prompt, or rates the model refuses.
ServingEstimate estimate_serving(const PerfModelShape& shape, const PerfHardware& hw,
                                 const ServingQuery& query);

}  // namespace vramplan::perf
