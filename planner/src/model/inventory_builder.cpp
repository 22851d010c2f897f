#include "model/inventory_builder.hpp"

namespace vramplan::hf {

void InventoryBuilder::tensor(std::string name, TensorRole role, std::vector<std::uint64_t> shape,
                              bool is_bias) {
  TensorInfo t;
  t.name = std::move(name);
  t.role = override_.value_or(role);
  t.shape = std::move(shape);
  t.layer = layer_;
  t.is_bias = is_bias;
  t.stored_format = format_;
  spec_.tensors.push_back(std::move(t));
}

void InventoryBuilder::linear(const std::string& prefix, TensorRole role, std::uint64_t out,
                              std::uint64_t in, bool bias) {
  tensor(prefix + ".weight", role, {out, in});
  if (bias) tensor(prefix + ".bias", role, {out}, true);
}

void InventoryBuilder::norm(const std::string& prefix, TensorRole role, std::uint64_t dim,
                            bool bias) {
  tensor(prefix + ".weight", role, {dim});
  if (bias) tensor(prefix + ".bias", role, {dim}, true);
}

void InventoryBuilder::experts(const std::string& name, TensorRole role, std::uint64_t experts,
                               std::uint64_t out, std::uint64_t in) {
  tensor(name, role, {experts, out, in});
}

void gated_mlp(InventoryBuilder& b, const std::string& p, std::uint64_t intermediate, std::uint64_t hidden,
               TensorRole gate, TensorRole up, TensorRole down) {
  b.linear(p + "gate_proj", gate, intermediate, hidden);
  b.linear(p + "up_proj", up, intermediate, hidden);
  b.linear(p + "down_proj", down, hidden, intermediate);
}

void routed_experts(InventoryBuilder& b, const std::string& p, std::uint64_t experts, std::uint64_t intermediate,
                    std::uint64_t hidden) {
  using TR = TensorRole;  // not `R`: hf_family.hpp's alias may share this unity batch
  b.experts(p + "experts.*.gate_proj.weight", TR::FfnGateExps, experts, intermediate, hidden);
  b.experts(p + "experts.*.up_proj.weight", TR::FfnUpExps, experts, intermediate, hidden);
  b.experts(p + "experts.*.down_proj.weight", TR::FfnDownExps, experts, hidden, intermediate);
}

void qwen_moe_mlp(InventoryBuilder& b, const std::string& p, const ModelArch& a) {
  using TR = TensorRole;
  const auto h = a.hidden_size, E = a.num_experts;
  b.linear(p + "gate", TR::FfnGateInp, E, h);
  routed_experts(b, p, E, a.moe_intermediate_size, h);
  if (const auto Is = a.shared_expert_intermediate_size; Is > 0) {
    gated_mlp(b, p + "shared_expert.", Is, h, TR::FfnGateShexp, TR::FfnUpShexp, TR::FfnDownShexp);
    b.linear(p + "shared_expert_gate", TR::FfnGateInpShexp, 1, h);
  }
}

void deepseek_moe_mlp(InventoryBuilder& b, const std::string& p, const ModelArch& a, bool score_bias) {
  using TR = TensorRole;
  const auto h = a.hidden_size, E = a.num_experts;
  b.linear(p + "gate", TR::FfnGateInp, E, h);
  if (score_bias) b.tensor(p + "gate.e_score_correction_bias", TR::FfnExpProbsBias, {E});
  routed_experts(b, p, E, a.moe_intermediate_size, h);
  if (const auto Is = a.shared_expert_intermediate_size; Is > 0)
    gated_mlp(b, p + "shared_experts.", Is, h, TR::FfnGateShexp, TR::FfnUpShexp, TR::FfnDownShexp);
}

void biased_moe_mlp(InventoryBuilder& b, const std::string& p, const ModelArch& a, const BiasedMoeNames& n) {
  using TR = TensorRole;
  const auto h = a.hidden_size, E = a.num_experts, Ie = a.moe_intermediate_size;
  b.linear(p + n.router, TR::FfnGateInp, E, h);
  b.tensor(p + n.bias, TR::FfnExpProbsBias, {E});
  b.experts(p + n.gate_experts, TR::FfnGateExps, E, Ie, h);
  b.experts(p + n.up_experts, TR::FfnUpExps, E, Ie, h);
  b.experts(p + n.down_experts, TR::FfnDownExps, E, h, Ie);
  gated_mlp(b, p + n.shared, a.shared_expert_intermediate_size, h, TR::FfnGateShexp, TR::FfnUpShexp, TR::FfnDownShexp);
}

std::string layer_prefix(std::string_view model_prefix, std::string_view layers, std::uint64_t i) {
  return std::string(model_prefix) + std::string(layers) + "." + std::to_string(i) + ".";
}

}  // namespace vramplan::hf
