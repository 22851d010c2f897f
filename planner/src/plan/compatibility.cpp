#include "vramplan/plan/compatibility.hpp"

#include <nlohmann/json.hpp>

#include "vramplan/quant/precision_plan.hpp"

namespace vramplan::plan {
namespace {

struct FpBlock {
  std::uint64_t n = 0, k = 0;
};

// The weight block of a block-scaled fp8 MoE checkpoint (quantization_config weight_block_size,
// or the format's tile for --weights fp8-block); nullopt for anything else.
std::optional<FpBlock> block_fp8_moe(const ModelSpec& model, const QuantCatalog& quant,
                                     const std::optional<std::string>& weights) {
  if (model.arch.num_experts == 0) return std::nullopt;
  const auto cq = checkpoint_quantization(model, quant);
  WeightScheme s;
  if (weights) {
    s = parse_weight_scheme(*weights, quant);
    if (s.kind == SchemeKind::VllmMethod) {
      if (!cq) return std::nullopt;
      s = cq->scheme;
    }
  } else if (cq) {
    s = cq->scheme;
  } else {
    return std::nullopt;
  }
  if (s.kind != SchemeKind::Format) return std::nullopt;
  const QuantFormat* f = quant.find(s.format);
  if (f == nullptr || f->layout != QuantLayout::Block2D || f->family != "fp8") return std::nullopt;
  FpBlock b{f->block_rows, f->block_cols};
  if (cq && cq->scheme.format == s.format) {  // checked by checkpoint_quantization: two positive integers
    const auto q = nlohmann::json::parse(model.quantization_config_json, nullptr, false);
    if (q.is_object() && q.contains("weight_block_size") && q["weight_block_size"].is_array() &&
        q["weight_block_size"].size() == 2 && q["weight_block_size"][0].is_number_unsigned() &&
        q["weight_block_size"][1].is_number_unsigned())
      b = {q["weight_block_size"][0].get<std::uint64_t>(), q["weight_block_size"][1].get<std::uint64_t>()};
  }
  if (b.n == 0 || b.k == 0) return std::nullopt;
  return b;
}

// vLLM Fp8MoEMethod.create_weights (vllm/model_executor/layers/quantization/fp8.py) refuses a
// block-quantized MoE whose per-rank expert slice breaks the weight blocks: "The output_size of
// gate's and up's weight = {intermediate_size_per_partition} is not divisible by weight
// quantization block_n = {block_n}", and with TP > 1 the same for down's input and block_k
// (vllm-project/vllm#17569: Qwen3-235B-A22B-FP8 at TP 8, 1536 / 8 = 192). SGLang's
// Fp8MoEMethod.create_weights (python/sglang/srt/layers/quantization/fp8.py) carries the same
// checks. With expert parallelism (vLLM --enable-expert-parallel, SGLang --ep-size = TP) each
// rank holds whole experts: the slice is the full intermediate size.
std::optional<compat::Finding> block_fp8_moe_finding(const PlanSession& session, const memory::EngineArgs& args,
                                                     const std::optional<std::string>& weights, std::uint64_t tp) {
  const std::string engine(session.engine().name());
  if (engine != "vllm" && engine != "sglang") return std::nullopt;
  const auto block = block_fp8_moe(session.model(), session.quant(), weights);
  if (!block) return std::nullopt;
  std::uint64_t moe_tp = tp;
  std::string ep_flag;
  if (engine == "vllm") {
    ep_flag = "--enable-expert-parallel";
    if (memory::arg_switch(args, "enable-expert-parallel")) moe_tp = 1;
  } else {
    ep_flag = "--ep-size " + std::to_string(tp);
    const std::uint64_t ep = memory::arg_u64(args, "ep-size").value_or(1);
    if (ep > 0 && tp % ep == 0) moe_tp = tp / ep;
  }
  const auto& a = session.model().arch;
  const std::uint64_t inter = a.moe_intermediate_size ? a.moe_intermediate_size : a.intermediate_size;
  if (inter == 0 || moe_tp == 0) return std::nullopt;
  const std::uint64_t per = inter / moe_tp;
  std::string what;
  if (inter % moe_tp != 0 || per % block->n != 0)
    what = "the output_size of gate's and up's weight = " + std::to_string(per) + " (moe intermediate " +
           std::to_string(inter) + " / TP " + std::to_string(moe_tp) + ") is not divisible by weight quantization block_n = " +
           std::to_string(block->n);
  else if (moe_tp > 1 && per % block->k != 0)
    what = "the input_size of down's weight = " + std::to_string(per) + " (moe intermediate " + std::to_string(inter) +
           " / TP " + std::to_string(moe_tp) + ") is not divisible by weight quantization block_k = " +
           std::to_string(block->k);
  if (what.empty()) return std::nullopt;
  compat::Finding f;
  f.rule = "fp8-block-moe-tp";
  f.support = compat::Support::Unsupported;
  f.message = "block-quantized fp8 experts at this TP: " + what + " (the engine raises ValueError while creating the weights)";
  f.instead = "a TP whose expert slice is a multiple of " + std::to_string(block->n) + ", or expert parallelism (" +
              ep_flag + ")";
  f.source = engine == "vllm"
                 ? "vllm/model_executor/layers/quantization/fp8.py Fp8MoEMethod.create_weights; vllm-project/vllm#17569"
                 : "python/sglang/srt/layers/quantization/fp8.py Fp8MoEMethod.create_weights";
  return f;
}

}  // namespace

compat::Verdict scenario_compatibility(const PlanSession& session, const GpuSpec& gpu,
                                       const memory::EngineArgs& args, const std::optional<std::string>& weights) {
  compat::Query q;
  q.engine = std::string(session.engine().name());
  q.engine_version = std::string(session.engine().release());
  compat::set_gpu_facts(q, gpu);
  q.weight_families = compat::model_weight_families(session.model(), session.quant(), weights);
  q.gguf_types = compat::model_gguf_types(session.model(), session.quant(), weights);
  q.weights_quantize_nothing = compat::weights_quantize_nothing(session.model(), session.quant(), weights);
  // llama.cpp is built per platform (CUDA, HIP, Vulkan, CPU): --llamacpp-backend names the build,
  // else the GPU vendor's (data/compat/formats.json).
  if (const auto backend = memory::arg_string(args, "llamacpp-backend")) q.backend = *backend;
  const auto dtype = memory::arg_string(args, "dtype");
  q.dtype = compat::float_dtype(dtype && *dtype != "auto" ? *dtype : session.model().arch.torch_dtype);
  const auto kv = memory::arg_string(args, "kv-cache-dtype");
  if (kv && kv->starts_with("fp8")) q.kv = "fp8";
  const Parallel p = session.parallel_of(args);
  q.tensor_parallel = p.tp;
  q.pipeline_parallel = p.pp;
  // vLLM's engines (memory/vllm_data_parallel.hpp); other engines have no such flag.
  q.data_parallel = memory::arg_u64(args, "data-parallel-size").value_or(1);
  if (!session.model().arch.architecture.empty()) q.architectures = {session.model().arch.architecture};
  compat::Verdict v = session.compat().evaluate(q);
  if (auto f = block_fp8_moe_finding(session, args, weights, p.tp)) {
    v.support = compat::Support::Unsupported;
    v.findings.insert(v.findings.begin(), std::move(*f));
  }
  return v;
}

std::string unsupported_line(const compat::Verdict& v) {
  for (const auto& f : v.findings)
    if (f.support == compat::Support::Unsupported) return compat::finding_line(f);
  return {};
}

std::vector<std::string> compatibility_warnings(const compat::Verdict& v) {
  std::vector<std::string> out;
  for (const auto& f : v.findings)
    if (f.support == compat::Support::Fallback) out.push_back(compat::finding_line(f));
  for (const auto& u : v.unchecked) out.push_back("compatibility: " + u);
  return out;
}

}  // namespace vramplan::plan
