#include "commands.hpp"

namespace vramplan::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"version", "print the version of vramplan", run_version},
      {"models", "list the built-in model catalogue (filters: family, size, features)", run_models},
      {"inspect", "architecture, parameter counts and per-role bytes of a model", run_inspect},
      {"gpus", "list the GPU catalogue (memory, bandwidth, TFLOPS, MIG slices)", run_gpus},
      {"plan", "memory per GPU for a model, GPU and inference engine (weights, KV, activations, overheads)", run_plan},
      {"check", "does a configuration fit, with headroom? one line + exit code (0 fits, 1 not); limits, batch range", run_check},
      {"sweep", "models x precisions x GPUs x TP x context x batch -> fitting configurations ranked by rental cost", run_sweep},
      {"train", "memory per GPU for training / fine-tuning (full, LoRA, QLoRA; optimizers, ZeRO / FSDP, recomputation)", run_train},
      {"explain", "every number of a check with its formula and inputs (expected value and upper bound)", run_explain},
      {"simulate", "replay a serving workload over time: latency percentiles, throughput, KV usage, stable or overloaded", run_simulate},
      {"trial", "the batch trial ladder: per length group and batch, predicted completions, time, peak memory, first limit", run_trial},
  };
  return table;
}

const Command* find_command(std::string_view name) {
  for (const auto& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace vramplan::cli
