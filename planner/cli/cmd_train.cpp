// `vramplan train` — peak GPU memory of one training / fine-tuning step per GPU: model states
// (weights, master weights, gradients, optimizer states) after ZeRO / FSDP sharding, TP / PP / CP
// and offload; activations with recomputation; logits and loss; LoRA / DoRA / QLoRA adapters
// (docs/training.md). Exit 0 whenever the inputs are valid, also when it does not fit.
#include <cmath>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "commands.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/plan/prices.hpp"
#include "vramplan/core/table.hpp"
#include "vramplan/sim/workload_spec.hpp"
#include "vramplan/train/train_plan.hpp"

namespace vramplan::cli {
namespace {

std::string train_text(const train::TrainPlan& p) {
  const auto& r = p.request;
  std::string s = "Training memory per GPU: " + p.model_id + " on " + p.gpu_id + " x" + std::to_string(r.parallel.gpus) +
                  " (" + std::string(train::method_name(r.method)) + ", " + std::string(train::optimizer_name(r.optimizer)) +
                  ", " + std::string(train::precision_name(r.precision)) + ", sharding " +
                  std::string(train::sharding_name(r.sharding)) + ", micro-batch " + std::to_string(r.micro_batch) + " x " +
                  std::to_string(r.seq_len) + " tokens, recompute " + std::string(train::recompute_name(r.recompute)) + ")\n";
  s += "Parameters: " + memory::grouped(p.total_params) + " total, " + memory::grouped(p.trainable_params) + " trainable\n\n";
  Table t({{"component"}, {"phase"}, {"GiB", Align::Right}, {"formula", Align::Wrap}});
  for (const auto& c : p.gpu) t.add_row({c.part.name, c.phase, format_gib(c.part.bytes).substr(0, format_gib(c.part.bytes).find(' ')), c.part.explain});
  s += t.render_text();
  s += "\nresident " + format_gib(p.resident) + " + max(forward/backward " + format_gib(p.forward_backward) +
       ", optimizer step " + format_gib(p.optimizer_step) + ")\n";
  s += "Peak allocated: " + format_gib(p.peak_allocated) + " (" + p.peak_phase + ") of " + format_gib(p.capacity) + " -> " +
       (p.fits ? "FITS" : "DOES NOT FIT") + ", headroom " +
       (p.headroom < 0 ? "-" + format_gib(Bytes(static_cast<std::uint64_t>(-p.headroom))) : format_gib(Bytes(static_cast<std::uint64_t>(p.headroom)))) + "\n";
  for (const auto& c : p.unified) s += "Unified memory (paged): " + c.name + " " + format_gib(c.bytes) + " — " + c.explain + "\n";
  for (const auto& c : p.cpu) s += "CPU per rank (offload): " + c.name + " " + format_gib(c.bytes) + " — " + c.explain + "\n";
  for (const auto& n : p.notes) s += "note: " + n + "\n";
  return s;
}

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
  if (used == 0 || scale == 0 || !(v > 0) || !std::isfinite(v * scale) || v * scale > 1e18)
    throw Error(ErrorKind::Usage, std::string(flag) + ": expected a positive token count such as 2e9, 500M or 1.5T, got '" +
                                      escape_control(text) + "'");
  return v * scale;
}

std::string range_text(double expected, double low, double high, int decimals) {
  return fixed(expected, decimals) + " [" + fixed(low, decimals) + "-" + fixed(high, decimals) + "]";
}

std::string count_range(double expected, double low, double high) {
  const auto g = [](double v) { return memory::grouped(static_cast<std::uint64_t>(std::llround(v))); };
  return g(expected) + " [" + g(low) + "-" + g(high) + "]";
}

// 1.5e9 -> "1.5 B"
std::string token_count_text(double v) {
  for (const auto& [scale, unit] : {std::pair{1e12, " T"}, std::pair{1e9, " B"}, std::pair{1e6, " M"}})
    if (v >= scale) return format_number("%.4g", v / scale) + unit;
  return memory::grouped(static_cast<std::uint64_t>(std::llround(v)));
}

std::string speed_text(const train::TrainPlan& p, const std::optional<plan::RentalCover>& cover, double margin_h) {
  if (!p.speed) return "\nTime: unknown (" + p.speed_unavailable + ")\n";
  const train::TrainSpeed& sp = *p.speed;
  std::string s = "\nTime: " + format_number("%.3g", sp.flops.executed / 1e9) + " GFLOP per trained token (" + sp.flops.formula +
                  "; f = " + format_number("%.3g", sp.flops.matmul / 1e9) + " GEMM, a = " +
                  format_number("%.3g", sp.flops.attention / 1e9) + " attention" +
                  (sp.flops.adapter > 0 ? ", t = " + format_number("%.3g", sp.flops.adapter / 1e9) + " adapter" : "") +
                  " GFLOP forward), " + sp.peak_label + " dense " + format_number("%.4g", sp.peak_tflops) +
                  " TFLOPS per GPU x training efficiency " + range_text(sp.efficiency.expected, sp.efficiency.min, sp.efficiency.max, 2) +
                  " (published utilisation, not fitted: data/perf_defaults.json)\n";
  s += "  optimizer step of " + memory::grouped(sp.tokens_per_step) + " tokens: " +
       range_text(sp.step_s, sp.step_s_fast, sp.step_s_slow, 2) + " s; " +
       count_range(sp.tokens_per_s, sp.tokens_per_s_slow, sp.tokens_per_s_fast) + " tokens/s on " +
       std::to_string(sp.gpus) + (sp.gpus == 1 ? " GPU\n" : " GPUs\n");
  if (p.run) {
    s += "  run of " + token_count_text(p.run->tokens) + " tokens: " +
         range_text(p.run->hours, p.run->hours_fast, p.run->hours_slow, 1) + " h, " + fixed(p.run->gpu_hours, 1) + " GPU-hours";
    if (cover) {
      s += "; with " + fixed(margin_h, 0) + " h margin: ";
      s += cover->period.empty() ? "no rental period given covers it" : "rent for " + cover->period;
      // The basis lists every quote (JSON has it whole): its summary before the list.
      if (cover->usd) s += " at $" + fixed(*cover->usd, 0) + " (" + cover->price_basis.substr(0, cover->price_basis.find(" (")) + ")";
    }
    s += "\n";
  }
  for (const auto& n : sp.notes) s += "  note: " + n + "\n";
  return s;
}

}  // namespace

int run_train(const std::vector<std::string>& args) {
  po::options_description desc("Options");
  desc.add_options()
      ("model", po::value<std::string>(), "model: catalogue id, config.json or directory")
      ("gpu", po::value<std::string>(), "GPU catalogue id or custom:<size>")
      ("gpu-memory", po::value<std::string>(), "runtime-reported total per GPU (e.g. 79.18GiB)")
      ("method", po::value<std::string>()->default_value("full"), "full | lora | dora | qlora (pretraining = full)")
      ("precision", po::value<std::string>()->default_value("bf16"),
       "bf16 (pure bf16, torchtune/torchtitan) | amp (fp32 params + autocast, HF Trainer) | mixed (bf16 + fp32 master, DeepSpeed) | fp32")
      ("optimizer", po::value<std::string>()->default_value("adamw"),
       "adamw | adamw-8bit | paged-adamw | paged-adamw-8bit | adafactor | sgd | lion")
      ("fused-optimizer", "torch's fused optimizer step (no foreach temporaries)")
      ("sharding", po::value<std::string>()->default_value("none"), "none | ddp | zero1 | zero2 | zero3 | fsdp | fsdp2 | fsdp-grad-op | hsdp")
      ("offload", po::value<std::string>()->default_value("none"), "none | optimizer | params | all (CPU offload)")
      ("gpus", po::value<std::uint64_t>()->default_value(1), "GPUs in the run")
      ("gpus-per-node", po::value<std::uint64_t>()->default_value(8), "GPUs per node (hybrid sharding)")
      ("tp", po::value<std::uint64_t>()->default_value(1), "tensor-parallel size")
      ("pp", po::value<std::uint64_t>()->default_value(1), "pipeline-parallel size")
      ("cp", po::value<std::uint64_t>()->default_value(1), "context-parallel size")
      ("sequence-parallel", "sequence parallelism with TP (norm / residual activations split too)")
      ("micro-batch", po::value<std::uint64_t>()->default_value(1), "sequences per micro-batch")
      ("seq-len", po::value<std::uint64_t>()->default_value(2048), "tokens per sequence (padded / packed length)")
      ("grad-accum", po::value<std::uint64_t>()->default_value(1), "gradient-accumulation steps (> 1 keeps gradients resident)")
      ("grad-checkpointing", po::value<std::string>()->default_value("none"), "none | selective | full activation recomputation")
      ("attention", po::value<std::string>()->default_value("flash"), "flash | sdpa | eager (eager keeps the s x s scores)")
      ("loss-chunks", po::value<std::uint64_t>()->default_value(1), "cross-entropy chunks (torchtune: 8)")
      ("loss", po::value<std::string>()->default_value("fp32"),
       "fp32 (transformers >= 4.46, torchtune) | bf16 (LitGPT bf16-true) | hf-legacy (transformers <= 4.45: fp32 logits + shifted copy)")
      ("upcast-unquantized", "PEFT prepare_model_for_kbit_training: the unquantized frozen parameters in fp32")
      ("lora-rank", po::value<std::uint64_t>()->default_value(8), "LoRA rank")
      ("lora-targets", po::value<std::string>()->default_value("q_proj,v_proj"), "target modules (PEFT / torchtune / LitGPT names, or all-linear)")
      ("lora-dropout", "LoRA dropout > 0 (keeps a dropped copy of each adapted input)")
      ("base-format", po::value<std::string>(), "frozen base: bf16 | bnb-int8 | nf4 | nf4-dq (QLoRA default nf4-dq)")
      ("quantize-targets-only", "quantize only the adapted linears (torchtune QLoRA)")
      ("tokens", po::value<std::string>(), "tokens the run trains on (2e9, 500M, 1.5T): its duration and rental")
      ("epochs", po::value<double>(), "epochs over --dataset-tokens (instead of --tokens)")
      ("dataset-tokens", po::value<std::string>(), "tokens in one epoch of the dataset")
      ("margin", po::value<std::string>()->default_value("24h"), "time added to the run for setup, checkpoints and export")
      ("periods", po::value<std::string>()->default_value("3d,7d,30d"), "rental periods to price")
      ("prices", po::value<std::string>(), "your own GPU prices (vramplan.prices/1) instead of data/prices.json");
  add_common_options(desc);
  po::variables_map vm;
  if (!parse_args("train", "--model M --gpu G [--method full|lora|qlora] [--optimizer O] [--format json]", desc, args, vm))
    return 0;
  const auto opts = read_common_options(vm);

  train::TrainRequest r;
  if (vm.count("model")) r.model = vm["model"].as<std::string>();
  if (vm.count("gpu")) r.gpu = vm["gpu"].as<std::string>();
  if (vm.count("gpu-memory")) r.gpu_memory = parse_gpu_memory(vm["gpu-memory"].as<std::string>(), "--gpu-memory");
  r.method = train::method_from_name(vm["method"].as<std::string>());
  r.precision = train::precision_from_name(vm["precision"].as<std::string>());
  r.optimizer = train::optimizer_from_name(vm["optimizer"].as<std::string>());
  r.foreach_step = !vm.count("fused-optimizer");
  r.sharding = train::sharding_from_name(vm["sharding"].as<std::string>());
  const auto offload = vm["offload"].as<std::string>();
  if (offload != "none" && offload != "optimizer" && offload != "params" && offload != "all")
    throw Error(ErrorKind::Usage, "--offload must be none, optimizer, params or all");
  r.offload.optimizer = offload == "optimizer" || offload == "all";
  r.offload.params = offload == "params" || offload == "all";
  r.parallel.gpus = vm["gpus"].as<std::uint64_t>();
  r.parallel.gpus_per_node = vm["gpus-per-node"].as<std::uint64_t>();
  r.parallel.tp = vm["tp"].as<std::uint64_t>();
  r.parallel.pp = vm["pp"].as<std::uint64_t>();
  r.parallel.cp = vm["cp"].as<std::uint64_t>();
  r.sequence_parallel = vm.count("sequence-parallel") > 0;
  r.micro_batch = vm["micro-batch"].as<std::uint64_t>();
  r.seq_len = vm["seq-len"].as<std::uint64_t>();
  r.grad_accum = vm["grad-accum"].as<std::uint64_t>();
  r.recompute = train::recompute_from_name(vm["grad-checkpointing"].as<std::string>());
  r.attention = train::attention_from_name(vm["attention"].as<std::string>());
  r.loss_chunks = vm["loss-chunks"].as<std::uint64_t>();
  if (r.loss_chunks == 0) throw Error(ErrorKind::Usage, "--loss-chunks must be > 0");
  r.loss = train::loss_from_name(vm["loss"].as<std::string>());
  r.adapter.upcast_unquantized = vm.count("upcast-unquantized") > 0;
  r.adapter.rank = vm["lora-rank"].as<std::uint64_t>();
  r.adapter.targets = vm["lora-targets"].as<std::string>();
  r.adapter.dropout = vm.count("lora-dropout") > 0;
  r.adapter.quantize_targets_only = vm.count("quantize-targets-only") > 0;
  r.adapter.base_format = vm.count("base-format") ? vm["base-format"].as<std::string>()
                                                  : (r.method == train::Method::Qlora ? "nf4-dq" : "bf16");
  if (vm.count("tokens") && (vm.count("epochs") || vm.count("dataset-tokens")))
    throw Error(ErrorKind::Usage, "--tokens and --epochs / --dataset-tokens: give one or the other");
  if (vm.count("epochs") != vm.count("dataset-tokens"))
    throw Error(ErrorKind::Usage, "--epochs and --dataset-tokens go together");
  if (vm.count("tokens")) r.run_tokens = parse_token_count(vm["tokens"].as<std::string>(), "--tokens");
  if (vm.count("epochs")) {
    const double epochs = vm["epochs"].as<double>();
    if (!(epochs > 0) || !std::isfinite(epochs)) throw Error(ErrorKind::Usage, "--epochs must be a positive number");
    r.run_tokens = epochs * parse_token_count(vm["dataset-tokens"].as<std::string>(), "--dataset-tokens");
  }
  const double margin_h = sim::parse_duration(vm["margin"].as<std::string>(), "--margin") / 3600;
  const auto periods = plan::parse_periods(vm["periods"].as<std::string>());
  const auto plan = train::plan_training(r, data_root());
  nlohmann::json doc = train::train_json(plan);
  std::optional<plan::RentalCover> cover;
  if (plan.run) {
    const plan::PriceBook prices = plan::load_price_book(
        data_root(), vm.count("prices") ? std::optional<std::filesystem::path>(vm["prices"].as<std::string>()) : std::nullopt);
    const double needed = plan.run->hours + margin_h;
    cover = plan::cover_hours(plan.gpu_id, r.parallel.gpus, needed, prices, periods);
    doc["run"]["rental"] = {{"needed_hours", needed},
                            {"period", cover->period.empty() ? nlohmann::json(nullptr) : nlohmann::json(cover->period)},
                            {"usd", cover->usd ? nlohmann::json(*cover->usd) : nlohmann::json(nullptr)},
                            {"price_basis", cover->usd ? nlohmann::json(cover->price_basis) : nlohmann::json(nullptr)}};
  }
  emit(opts, doc, train_text(plan) + speed_text(plan, cover, margin_h));
  return 0;
}

}  // namespace vramplan::cli
