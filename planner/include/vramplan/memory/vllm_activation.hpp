// vramplan/memory/vllm_activation.hpp — vLLM V1's profiling-run peak ("torch peak increase").
//
// vLLM sizes the KV pool after ONE profiling run (gpu_model_runner.py profile_run): a forward
// of max_num_batched_tokens (T) tokens, then _dummy_sampler_run on one hidden state per request
// (S = min(max_num_seqs, T) rows): the model-dtype logits [S, V] stay referenced while the
// sampler works on fp32 copies (to(float32), top-k/top-p sort values + int64 indices, softmax,
// exponential noise). The peak is modelled per stage as
//
//   peak = c_h x T·h·a + c0                         framework buffers (hidden-state sized) + fixed
//        + [not first PP stage] 2·T·h·a             intermediate-tensor buffers (hidden, residual)
//        + [MoE] T·top_k·(max(2·I_e/TP, h) + I_e/TP)·a   fused-MoE workspace (fused_moe.py
//                                                       cache13 + cache2), stays allocated
//        + max( T·a·(3h + 3·I/TP),                  dense forward live set at the MLP (§4.1)
//               [last stage] k32·S·V·4 + 1·S·V·a )  sampler: fp32 copies + model-dtype logits
//        + [multimodal] N x (pixels + P·h)·a        encoder-profiling inputs and cached embeddings,
//                                                   alive under the text forward and the sampler
//                                                   (vllm_encoder_profile.hpp)
//
// k32, c_h and c0 are fitted per version family by least squares (fit_vllm_activation) on the
// published start-up logs; everything else is derived. No per-model constants.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vramplan/memory/component.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::memory {

//! Byte-valued terms of the peak for one stage (doubles: they feed a least-squares fit).
struct VllmActivationFeatures {
  double sampler_fp32 = 0;   //!< S·V·4 (0 off the last stage)
  double sampler_model = 0;  //!< S·V·a (0 off the last stage)
  double hidden = 0;         //!< T·h·a
  double forward = 0;        //!< T·a·(3h + 3·I/TP), dense layers only
  double moe_workspace = 0;  //!< fused-MoE buffers
  //! Data parallelism: the other ranks' tokens the MoE gathers, (D - 1)·T·(2h + E)·a (their hidden
  //! states and router logits, and the MoE output rows before the reduce-scatter); 0 without DP.
  double dp_gather = 0;
  std::string moe_explain;   //!< the workspace's formula with its inputs
  double pp_buffers = 0;     //!< 2·T·h·a on stages after the first
  double mm_encoder = 0;     //!< encoder-profiling bytes held (multimodal models, derived)
  std::string mm_explain;    //!< its formula, filled in
  std::string explain;       //!< the inputs, filled in
};

struct VllmActivationCoefficients {
  double sampler_fp32_copies = 0;   //!< k32 (fitted)
  double sampler_model_copies = 1;  //!< the model-dtype logits tensor (derived: one)
  double hidden_buffers = 0;        //!< c_h (fitted)
  double constant_bytes = 0;        //!< c0 (fitted)
};

struct VllmStageShape {
  std::uint64_t max_num_batched_tokens = 0;  //!< T
  std::uint64_t max_num_seqs = 0;            //!< S before min(S, T)
  std::uint64_t tp = 1;
  std::uint64_t compute_bytes = 2;           //!< a
  bool first_stage = true;
  bool last_stage = true;
  std::uint64_t max_model_len = 0;           //!< bounds the dummy multimodal items per prompt
  //! vLLM data parallelism (memory/vllm_data_parallel.hpp): D engines, whose profile runs' MoE
  //! layers gather all D x T tokens (v1/worker/gpu_model_runner.py _dummy_run with
  //! num_tokens_across_dp; the default all2all backends gather, fused_moe/layer.py). 1 = off.
  std::uint64_t dp = 1;
  //! What one GPU's fused-MoE workspace divides the experts' intermediate size by: the GPUs each
  //! expert is sliced over (TP, or D x TP with data parallelism), 1 under
  //! --enable-expert-parallel (whole experts: fused_moe.py fused_experts_impl sizes the workspace
  //! by w1's rows, `E, N, _ = w1.size()`). 0 = tp.
  std::uint64_t moe_split = 0;
  //! Tokens the fused-MoE kernel runs at once (vllm_fused_moe_chunk_tokens); the workspace is
  //! sized for min(the MoE's tokens, this). 0 = no cap.
  std::uint64_t moe_chunk_tokens = 0;
};

//! VLLM_FUSED_MOE_CHUNK_SIZE of the release (empty or unparsable: the current one): 32,768 up to
//! 0.11, 16,384 for 0.12 - 0.17 (envs.py; fused_moe.py fused_experts_impl `M = min(num_tokens,
//! CHUNK_SIZE)`), none from 0.18 (the modular kernel's workspace takes every token: 0).
std::uint64_t vllm_fused_moe_chunk_tokens(std::string_view release);

VllmActivationFeatures vllm_activation_features(const ModelArch& arch, const VllmStageShape& shape);

//! True when the dense forward term is larger than the sampler term (the max() branch).
bool forward_dominates(const VllmActivationFeatures& f, const VllmActivationCoefficients& c);

//! Peak bytes (rounded to a byte) and its components with filled-in formulas.
std::vector<Component> vllm_activation(const VllmActivationFeatures& f,
                                       const VllmActivationCoefficients& c);

struct VllmActivationPoint {
  std::string id;
  VllmActivationFeatures features;
  double observed_bytes = 0;
};

struct VllmActivationFit {
  VllmActivationCoefficients coefficients;
  std::vector<double> residual_bytes;  //!< predicted - observed, per point
};

//! Least squares (Eigen, column-pivoting QR) of k32, c_h, c0 on `points`, re-deciding the
//! max() branch of each point until it is stable. With `fixed_framework` set, c_h and c0 are
//! taken from it and only k32 is fitted (families with too few distinct records).
VllmActivationFit fit_vllm_activation(const std::vector<VllmActivationPoint>& points,
                                      const VllmActivationCoefficients* fixed_framework = nullptr);

}  // namespace vramplan::memory
