#include "vramplan/plan/session.hpp"

#include "vramplan/core/error.hpp"
#include "vramplan/model/load.hpp"

namespace vramplan::plan {

PlanSession::PlanSession(const DataRoot& root, const std::string& model, const std::string& engine_spec)
    : PlanSession(root, model, memory::make_engine(engine_spec, root.data())) {}

PlanSession::PlanSession(const DataRoot& root, const std::string& model, std::unique_ptr<memory::Engine> engine)
    : root_(root),
      quant_(model.empty() ? throw Error(ErrorKind::Usage, "--model is required")
                           : QuantCatalog::load(root.data_file("quant_formats.json"), root.data_file("quant_schemes.json"))),
      model_(load_model(model, root, quant_)),
      gpus_(GpuCatalog::load(root.data_file("gpus.json"))),
      compat_(compat::CompatRules::load(root.data() / "compat")),
      engine_(engine ? std::move(engine) : throw Error(ErrorKind::Internal, "PlanSession: no engine")) {
  const auto options = engine_->options();
  tp_flag_ = memory::flag_with_alias(options, "tp");
  pp_flag_ = memory::flag_with_alias(options, "pp");
  context_flag_ = memory::context_flag_of(options);
}

GpuSpec PlanSession::device(const std::string& gpu, const std::optional<Bytes>& memory) const {
  if (gpu.empty()) throw_usage("--gpu is required");
  if (gpu != "cpu") {
    GpuSpec spec = gpus_.resolve_one(gpu);
    require_plannable(spec);
    return memory ? with_reported_total(std::move(spec), *memory) : spec;
  }
  // As memory::run_plan: the llama.cpp engine keys its CPU device on the id "cpu".
  if (engine_->name() != "llamacpp")
    throw_usage("--gpu cpu is a CPU-only llama.cpp run; " + std::string(engine_->name()) +
                " runs on GPUs (use --engine llamacpp, or name a GPU)");
  if (!memory) throw_usage("--gpu cpu needs --gpu-memory SIZE: the host memory the run may use");
  GpuSpec host;
  host.id = "cpu";
  host.name = "CPU (host memory)";
  host.vendor = "unknown";
  host.reported_basis = MemoryBasis::UserSupplied;
  host.reported_note = "--gpu-memory";
  return with_reported_total(host, *memory);
}

Parallel PlanSession::parallel_of(const memory::EngineArgs& args) const {
  Parallel p;
  if (!tp_flag_.empty()) p.tp = memory::arg_u64(args, tp_flag_).value_or(1);
  if (!pp_flag_.empty()) p.pp = memory::arg_u64(args, pp_flag_).value_or(1);
  if (p.tp == 0 || p.pp == 0) throw_usage("tensor / pipeline parallel size must be >= 1");
  return p;
}

memory::EngineArgs PlanSession::with_parallel(memory::EngineArgs args, const Parallel& p) const {
  const auto set = [&](const std::string& flag, std::uint64_t value, const char* what) {
    if (flag.empty()) {
      if (value > 1)
        throw_usage(std::string(engine_->name()) + " has no " + what + " option; cannot plan " + what + " " +
                    std::to_string(value));
      return;
    }
    if (value == 1) args.erase(flag);
    else args[flag] = std::to_string(value);
  };
  set(tp_flag_, p.tp, "tensor-parallel");
  set(pp_flag_, p.pp, "pipeline-parallel");
  return args;
}

memory::EngineArgs PlanSession::without_context(memory::EngineArgs args) const {
  if (!context_flag_.empty()) args.erase(context_flag_);
  return args;
}

std::uint64_t PlanSession::planned_context(const memory::EngineArgs& args, const memory::Workload& w) const {
  if (!context_flag_.empty())
    if (const auto v = memory::arg_u64(args, context_flag_)) return *v;
  if (w.context) return *w.context;
  // The engine's own default (HF transformers, TEI, an encoder under vLLM), the one its plan uses.
  if (const auto own = engine_->default_workload(model_, args).context) return *own;
  return model_.arch.max_position_embeddings;
}

std::uint64_t PlanSession::default_batch(const memory::EngineArgs& args) const {
  return engine_->default_workload(model_, args).batch.value_or(1);
}

memory::MemoryPlan PlanSession::plan(const GpuSpec& gpu, const memory::EngineArgs& args,
                                     const std::optional<std::string>& weights,
                                     const memory::Workload& workload) const {
  const memory::PlanInput input{model_, quant_, memory::gpu_target_of(gpu), workload, args, weights};
  return engine_->plan(input);
}

}  // namespace vramplan::plan
