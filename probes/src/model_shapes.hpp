// model_shapes.hpp — the linear layers the GEMM probes time: Llama-3-8B and Llama-3.1-70B
// projections, N = outputs, K = inputs of one layer (fused QKV and gate+up as engines run them).
//
// From the models' config.json: 8B hidden 4096, intermediate 14336, 32 heads, 8 KV heads, head dim
// 128, 32 layers; 70B hidden 8192, intermediate 28672, 64 heads, 8 KV heads, head dim 128, 80 layers
// (meta-llama/Meta-Llama-3-8B and meta-llama/Llama-3.1-70B on Hugging Face).
//   qkv_proj N = (heads + 2 * kv_heads) * head_dim;  gate_up_proj N = 2 * intermediate.
#pragma once

#include <cstdint>
#include <string_view>

namespace vramplan::probe {

struct LinearShape {
  std::string_view name;
  std::uint64_t n;  //!< outputs
  std::uint64_t k;  //!< inputs
};

inline constexpr LinearShape kLinearShapes[] = {
    {"llama3-8b.qkv_proj", (32 + 2 * 8) * 128, 4096},
    {"llama3-8b.o_proj", 4096, 4096},
    {"llama3-8b.gate_up_proj", 2 * 14336, 4096},
    {"llama3-8b.down_proj", 4096, 14336},
    {"llama3.1-70b.qkv_proj", (64 + 2 * 8) * 128, 8192},
    {"llama3.1-70b.o_proj", 8192, 8192},
    {"llama3.1-70b.gate_up_proj", 2 * 28672, 8192},
    {"llama3.1-70b.down_proj", 8192, 28672},
};
//! One Llama-3-8B decoder layer's projections (the decode GEMV chain walks these).
inline constexpr std::size_t kLlama8bFirst = 0, kLlama8bCount = 4;
inline constexpr std::uint64_t kLlama8bLayers = 32;

}  // namespace vramplan::probe
