// vramplan/plan/train_limits.hpp — the limits of a training run (`vramplan train`'s `limits`,
// docs/training.md "Limits"), found the way plan/limits.hpp finds an engine's: every probe is a
// full train::plan_training() of the changed request and its FITS verdict (peak allocated <= the
// GPU's capacity), searched by doubling then bisection (plan::largest_fitting), not by inverting a
// formula — so recomputation, loss chunks, TP / CP splits and the step's temporaries are all in.
//   max micro-batch   largest micro-batch that fits at the request's sequence length
//   max seq-len       longest sequence that fits at the request's micro-batch (capped at the
//                     model's max_position_embeddings)
//   min GPUs          fewest GPUs for the request's sharding: the data-parallel size d is searched
//                     (GPUs = d x TP x PP x CP) up to a stated bound; per-GPU memory only falls
//                     with d where ZeRO / FSDP shard the model states over it, and never below
//                     what does not shard (activations, logits, gathered units)
//   grad accum        steps for a global batch: global = micro-batch x accumulation x data-parallel
//                     size, the accumulation rounded up when the global batch is not a multiple
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "vramplan/io/data_root.hpp"
#include "vramplan/plan/limits.hpp"
#include "vramplan/train/train_plan.hpp"

namespace vramplan::plan {

//! Why a training plan does not fit: the peak, its phase and that phase's largest part.
std::string train_overflow(const train::TrainPlan& plan);

//! plan_training + its verdict; a Usage error of the probe (an impossible setting) is a failure
//! with that error as the reason (as plan/limits.cpp's probe).
bool train_fits(const train::TrainRequest& request, const DataRoot& root, std::string* reason);

//! The searches' default ranges: micro-batches up to 65,536 and up to 1,024 GPUs.
inline constexpr std::uint64_t kTrainMicroBatchCap = 1u << 16;
inline constexpr std::uint64_t kTrainGpuBound = 1024;

//! Largest micro-batch in [1, cap] that fits at request.seq_len.
LimitResult train_max_micro_batch(const train::TrainRequest& request, const DataRoot& root,
                                  std::uint64_t cap = kTrainMicroBatchCap);

//! Longest sequence that fits at request.micro_batch; capped at max_position_embeddings.
LimitResult train_max_seq_len(const train::TrainRequest& request, const DataRoot& root);

struct TrainMinGpus {
  std::uint64_t bound = kTrainGpuBound;  //!< most GPUs searched
  std::uint64_t model_parallel = 1;    //!< TP x PP x CP: GPUs per data-parallel rank
  std::optional<std::uint64_t> gpus;   //!< fewest that fit; nullopt = none within the bound
  std::string why_none;                //!< when gpus is nullopt: what does not shard
  std::uint64_t probes = 0;
};

//! Fewest GPUs (data-parallel size x model_parallel, at most `bound`) for request.sharding.
TrainMinGpus train_min_gpus(const train::TrainRequest& request, const DataRoot& root,
                            std::uint64_t bound = kTrainGpuBound);

struct GradAccum {
  std::uint64_t global_batch = 0;      //!< asked for, in sequences
  std::uint64_t per_step = 0;          //!< micro-batch x data-parallel size: sequences per micro-step
  std::uint64_t steps = 0;             //!< ceil(global_batch / per_step)
  std::uint64_t effective = 0;         //!< steps x per_step: the global batch the run really has
  std::string note;                    //!< the arithmetic, and the rounding when there is one
};

//! Throws Error(Usage) for a zero global batch.
GradAccum grad_accum_for(std::uint64_t global_batch, std::uint64_t micro_batch, std::uint64_t data_parallel);

struct TrainLimits {
  LimitResult max_micro_batch;  //!< at request.seq_len
  LimitResult max_seq_len;      //!< at request.micro_batch
  TrainMinGpus min_gpus;
  std::optional<GradAccum> grad_accum;
  std::uint64_t seq_len = 0, micro_batch = 0;
};

//! The three searches on inputs the caller loaded once (the plan beside them uses the same).
TrainLimits train_limits(const train::TrainRequest& request, const train::TrainInputs& inputs,
                         const std::optional<GradAccum>& grad_accum = std::nullopt);

//! The `limits` object of vramplan.train/1 (docs/schemas/train.schema.json).
nlohmann::json train_limits_json(const TrainLimits& limits, const train::TrainRequest& request);
//! The "Limits:" lines of `vramplan train`'s text.
std::string train_limits_text(const TrainLimits& limits, const train::TrainRequest& request);

}  // namespace vramplan::plan
