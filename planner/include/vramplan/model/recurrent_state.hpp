// vramplan/model/recurrent_state.hpp — one recurrent (Mamba / gated-DeltaNet) layer's per-request
// state on one tensor-parallel rank, as the engines shape it.
//
// vLLM vllm/model_executor/layers/mamba/mamba_utils.py MambaStateShapeCalculator (SGLang's
// configs/mamba_utils.py Mamba2StateShape copies it):
//   mamba1_state_shape:  conv {d_inner / tp, kernel - 1}, temporal {d_inner / tp, d_state}
//   mamba2_state_shape:  conv {(d_inner + 2 n_groups' d_state) / tp, kernel - 1} with
//                        n_groups' = n_groups + extra_groups_for_head_shards (tp - n_groups when
//                        n_groups % tp != 0: the groups are replicated so every head shard has its
//                        group), temporal {heads / tp, head_dim, d_state}
//   gated_delta_net_state_shape: conv {(2 key_dim + value_dim) / tp, kernel - 1},
//                        temporal {v_heads / tp, v_head_dim, k_head_dim}
// ModelArch::recurrent_shape holds the terms; the conv and temporal parts are kept apart because
// engines store them in different dtypes.
#pragma once

#include <cstdint>
#include <string>

#include "vramplan/core/bytes.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan {

struct RecurrentStateElems {
  std::uint64_t conv = 0;  //!< conv state values on one rank
  std::uint64_t ssm = 0;   //!< temporal (SSM) state values on one rank
};

inline RecurrentStateElems recurrent_state_elems(const ModelArch& a, std::uint64_t tp) {
  const auto& s = a.recurrent_shape;
  if (tp == 0) tp = 1;
  if (s.ssm_heads == 0)  // shape unknown: the totals, split evenly
    return {ceil_div(a.recurrent_conv_state_elems, tp), ceil_div(a.recurrent_ssm_state_elems, tp)};
  const std::uint64_t groups = s.groups == 0 || s.groups % tp == 0 ? s.groups : tp;
  return {s.conv_window * ceil_div(s.conv_channels + 2 * groups * s.group_state, tp),
          ceil_div(s.ssm_heads, tp) * s.ssm_head_elems};
}

//! Bytes of a state dtype name ("float32" 4; "bfloat16" / "float16" 2; "" = `fallback`).
inline std::uint64_t recurrent_dtype_bytes(const std::string& dtype, std::uint64_t fallback) {
  if (dtype == "float32" || dtype == "float") return 4;
  if (dtype == "bfloat16" || dtype == "float16" || dtype == "half") return 2;
  return fallback;
}

//! One recurrent layer's state bytes on one rank: conv state in the model dtype (vLLM
//! mamba_cache_dtype "auto"), SSM state in recurrent_ssm_dtype or the model dtype.
inline std::uint64_t recurrent_state_bytes(const ModelArch& a, std::uint64_t tp) {
  if (a.recurrent_shape.ssm_heads == 0 && a.recurrent_conv_state_elems == 0 && a.recurrent_ssm_state_elems == 0)
    return ceil_div(a.recurrent_state_bytes_per_layer, tp == 0 ? 1 : tp);
  const std::uint64_t model = recurrent_dtype_bytes(a.torch_dtype, 2);
  const auto e = recurrent_state_elems(a, tp);
  return e.conv * model + e.ssm * recurrent_dtype_bytes(a.recurrent_ssm_dtype, model);
}

}  // namespace vramplan
