// family_mamba_hybrid.hpp (private) — the Mamba2 mixer shared by the Mamba hybrid families
// (family_mamba_hybrid.cpp: Nemotron-H, Granite-4.0-H; family_falcon_h1.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "model/inventory_builder.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::hf {

struct Mamba2Dims {
  std::uint64_t d_inner = 0, heads = 0, head_dim = 0, groups = 0, d_state = 0, kernel = 0;
  bool conv_bias = true, proj_bias = false, gated_norm = true;
  std::uint64_t conv_dim() const { return d_inner + 2 * groups * d_state; }
};

//! MambaMixer2's tensors under `prefix` ("backbone.layers.3.mixer.").
void mamba2_mixer(InventoryBuilder& b, const std::string& prefix, std::uint64_t hidden, const Mamba2Dims& d);
//! The per-request state of one Mamba2 layer (shape, totals, bytes at TP 1) into `arch`.
void set_mamba2_state(const Mamba2Dims& d, ModelArch& arch);

}  // namespace vramplan::hf
