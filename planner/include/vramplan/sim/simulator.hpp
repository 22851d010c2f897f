// vramplan/sim/simulator.hpp — the serving simulator: requests arrive (workload.hpp), an engine
// schedules them step by step under its rules (scheduler_rules.hpp) over a paged KV pool, and
// the performance model times every step (perf::mixed_step_seconds). Out come latency
// percentiles, throughput, KV usage and memory over time, preemptions, rejections and a verdict
// on whether the queue is stable (docs/simulator.md).
//
// Built for long runs: work per step is O(1) plus O(1) per event (an admission, a completion, a
// prompt chunk, a preemption), never O(running requests), so a million requests take about a
// second; memory is O(requests in the system) and the statistics are fixed-size histograms.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vramplan/perf/perf_model.hpp"
#include "vramplan/sim/scheduler_rules.hpp"
#include "vramplan/sim/stats.hpp"
#include "vramplan/sim/workload.hpp"

namespace vramplan::sim {

//! Seconds one step takes; normally perf::mixed_step_seconds with the GPU's expected rates.
using StepClock = std::function<double(const perf::MixedStep&)>;

//! What can hold a sent request in the waiting queue when it could have joined the step being
//! formed (docs/simulator.md#held-back).
enum class HeldLimit : std::uint8_t {
  KvPool,        //!< not enough free KV blocks (or a preemption freed blocks this step)
  RunningLimit,  //!< the running batch was full: max_num_seqs, max_running_requests,
                 //!< max_batch_size, llama.cpp's slots, a static batch still running
  TokenBudget,   //!< the step's token budget was spent (max_num_batched_tokens, chunked-prefill
                 //!< size, max_num_tokens), or an unchunked prompt exceeds it
};
inline constexpr int kHeldLimits = 3;
//! Each HeldLimit's JSON key and words for people, in the enum's order.
inline constexpr const char* kHeldLimitKeys[kHeldLimits] = {"kv_pool", "running_limit", "token_budget"};
inline constexpr const char* kHeldLimitWords[kHeldLimits] = {"KV pool", "running limit", "step token budget"};
inline const char* held_limit_key(HeldLimit l) { return kHeldLimitKeys[static_cast<int>(l)]; }
inline const char* held_limit_words(HeldLimit l) { return kHeldLimitWords[static_cast<int>(l)]; }

//! Simulated seconds during which the request at the head of the waiting queue could have joined
//! the step being formed (it had been sent by then) and the scheduler left it waiting, by the
//! HeldLimit that held it there. Summed over the ranks of a DP server.
struct HeldBack {
  double seconds[kHeldLimits] = {};
  double& operator[](HeldLimit l) { return seconds[static_cast<int>(l)]; }
  double operator[](HeldLimit l) const { return seconds[static_cast<int>(l)]; }
  double total() const { return seconds[0] + seconds[1] + seconds[2]; }
  //! Adds another engine's (a DP server's ranks are summed).
  HeldBack& operator+=(const HeldBack& o) {
    for (int i = 0; i < kHeldLimits; ++i) seconds[i] += o.seconds[i];
    return *this;
  }
};

//! The engine's state at one moment of simulated time.
struct TimelineSample {
  double t_s = 0;
  std::uint64_t running = 0;       //!< requests holding KV (prefilling or decoding)
  std::uint64_t waiting = 0;       //!< arrived, not admitted (including preempted ones)
  std::uint64_t completed = 0;     //!< so far
  std::uint64_t preemptions = 0;   //!< so far
  std::uint64_t kv_blocks_used = 0;    //!< referenced by requests
  std::uint64_t kv_blocks_cached = 0;  //!< prefix blocks no request references, kept for reuse
  double kv_usage = 0;             //!< used / pool: vLLM's "GPU KV cache usage"
  double memory_bytes = 0;         //!< per GPU: non-KV memory + used and cached KV blocks
  //! Latency of the requests whose first token (TTFT) or last token (TPOT) came since the
  //! previous sample: percentiles over time (count 0 = none in the window).
  Summary ttft_window, tpot_window;
  //! Seconds the queue's head was held back so far, by limit (SimResult::held_back at this time).
  HeldBack held_back;
};

//! A declared prompt prefix (a workload's prefix_id) held in the KV cache.
struct CachedPrefix {
  std::uint64_t prefix_id = 0;
  std::uint64_t tokens = 0;  //!< its full blocks are cached
};

struct SimOptions {
  //! At most this many requests outstanding (sent, not finished): benchmark_serving's
  //! --max-concurrency; with an infinite rate, a closed loop of this many users.
  std::optional<std::uint64_t> concurrency;
  //! No request is sent at or after this simulated time (0 = no limit): a closed loop's
  //! --duration, whose requests are all ready at t = 0 and are sent as users free up.
  double send_until_s = 0;
  //! A request still unfinished this long after it was sent counts as timed out (0 = none).
  double timeout_s = 0;
  //! Timeline: a sample every this many simulated seconds to `on_sample` (0 = none).
  double sample_every_s = 0;
  std::function<void(const TimelineSample&)> on_sample;
  //! Called every few thousand steps with requests finished (completed + rejected) so far.
  std::function<void(std::uint64_t finished)> on_progress;
  //! Prefixes the server holds before the first request, least recently used first: cached
  //! (evictable) at t = 0 when prefix caching is on. E.g. a load generator's warm-up request
  //! (bench_serving sends the run's first prompt once before it starts).
  std::vector<CachedPrefix> warm_prefixes;
  //! Tests: recount every block from the requests after every step and throw Error(Internal)
  //! on any mismatch (O(requests in system) per step). Debug builds check every 4096 steps.
  bool check_invariants = false;
};

struct RejectionCount {
  std::string reason;
  std::uint64_t count = 0;
};

struct Verdict {
  //! "stable", "overloaded" (arrivals outpace service: the queue grows), "inconclusive" (the
  //! running batch was still filling when arrivals ended, or too few requests: too short a run
  //! to tell), "offline" (every request queued at t = 0: a batch job, judged by its makespan),
  //! "closed-loop" (a fixed number of users: the queue cannot grow), "rejected" (every request was).
  std::string state;
  //! Requests in the system per second over the second half of the arrivals; when the waiting
  //! queue never drained over it, the arrival rate less served_per_s.
  double queue_growth_per_s = 0;
  //! Completions per second over the same window; when the waiting queue never drained over it,
  //! over the whole backlog (from the window's middle to the queue's next drain after the last
  //! arrival). Offline: over the second half of the backlog (until the last request waiting was
  //! admitted), the engine's throughput without its finishing tail.
  double served_per_s = 0;
  std::optional<double> first_timeout_s;  //!< simulated time the first request exceeded timeout_s
  std::string explanation;             //!< one sentence: how the state was decided
};

struct SimResult {
  std::uint64_t arrived = 0, completed = 0, rejected = 0, in_system = 0;
  std::uint64_t truncated = 0;   //!< finished early: outgrew a llama.cpp slot
  std::uint64_t preemptions = 0;
  std::uint64_t prefix_hits = 0;  //!< admissions that reused cached prefix blocks
  std::uint64_t steps = 0;
  double first_arrival_s = 0, last_completion_s = 0;
  double duration_s = 0;          //!< first arrival .. last completion (benchmark_serving's duration)
  double end_s = 0;               //!< simulated time when the run stopped
  double input_tokens = 0, output_tokens = 0;  //!< of completed requests
  Summary ttft, tpot, itl, e2e, queue;  //!< seconds; tpot over requests with >= 2 output tokens
  //! Fraction of the pool, time-weighted from the first arrival to the end, idle gaps included.
  Summary kv_usage;
  Summary running, waiting;             //!< requests, time-weighted as kv_usage
  double mean_in_system = 0;            //!< time average over [first arrival, end]
  std::uint64_t kv_blocks_peak = 0;     //!< used + cached
  double memory_peak_bytes = 0;         //!< per GPU
  std::vector<RejectionCount> rejections;
  HeldBack held_back;
  Verdict verdict;
};

//! Each HeldLimit's share of the run (first arrival to end, per engine of a server of `engines`
//! data-parallel engines, whose times are summed), and the one that held requests longest
//! (none when nothing was held).
struct HeldShares {
  double share[kHeldLimits] = {};
  std::optional<HeldLimit> most;
};
HeldShares held_shares(const SimResult& r, std::uint64_t engines);

//! The shares for people: "KV pool 68.4 %, running limit 0.0 %, step token budget 14.6 %; most by
//! the KV pool" ("" when nothing was held).
std::string held_shares_text(const HeldShares& h);

//! Runs `source` to exhaustion (or until every request has finished) under `rules`, timing each
//! step with `clock`. Throws Error(Usage) for rules that cannot run (an empty pool, a zero
//! limit) and whatever the source throws.
SimResult simulate(const SchedulerRules& rules, const StepClock& clock, RequestSource& source,
                   const SimOptions& options);

//! How a router in front of several replicas picks one for each request.
enum class Router {
  LeastOutstanding,  //!< the replica with the fewest requests sent and not finished (lowest index on ties)
  RoundRobin,        //!< request i to replica i mod K
};

//! `replicas` identical engines behind one router, simulated in lockstep: before each request is
//! routed every replica runs the steps that start before its arrival, so the router sees their
//! state at that moment. One result per replica. Throws Error(Usage) for 0 replicas or a
//! concurrency limit (which belongs to one replica's client).
std::vector<SimResult> simulate_replicas(const SchedulerRules& rules, const StepClock& clock, RequestSource& source,
                                         std::uint64_t replicas, Router router, const SimOptions& options);

//! Seconds of one lockstep step of several ranks, from every rank's batch (an empty MixedStep
//! for a rank with nothing to run); normally perf::dp_attention_step_seconds.
using LockstepClock = std::function<double(std::span<const perf::MixedStep>)>;

//! SGLang DP attention: one server of `ranks` schedulers under `rules` each (one rank's pool and
//! limits), dealt requests round-robin by its data-parallel controller and stepping in lockstep:
//! every step all ranks form their batches and `clock` times them together. One result for the
//! server: counts and tokens summed, latency over all requests, KV usage as the server's used
//! share of its ranks' pools, memory and KV peaks of the fullest rank (per GPU); timeline samples
//! alike. Throws Error(Usage) for fewer than 2 ranks, and what simulate() throws.
//! docs/simulator.md#dp-attention.
SimResult simulate_dp_attention(const SchedulerRules& rules, const LockstepClock& clock, RequestSource& source,
                                std::uint64_t ranks, const SimOptions& options);

//! vLLM's data-parallel engines of a dense model (0.14 on): `engines` schedulers under `rules`
//! behind the API server's router (rules.dp_dispatch), each stepping on its own and timed by
//! `clock` alone. Events run in time order, so the router sees every engine as it is when a
//! request arrives. One result for the server, summed and merged as simulate_dp_attention's;
//! KV usage, running and waiting are time-weighted over the server's events.
//! docs/simulator.md#vllm-data-parallelism.
SimResult simulate_independent_engines(const SchedulerRules& rules, const StepClock& clock, RequestSource& source,
                                       std::uint64_t engines, const SimOptions& options);

}  // namespace vramplan::sim
