// vramplan/plan/session.hpp — everything a decision needs, loaded ONCE: the model, the quant and
// GPU catalogues and the engine profile. Decisions (fit, limits, batch range, sweep) call the
// engine's plan() many times with different GPUs, parallel sizes and workloads; going through
// memory::run_plan() would re-read every file per call, so the session holds them instead.
//
// Engine-neutral flag names: the tensor- / pipeline-parallel flags are the engine options whose
// name or alias is "tp" / "pp"; the context flag comes from the table in session.cpp.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "vramplan/compat/compat.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/io/data_root.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/model/spec.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan::plan {

//! The parallel layout of one engine instance (one model replica).
struct Parallel {
  std::uint64_t tp = 1;  //!< tensor-parallel ranks
  std::uint64_t pp = 1;  //!< pipeline stages
  std::uint64_t gpus() const { return tp * pp; }
};

class PlanSession {
 public:
  //! Loads the model (catalogue id or path), the catalogues and the engine ("vllm@0.17").
  PlanSession(const DataRoot& root, const std::string& model, const std::string& engine_spec);
  //! The same with an engine the caller already made (the CLI makes one to declare its flags:
  //! loading the engine profile twice was a measurable part of `check`).
  PlanSession(const DataRoot& root, const std::string& model, std::unique_ptr<memory::Engine> engine);

  const ModelSpec& model() const { return model_; }
  const memory::Engine& engine() const { return *engine_; }
  const GpuCatalog& gpus() const { return gpus_; }
  const QuantCatalog& quant() const { return quant_; }
  //! data/compat: asked before any memory is sized (plan/compatibility.hpp).
  const compat::CompatRules& compat() const { return compat_; }
  const DataRoot& root() const { return root_; }

  //! The engine's flag for TP / PP / max context ("tensor-parallel-size", "tp-size", ...);
  //! "" when the engine has none.
  const std::string& tp_flag() const { return tp_flag_; }
  const std::string& pp_flag() const { return pp_flag_; }
  const std::string& context_flag() const { return context_flag_; }

  //! TP / PP as set in `args` (1 when absent).
  Parallel parallel_of(const memory::EngineArgs& args) const;
  //! `args` with TP / PP replaced by `p` (flags at 1 are removed, so an engine without a
  //! TP flag still accepts TP 1). Throws Error(Usage) when the engine has no such flag and p > 1.
  memory::EngineArgs with_parallel(memory::EngineArgs args, const Parallel& p) const;
  //! `args` without the engine's context flag, so that Workload::context sets the length.
  memory::EngineArgs without_context(memory::EngineArgs args) const;
  //! The context the engine plans for: its context flag, else workload context, else the
  //! engine's default (memory::Engine::default_workload), else the model's max_position_embeddings.
  std::uint64_t planned_context(const memory::EngineArgs& args, const memory::Workload& w) const;
  //! The batch a command plans when none is given: the engine's default (sentence-transformers'
  //! encode batch of 32 under hf for a pooling model), else 1.
  std::uint64_t default_batch(const memory::EngineArgs& args) const;

  //! The device `gpu` names: a catalogue id, card/MIG-profile, custom:SIZE, or "cpu" (a
  //! llama.cpp CPU-only run on host memory: needs `memory` and the llamacpp engine). `memory`
  //! (--gpu-memory) replaces the reported total. Throws Error(Usage) / Error(UnknownName).
  GpuSpec device(const std::string& gpu, const std::optional<Bytes>& memory) const;

  //! One engine plan. The GpuTarget is built from `gpu` as run_plan() does.
  memory::MemoryPlan plan(const GpuSpec& gpu, const memory::EngineArgs& args,
                          const std::optional<std::string>& weights,
                          const memory::Workload& workload) const;

 private:
  DataRoot root_;
  QuantCatalog quant_;  // before model_: load_model reuses it for GGUF files and checkpoints
  ModelSpec model_;
  GpuCatalog gpus_;
  compat::CompatRules compat_;
  std::unique_ptr<memory::Engine> engine_;
  std::string tp_flag_, pp_flag_, context_flag_;
};

}  // namespace vramplan::plan
