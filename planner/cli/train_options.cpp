#include "train_options.hpp"

#include <cmath>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/train/adapters.hpp"

namespace vramplan::cli {
namespace {

// The most tokens a run may train on (--tokens, --epochs x --dataset-tokens): a run of more than
// 1e18 tokens is not a plan anyone rents for.
constexpr double kMaxRunTokens = 1e18;

// "2e9", "2B", "500M", "1.5T", "100k" -> tokens; Error(Usage) naming the flag otherwise.
double parse_token_count(const std::string& text, const char* flag) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = to_lower(text.substr(used));
  const double scale = unit.empty() ? 1 : unit == "k" ? 1e3 : unit == "m" ? 1e6 : unit == "b" || unit == "g" ? 1e9 : unit == "t" ? 1e12 : 0;
  // At least one token: 1e-5 tokens had priced a run of a fraction of a step.
  if (used == 0 || scale == 0 || !(v * scale >= 1) || !std::isfinite(v * scale) || v * scale > kMaxRunTokens)
    throw Error(ErrorKind::Usage, std::string(flag) + ": expected a token count of at least 1 such as 2e9, 500M or 1.5T, got '" +
                                      escape_control(text) + "'");
  return v * scale;
}

}  // namespace

void add_train_setup_options(po::options_description& desc) {
  desc.add_options()
      ("model", po::value<std::string>(), "model: catalogue id, config.json or directory")
      ("gpu-memory", po::value<std::string>(), "runtime-reported total per GPU (e.g. 79.18GiB)")
      ("method", po::value<std::string>()->default_value("full"), "full | lora | dora | qlora (pretraining = full)")
      ("precision", po::value<std::string>()->default_value("bf16"),
       "bf16 (pure bf16, torchtune/torchtitan) | amp (fp32 params + autocast, HF Trainer) | mixed (bf16 + fp32 master, DeepSpeed) | fp32")
      ("optimizer", po::value<std::string>()->default_value("adamw"),
       "adamw | adamw-8bit | paged-adamw | paged-adamw-8bit | adafactor | sgd | lion")
      ("fused-optimizer", "torch's fused optimizer step (no foreach temporaries)")
      ("offload", po::value<std::string>()->default_value("none"), "none | optimizer | params | all (CPU offload)")
      ("gpus-per-node", po::value<std::uint64_t>()->default_value(8), "GPUs per node (hybrid sharding)")
      ("tp", po::value<std::uint64_t>()->default_value(1), "tensor-parallel size")
      ("pp", po::value<std::uint64_t>()->default_value(1), "pipeline-parallel size")
      ("cp", po::value<std::uint64_t>()->default_value(1), "context-parallel size")
      ("sequence-parallel", "sequence parallelism with TP (norm / residual activations split too)")
      ("micro-batch", po::value<std::uint64_t>()->default_value(1), "sequences per micro-batch")
      ("seq-len", po::value<std::uint64_t>()->default_value(2048), "tokens per sequence (padded / packed length)")
      ("grad-accum", po::value<std::uint64_t>()->default_value(1), "gradient-accumulation steps (> 1 keeps gradients resident)")
      ("attention", po::value<std::string>()->default_value("flash"), "flash | sdpa | eager (eager keeps the s x s scores)")
      ("loss-chunks", po::value<std::uint64_t>()->default_value(1), "cross-entropy chunks (torchtune: 8)")
      ("loss", po::value<std::string>()->default_value("fp32"),
       "fp32 (transformers >= 4.46, torchtune) | bf16 (LitGPT bf16-true) | hf-legacy (transformers <= 4.45: fp32 logits + shifted copy)")
      ("fit-on", po::value<std::string>()->default_value("allocated"),
       "allocated (FITS: peak allocated <= GPU total) | device (peak reserved + CUDA context <= GPU total: a real OOM)")
      ("upcast-unquantized", "PEFT prepare_model_for_kbit_training: the unquantized frozen parameters in fp32")
      ("previous-graph", po::value<std::uint64_t>(),
       "TOKENS: the loop holds the previous micro-batch's graph (TOKENS long; 0 = micro-batch x seq-len) through "
       "the next forward (LitGPT fit): its logits and bitsandbytes' ctx inputs")
      ("length-median", po::value<double>(),
       "TOKENS: variable-length batches, log-normal sample lengths with this median (truncated at --seq-len, a batch "
       "padded to its longest): the caching allocator is replayed over 200 steps for the peak reserved")
      ("length-sigma", po::value<double>()->default_value(0.0), "standard deviation of the log of the sample length")
      ("keeps-previous-logits", "with --length-median: the loop's logits outlive the step (torchtune's recipe)")
      ("lora-rank", po::value<std::uint64_t>()->default_value(8), "LoRA rank")
      ("lora-targets", po::value<std::string>()->default_value("q_proj,v_proj"), "target modules (PEFT / torchtune / LitGPT names, or all-linear)")
      ("lora-dropout", "LoRA dropout > 0 (keeps a dropped copy of each adapted input)")
      ("base-format", po::value<std::string>(), "frozen base: bf16 | bnb-int8 | nf4 | nf4-dq (QLoRA default nf4-dq)")
      ("quantize-targets-only", "quantize only the adapted linears (torchtune QLoRA)");
}

void add_train_run_options(po::options_description& desc) {
  desc.add_options()
      ("tokens", po::value<std::string>(), "tokens the run trains on (2e9, 500M, 1.5T): its duration and rental")
      ("epochs", po::value<double>(), "epochs over --dataset-tokens (instead of --tokens)")
      ("dataset-tokens", po::value<std::string>(), "tokens in one epoch of the dataset")
      ("margin", po::value<std::string>()->default_value("24h"), "time added to the run for setup, checkpoints and export")
      ("periods", po::value<std::string>()->default_value("3d,7d,30d"), "rental periods to price")
      ("prices", po::value<std::string>(), "your own GPU prices (vramplan.prices/1) instead of data/prices.json");
}

void set_recompute(train::TrainRequest& r, const std::string& name) {
  r.selective_op = name == "selective-op";
  r.recompute = train::recompute_from_name(r.selective_op ? "selective" : name);
}


train::TrainRequest read_train_setup(const po::variables_map& vm) {
  train::TrainRequest r;
  if (vm.count("model")) r.model = vm["model"].as<std::string>();
  if (vm.count("gpu-memory")) r.gpu_memory = parse_gpu_memory(vm["gpu-memory"].as<std::string>(), "--gpu-memory");
  r.method = train::method_from_name(vm["method"].as<std::string>());
  // Full training has no adapter: these flags would change nothing in the plan.
  if (r.method == train::Method::Full)
    for (const char* flag : {"lora-rank", "lora-targets", "lora-dropout", "base-format", "quantize-targets-only", "upcast-unquantized"})
      if (vm.count(flag) && !vm[flag].defaulted())
        throw Error(ErrorKind::Usage, std::string("--") + flag + " applies to an adapter: --method lora, dora or qlora");
  r.precision = train::precision_from_name(vm["precision"].as<std::string>());
  r.optimizer = train::optimizer_from_name(vm["optimizer"].as<std::string>());
  r.foreach_step = !vm.count("fused-optimizer");
  // torch.optim's AdamW and SGD have fused kernels (fused=True, torch/optim/sgd.py _fused_sgd);
  // transformers' Adafactor.step is a plain per-tensor loop with no fused or foreach variant.
  if (!r.foreach_step && r.optimizer == train::Optimizer::Adafactor)
    throw Error(ErrorKind::Usage, "--fused-optimizer: transformers' Adafactor has no fused step (torch.optim AdamW and SGD do)");
  const auto offload = vm["offload"].as<std::string>();
  if (offload != "none" && offload != "optimizer" && offload != "params" && offload != "all")
    throw Error(ErrorKind::Usage, "--offload must be none, optimizer, params or all");
  r.offload.optimizer = offload == "optimizer" || offload == "all";
  r.offload.params = offload == "params" || offload == "all";
  // ZeRO-Offload steps the optimizer on the CPU with DeepSpeedCPUAdam / DeepSpeedCPULion and
  // refuses a client optimizer by default (runtime/engine.py: zero_force_ds_cpu_optimizer raises
  // ZeRORuntimeException); bitsandbytes' optimizers run CUDA kernels on GPU tensors, and the
  // paged ones already move their states to the host through unified memory.
  if (r.offload.optimizer && (r.optimizer == train::Optimizer::AdamW8bit || r.optimizer == train::Optimizer::PagedAdamW ||
                              r.optimizer == train::Optimizer::PagedAdamW8bit))
    throw Error(ErrorKind::Usage, "--offload " + offload + " steps the optimizer on the CPU (DeepSpeedCPUAdam); bitsandbytes' " +
                                      std::string(train::optimizer_name(r.optimizer)) + " steps on the GPU" +
                                      (r.optimizer == train::Optimizer::AdamW8bit ? "" : " (paged states page to the host themselves)"));
  r.parallel.gpus_per_node = vm["gpus-per-node"].as<std::uint64_t>();
  if (r.parallel.gpus_per_node == 0) throw Error(ErrorKind::Usage, "--gpus-per-node must be >= 1");
  r.parallel.tp = vm["tp"].as<std::uint64_t>();
  r.parallel.pp = vm["pp"].as<std::uint64_t>();
  r.parallel.cp = vm["cp"].as<std::uint64_t>();
  r.sequence_parallel = vm.count("sequence-parallel") > 0;
  // Sequence parallelism splits the norm / residual activations over the TP group (Korthikanti §4.2.2).
  if (r.sequence_parallel && r.parallel.tp == 1)
    throw Error(ErrorKind::Usage, "--sequence-parallel splits activations over the tensor-parallel group: add --tp 2 or more");
  r.micro_batch = vm["micro-batch"].as<std::uint64_t>();
  r.seq_len = vm["seq-len"].as<std::uint64_t>();
  r.grad_accum = vm["grad-accum"].as<std::uint64_t>();
  r.attention = train::attention_from_name(vm["attention"].as<std::string>());
  r.loss_chunks = vm["loss-chunks"].as<std::uint64_t>();
  if (r.loss_chunks == 0) throw Error(ErrorKind::Usage, "--loss-chunks must be > 0");
  r.loss = train::loss_from_name(vm["loss"].as<std::string>());
  r.adapter.upcast_unquantized = vm.count("upcast-unquantized") > 0;
  if (vm.count("previous-graph")) {
    r.holds_previous_graph = true;
    r.previous_tokens = vm["previous-graph"].as<std::uint64_t>();
  }
  if (vm.count("keeps-previous-logits") && !vm.count("length-median"))
    throw Error(ErrorKind::Usage, "--keeps-previous-logits applies to variable-length batches: add --length-median");
  if (!vm["length-sigma"].defaulted() && !vm.count("length-median"))
    throw Error(ErrorKind::Usage, "--length-sigma applies to variable-length batches: add --length-median");
  if (vm.count("length-median")) {
    r.lengths = train::LengthSchedule{vm["length-median"].as<double>(), vm["length-sigma"].as<double>(), 200};
    r.keeps_previous_logits = vm.count("keeps-previous-logits") > 0;
  }
  const std::string fit_on = vm["fit-on"].as<std::string>();
  if (fit_on != "allocated" && fit_on != "device") throw Error(ErrorKind::Usage, "--fit-on must be allocated or device, not '" + fit_on + "'");
  r.fit_on_device = fit_on == "device";
  r.adapter.rank = vm["lora-rank"].as<std::uint64_t>();
  r.adapter.targets = vm["lora-targets"].as<std::string>();
  r.adapter.dropout = vm.count("lora-dropout") > 0;
  r.adapter.quantize_targets_only = vm.count("quantize-targets-only") > 0;
  r.adapter.base_format = vm.count("base-format") ? vm["base-format"].as<std::string>()
                                                  : (r.method == train::Method::Qlora ? train::kQloraDefaultBase : "bf16");
  // Both shape a quantized base only (adapters.cpp): on a bf16 / fp16 base they would change nothing.
  if (r.method != train::Method::Full && !train::quantized_base(r.adapter))
    for (const char* flag : {"quantize-targets-only", "upcast-unquantized"})
      if (vm.count(flag))
        throw Error(ErrorKind::Usage, std::string("--") + flag + " applies to a quantized base: --base-format bnb-int8, nf4 or nf4-dq");
  // What no layout can fix, checked once here: sweep --mode train would otherwise list the same
  // error as a miss of every layout.
  if (r.parallel.tp == 0 || r.parallel.pp == 0 || r.parallel.cp == 0)
    throw Error(ErrorKind::Usage, "--tp, --pp and --cp must be >= 1");
  if (r.micro_batch == 0 || r.seq_len == 0) throw Error(ErrorKind::Usage, "micro-batch and sequence length must be > 0");
  if (r.lengths && !(std::isfinite(r.lengths->median_tokens) && r.lengths->median_tokens >= 1 && std::isfinite(r.lengths->sigma) &&
                     r.lengths->sigma >= 0))
    throw Error(ErrorKind::Usage, "--length-median must be >= 1 and --length-sigma >= 0, both finite");
  if (r.method != train::Method::Full) train::lora_target_roles(r.adapter.targets);
  return r;
}

std::optional<double> read_run_tokens(const po::variables_map& vm) {
  if (vm.count("tokens") && (vm.count("epochs") || vm.count("dataset-tokens")))
    throw Error(ErrorKind::Usage, "--tokens and --epochs / --dataset-tokens: give one or the other");
  if (vm.count("epochs") != vm.count("dataset-tokens"))
    throw Error(ErrorKind::Usage, "--epochs and --dataset-tokens go together");
  if (vm.count("tokens")) return parse_token_count(vm["tokens"].as<std::string>(), "--tokens");
  if (vm.count("epochs")) {
    const double epochs = vm["epochs"].as<double>();
    if (!(epochs > 0) || !std::isfinite(epochs)) throw Error(ErrorKind::Usage, "--epochs must be a positive number");
    const double tokens = epochs * parse_token_count(vm["dataset-tokens"].as<std::string>(), "--dataset-tokens");
    if (!(tokens <= kMaxRunTokens))
      throw Error(ErrorKind::Usage, "--epochs x --dataset-tokens: at most 1e18 tokens, got " + format_number("%.4g", tokens));
    return tokens;
  }
  // Without a run length there is no duration to add a margin to or to price.
  for (const char* flag : {"margin", "periods", "prices"})
    if (vm.count(flag) && !vm[flag].defaulted())
      throw Error(ErrorKind::Usage, std::string("--") + flag +
                                        " applies to the run's duration: give --tokens N, or --epochs E with --dataset-tokens N");
  return std::nullopt;
}

}  // namespace vramplan::cli
