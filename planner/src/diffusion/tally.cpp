// Tally: the running sums of one module-tree walk (diffusion/component.hpp).
#include <algorithm>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/diffusion/component.hpp"

namespace vramplan::diffusion {

std::string_view role_name(Role role) {
  switch (role) {
    case Role::TextEncoder: return "text_encoder";
    case Role::Denoiser: return "denoiser";
    case Role::Vae: return "vae";
  }
  return "?";
}

void Tally::linear(std::uint64_t in, std::uint64_t out, bool bias, std::uint64_t tokens) {
  const std::uint64_t w = checked_mul(in, out, "linear weight");
  const std::uint64_t n = checked_add(w, bias ? out : 0, "linear parameters");
  params = checked_add(params, n, "parameters");
  linear_weights = checked_add(linear_weights, w, "linear weights");
  linear_rows = checked_add(linear_rows, out, "linear rows");
  largest_leaf = std::max(largest_leaf, n);
  flops += 2.0 * static_cast<double>(w) * static_cast<double>(tokens);
}

void Tally::conv(std::uint64_t in, std::uint64_t out, std::uint64_t k, std::uint64_t pixels, std::uint64_t k_t) {
  const std::uint64_t w = checked_mul(checked_mul(in, out, "conv weight"), k * k * k_t, "conv weight");
  const std::uint64_t n = checked_add(w, out, "conv parameters");
  params = checked_add(params, n, "parameters");
  largest_leaf = std::max(largest_leaf, n);
  flops += 2.0 * static_cast<double>(w) * static_cast<double>(pixels);
}

void Tally::other(std::uint64_t n) {
  params = checked_add(params, n, "parameters");
  largest_leaf = std::max(largest_leaf, n);
}

void Tally::buffer(std::uint64_t n) { buffers = checked_add(buffers, n, "buffers"); }

void Tally::block(std::string_view list, std::uint64_t elements, std::uint64_t owner) {
  for (auto& l : block_lists)
    if (l.name == list) {
      l.blocks.push_back(elements);
      l.owner = owner;
      return;
    }
  block_lists.push_back({std::string(list), {elements}, owner});
}

void Tally::live(double elements, std::string_view where) {
  if (!(elements < 4.6e18))
    throw_usage("the activations of " + std::string(where) + " exceed 2^62 elements: resolution or batch too large");
  const auto n = static_cast<std::uint64_t>(elements);
  if (n > peak_elements) {
    peak_elements = n;
    peak_where = std::string(where);
  }
}

void Tally::absorb(const Tally& o) {
  params = checked_add(params, o.params, "parameters");
  buffers = checked_add(buffers, o.buffers, "buffers");
  linear_weights = checked_add(linear_weights, o.linear_weights, "linear weights");
  linear_rows = checked_add(linear_rows, o.linear_rows, "linear rows");
  largest_leaf = std::max(largest_leaf, o.largest_leaf);
  flops += o.flops;
  live(static_cast<double>(o.peak_elements), o.peak_where);
}

}  // namespace vramplan::diffusion
