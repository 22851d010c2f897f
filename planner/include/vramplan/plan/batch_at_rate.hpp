// vramplan/plan/batch_at_rate.hpp — the batch range's simulator view (issue 15, item 6;
// docs/decisions.md "Batch range at a rate"). The static batch table (batch_range.hpp) asks what
// fits and how fast a full batch runs; its TTFT is the burst case, every prompt of the row at
// once. Here requests arrive at a rate instead: for each cap on running requests (vLLM
// --max-num-seqs, SGLang --max-running-requests, TensorRT-LLM --max_batch_size, llama.cpp -np,
// HF transformers' static batch) the engine is planned with that cap and the workload replayed
// through the serving simulator; the answer is the largest cap that still meets the latency
// targets at the rate, with the command that starts the engine at it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/io/data_root.hpp"
#include "vramplan/memory/plan_request.hpp"
#include "vramplan/plan/launch_command.hpp"
#include "vramplan/plan/slo.hpp"
#include "vramplan/sim/simulator.hpp"

namespace vramplan::plan {

//! The engine's flag that caps running requests ("max-num-seqs"); "" for HF transformers, whose
//! cap is the workload's static batch. Engine spec may carry "@version".
std::string running_cap_flag(const std::string& engine);

//! The largest ladder value for which `meets` holds, refined above it: every ladder value
//! (ascending, distinct) is probed; when the largest that meets has a larger ladder neighbour
//! that fails, the integers between the two are bisected, on the assumption that the targets
//! fail monotonically there (a larger cap admits more running requests, so longer steps).
//! Below the largest meeting value nothing is assumed: small caps can fail by queueing (the
//! engine is overloaded) while larger ones meet. 0 when no ladder value meets.
std::uint64_t largest_meeting(const std::vector<std::uint64_t>& ladder,
                              const std::function<bool(std::uint64_t)>& meets);

struct RateBatchProbe {
  std::uint64_t cap = 0;  //!< running requests per replica (the engine's flag)
  bool met = false, overloaded = false;
  double ttft_p99_s = 0, tpot_p99_s = 0, kv_usage_p99 = 0, running_mean = 0;
  //! Completions per second per replica over the second half of the arrivals (sim::Verdict):
  //! what an overloaded cap serves of the rate, where its p99 TTFT only grows with the run.
  double served_per_s = 0;
  std::string binding;  //!< the target nearest to / furthest past its limit, or "overloaded"
  std::string error;    //!< the engine does not start with this cap ("" when it runs)
  std::string unserved; //!< requests refused or cut short ("" when every request was served)
  //! The limit that held sent requests in the queue longest at this cap (sim::held_shares), none
  //! when nothing did: why an overloaded cap is overloaded, in docs/simulator.md#held-back's terms.
  std::optional<sim::HeldLimit> held_most;
};

//! Why a cap fails, for people: "at 85: overloaded, the queue held most by the step token
//! budget", "at 64: p99_tpot<=13ms missed", "at 512: does not start (...)".
std::string probe_failure(const RateBatchProbe& probe);

struct BatchAtRateRequest {
  memory::PlanRequest plan;          //!< the checked configuration: model, GPU, engine, flags, weights
  double rate_per_s = 0;             //!< requests/s over all replicas; each replica gets rate / replicas
  std::uint64_t replicas = 1;
  std::uint64_t input_len = 0, output_len = 0;  //!< tokens of every request
  std::vector<SloTarget> slo;        //!< empty: the only target is "not overloaded"
  std::string slo_basis;             //!< where the targets come from (said in the output)
  std::uint64_t requests_per_probe = 3000;
  std::uint64_t seed = 0;
  std::vector<std::uint64_t> ladder;  //!< caps per replica to try, ascending (the batch table's rows)
};

struct BatchAtRate {
  double rate_per_s = 0;
  std::uint64_t replicas = 1;
  std::vector<SloTarget> slo;
  std::string slo_basis;
  std::string flag;                     //!< the engine flag the cap is ("" = HF static batch)
  std::uint64_t requests_per_probe = 0;
  std::string workload;                 //!< what was replayed, in words
  std::vector<RateBatchProbe> probes;   //!< every cap simulated, ascending
  std::uint64_t best = 0;               //!< largest cap meeting the targets (0 = none)
  std::string above;                    //!< what fails at the next cap tried above `best` ("" = none tried)
  LaunchCommand launch;                 //!< the engine at `best` (empty when best == 0)
  //! The probe at `cap`, or null when that cap was not simulated.
  const RateBatchProbe* at(std::uint64_t cap) const;
};

//! Throws Error(Usage) for a rate that is not positive and finite, no lengths or an empty ladder.
BatchAtRate batch_at_rate(const BatchAtRateRequest& request, const DataRoot& root);

}  // namespace vramplan::plan
