#include "vramplan/quant/precision_plan.hpp"

#include <algorithm>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/quant/gguf_mixture.hpp"

namespace vramplan {
namespace {

std::string module_of(const TensorInfo& t) {
  for (std::string_view suffix : {".weight", ".bias"})
    if (t.name.ends_with(suffix)) return t.name.substr(0, t.name.size() - suffix.size());
  return t.name;
}

std::size_t dims(const TensorInfo& t) {
  return static_cast<std::size_t>(std::count_if(t.shape.begin(), t.shape.end(), [](std::uint64_t d) { return d > 1; }));
}

std::string model_dtype_of(const ModelSpec& model, const QuantCatalog& catalog, const PrecisionRequest& req,
                           std::vector<std::string>& warnings) {
  if (!req.dtype.empty() && req.dtype != "auto") {
    const QuantFormat& f = catalog.get(req.dtype);
    if (!f.is_float || f.quantized) throw_usage("--dtype " + req.dtype + " is not a floating-point dtype (bf16, fp16, fp32)");
    return f.name;
  }
  if (!model.arch.torch_dtype.empty()) {
    if (const QuantFormat* f = catalog.find(model.arch.torch_dtype); f && f->is_float && !f->quantized) return f->name;
    warnings.push_back("torch_dtype '" + model.arch.torch_dtype + "' is not a known float dtype; assuming bf16");
  } else {
    warnings.push_back("the config gives no torch_dtype; assuming bf16");
  }
  return "bf16";
}

// A vLLM --quantization name: the checkpoint's own config when the method loads it (with the
// method's runtime layout, e.g. Marlin), else the method's default scheme.
WeightScheme resolve_vllm_method(const WeightScheme& s, const std::optional<CheckpointQuant>& cq,
                                 const QuantCatalog& catalog, std::vector<std::string>& warnings) {
  const VllmMethod& m = *catalog.schemes().find_vllm_method(s.vllm_method);
  const bool loads = cq && std::find(m.checkpoint_methods.begin(), m.checkpoint_methods.end(), cq->method) !=
                               m.checkpoint_methods.end();
  if (loads) {
    WeightScheme out = cq->scheme;
    if (!m.runtime_prefix.empty()) {
      const auto dash = out.format.find("-") + 1;  // "gptq-4bit-g128" -> "4bit-g128"
      std::string rest = out.format.substr(dash);
      if (rest.starts_with("marlin-")) rest = rest.substr(7);
      out = parse_weight_scheme(m.runtime_prefix + "-" + rest, catalog);
    }
    out.engine_method = m.name;
    out.source = "checkpoint quantization_config loaded by vLLM --quantization " + m.name + " (" + m.source + ")";
    return out;
  }
  if (m.scheme.empty())
    throw_usage("--weights " + s.input + ": vLLM's " + m.name + " method needs a checkpoint quantization_config");
  if (cq) warnings.push_back("vLLM method " + m.name + " does not load quant_method '" + cq->method + "'; planning its default " + m.scheme);
  WeightScheme out = parse_weight_scheme(m.scheme, catalog);
  out.engine_method = m.name;
  out.source = m.source;
  return out;
}

struct Choice {
  std::string format;
  bool quantized = false;
  std::string reason;
};

Choice choose_format(const TensorInfo& t, const WeightScheme& s, const QuantFormat& fmt, const RuleSet& rules,
                     const std::optional<CheckpointQuant>& cq, const std::string& kept_dtype) {
  if (s.rules == "dtype") return {fmt.name, false, "model dtype " + fmt.name};
  if (cq && module_ignored(module_of(t), cq->ignore))
    return {kept_dtype, false, "kept " + kept_dtype + ": listed in the checkpoint's quantization_config ignore list"};
  const bool output_quantized = cq && cq->quantize_output && t.role == TensorRole::Output;
  if (!output_quantized)
    for (const auto& rule : rules.keep) {
      const bool hit = std::find(rule.roles.begin(), rule.roles.end(), t.role) != rule.roles.end() ||
                       (rule.bias && t.is_bias) || (rule.max_dims != 0 && dims(t) <= rule.max_dims);
      if (hit) {
        const std::string as = rule.as == "dtype" ? kept_dtype : rule.as;
        return {as, false, "kept " + as + ": " + rule.reason + " (" + rule.source + ")"};
      }
    }
  if (!rules.quantize_only.empty() &&
      std::find(rules.quantize_only.begin(), rules.quantize_only.end(), t.role) == rules.quantize_only.end())
    return {kept_dtype, false, "kept " + kept_dtype + ": " + rules.only_reason + " (" + rules.source + ")"};
  // Stacked expert biases ({E, out}) are 2-D but still biases: every weight-quantization method
  // (GPTQ/AWQ packing, fp8, MXFP4 — gpt-oss stores *_bias in bf16) quantizes weights only.
  if (t.is_bias) return {kept_dtype, false, "kept " + kept_dtype + ": a bias (quantization methods store weights only)"};
  if (dims(t) < 2) return {kept_dtype, false, "kept " + kept_dtype + ": not a matrix"};
  if (!row_fits(fmt, t.shape.back()))
    return {kept_dtype, false, "kept " + kept_dtype + ": row of " + std::to_string(t.shape.back()) +
                                   " is not a multiple of " + fmt.name + "'s block"};
  return {fmt.name, true, "quantized to " + fmt.name + " (" + s.name + ")"};
}

std::string compute_precision(const WeightScheme& s, const std::string& dtype, bool dtype_given) {
  const std::string& a = s.activation;
  if (s.kind == SchemeKind::GgufFileType)
    return "f32 (ggml: quantized matmuls quantize activations to Q8 blocks)";
  if (a == "fp8") return "fp8 e4m3 matmul inputs (dynamic scales), " + dtype + " elsewhere";
  if (a == "int8") return "int8 matmul inputs (per-token dynamic scales), " + dtype + " elsewhere";
  if (a == "fp4") return "fp4 matmul inputs (on FP4 hardware), " + dtype + " elsewhere";
  if (a == "fp16" && !dtype_given) return "fp16";
  return dtype;
}

void add_totals(PrecisionPlan& plan, const TensorInfo& t, const TensorPrecision& p) {
  const std::uint64_t params = t.elements();
  plan.total_bytes = checked_add(plan.total_bytes, p.bytes, "weight bytes");
  plan.total_params = checked_add(plan.total_params, params, "parameters");
  if (!p.quantized) plan.kept_bytes = checked_add(plan.kept_bytes, p.bytes, "weight bytes");
  auto role = std::find_if(plan.by_role.begin(), plan.by_role.end(), [&](const RoleBytes& r) { return r.role == t.role; });
  if (role == plan.by_role.end()) role = plan.by_role.insert(plan.by_role.end(), RoleBytes{t.role, 0, 0, 0});
  role->tensors += 1;
  role->params += params;
  role->bytes += p.bytes;
  auto fmt = std::find_if(plan.by_format.begin(), plan.by_format.end(), [&](const FormatBytes& f) { return f.format == p.format; });
  if (fmt == plan.by_format.end()) fmt = plan.by_format.insert(plan.by_format.end(), FormatBytes{p.format, 0, 0});
  fmt->params += params;
  fmt->bytes += p.bytes;
}

}  // namespace

PrecisionPlan plan_precision(const ModelSpec& model, const QuantCatalog& catalog, const PrecisionRequest& request) {
  PrecisionPlan plan;
  plan.model_dtype = model_dtype_of(model, catalog, request, plan.warnings);
  const std::optional<CheckpointQuant> cq = checkpoint_quantization(model, catalog);
  // Stored formats are the checkpoint's when a file gave them. A config-only inventory labels
  // every tensor with torch_dtype, the dtype of the unquantized tensors: when the config also has
  // a quantization_config, the method's formats are the stored ones (DeepSeek-V3 stores fp8
  // blocks under torch_dtype bfloat16), so the file formats win only with their exact bytes.
  const auto has = [&](auto pred) { return !model.tensors.empty() && std::all_of(model.tensors.begin(), model.tensors.end(), pred); };
  const bool all_bytes = has([](const TensorInfo& t) { return t.stored_bytes.has_value(); });
  const bool from_file = has([](const TensorInfo& t) { return !t.stored_format.empty(); }) && (all_bytes || !cq);
  WeightScheme& s = plan.scheme;
  if (!request.weights.empty()) {
    s = parse_weight_scheme(request.weights, catalog);
    if (s.kind == SchemeKind::VllmMethod) s = resolve_vllm_method(s, cq, catalog, plan.warnings);
  } else if (from_file) {
    s.kind = SchemeKind::Checkpoint;
    s.name = "checkpoint";
    s.activation = "model";
    s.source = "stored tensor formats of " + model.source.kind + " " + model.source.path;
  } else if (cq) {
    s = cq->scheme;
  } else {
    s = parse_weight_scheme(plan.model_dtype, catalog);
  }
  // vLLM's gptq / awq kernels only take fp16: a bf16 checkpoint is cast (GPTQConfig /
  // AWQConfig.get_supported_act_dtypes), so unquantized tensors are fp16 too.
  std::string kept = plan.model_dtype;
  if (s.activation == "fp16" && request.dtype.empty() && kept != "fp16") {
    plan.warnings.push_back(s.name + " computes in fp16: the " + kept + " checkpoint is cast to fp16");
    kept = "fp16";
  }
  plan.compute_precision = compute_precision(s, kept, !request.dtype.empty() && request.dtype != "auto");

  // Safetensors checkpoints: unquantized tensors stored in the checkpoint's own dtype (its
  // torch_dtype; every plain float when the config names none) are served in the model dtype.
  // Tensors the exporter kept in another float dtype (an fp32 router bias in a bf16 checkpoint)
  // keep theirs: vLLM creates some of them in fp32 explicitly (e.g. DeepSeek's
  // e_score_correction_bias, Mamba's A / D). GGUF tensors are served as stored.
  const QuantFormat* stored_dtype = model.arch.torch_dtype.empty() ? nullptr : catalog.find(model.arch.torch_dtype);
  const QuantFormat& serving = catalog.get(plan.model_dtype);
  const auto cast_to_model_dtype = [&](const QuantFormat& f) {
    const bool plain_float = f.is_float && !f.quantized && f.family == "float" && f.block_elems == 1 && f.block_bytes > 0;
    return model.source.kind == "safetensors" && plain_float && f.name != serving.name &&
           (stored_dtype == nullptr || stored_dtype->name == f.name);
  };

  std::vector<GgufTensorPlan> gguf;
  if (s.kind == SchemeKind::GgufFileType)
    gguf = plan_gguf_file_type(model, *catalog.schemes().find_gguf_file_type(s.gguf_file_type), catalog);
  const QuantFormat* fmt = s.kind == SchemeKind::Format ? &catalog.get(s.format) : nullptr;
  const RuleSet* rules = fmt ? &catalog.schemes().rules(s.rules) : nullptr;
  // A --weights override re-quantizes from the checkpoint's weights: its ignore list no longer applies.
  const std::optional<CheckpointQuant> ignore_source = request.weights.empty() || s.engine_method == (cq ? cq->scheme.engine_method : "") ? cq : std::nullopt;

  for (std::size_t i = 0; i < model.tensors.size(); ++i) {
    const TensorInfo& t = model.tensors[i];
    TensorPrecision p;
    p.index = i;
    if (s.kind == SchemeKind::Checkpoint) {
      const QuantFormat& f = catalog.get(t.stored_format);
      p.format = f.name;
      p.bytes = t.stored_bytes ? *t.stored_bytes : tensor_bytes(f, t.shape, t.name);
      p.quantized = f.quantized;
      p.reason = "stored as " + f.name + " in the checkpoint";
      if (cast_to_model_dtype(f)) {
        // vLLM creates every unquantized parameter in the model dtype (--dtype, or auto: the
        // config's torch_dtype with float32 served in bf16; vllm/config/model.py
        // ModelConfig._resolve_auto_dtype) and copies the checkpoint tensor into it
        // (default_weight_loader, vllm/model_executor/model_loader/weight_utils.py: param.data.copy_),
        // so a bf16 file served at --dtype float32 holds 4 bytes per weight.
        const QuantFormat& m = catalog.get(plan.model_dtype);
        const std::uint64_t elements = p.bytes / f.block_bytes;
        p.format = m.name;
        p.bytes = checked_mul(elements, m.block_bytes, "tensor '" + t.name + "' bytes");
        p.reason = "stored as " + f.name + " in the checkpoint, loaded into the model dtype " + m.name;
      }
    } else if (s.kind == SchemeKind::GgufFileType) {
      for (const auto& part : gguf[i].parts) {
        const QuantFormat& f = catalog.get(part.type);
        p.format += (p.format.empty() ? "" : "+") + f.name;
        p.bytes = checked_add(p.bytes, part.bytes, "weight bytes");
        p.quantized = p.quantized || f.quantized;
        p.reason += (p.reason.empty() ? "" : "; ") + part.gguf_name + ": " + part.type + " (" + part.reason + ")";
      }
    } else {
      const Choice c = choose_format(t, s, *fmt, *rules, ignore_source, kept);
      p.format = catalog.get(c.format).name;
      p.bytes = tensor_bytes(catalog.get(c.format), t.shape, t.name);
      p.quantized = c.quantized;
      p.reason = c.reason;
    }
    add_totals(plan, t, p);
    plan.tensors.push_back(std::move(p));
  }

  const bool any_quantized = std::any_of(plan.tensors.begin(), plan.tensors.end(), [](const auto& p) { return p.quantized; });
  plan.weights_precision = s.name;
  if (fmt && fmt->quantized && s.rules != "dtype" && !any_quantized && !plan.tensors.empty()) {
    // As vLLM serves it: a method with nothing to quantize leaves the layers unquantized (e.g.
    // Mxfp4Config.get_quant_method returns UnquantizedLinearMethod for every Linear layer,
    // vllm/model_executor/layers/quantization/mxfp4.py). The size is the dtype's, and says so.
    const std::string why = rules->quantize_only.empty() ? "no tensor has a row its block divides" : rules->only_reason;
    plan.nothing_quantized = s.name + " quantizes no tensor of this model (" + why + "): the weights stay " + kept +
                             ", as the engine serves them";
    plan.warnings.push_back(plan.nothing_quantized);
    plan.weights_precision = kept + " (" + s.name + " quantized no tensor)";
    return plan;
  }
  if (s.kind == SchemeKind::GgufFileType && plan.total_params > 0) {
    const double bpw = static_cast<double>(plan.total_bytes) * 8.0 / static_cast<double>(plan.total_params);
    plan.weights_precision += " (mixed: " + std::to_string(bpw).substr(0, 4) + " bits/weight)";
  } else if (any_quantized && plan.kept_bytes > 0) {
    plan.weights_precision += " (mixed: " + format_gib(Bytes(plan.kept_bytes)) + " " + kept + " kept)";
  }
  return plan;
}

}  // namespace vramplan
