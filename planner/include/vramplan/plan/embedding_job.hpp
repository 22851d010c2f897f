// vramplan/plan/embedding_job.hpp — an offline embedding job: N documents of a length
// distribution through one pooling plan (`vramplan plan --documents N --input-len DIST`).
//
// Pooling is compute-bound (docs/encoders.md "Throughput"): FLOPs per input of s tokens =
// s·(2·P_layers + 4·s·heads·head_dim·layers) (memory::encoder_flops_per_input), so the job takes
// N x E[FLOPs per input] / tensor rate seconds, with the rate the plan's inputs/s came from (low /
// expected / high). E[FLOPs] averages over lengths drawn from the simulator's length distributions
// (sim/workload_spec.hpp parse_length, the same generator and seed), each truncated to the plan's
// input length. The rental period and its price are the capacity code's (plan/prices.hpp
// cover_hours: the shortest period covering duration + margin, billed in the card's lots).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/plan/prices.hpp"
#include "vramplan/sim/serving_plan.hpp"
#include "vramplan/sim/workload_spec.hpp"

namespace vramplan::plan {

struct EmbeddingJobRequest {
  std::uint64_t documents = 0;
  sim::LengthSpec input;           //!< --input-len
  double margin_hours = 24;        //!< --margin: installation, checks, export
  std::vector<RentalPeriod> periods;
  std::uint64_t seed = 0;
};

//! Lengths drawn to estimate E[FLOPs per input] (all N when N is smaller).
inline constexpr std::uint64_t kEmbeddingJobSamples = 100000;

struct EmbeddingJob {
  std::uint64_t documents = 0;
  std::string input_len;           //!< the distribution as given
  std::uint64_t max_input_tokens = 0;
  std::uint64_t samples = 0;       //!< lengths drawn
  double mean_tokens = 0;          //!< after truncation
  double truncated_share = 0;      //!< of the drawn lengths, the share above max_input_tokens
  double flops_per_input = 0;      //!< mean over the drawn lengths
  double inputs_per_s = 0, inputs_per_s_low = 0, inputs_per_s_high = 0;
  double duration_s = 0, duration_s_slow = 0, duration_s_fast = 0;
  std::uint64_t gpus = 1;
  double gpu_hours = 0;            //!< expected duration x GPUs
  double margin_hours = 0;
  std::optional<double> usd_gpu_hours;  //!< GPU-hours x USD per GPU-hour (no period rounding)
  std::string period;              //!< shortest period covering duration + margin ("" = none)
  std::optional<double> period_usd;
  std::string price_basis;
  std::optional<std::uint64_t> kept_outputs;  //!< embeddings kept on the GPU (hf --keep-embeddings-on-gpu)
};

//! `documents` if a job can have that many: Error(Usage) for 0 and for a count above INT64_MAX (the
//! option parser's reading of "-1"). `plan --documents` checks it before planning, since
//! --keep-embeddings-on-gpu sizes the kept embeddings from it.
std::uint64_t checked_documents(std::uint64_t documents);

//! The job on `plan`, a pooling plan with engine_view "inputs_per_s" (sim::run_serving_plan).
//! Error(Usage) for a generative plan, a plan without a throughput figure, or documents == 0.
EmbeddingJob embedding_job(const sim::ServingPlan& plan, const EmbeddingJobRequest& request, const PriceBook& prices);

nlohmann::json embedding_job_json(const EmbeddingJob& job);
std::string embedding_job_text(const EmbeddingJob& job);

}  // namespace vramplan::plan
