// Model states per GPU (train/model_states.hpp): per-tensor sizes after tensor parallelism,
// summed per pipeline stage, divided by the data-parallel shard degree where the sharding
// strategy splits them, and placed on the GPU, the CPU (offload) or unified memory (paged).
#include "vramplan/train/model_states.hpp"

#include <algorithm>
#include <map>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "train/component_part.hpp"

namespace vramplan::train {
namespace {

using memory::Component;
using memory::grouped;

bool tp_splits(const TensorInfo& t) {
  if (t.is_bias) return false;
  switch (t.role) {
    case TensorRole::AttnNorm: case TensorRole::AttnQNorm: case TensorRole::AttnKNorm:
    case TensorRole::AttnPostNorm: case TensorRole::AttnQANorm: case TensorRole::AttnKVANorm:
    case TensorRole::FfnNorm: case TensorRole::FfnPostNorm: case TensorRole::OutputNorm:
    case TensorRole::RopeFreqs: case TensorRole::FfnGateInp: case TensorRole::FfnExpProbsBias:
      return false;
    default:
      return true;
  }
}

// What one pipeline stage holds on one GPU after tensor parallelism, before sharding.
struct StageSums {
  std::uint64_t trainable = 0, frozen_params = 0, frozen_bytes = 0, optimizer = 0;
  std::map<int, std::uint64_t> block_trainable, block_frozen_bytes;  // per FSDP unit: block, or -1 = root
};

std::uint64_t stage_of(int layer, std::uint64_t num_layers, std::uint64_t pp) {
  if (layer < 0) return 0;
  if (static_cast<std::uint64_t>(layer) >= num_layers) return pp - 1;
  return static_cast<std::uint64_t>(layer) * pp / num_layers;
}

bool paged(Optimizer o) { return o == Optimizer::PagedAdamW || o == Optimizer::PagedAdamW8bit; }

// bitsandbytes keeps fp32 states for its 32-bit optimizers; torch optimizers use the param dtype.
// transformers' Adafactor upcasts a bf16 / fp16 gradient first (Adafactor.step: grad = grad.float())
// and creates its states with .to(grad), so they are fp32 whatever the parameter's dtype.
std::uint64_t state_dtype_bytes(Optimizer o, const RecipeBytes& rb) {
  return o == Optimizer::PagedAdamW || o == Optimizer::Adafactor ? 4 : rb.state;
}

std::string per_param(std::uint64_t params, std::uint64_t bytes, std::uint64_t degree) {
  std::string s = grouped(params) + " params x " + std::to_string(bytes) + " B";
  if (degree > 1) s = "ceil(" + s + " / " + std::to_string(degree) + " shards)";
  return s;
}

std::string divided(const std::string& what, std::uint64_t degree) {
  return degree > 1 ? "ceil(" + what + " / " + std::to_string(degree) + " shards)" : what;
}

}  // namespace

std::uint64_t ParamTensor::elements() const {
  std::uint64_t n = 1;
  for (auto d : shape) n = checked_mul(n, d, "tensor elements");
  return n;
}

std::vector<ParamTensor> full_model_tensors(const ModelSpec& spec) {
  std::vector<ParamTensor> out;
  const int after_last = static_cast<int>(spec.arch.num_layers);
  for (const auto& t : spec.tensors) {
    if (t.role == TensorRole::Mtp) continue;
    ParamTensor p;
    p.name = t.name;
    p.shape = t.shape;
    p.layer = t.layer ? *t.layer
                      : (t.role == TensorRole::Output || t.role == TensorRole::OutputNorm ? after_last : -1);
    p.tp_split = tp_splits(t);
    out.push_back(std::move(p));
  }
  return out;
}

RecipeBytes recipe_bytes(PrecisionRecipe precision) {
  switch (precision) {
    case PrecisionRecipe::PureBf16: return {2, 2, 0, 2};
    case PrecisionRecipe::AmpFp32Params: return {4, 4, 0, 4};
    case PrecisionRecipe::Bf16WithFp32Master: return {2, 2, 4, 4};
    case PrecisionRecipe::Fp32: return {4, 4, 0, 4};
  }
  throw Error(ErrorKind::Internal, "unknown precision recipe");
}

std::uint64_t optimizer_state_bytes(Optimizer optimizer, const std::vector<std::uint64_t>& shape,
                                    std::uint64_t n, std::uint64_t s) {
  switch (optimizer) {
    case Optimizer::AdamW:
      return checked_mul(2 * s, n);
    case Optimizer::PagedAdamW:
      return checked_mul(8, n);
    case Optimizer::SgdMomentum:
    case Optimizer::Lion:
      return checked_mul(s, n);
    case Optimizer::AdamW8bit:
    case Optimizer::PagedAdamW8bit:
      if (n < 4096) return checked_mul(8, n);
      return checked_mul(2, checked_add(n, 4 * ceil_div(n, 256)));
    case Optimizer::Adafactor: {
      if (shape.size() < 2) return checked_mul(s, n);
      const std::uint64_t cols = shape.back();
      const std::uint64_t rows = n / cols;              // prod(shape[:-1])
      const std::uint64_t col_state = n / (shape[shape.size() - 2]);  // prod(shape[:-2]) x cols
      return checked_mul(s, checked_add(rows, col_state));
    }
  }
  throw Error(ErrorKind::Internal, "unknown optimizer");
}

ModelStates model_states(const ModelStatesInput& in) {
  const auto& par = in.parallel;
  const std::uint64_t pp = par.pp, tp = par.tp;
  const std::uint64_t degree = par.shard_degree(in.sharding);  // also validates the layout
  const bool params_sharded = in.sharding == Sharding::Zero3 || in.sharding == Sharding::HybridShard;
  if (in.offload.params && !params_sharded)
    throw Error(ErrorKind::Usage, "parameter offload needs ZeRO-3 or FSDP (--sharding zero3 / fsdp / hsdp)");
  // DeepSpeed's offload_optimizer is a ZeRO option (stages 1-3, the stage_1_and_2 / stage3
  // optimizers' cpu_offload); plain DDP steps its optimizer where the parameters are.
  if (in.offload.optimizer && in.sharding == Sharding::None)
    throw Error(ErrorKind::Usage, "--offload optimizer needs ZeRO or FSDP sharding (--sharding zero1 / zero2 / zero3 / fsdp / hsdp)");
  if (in.num_layers == 0 || pp > in.num_layers)
    throw Error(ErrorKind::Usage, "pipeline stages (" + std::to_string(pp) + ") exceed the model's " +
                                      std::to_string(in.num_layers) + " layers");
  const RecipeBytes rb = recipe_bytes(in.precision);
  const std::uint64_t state_b = state_dtype_bytes(in.optimizer, rb);

  ModelStates out;
  std::vector<StageSums> stages(pp);
  for (const auto& t : in.tensors) {
    auto shape = t.shape;
    if (t.tp_split && tp > 1 && !shape.empty()) shape[0] = ceil_div(shape[0], tp);
    ParamTensor local = t;
    local.shape = shape;
    const std::uint64_t n = local.elements();
    // FSDP's root unit holds everything outside the decoder blocks (embedding, final norm, lm_head).
    const bool in_block = t.layer >= 0 && static_cast<std::uint64_t>(t.layer) < in.num_layers;
    const int unit = in_block ? t.layer : -1;
    if (t.trainable)
      out.trainable_params = checked_add(out.trainable_params, t.elements());
    else
      out.frozen_params = checked_add(out.frozen_params, t.elements());
    const std::uint64_t frozen_b = t.tp_split && tp > 1 ? ceil_div(t.frozen_bytes, tp) : t.frozen_bytes;
    auto add_to = [&](StageSums& st) {
      if (t.trainable) {
        st.trainable = checked_add(st.trainable, n);
        st.optimizer = checked_add(st.optimizer, optimizer_state_bytes(in.optimizer, shape, n, state_b));
        st.block_trainable[unit] = checked_add(st.block_trainable[unit], n);
      } else {
        st.frozen_params = checked_add(st.frozen_params, n);
        st.frozen_bytes = checked_add(st.frozen_bytes, frozen_b);
        st.block_frozen_bytes[unit] = checked_add(st.block_frozen_bytes[unit], frozen_b);
      }
    };
    add_to(stages[stage_of(t.layer, in.num_layers, pp)]);
    // A tied embedding under pipeline parallelism: the last stage keeps its own copy for the lm_head
    // (ModelStatesInput::tied_embedding), with its gradient and optimizer states; counted once in
    // the parameter totals.
    if (pp > 1 && !in.tied_embedding.empty() && t.name == in.tied_embedding) add_to(stages[pp - 1]);
  }

  // Which copies the sharding strategy splits over `degree` ranks.
  const std::uint64_t d_opt = in.sharding == Sharding::None ? 1 : degree;
  const std::uint64_t d_grad = in.sharding == Sharding::None || in.sharding == Sharding::Zero1 ? 1 : degree;
  const std::uint64_t d_param = params_sharded ? degree : 1;

  std::uint64_t best_total = 0;
  for (std::uint64_t s = 0; s < pp; ++s) {
    const auto& st = stages[s];
    std::vector<Component> gpu, cpu, unified;
    auto place = [&](bool offloaded, Component c) { (offloaded ? cpu : gpu).push_back(std::move(c)); };

    place(in.offload.params, part("weights", ceil_div(checked_mul(st.trainable, rb.weight), d_param),
                                  "trainable weights " + per_param(st.trainable, rb.weight, d_param)));
    if (st.frozen_bytes > 0)
      place(in.offload.params,
            part("frozen_weights", ceil_div(st.frozen_bytes, d_param),
                 divided("frozen base " + grouped(st.frozen_params) + " params as stored = " + grouped(st.frozen_bytes) + " B", d_param)));
    if (rb.master > 0)
      place(in.offload.optimizer, part("master_weights", ceil_div(checked_mul(st.trainable, rb.master), d_opt),
                                       "fp32 master copy " + per_param(st.trainable, rb.master, d_opt)));
    // Offloading the optimizer moves the gradient shard too: the step runs where the states are
    // (DeepSpeed ZeRO-Offload copies the partitioned gradients to the CPU; FSDP CPUOffload).
    place(in.offload.optimizer || in.offload.params,
          part("gradients", ceil_div(checked_mul(st.trainable, rb.grad), d_grad),
               "gradients " + per_param(st.trainable, rb.grad, d_grad)));
    const bool eight_bit = in.optimizer == Optimizer::AdamW8bit || in.optimizer == Optimizer::PagedAdamW8bit;
    const std::string dtype = eight_bit ? "uint8 states + fp32 absmax per 256 values"
                                        : std::to_string(state_b) + " B state dtype";
    Component opt = part("optimizer_states", ceil_div(st.optimizer, d_opt),
                         divided(std::string(optimizer_name(in.optimizer)) + " states over " + grouped(st.trainable) +
                                     " params (" + dtype + ") = " + grouped(st.optimizer) + " B",
                                 d_opt));
    if (in.offload.optimizer)
      cpu.push_back(std::move(opt));
    else if (paged(in.optimizer))
      unified.push_back(std::move(opt));
    else
      gpu.push_back(std::move(opt));

    if ((params_sharded && degree > 1) || in.offload.params) {
      // FSDP / ZeRO-3 gather one unit (decoder block) whole to run it and prefetch the next
      // (torch FSDP BackwardPrefetch.BACKWARD_PRE, DeepSpeed stage3 prefetch): two units of
      // weights, plus one unit's full gradients before the reduce-scatter. With the parameters
      // offloaded to the CPU the GPU still holds each unit while it computes, on one GPU too:
      // DeepSpeed's offload_param fetches a module's partitions to the GPU before its forward and
      // backward (runtime/zero/partitioned_param_coordinator.py fetch_sub_module, with the same
      // prefetch), FSDP's CPUOffload(offload_params=True) copies the shard to the GPU before the
      // all-gather.
      std::uint64_t unit_w = 0, unit_g = 0;
      for (const auto& [layer, n] : st.block_trainable) {
        const auto fb = st.block_frozen_bytes.count(layer) ? st.block_frozen_bytes.at(layer) : 0;
        const auto w = checked_add(checked_mul(n, rb.weight), fb);
        if (w > unit_w) { unit_w = w; unit_g = checked_mul(n, rb.grad); }
      }
      for (const auto& [layer, fb] : st.block_frozen_bytes)
        if (!st.block_trainable.count(layer) && fb > unit_w) { unit_w = fb; unit_g = 0; }
      gpu.push_back(part("gathered_units", checked_add(checked_mul(2, unit_w), unit_g),
                         "2 x largest unit's weights " + grouped(unit_w) + " B + its gradients " + grouped(unit_g) + " B"));
    }
    const std::uint64_t total = memory::sum_bytes(gpu).count();
    if (s == 0 || total > best_total) {
      best_total = total;
      out.gpu = std::move(gpu);
      out.cpu = std::move(cpu);
      out.unified = std::move(unified);
      out.pp_stage = s;
    }
  }
  out.shard_degree = degree;
  return out;
}

}  // namespace vramplan::train
