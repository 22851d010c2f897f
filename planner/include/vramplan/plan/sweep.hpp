// vramplan/plan/sweep.hpp — models x precisions x GPUs x TP x context x batch -> the fitting
// configurations ranked by rental cost.
//
// Built for a million evaluations a second: the engine is planned once per (model, precision,
// TP, GPU) — at batch 1 and 2, giving the non-KV bytes and how they grow with batch — and once
// per (model, precision, TP, context) on the largest GPU for the KV of one sequence (the engine's
// block rounding included). The per-(GPU, context, batch) point is then a few additions and one
// roofline step (perf::decode_step) in a tight loop: no files, no strings, no allocation.
// `check` plans every point in full; a test holds the two to the same answers.
//
// Layouts: TP x PP per instance (PP only where the engine has a pipeline flag; PP sizes up to the
// layer count, since vLLM splits the layers over the stages) x data-parallel replicas. A replica
// serves ceil(batch / replicas) sequences; GPUs = TP x PP x replicas. Decode time under PP has
// the pipeline bubble of perf/perf_model.hpp (micro-batches m = min(PP, batch), rounds of
// max(m, PP) stage steps).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/perf/perf_model.hpp"
#include "vramplan/plan/fit.hpp"
#include "vramplan/plan/launch_command.hpp"
#include "vramplan/plan/prices.hpp"
#include "vramplan/plan/session.hpp"

namespace vramplan::plan {

struct SweepRequest {
  std::vector<std::string> models;
  std::vector<std::optional<std::string>> weights = {std::nullopt};  //!< nullopt = the checkpoint's
  std::string gpus;          //!< comma list; "" = every card of the catalogue
  bool include_mig = false;  //!< with gpus == "": MIG slices too
  std::optional<Bytes> min_memory;  //!< with gpus == "": only GPUs with at least this reported total
  std::vector<std::uint64_t> tps = {1, 2, 4, 8};
  std::vector<std::uint64_t> pps = {1};       //!< pipeline stages per instance
  bool tps_given = false, pps_given = false;  //!< --tp / --pp given (else the engine's TP / PP flag may set them)
  std::vector<std::uint64_t> replicas = {1};  //!< data-parallel instances
  std::vector<std::uint64_t> contexts;  //!< empty = the engine's default length
  std::vector<std::uint64_t> batches = {1};
  std::string engine = "vllm";
  memory::EngineArgs args;  //!< engine flags other than TP and the context length
  FitPolicy policy;
  std::vector<RentalPeriod> periods;
  std::optional<std::filesystem::path> prices_file;
  //! --batch given (else a pooling model takes the engine's default batch, as plan and check do).
  bool batches_given{};
};

struct SweepRow {
  std::string model, weights, gpu;
  std::uint64_t tp = 1, pp = 1, replicas = 1, context = 0, batch = 0;  //!< batch over all replicas
  std::uint64_t gpus = 1, billed_gpus = 1;
  Bytes needed_per_gpu, held_per_gpu, capacity;  //!< fit.hpp's two quantities
  double spare_fraction = 0;  //!< unused KV pool / capacity
  Verdict verdict = Verdict::Fits;  //!< FITS or MARGINAL (rows that do not fit are misses)
  double tokens_per_s = 0;  //!< expected decode output tokens/s of all replicas; 0 = no rates for this GPU
  double tpot_s = 0;        //!< of the busiest replica
  double pipeline_bubble = 0;  //!< idle share of each stage (PP > 1 with fewer micro-batches than stages)
  std::vector<double> cost_usd;  //!< per period; empty = no price
  std::string price_basis;
  std::string throughput_scaled_from;  //!< MIG slice: perf::mig_scaling_note ("" for a card)
  std::vector<std::string> fallbacks;  //!< compatibility fallback rules that hold (data/compat)
  //! The command that starts one replica as planned; set by attach_launch_commands (the sweep's
  //! inner loop plans no engine, so only the rows shown get one).
  std::optional<LaunchCommand> launch;
};

struct SweepMiss {
  std::string model, weights, gpu;
  std::uint64_t tp = 1, pp = 1;
  std::string why;  //!< invalid TP, engine refusal, unsupported, or the smallest point's reason
  bool unsupported = false;  //!< a compatibility rule says it does not run (why: the rule)
};

struct SweepResult {
  std::vector<SweepRow> rows;     //!< fitting points: cheapest first (then most headroom)
  std::vector<SweepMiss> misses;  //!< (model, precision, GPU, TP, PP) with no fitting point
  std::uint64_t evaluations = 0;  //!< (GPU, context, batch) points judged
  std::vector<RentalPeriod> periods;
};

//! `progress(done, total)` is called between (model, precision, TP) groups (may be empty).
SweepResult run_sweep(const SweepRequest& request, const DataRoot& root,
                      const std::function<void(std::size_t, std::size_t)>& progress = {});

//! Plans the first `rows` rows of `result` in full (the model as the user gave it, the row's
//! layout, precision, context and batch per replica) and sets their launch commands.
void attach_launch_commands(SweepResult& result, const SweepRequest& request, const DataRoot& root, std::size_t rows);

// ---- the precomputed parts and the inner loop (exposed for the benchmark and tests) -----------

struct GpuFixed {  //!< one (model, precision, TP, GPU)
  std::string gpu;
  Bytes capacity, kv_pool;
  std::uint64_t kv_pool_upper = 0;  //!< the pool on the upper bounds (fit.hpp)
  std::uint64_t held_1 = 0;         //!< what the engine holds at batch 1
  std::uint64_t held_excess = 0;    //!< what the upper bounds add to what it holds
  std::uint64_t start_kv = 0;       //!< one sequence of the engine's max length (0: a fixed KV allocation)
  std::uint64_t non_kv_1 = 0;       //!< weights + activation + overhead at batch 1
  std::int64_t non_kv_slope = 0;    //!< growth per extra sequence (0 for pool engines)
  std::string refusal;              //!< engine refuses at every length ("" = accepts)
  std::optional<perf::HardwareRates> rates;
  //! The pool is a share of the card (vLLM, SGLang), not a fixed allocation: held beyond the card
  //! is then the engine's own reserve estimates, MARGINAL as in fit.hpp, not DOES NOT FIT.
  bool budget_pool = false;
  //! KV of one sequence of the longest context on this card: it may differ from the reference
  //! card's (vLLM's sliding-window blocks span its step budget, whose default follows the card).
  std::uint64_t per_seq_longest = 0;
};

struct PointResult {
  Verdict verdict = Verdict::DoesNotFit;
  bool fits = false;               //!< FITS, or MARGINAL unless the policy is conservative
  std::uint64_t needed = 0, held = 0;
  double spare_fraction = 0;
  double tokens_per_s = 0, tpot_s = 0;  //!< one instance serving `batch` sequences
  double pipeline_bubble = 0;
};

//! One (GPU, context, batch per instance) point: the tight-loop arithmetic. Under PP
//! (shape.pp > 1) the decode round is perf::estimate_decode's: m = min(PP, batch) micro-batches of
//! ceil(batch / m) sequences, max(m, PP) stage steps per round plus PP stage hand-offs.
PointResult evaluate_point(const GpuFixed& g, const perf::PerfModelShape& shape, std::uint64_t per_sequence_kv,
                           std::uint64_t context, std::uint64_t batch, const FitPolicy& policy);

}  // namespace vramplan::plan
