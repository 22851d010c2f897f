#include "commands.hpp"

namespace vramplan::cli {

const std::vector<Command>& commands() {
  // name, summary, runner, the options --help shows (few enough for one 24-line screen; --help-all
  // lists every option), two examples (each runs as written: tests/cli/help_test.cpp).
  static const std::vector<Command> table = {
      {"version", "print the version of vramplan", run_version, {"json"},
       {"version", "version --json"}},
      {"models", "list the built-in model catalogue (filters: family, size, features)", run_models,
       {"family", "min-params", "max-params", "feature", "json"},
       {"models --family qwen3_moe", "models --feature moe --min-params 100B --json"}},
      {"inspect", "architecture, parameter counts and per-role bytes of a model", run_inspect,
       {"model", "layers", "json"},
       {"inspect --model llama-3.1-8b", "inspect --model qwen3-30b-a3b --layers"}},
      {"gpus", "list the GPU catalogue (memory, bandwidth, TFLOPS, MIG slices)", run_gpus,
       {"all", "mig", "vendor", "min-memory", "gpu", "json"},
       {"gpus", "gpus --mig --min-memory 40GiB"}},
      {"plan", "memory per GPU for a model, GPU and inference engine (weights, KV, activations, overheads)", run_plan,
       {"model", "gpu", "weights", "context", "batch", "max-model-len", "tp", "kv-cache-dtype", "gpu-memory-utilization",
        "json"},
       {"plan --model llama-3.1-8b --gpu h100-sxm-80 --max-model-len 8192",
        "plan --model qwen2.5-32b --gpu rtx-4090 --engine llamacpp --weights gguf:Q4_K_M --context 16384"}},
      {"check", "does a configuration fit, with headroom? one line + exit code (0 fits, 1 not); limits, batch range", run_check,
       {"model", "gpu", "engine", "weights", "max-model-len", "batch", "tp", "accept-marginal", "limits", "batch-range",
        "json"},
       {"check --model llama-3.1-70b --gpu h100-sxm-80 --tp 4 --max-model-len 8192",
        "check --model llama-3.1-8b --gpu l40s --max-model-len 8192 --batch-range --json"}},
      {"sweep", "models x precisions x GPUs x TP x context x batch -> fitting configurations ranked by rental cost", run_sweep,
       {"model", "gpu", "weights", "tp", "context", "batch", "engine", "max-model-len", "top", "format"},
       {"sweep --model llama-3.1-70b --gpu l40s,h100-sxm-80,h200 --context 8192 --max-model-len 8192",
        "sweep --model llama-3.1-8b,qwen2.5-32b --gpu l40s,h100-sxm-80 --weights bf16,fp8 --context 8192 "
        "--max-model-len 8192 --top 5"}},
      {"train", "memory per GPU for training / fine-tuning (full, LoRA, QLoRA; optimizers, ZeRO / FSDP, recomputation)", run_train,
       {"model", "gpu", "method", "sharding", "gpus", "seq-len", "grad-checkpointing", "json"},
       {"train --model llama-3.1-8b --gpu h100-sxm-80 --method lora --seq-len 4096",
        "train --model llama-3.1-70b --gpu h100-sxm-80 --gpus 8 --sharding fsdp --grad-checkpointing full --seq-len 4096"}},
      {"explain", "every number of a check with its formula and inputs (expected value and upper bound)", run_explain,
       {"model", "gpu", "engine", "weights", "max-model-len", "tp", "json"},
       {"explain --model llama-3.1-8b --gpu h100-sxm-80 --max-model-len 8192",
        "explain --model llama-3.1-70b --gpu h200 --max-model-len 32768 --json"}},
      {"simulate", "replay a serving workload over time: latency percentiles, throughput, KV usage, stable or overloaded", run_simulate,
       {"model", "gpu", "engine", "max-model-len", "rate", "requests", "input-len", "output-len", "json"},
       {"simulate --model llama-3.1-8b --gpu h100-sxm-80 --max-model-len 8192 --rate 5 --requests 1000",
        "simulate --model llama-3.1-8b --gpu l40s --max-model-len 8192 --concurrency 32 --requests 500 "
        "--input-len 1024 --output-len 256"}},
      {"trial", "the batch trial ladder: per length group and batch, predicted completions, time, peak memory, first limit", run_trial,
       {"model", "gpu", "engine", "max-model-len", "lengths", "batches", "compare", "format"},
       {"trial --model llama-3.1-8b --gpu l40s --max-model-len 8192",
        "trial --model llama-3.1-8b --gpu l40s --max-model-len 8192 --batches 1,2,4,8 --format csv"}},
      {"reconcile", "an engine's start-up log beside the plan of the same configuration: every component, difference, bound, cause", run_reconcile,
       {"log", "model", "gpu", "engine-arg", "update-calibration", "json"},
       {"reconcile --log tests/fixtures/logs/vllm/llama-3.1-8b-tp1.log",
        "reconcile --log tests/fixtures/logs/vllm/llama-3.1-8b-tp2.log --gpu h100-sxm-80 --json"}},
      {"report", "one self-contained HTML page for a proposal: layouts and cost, memory charts, batch table, accuracy basis", run_report,
       {"model", "gpu", "engine", "max-model-len", "simulate", "train", "out"},
       {"report --model llama-3.1-8b --gpu l40s,h100-sxm-80 --max-model-len 8192 --out /tmp/quote.html",
        "report --model llama-3.1-8b --gpu l40s,h100-sxm-80,h200 --max-model-len 8192 --context 8192 --batch 1,8,32 "
        "--simulate --rate 4 --requests 400 --train lora --out /tmp/quote-full.html"}},
  };
  return table;
}

const Command* find_command(std::string_view name) {
  for (const auto& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace vramplan::cli
