// Limits of a training run by search on the full training plan (plan/train_limits.hpp).
#include "vramplan/plan/train_limits.hpp"

#include <algorithm>
#include <optional>

#include "vramplan/core/error.hpp"
#include "vramplan/memory/component.hpp"

namespace vramplan::plan {
namespace {

// train_fits on inputs already loaded: each search below plans dozens of times.
bool fits_on(const train::TrainRequest& request, const train::TrainInputs& in, std::string* reason) {
  try {
    // The variable-length replay (train/step_replay.hpp) only moves the peak reserved: a verdict on the
    // peak allocated does not need it, and the searches below plan dozens of times.
    train::TrainRequest q = request;
    if (!q.fit_on_device) q.lengths.reset();
    const train::TrainPlan p = train::plan_training(q, in);
    if (!p.fits && reason) *reason = train_overflow(p);
    return p.fits;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Usage) throw;
    if (reason) *reason = e.what();
    return false;
  }
}

// The limit search of plan/limits.cpp with a training probe: largest_fitting over `make(v)`, then
// the reason at value + 1 (or at 1 when nothing fits).
// The largest value of the request's `field` (micro_batch, seq_len) in 1..cap that fits, and
// what breaks one above it.
LimitResult search_training(std::uint64_t cap, const train::TrainRequest& request,
                            std::uint64_t train::TrainRequest::*field, const train::TrainInputs& in) {
  const auto make = [&](std::uint64_t v) {
    train::TrainRequest q = request;
    q.*field = v;
    return q;
  };
  LimitResult r;
  r.value = largest_fitting(cap, [&](std::uint64_t v) { return fits_on(make(v), in, nullptr); }, r.probes);
  r.capped = r.value == cap && cap > 0;
  if (!r.capped) {
    ++r.probes;
    fits_on(make(r.value + 1), in, &r.breaks);
  }
  return r;
}

std::string limit_size_text(Bytes b) { return format_binary(b); }

// The GPU components that keep their size from `small` GPUs (2: the gathered units exist) to `large`: what sharding over
// the data-parallel group does not split.
std::string unsharded_parts(const train::TrainPlan& small, const train::TrainPlan& large) {
  std::string out;
  for (const auto& c : large.gpu) {
    if (c.part.bytes.count() == 0) continue;
    for (const auto& s : small.gpu)
      if (s.part.name == c.part.name && s.part.bytes == c.part.bytes) {
        out += (out.empty() ? "" : ", ") + c.part.name + " " + limit_size_text(c.part.bytes);
        break;
      }
  }
  return out.empty() ? "none" : out;
}

}  // namespace

std::string train_overflow(const train::TrainPlan& p) {
  const Bytes& phase = p.peak_phase == "optimizer_step" ? p.optimizer_step : p.forward_backward;
  const memory::Component* largest = nullptr;
  for (const auto& c : p.gpu)
    if (c.phase == p.peak_phase && (!largest || c.part.bytes > largest->bytes)) largest = &c.part;
  const Bytes over(static_cast<std::uint64_t>(-std::min<std::int64_t>(p.headroom, 0)));
  const std::string peak = p.request.fit_on_device ? "peak on the device (reserved + CUDA context) " + limit_size_text(p.peak_device)
                                                   : "peak allocated " + limit_size_text(p.peak_allocated);
  std::string s = peak + " > " + limit_size_text(p.capacity) + " by " + limit_size_text(over) + ": resident " +
                  limit_size_text(p.resident) + " + " + p.peak_phase + " " + limit_size_text(phase);
  if (largest) s += " (largest: " + largest->name + " " + limit_size_text(largest->bytes) + ")";
  return s;
}

bool train_fits(const train::TrainRequest& request, const DataRoot& root, std::string* reason) {
  std::optional<train::TrainInputs> in;
  try {
    in.emplace(train::load_train_inputs(request.model, root));
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Usage) throw;
    if (reason) *reason = e.what();
    return false;
  }
  return fits_on(request, *in, reason);
}

namespace {

LimitResult max_micro_batch_on(const train::TrainRequest& request, const train::TrainInputs& in, std::uint64_t cap) {
  LimitResult r = search_training(cap, request, &train::TrainRequest::micro_batch, in);
  if (r.capped) r.cap_reason = "search limit " + std::to_string(cap);
  if (!r.breaks.empty()) r.breaks = "at micro-batch " + memory::grouped(r.value + 1) + ": " + r.breaks;
  return r;
}

LimitResult max_seq_len_on(const train::TrainRequest& request, const train::TrainInputs& in) {
  const std::uint64_t model_max = in.model.arch.max_position_embeddings;
  const std::uint64_t cap = model_max ? model_max : (1u << 24);
  LimitResult r = search_training(cap, request, &train::TrainRequest::seq_len, in);
  if (r.capped)
    r.cap_reason = model_max ? "the model's max_position_embeddings (" + std::to_string(model_max) + ")"
                             : "search limit " + std::to_string(cap);
  if (!r.breaks.empty()) r.breaks = "at " + memory::grouped(r.value + 1) + (r.value == 0 ? " token: " : " tokens: ") + r.breaks;
  return r;
}

TrainMinGpus min_gpus_on(const train::TrainRequest& request, const train::TrainInputs& in, std::uint64_t bound) {
  TrainMinGpus m;
  m.bound = bound;
  const auto& par = request.parallel;
  m.model_parallel = par.tp * par.pp * par.cp;
  const auto at = [&](std::uint64_t data_parallel) {
    train::TrainRequest q = request;
    q.parallel.gpus = data_parallel * m.model_parallel;
    return q;
  };
  // Without sharding (DDP) every rank holds everything: the peak at any data-parallel size is the
  // one at 1, so one probe answers.
  const bool replicated = request.sharding == train::Sharding::None;
  const std::uint64_t cap = m.model_parallel == 0 ? 0 : replicated ? std::min<std::uint64_t>(1, bound / m.model_parallel) : bound / m.model_parallel;
  if (cap == 0) {
    m.why_none = "TP x PP x CP = " + std::to_string(m.model_parallel) + " GPUs per replica is more than the bound";
    return m;
  }
  // fits(d) is false ... false true ... true (sharding over more ranks only lowers the per-GPU
  // peak): the largest d that does NOT fit, by the same doubling and bisection, plus one.
  const std::uint64_t largest_failing =
      largest_fitting(cap, [&](std::uint64_t d) { return !fits_on(at(d), in, nullptr); }, m.probes);
  if (largest_failing < cap) {
    m.gpus = (largest_failing + 1) * m.model_parallel;
    return m;
  }
  std::string overflow;
  ++m.probes;
  fits_on(at(cap), in, &overflow);
  if (replicated) {
    m.why_none = "sharding none (DDP) keeps every model state on every rank, so more GPUs do not lower the per-GPU peak: " + overflow;
    return m;
  }
  std::string unsharded;
  try {
    unsharded = unsharded_parts(train::plan_training(at(std::min<std::uint64_t>(2, cap)), in), train::plan_training(at(cap), in));
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Usage) throw;
    unsharded = e.what();
  }
  m.why_none = "at " + std::to_string(cap * m.model_parallel) + " GPUs " + overflow + "; " +
               std::string(train::sharding_name(request.sharding)) +
               " shards model states over the data-parallel group only; what does not shrink with more GPUs: " + unsharded;
  return m;
}

}  // namespace

LimitResult train_max_micro_batch(const train::TrainRequest& request, const DataRoot& root, std::uint64_t cap) {
  return max_micro_batch_on(request, train::load_train_inputs(request.model, root), cap);
}

LimitResult train_max_seq_len(const train::TrainRequest& request, const DataRoot& root) {
  return max_seq_len_on(request, train::load_train_inputs(request.model, root));
}

TrainMinGpus train_min_gpus(const train::TrainRequest& request, const DataRoot& root, std::uint64_t bound) {
  return min_gpus_on(request, train::load_train_inputs(request.model, root), bound);
}

GradAccum grad_accum_for(std::uint64_t global_batch, std::uint64_t micro_batch, std::uint64_t data_parallel) {
  if (global_batch == 0) throw Error(ErrorKind::Usage, "--global-batch must be > 0");
  GradAccum g;
  g.global_batch = global_batch;
  g.per_step = checked_mul(micro_batch, data_parallel);
  g.steps = ceil_div(global_batch, g.per_step);
  g.effective = checked_mul(g.steps, g.per_step);
  g.note = "global batch = micro-batch " + std::to_string(micro_batch) + " x accumulation " + std::to_string(g.steps) +
           " x data-parallel " + std::to_string(data_parallel) + " = " + std::to_string(g.effective) + " sequences";
  if (g.effective != global_batch)
    g.note += "; " + std::to_string(global_batch) + " is not a multiple of " + std::to_string(g.per_step) +
              ", so the accumulation is rounded up (" + std::to_string(global_batch) + " / " + std::to_string(g.per_step) +
              " -> " + std::to_string(g.steps) + ") and each step trains " + std::to_string(g.effective - global_batch) +
              " sequences more";
  return g;
}

TrainLimits train_limits(const train::TrainRequest& request, const train::TrainInputs& in,
                         const std::optional<GradAccum>& grad_accum) {
  TrainLimits l;
  l.seq_len = request.seq_len;
  l.micro_batch = request.micro_batch;
  l.max_micro_batch = max_micro_batch_on(request, in, kTrainMicroBatchCap);
  l.max_seq_len = max_seq_len_on(request, in);
  l.min_gpus = min_gpus_on(request, in, kTrainGpuBound);
  l.grad_accum = grad_accum;
  return l;
}

nlohmann::json train_limits_json(const TrainLimits& l, const train::TrainRequest& r) {
  using nlohmann::json;
  const auto limit = [](const LimitResult& x) {
    return json{{"value", x.value},
                {"capped", x.capped},
                {"cap_reason", x.capped ? json(x.cap_reason) : json(nullptr)},
                {"breaks", x.breaks.empty() ? json(nullptr) : json(x.breaks)},
                {"probes", x.probes}};
  };
  json micro = limit(l.max_micro_batch), seq = limit(l.max_seq_len);
  micro["at_seq_len"] = l.seq_len;
  seq["at_micro_batch"] = l.micro_batch;
  json accum = nullptr;
  if (l.grad_accum)
    accum = {{"global_batch", l.grad_accum->global_batch}, {"per_micro_step", l.grad_accum->per_step},
             {"steps", l.grad_accum->steps}, {"effective_global_batch", l.grad_accum->effective},
             {"rounded", l.grad_accum->effective != l.grad_accum->global_batch}, {"note", l.grad_accum->note}};
  return {{"search", "each probe a full training plan and its fit (peak allocated <= capacity); doubling, then bisection"},
          {"max_micro_batch", micro},
          {"max_seq_len", seq},
          {"min_gpus", {{"sharding", train::sharding_name(r.sharding)},
                        {"gpus", l.min_gpus.gpus ? json(*l.min_gpus.gpus) : json(nullptr)},
                        {"model_parallel", l.min_gpus.model_parallel},
                        {"bound", l.min_gpus.bound},
                        {"why_none", l.min_gpus.gpus ? json(nullptr) : json(l.min_gpus.why_none)},
                        {"probes", l.min_gpus.probes}}},
          {"grad_accum", accum}};
}

std::string train_limits_text(const TrainLimits& l, const train::TrainRequest& r) {
  const auto line = [](const LimitResult& x) {
    if (x.value == 0) return "none (" + x.breaks + ")";
    std::string s = memory::grouped(x.value);
    s += x.capped ? " (" + x.cap_reason + ")" : " (" + x.breaks + ")";
    return s;
  };
  std::string s = "\nLimits (each probe a full training plan; doubling then bisection):\n";
  s += "  max micro-batch at " + memory::grouped(l.seq_len) + " tokens: " + line(l.max_micro_batch) + "\n";
  s += "  max sequence length at micro-batch " + std::to_string(l.micro_batch) + ": " + line(l.max_seq_len) + "\n";
  s += "  min GPUs with sharding " + std::string(train::sharding_name(r.sharding)) +
       (l.min_gpus.model_parallel > 1 ? " (TP x PP x CP = " + std::to_string(l.min_gpus.model_parallel) + " per replica)" : "") + ": ";
  const std::string searched = r.sharding == train::Sharding::None ? "replicated: the same peak at any count"
                                                                    : "searched up to " + std::to_string(l.min_gpus.bound);
  s += l.min_gpus.gpus ? std::to_string(*l.min_gpus.gpus) + " (" + searched + ")"
                       : "none within " + std::to_string(l.min_gpus.bound) + " (" + l.min_gpus.why_none + ")";
  s += "\n";
  if (l.grad_accum) s += "  gradient accumulation: " + std::to_string(l.grad_accum->steps) + " steps (" + l.grad_accum->note + ")\n";
  return s;
}

}  // namespace vramplan::plan
