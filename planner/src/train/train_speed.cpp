// Training step time and run duration (train/train_speed.hpp, docs/training.md "Time").
#include "vramplan/train/train_speed.hpp"

#include <algorithm>
#include <vector>

#include "vramplan/core/text.hpp"
#include "vramplan/perf/hardware_rates.hpp"
#include "vramplan/perf/model_shape.hpp"
#include "vramplan/train/train_plan.hpp"

namespace vramplan::train {
namespace {

// Mean attended positions of a causal sequence of s tokens under a window w (0 = none): position
// p (1-based) attends min(p, w) tokens.
double mean_attended(double s, double w) {
  if (w <= 0 || s <= w) return (s + 1) / 2;
  return (w * (w + 1) / 2 + (s - w) * w) / s;
}

}  // namespace

TrainFlops training_flops(const ModelSpec& spec, const TrainRequest& r, std::uint64_t adapter_params) {
  // The performance model's shape at TP 1 / PP 1: the parameters a token multiplies (routed
  // experts at k/E, a tied embedding counted once as the output head) and the attention groups.
  std::vector<std::uint64_t> bytes;
  bytes.reserve(spec.tensors.size());
  for (const TensorInfo& t : spec.tensors) bytes.push_back(t.elements() * 2);
  const perf::PerfModelShape shape = perf::shape_from_model(spec, bytes, perf::ShapeOptions{});
  TrainFlops f;
  f.matmul = 2 * shape.active_params;
  const double s = static_cast<double>(r.seq_len);
  for (const perf::AttentionGroup& g : shape.attention)
    f.attention += g.layers * 2 * g.q_heads * (g.qk_dim + g.v_dim) * mean_attended(s, static_cast<double>(g.window));
  f.adapter = 2 * static_cast<double>(adapter_params);
  const bool frozen = r.method != Method::Full;
  f.executed = frozen ? 2 * f.matmul + 3 * f.attention + 3 * f.adapter : 3 * (f.matmul + f.attention);
  f.formula = frozen ? "2 f + 3 a + 3 t" : "3 (f + a)";
  if (r.recompute == Recompute::Full) {
    f.executed += f.matmul + f.attention + f.adapter;
    f.formula += frozen ? " + (f + a + t) recomputed" : " + (f + a) recomputed";
  } else if (r.recompute == Recompute::Selective && r.selective_op) {
    // torchtitan's op-level policy saves the attention core and every other matmul's output
    // (train/activations.hpp): about half the GEMMs run again, the attention does not.
    f.executed += f.matmul / 2;
    f.formula += " + f/2 recomputed (op-level: every second matmul)";
  } else if (r.recompute == Recompute::Selective) {
    f.executed += f.attention;
    f.formula += " + a recomputed";
  }
  return f;
}

std::optional<TrainSpeed> training_speed(const TrainFlops& flops, const TrainRequest& r, const GpuSpec& gpu,
                                         const perf::PerfDefaults& defaults, std::string& why) {
  const std::string dtype = r.precision == PrecisionRecipe::Fp32 ? "fp32" : "bf16";
  const perf::DatasheetFigures sheet = perf::datasheet_figures(gpu, dtype, defaults);
  if (!sheet.tensor_tflops) {
    why = "no dense " + dtype + " tensor figure for " + gpu.id + " in data/gpus.json";
    return std::nullopt;
  }
  TrainSpeed sp;
  sp.flops = flops;
  sp.peak_label = sheet.tflops_label;
  sp.peak_tflops = *sheet.tensor_tflops;
  sp.efficiency = defaults.training_efficiency;
  sp.gpus = r.parallel.gpus;
  sp.tokens_per_step = r.micro_batch * r.seq_len * r.grad_accum * r.parallel.dp();
  const double step_flops = flops.executed * static_cast<double>(sp.tokens_per_step);
  const double peak = sp.peak_tflops * 1e12 * static_cast<double>(sp.gpus);
  sp.step_s = step_flops / (peak * sp.efficiency.expected);
  sp.step_s_fast = step_flops / (peak * sp.efficiency.max);
  sp.step_s_slow = step_flops / (peak * sp.efficiency.min);
  const double tokens = static_cast<double>(sp.tokens_per_step);
  sp.tokens_per_s = tokens / sp.step_s;
  sp.tokens_per_s_fast = tokens / sp.step_s_fast;
  sp.tokens_per_s_slow = tokens / sp.step_s_slow;
  if (r.method == Method::Qlora)
    sp.notes.push_back("QLoRA: the 4-bit base is dequantised in every forward and backward; that time is not "
                       "counted (bitsandbytes / torchao kernels), expect the slow end or below");
  if (r.offload.optimizer || r.offload.params)
    sp.notes.push_back("CPU offload: the host transfers and the CPU optimizer step are not counted");
  if (gpu.vendor == "amd") sp.notes.push_back("training efficiency from NVIDIA / TPU runs, unvalidated on AMD");
  return sp;
}

TrainRun training_run(const TrainSpeed& speed, double tokens) {
  TrainRun run;
  run.tokens = tokens;
  run.hours = tokens / speed.tokens_per_s / 3600;
  run.hours_fast = tokens / speed.tokens_per_s_fast / 3600;
  run.hours_slow = tokens / speed.tokens_per_s_slow / 3600;
  run.gpu_hours = run.hours * static_cast<double>(speed.gpus);
  return run;
}

}  // namespace vramplan::train
