// `vramplan train` — peak GPU memory of one training / fine-tuning step per GPU: model states
// (weights, master weights, gradients, optimizer states) after ZeRO / FSDP sharding, TP / PP / CP
// and offload; activations with recomputation; logits and loss; LoRA / DoRA / QLoRA adapters
// (docs/training.md). Exit 0 whenever the inputs are valid, also when it does not fit.
#include <cmath>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "commands.hpp"
#include "train_options.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/plan/prices.hpp"
#include "vramplan/plan/train_limits.hpp"
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
                  std::to_string(r.seq_len) + " tokens, recompute " +
                  // The name JSON's setup.recompute gives (torchtitan's op-level policy is its own).
                  std::string(r.recompute == train::Recompute::Selective && r.selective_op ? "selective-op"
                                                                                         : train::recompute_name(r.recompute)) +
                  ")\n";
  s += "Parameters: " + memory::grouped(p.total_params) + " total, " + memory::grouped(p.trainable_params) + " trainable\n\n";
  Table t({{"component"}, {"phase"}, {"GiB", Align::Right}, {"formula", Align::Wrap}});
  for (const auto& c : p.gpu) t.add_row({c.part.name, c.phase, format_gib(c.part.bytes).substr(0, format_gib(c.part.bytes).find(' ')), c.part.explain});
  s += t.render_text();
  s += "\nresident " + format_gib(p.resident) + " + max(forward/backward " + format_gib(p.forward_backward) +
       ", optimizer step " + format_gib(p.optimizer_step) + ")\n";
  s += "Peak allocated: " + format_gib(p.peak_allocated) + " (" + p.peak_phase + ") of " + format_gib(p.capacity) + " -> " +
       (p.fits ? "FITS" : "DOES NOT FIT") + ", headroom " +
       (p.headroom < 0 ? "-" + format_gib(Bytes(static_cast<std::uint64_t>(-p.headroom))) : format_gib(Bytes(static_cast<std::uint64_t>(p.headroom)))) + "\n";
  s += "Peak reserved: " + format_gib(p.reserved.peak_reserved) + " (PyTorch caching allocator: " + p.reserved.explain + ")\n";
  s += "Peak on the device: " + format_gib(p.peak_device) + " (peak reserved + CUDA context " + format_gib(p.cuda_context) + ")" +
       (r.fit_on_device ? ": the FITS verdict above uses this figure" : "") + "\n";
  for (const auto& c : p.unified) s += "Unified memory (paged): " + c.name + " " + format_gib(c.bytes) + " — " + c.explain + "\n";
  for (const auto& c : p.cpu) s += "CPU per rank (offload): " + c.name + " " + format_gib(c.bytes) + " — " + c.explain + "\n";
  for (const auto& n : p.notes) s += "note: " + n + "\n";
  for (const auto& w : p.warnings) s += "warning: " + w + "\n";
  return s;
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
  add_train_setup_options(desc);
  desc.add_options()
      ("gpu", po::value<std::string>(), "GPU catalogue id or custom:<size>")
      ("gpus", po::value<std::uint64_t>()->default_value(1), "GPUs in the run")
      ("sharding", po::value<std::string>()->default_value("none"), "none | ddp | zero1 | zero2 | zero3 | fsdp | fsdp2 | fsdp-grad-op | hsdp")
      ("grad-checkpointing", po::value<std::string>()->default_value("none"), "none | selective | selective-op (torchtitan's op-level policy) | full activation recomputation")
      ("global-batch", po::value<std::uint64_t>(), "sequences per optimizer step over all replicas: sets the gradient accumulation (rounded up)");
  add_train_run_options(desc);
  add_common_options(desc);
  po::variables_map vm;
  if (!parse_args("train", "--model M --gpu G [--method full|lora|qlora] [--optimizer O] [--global-batch N] [--format json]",
                  desc, args, vm))
    return 0;
  const auto opts = read_common_options(vm);

  train::TrainRequest r = read_train_setup(vm);
  if (vm.count("gpu")) r.gpu = vm["gpu"].as<std::string>();
  r.parallel.gpus = vm["gpus"].as<std::uint64_t>();
  r.sharding = train::sharding_from_name(vm["sharding"].as<std::string>());
  set_recompute(r, vm["grad-checkpointing"].as<std::string>());
  r.run_tokens = read_run_tokens(vm);
  std::optional<plan::GradAccum> accum;
  if (vm.count("global-batch")) {
    if (r.micro_batch == 0) throw Error(ErrorKind::Usage, "--micro-batch must be > 0");
    accum = plan::grad_accum_for(vm["global-batch"].as<std::uint64_t>(), r.micro_batch, r.parallel.dp());
    if (!vm["grad-accum"].defaulted() && vm["grad-accum"].as<std::uint64_t>() != accum->steps)
      throw Error(ErrorKind::Usage, "--grad-accum " + std::to_string(vm["grad-accum"].as<std::uint64_t>()) + " and --global-batch " +
                                        std::to_string(accum->global_batch) + " disagree (" + accum->note + "): give one of them");
    r.grad_accum = accum->steps;
  }
  const double margin_h = sim::parse_duration(vm["margin"].as<std::string>(), "--margin") / 3600;
  const auto periods = plan::parse_periods(vm["periods"].as<std::string>());
  // One read of the model and catalogues for the plan and its limits (about 60 plans).
  train::require_model_and_gpu(r);
  const train::TrainInputs inputs = train::load_train_inputs(r.model, data_root());
  const auto plan = train::plan_training(r, inputs);
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
  // Limits: about 60 full training plans (each a few milliseconds).
  const plan::TrainLimits limits = plan::train_limits(r, inputs, accum);
  doc["limits"] = plan::train_limits_json(limits, r);
  emit(opts, doc, train_text(plan) + speed_text(plan, cover, margin_h) + plan::train_limits_text(limits, r));
  return 0;
}

}  // namespace vramplan::cli
