// vramplan/plan/check.hpp — `vramplan check` as a library call: one configuration judged (fit
// and headroom per GPU, the first thing that breaks), optionally with its limits and the
// recommended batch range; rendered as one line, JSON (vramplan.check/1) or Markdown.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/compat/compat.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/plan/batch_at_rate.hpp"
#include "vramplan/plan/batch_range.hpp"
#include "vramplan/model/spec.hpp"
#include "vramplan/plan/launch_command.hpp"
#include "vramplan/plan/limits.hpp"
#include "vramplan/core/table.hpp"

namespace vramplan::plan {

struct CheckRequest {
  std::string model;
  std::string gpu;                  //!< catalogue id, card/profile (MIG) or custom:SIZE
  std::optional<Bytes> gpu_memory;  //!< --gpu-memory
  ClusterShape cluster;             //!< --node-gpus / --network-gbit (with_cluster)
  std::string engine = "vllm";
  memory::EngineArgs args;
  std::optional<std::string> weights;
  std::optional<std::uint64_t> batch, context;
  std::uint64_t replicas = 1;
  FitPolicy policy;
  bool limits = false;       //!< max batch / context / concurrency, min GPUs, smallest card
  bool batch_range = false;  //!< the batch table and recommended range
  LatencyTargets targets;
  RangeWorkload range_workload;  //!< the batch range's sequences when --context is not given
  std::uint64_t max_gpus = 8;
  //! --rate: the batch range at this load too (batch_at_rate.hpp), requests/s over all replicas.
  std::optional<double> rate;
  std::vector<SloTarget> slo;        //!< --slo for the rate view (else --max-ttft / --max-tpot as p99)
  std::uint64_t probe_requests = 3000;  //!< --probe-requests: requests simulated per cap
  //! --spec-accept-length: with speculative decoding, the rate view's mean tokens a verify keeps.
  std::optional<double> spec_accept_length;
};

struct CheckLimits {
  LimitResult max_batch, max_context, max_concurrency;
  std::uint64_t batch_context = 0;  //!< tokens per sequence max_batch holds at
  std::uint64_t context_batch = 1;  //!< sequences max_context holds at (the check's batch)
  std::uint64_t engine_length = 0;  //!< context max_concurrency is at
  MinGpusResult min_gpus;
  SmallestCardResult smallest_card;
};

struct CheckOutcome {
  CheckRequest request;
  std::string model_id;
  ModelSource model_source;  //!< which catalogue entry or file the model was read from
  GpuSpec gpu;
  //! Asked first: when unsupported, `line` says so and no memory was sized (`eval` is empty).
  compat::Verdict compat;
  Evaluation eval;
  std::string line;  //!< the one-line verdict
  std::vector<std::string> warnings;  //!< what the figures rest on that is not validated (text and JSON)
  std::string bounds_source;
  ErrorBounds bounds;
  std::optional<CheckLimits> limits;
  std::optional<BatchRange> range;
  //! With --rate: the largest running-request cap meeting the targets at the rate, and the
  //! p99 TTFT / TPOT of each cap tried (the batch table's "at rate" column).
  std::optional<BatchAtRate> at_rate;
  //! The command that starts the configuration as checked (empty argv when it does not fit or
  //! the engine has no server).
  LaunchCommand launch;
  //! With --batch-range: the command at the recommended cap (the rate answer with --rate, else
  //! the high end), and that cap per replica (0 = nothing recommended).
  LaunchCommand range_launch;
  std::uint64_t range_cap = 0;
};

//! `engine`: the engine already made for `request.engine` (the CLI's, for its flags); null =
//! make it here.
CheckOutcome run_check(const CheckRequest& request, const DataRoot& root,
                       std::unique_ptr<memory::Engine> engine = nullptr);

//! vramplan.check/1 (docs/schemas/check.schema.json).
nlohmann::json check_json(const CheckOutcome& outcome);
std::string check_text(const CheckOutcome& outcome);
//! A quote-ready Markdown section (the golden file tests/golden/check_quote.md).
std::string check_markdown(const CheckOutcome& outcome);
//! With --batch-range: the batch table every rendering shows (text, Markdown, the HTML report)
//! and the lines under it (recommended range, throughput basis, workload, the rate view).
Table batch_range_table(const CheckOutcome& outcome);
std::string batch_range_summary(const CheckOutcome& outcome);

}  // namespace vramplan::plan
