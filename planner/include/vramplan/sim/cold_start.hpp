// vramplan/sim/cold_start.hpp — what a freshly started vLLM V1 server pays the first time a forward
// of a new size launches a Triton kernel it has not compiled yet (`vramplan simulate --cold-start`,
// docs/simulator.md#cold-start).
//
// Mechanism, from the engines' source (file + function in docs/simulator.md#cold-start):
//  * vLLM runs an MoE layer with unquantized (and per-tensor FP8) weights through the Triton kernel
//    `fused_moe_kernel` (model_executor/layers/fused_moe/fused_moe.py `invoke_fused_moe_kernel`).
//    Its tile sizes are compile-time constants picked by the token count M: the tuned table's
//    entry whose batch size is nearest to M (`try_get_optimal_moe_config`; the tables' grid is
//    benchmarks/kernels/benchmark_moe.py's batch sizes).
//  * Triton compiles a @triton.jit function at its first launch for each new set of compile-time
//    values, and specialises every integer argument on "divisible by 16" (triton/runtime/jit.py
//    specialisation). Two of the kernel's integer arguments change with M: num_valid_tokens
//    (M x top_k) and EM, the length of the expert-sorted token list
//    (moe_align_block_size: M x top_k + E x (BLOCK_SIZE_M - 1), BLOCK_SIZE_M a multiple of 16,
//    so EM = M x top_k - E modulo 16).
//  * At start-up vLLM runs the profile forward of max_num_batched_tokens tokens
//    (gpu_model_runner.py `profile_run`) and captures CUDA graphs of 1..max capture size tokens
//    (`capture_model`; config/vllm.py `_set_cudagraph_sizes`: min(2 x max_num_seqs, 512), at most
//    max_num_batched_tokens). A later forward of at most that many tokens is padded to a captured
//    size and replays a graph whose kernels are compiled; a larger one runs the kernels eagerly
//    with its own M. So the variants compiled at start are those of the captured sizes and of the
//    profile forward; every other variant compiles at its first use, stalling that step.
// The cost of one first use is not in any source: it is a fitted constant (data/cold_start.json
// `vllm.compile_s`, with the record it was fitted on).
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "vramplan/io/data_root.hpp"
#include "vramplan/sim/simulator.hpp"

namespace vramplan::sim {

//! One compiled variant of the fused-MoE kernel: the tuned-table batch size whose tiles it uses
//! and the divisibility of its two token-count arguments.
struct FusedMoeVariant {
  std::uint64_t config_batch = 0;   //!< the tuned-table grid entry nearest to M
  bool valid_tokens_div16 = false;  //!< M x top_k divisible by 16
  bool sorted_len_div16 = false;    //!< EM divisible by 16
  auto operator<=>(const FusedMoeVariant&) const = default;
};

//! The grid entry nearest to `tokens` (ties to the smaller: Python's min keeps the first of
//! equal keys, and the tables list them in ascending order).
std::uint64_t nearest_tuned_batch(std::uint64_t tokens);

//! The variant a forward of `tokens` tokens launches in a model with `experts` routed experts
//! per layer (E) and `top_k` of them per token.
FusedMoeVariant fused_moe_variant(std::uint64_t tokens, std::uint64_t experts, std::uint64_t top_k);

//! What one server has compiled so far, carried from one run to the next on the same server.
struct ColdStartState {
  std::uint64_t experts = 0, top_k = 0;  //!< 0: a dense model (no fused-MoE kernel)
  std::uint64_t graph_tokens = 0;        //!< forwards of at most this many tokens replay graphs
  double compile_s = 0;                  //!< one first use (fitted)
  std::set<FusedMoeVariant> compiled;
  std::uint64_t first_uses = 0;          //!< stalls charged so far
  double stalled_s = 0;                  //!< their total

  //! Seconds the forward of `tokens` tokens adds (compile_s at a variant's first use, else 0);
  //! marks the variant compiled.
  double charge(std::uint64_t tokens);
};

//! A vLLM V1 server just started: the variants of its captured graphs and of its profile
//! forward compiled. `max_num_seqs`, `max_num_batched_tokens` as scheduled; `eager`:
//! --enforce-eager (no graphs captured).
ColdStartState vllm_fresh_server(std::uint64_t experts, std::uint64_t top_k, std::uint64_t max_num_seqs,
                                 std::uint64_t max_num_batched_tokens, bool eager, double compile_s);

//! The fitted cost of one first use, data/cold_start.json `vllm.compile_s` (Error(InputFile) when
//! the file lacks it).
double cold_start_compile_seconds(const DataRoot& root);

//! `base` plus the first-use stalls `state` charges (the state is updated as steps run).
StepClock with_cold_start(StepClock base, std::shared_ptr<ColdStartState> state);

}  // namespace vramplan::sim
