// vramplan/memory/vllm_cuda_graphs.hpp — the CUDA graph pool vLLM V1 captures after sizing the KV
// cache ("Graph capturing finished in N secs, took X GiB").
//
// Mechanism (vllm/config/vllm.py set_cudagraph_sizes; docs/design/cuda_graphs.md): with
// torch.compile's piecewise split, every attention layer of the stage is a split point, so each
// captured batch size records one graph piece per layer. The batch sizes are
// [1, 2, 4] + range(8, 256, 8) + range(256, max_size + 1, 16) with
// max_size = min(2 x max_num_seqs, 512) (also capped by max_num_batched_tokens): 51 sizes for the
// server defaults. The pool therefore grows with (captured sizes x layers on the stage), plus a
// fixed part (the largest batch's output buffers, full decode graphs). Both coefficients are fitted
// on the vLLM 0.19 logs (tests/accuracy/vllm_cuda_graph_test.cpp); it stays an estimate.
#pragma once

#include <cstdint>

#include "vramplan/memory/component.hpp"

namespace vramplan::memory {

//! How many batch sizes vLLM captures by default.
std::uint64_t vllm_capture_size_count(std::uint64_t max_num_seqs, std::uint64_t max_num_batched_tokens);

struct VllmGraphCoefficients {
  double base_bytes = 0;       //!< fixed part of the pool
  double per_piece_bytes = 0;  //!< per (captured size x layer on the stage)
};

//! The pool of one stage holding `layers` decoder layers.
Component vllm_cuda_graphs(std::uint64_t layers, std::uint64_t max_num_seqs,
                           std::uint64_t max_num_batched_tokens, const VllmGraphCoefficients& c);

}  // namespace vramplan::memory
