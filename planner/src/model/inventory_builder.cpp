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

std::string layer_prefix(std::string_view model_prefix, std::string_view layers, std::uint64_t i) {
  return std::string(model_prefix) + std::string(layers) + "." + std::to_string(i) + ".";
}

}  // namespace vramplan::hf
