// vramplan/plan/trial.hpp — the batch trial ladder (issue 15, item 5): "three groups of texts by
// length, each at batch 1, 2 and 4; record inputs completed, total time, peak memory and errors;
// stop at the first limit instead of hiding failures in an average". For each length group and
// batch the simulator predicts what the trial on the rented card will record, stopping each group
// at its first limit (out of memory, refused, over the latency target). The CSV leaves empty
// "measured" columns to fill on the card; compare_trial reads them back.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/io/data_root.hpp"
#include "vramplan/memory/plan_request.hpp"
#include "vramplan/sim/simulator.hpp"

namespace vramplan::plan {

struct TrialRequest {
  memory::PlanRequest plan;                 //!< model, GPU, engine + flags, weights
  //! "short", "typical", "limit" or token counts: typical = `typical_input`, short = a quarter of
  //! it, limit = the engine's longest accepted prompt for `output_tokens`.
  std::vector<std::string> groups = {"short", "typical", "limit"};
  std::uint64_t typical_input = 1024;
  std::uint64_t output_tokens = 256;
  std::vector<std::uint64_t> batches = {1, 2, 4, 8, 16, 32, 64};
  std::optional<double> max_latency_s;      //!< a batch whose slowest request takes longer fails
};

struct TrialCell {
  std::string group;
  std::uint64_t input_tokens = 0, output_tokens = 0, batch = 0;
  std::uint64_t completed = 0;  //!< inputs completed
  double total_s = 0;           //!< the batch from submission to its last output
  double held_gib = 0;          //!< per GPU: what the engine allocates (nvidia-smi)
  double in_use_gib = 0;        //!< per GPU: non-KV + KV of the batch at its peak
  std::string error;            //!< "" or "out of memory: ...", "refused: ...", "over the latency target: ..."
  // Not in the CSV (its columns are the trial's record to fill on the card):
  //! Most requests running at once: below `batch` when the engine queued part of it (a pool
  //! engine's KV pool or running limit; docs/simulator.md, Trial ladder).
  std::uint64_t max_running = 0;
  //! What held part of the batch in the queue: each limit's share of the batch's time and the one
  //! that held longest (sim::held_shares; `most` is none when every input joined the first step
  //! that could take it).
  sim::HeldShares queued;
};

struct TrialResult {
  std::string model, gpu, engine;
  std::vector<TrialCell> cells;  //!< by group, then batch; a group ends at its first error
};

//! Throws what planning throws (unknown model / GPU, bad flags), Error(Usage) for a group name
//! that is neither a word above nor a positive token count.
TrialResult run_trial(const TrialRequest& request, const DataRoot& root);

nlohmann::json trial_json(const TrialResult& result);
std::string trial_text(const TrialResult& result);
//! The table as CSV with empty measured_* columns for the user to fill on the card.
std::string trial_csv(const TrialResult& result);

struct TrialComparisonRow {
  TrialCell predicted;
  std::optional<std::uint64_t> completed;
  std::optional<double> total_s, peak_gib;
  std::string error;
};

//! Reads a trial CSV (as trial_csv wrote it, measured columns filled in). Rows without any
//! measurement are kept with empty measured fields. Errors name the file, line and column.
std::vector<TrialComparisonRow> read_trial_csv(const std::filesystem::path& file);
std::string trial_comparison_text(const std::vector<TrialComparisonRow>& rows);
nlohmann::json trial_comparison_json(const std::vector<TrialComparisonRow>& rows);

}  // namespace vramplan::plan
