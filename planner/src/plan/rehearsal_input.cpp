#include "vramplan/plan/rehearsal_input.hpp"

#include <algorithm>

#include "vramplan/core/error.hpp"

namespace vramplan::plan {

namespace {

// The rehearsal's GEMM element type for the tensor rate the performance side used.
std::optional<std::string> rehearsal_dtype(const sim::ServingPlan& o) {
  const std::string& t = o.performance.tensor_dtype.empty() ? o.plan.compute_precision : o.performance.tensor_dtype;
  if (t == "fp8") return "fp8_e4m3";
  if (t == "bf16" || t == "fp16") return t;
  return std::nullopt;
}

// The projections of one decoder layer on one TP rank (column-parallel outputs and row-parallel
// inputs divided by tp, K/V heads replicated when fewer than tp), `m` tokens per forward.
std::vector<calib::RehearsalGemm> layer_gemms(const ModelArch& a, std::uint64_t tp, std::uint64_t m,
                                              const std::string& dtype) {
  std::vector<calib::RehearsalGemm> g;
  const std::uint64_t h = a.hidden_size, d = a.head_dim;
  if (a.kv_lora_rank == 0 && a.num_heads > 0 && d > 0) {  // MLA projections have other shapes: left out
    const std::uint64_t q = std::max<std::uint64_t>(1, a.num_heads / tp);
    const std::uint64_t kv = std::max<std::uint64_t>(1, a.num_kv_heads / tp);
    g.push_back({"qkv_proj", dtype, m, (q + 2 * kv) * d, h});
    g.push_back({"o_proj", dtype, m, h, q * d});
  }
  if (a.num_experts > 0 && a.moe_intermediate_size > 0) {
    // Tokens one expert sees on average under uniform routing: m x k / E.
    const std::uint64_t me = std::max<std::uint64_t>(1, m * a.experts_per_token / a.num_experts);
    const std::uint64_t inter = std::max<std::uint64_t>(1, a.moe_intermediate_size / tp);
    g.push_back({"expert_gate_up_proj", dtype, me, 2 * inter, h});
    g.push_back({"expert_down_proj", dtype, me, h, inter});
  } else if (a.intermediate_size > 0) {
    const std::uint64_t inter = std::max<std::uint64_t>(1, a.intermediate_size / tp);
    g.push_back({"gate_up_proj", dtype, m, 2 * inter, h});
    g.push_back({"down_proj", dtype, m, h, inter});
  }
  return g;
}

}  // namespace

calib::RehearsalInput rehearsal_input(const sim::ServingPlan& o) {
  const memory::MemoryPlan& p = o.plan;
  if (o.gpu.id == "cpu") throw_usage("--emit-rehearsal: a CPU plan has no GPU to rehearse on");
  if (p.kv_cache_bytes().count() == 0)
    throw_usage("--emit-rehearsal: the plan reserves no KV cache (" + (p.fits ? std::string("none planned") : p.reason) + ")");
  calib::RehearsalInput in;
  in.label = o.model.id + " " + p.weights_precision + ", " + p.engine + " " + p.engine_version + ", TP " +
             std::to_string(o.tp) + " PP " + std::to_string(o.pp) + ", per GPU on " + o.gpu.name;
  in.weights = p.weights_bytes();
  const std::uint64_t blocks = p.engine_view.value("gpu_blocks", std::uint64_t{0});
  if (blocks > 0 && p.kv_cache_bytes().count() % blocks == 0) {
    in.kv_blocks = blocks;
    in.kv_block = Bytes(p.kv_cache_bytes().count() / blocks);
  } else {
    in.kv_blocks = 1;  // one pool (SGLang, TensorRT-LLM, HF): the probe allocates it in one piece anyway
    in.kv_block = p.kv_cache_bytes();
  }
  in.activation_workspace = p.activation_bytes();
  const std::uint64_t m = o.performance.query.token_budget ? o.performance.query.token_budget
                                                           : o.performance.query.prompt_tokens;
  if (const auto dtype = rehearsal_dtype(o)) in.gemms = layer_gemms(o.model.arch, o.tp, m, *dtype);
  in.predicted_peak = in.total();
  return in;
}

}  // namespace vramplan::plan
