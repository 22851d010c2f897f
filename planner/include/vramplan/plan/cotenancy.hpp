// vramplan/plan/cotenancy.hpp — several engine instances ("tenants") on one GPU, or one per slice
// of a MIG layout, checked together (`vramplan check --tenant ... --tenant ...`).
//
// Tenants start in the order given; each sees the memory the earlier ones hold as used:
//   free at start(k) = device total - sum of what tenants 1..k-1 hold
// How an engine sizes itself with others on the GPU (table in cotenancy.cpp, with sources):
//   vLLM   sizes its budget from the device TOTAL x its own gpu_memory_utilization, and refuses to
//          start when free < ceil(total x utilization) (vllm/v1/worker/utils.py request_memory;
//          the message is vLLM's). Co-tenants therefore split the card by utilization.
//   SGLang sizes from the memory FREE when it starts x mem_fraction_static
//          (model_runner_kv_cache_mixin.py profile_max_num_token: total_gpu_memory is the
//          pre-load free memory), TensorRT-LLM from free memory x free_gpu_memory_fraction,
//          HF / llama.cpp allocate what they need: all of them are planned on the free memory.
// What a tenant holds while serving = its engine plan (weights + the whole preallocated KV pool
// for paged engines, KV for the workload otherwise + activation + overheads).
// Three-valued as `check` (plan/fit.hpp), with the same bounds (data/accuracy_bounds.json):
//   DOES NOT FIT — on the expected values a tenant does not start or does not fit on its own
//                  (engine refuses, KV for its workload exceeds its pool), the tenants' sum
//                  exceeds the device, or the device keeps less than --headroom;
//   MARGINAL     — it fits on the expected values, but not when the start order is replayed on
//                  the upper bounds: every tenant holds its upper-bound figure (FitFigures::held
//                  of its `upper` side), so the later ones see less free memory (vLLM may refuse,
//                  the others size from less), and every tenant must be FITS on its own;
//   FITS         — it fits on the upper bounds too.
// Each tenant runs on one GPU (TP = PP = 1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/plan/evaluate.hpp"

namespace vramplan::plan {

//! One engine instance as the user describes it.
struct TenantSpec {
  std::string model;
  std::string engine = "vllm";
  memory::EngineArgs flags;  //!< engine flags as typed (aliases allowed; checked against the engine)
  std::optional<std::string> weights;
  std::optional<std::uint64_t> batch, context;
};

//! "model=llama-3.1-8b,engine=vllm,gpu-memory-utilization=0.45,batch=8,context=4096": the keys
//! model, engine, weights, batch and context; every other key is an engine flag (a key without
//! a value is a switch). Throws Error(Usage) naming the text.
TenantSpec parse_tenant(std::string_view text);
//! A vramplan.tenants/1 file: {"schema": "vramplan.tenants/1", "tenants": [{"model": ...,
//! "engine": ..., "weights": ..., "batch": N, "context": N, "flags": {"flag": "value"}}]}.
std::vector<TenantSpec> load_tenants_file(const std::filesystem::path& file);

struct CotenancyRequest {
  std::string gpu;                       //!< the card (or one MIG slice / custom:SIZE when no layout)
  std::optional<Bytes> gpu_memory;       //!< --gpu-memory
  std::vector<std::string> mig_layout;   //!< MIG profiles, one tenant per slice; empty = shared card
  std::vector<TenantSpec> tenants;
  FitPolicy policy;                      //!< headroom is required of each device (card or slice)
};

struct TenantOutcome {
  std::size_t index = 0;      //!< 1-based, start order
  std::string model_id, engine, engine_version;
  std::size_t device = 0;     //!< index into CotenancyOutcome::devices
  Bytes free_at_start;        //!< device total - what earlier tenants on it hold
  Bytes sized_from;           //!< the total the engine sized itself from
  std::string sizing;         //!< how (the table row's rule)
  bool started = true;        //!< false: the engine refuses to start (vLLM's free-memory check)
  Evaluation eval;            //!< its own fit (valid when started)
  Bytes held;                 //!< what it holds while serving (0 when it did not start)
  Verdict verdict = Verdict::DoesNotFit;
  bool fits = false;          //!< FITS, or MARGINAL unless --conservative
  std::string reason;         //!< DOES NOT FIT: what breaks; MARGINAL: what breaks on the upper bounds
  //! The upper-bound replay: free memory at its start and what it holds (0 when it does not
  //! start there).
  Bytes upper_free_at_start, upper_held;
};

struct DeviceOutcome {
  GpuSpec gpu;                //!< the card or the MIG slice
  std::vector<std::size_t> tenants;  //!< indices into CotenancyOutcome::tenants
  Bytes held;                 //!< sum over its tenants
  std::int64_t headroom_bytes = 0;
  double headroom_fraction = 0;
  Verdict verdict = Verdict::DoesNotFit;
  bool fits = false;          //!< FITS, or MARGINAL unless --conservative
  std::string reason;         //!< DOES NOT FIT: the first failure; MARGINAL: the first on the upper bounds
  Bytes upper_held;           //!< sum over its tenants on the upper bounds
  std::int64_t upper_headroom_bytes = 0;
};

struct CotenancyOutcome {
  GpuSpec card;
  std::vector<std::string> mig_layout;
  double required_headroom = 0.10;
  bool conservative = false;
  std::vector<TenantOutcome> tenants;
  std::vector<DeviceOutcome> devices;
  Verdict verdict = Verdict::DoesNotFit;  //!< the worst device's
  bool fits = false;                      //!< FITS, or MARGINAL unless --conservative
  std::string line;  //!< the one-line verdict
};

CotenancyOutcome run_cotenancy(const CotenancyRequest& request, const DataRoot& root);

//! vLLM's start-up refusal (vllm/v1/worker/utils.py request_memory) with vLLM's number format:
//! "Free memory on device cuda:0 (8.91/79.19 GiB) on startup is less than desired GPU memory
//! utilization (0.5, 39.6 GiB). Decrease GPU memory utilization or reduce GPU memory used by
//! other processes." — "" when free >= ceil(total x utilization).
std::string vllm_startup_refusal(Bytes free, Bytes total, double utilization);

//! vramplan.check-tenants/1 (docs/schemas/check-tenants.schema.json).
nlohmann::json cotenancy_json(const CotenancyOutcome& outcome);
std::string cotenancy_text(const CotenancyOutcome& outcome, bool markdown);

}  // namespace vramplan::plan
