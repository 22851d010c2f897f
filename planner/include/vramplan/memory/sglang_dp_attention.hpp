// vramplan/memory/sglang_dp_attention.hpp — SGLang's DP attention (`--tp T --dp D
// --enable-dp-attention`): one server of T GPUs whose attention runs as D data-parallel ranks of
// A = T / D GPUs each, while the MoE / MLP layers run over all T on every rank's tokens gathered.
// Read from the 0.5.6.post1, 0.5.7, 0.5.8 and 0.5.9 wheels (docs/research/sglang-dp-attention.md):
//   server_args.py _handle_data_parallelism: tp % dp == 0 asserted; schedule_conservativeness x 0.3;
//       chunked_prefill_size // dp (a rank's chunk); _handle_gpu_memory_settings, which runs first
//       (the undivided chunk), adds cuda_graph_max_bs x dp x 3 MiB (+ x 1.5 above 300) to the
//       reserve before its 10 GiB floor;
//   weights (models/deepseek_v2.py, qwen3_moe.py): the attention projections over A
//       (DeepseekV2AttentionMLA / Qwen3MoeAttention: tp_size = attn_tp_size), the routed experts
//       and the dense MLP over T as before, the lm_head over T (over A with --enable-dp-lm-head),
//       the token embedding replicated (VocabParallelEmbedding enable_tp = not DP attention) up to
//       0.5.7, over A from 0.5.9 (use_attn_tp_group; 0.5.8: DeepSeek over A, Qwen2/3-MoE replicated);
//   KV pool (profile_max_num_token): the usual rest / cell per GPU, with KV heads over A
//       (get_num_kv_heads(attn_tp_size); an MLA latent is whole anyway): one pool per DP rank, so
//       the server holds D of them, and a request lives in one (each rank its own radix cache);
//   each rank's scheduler runs min(the user's --max-running-requests / D, ...) (tp_worker.py /
//       model_runner.py: max_running_requests // dp_size).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/sglang_dsa.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::memory {

struct SglangDpAttention {
  bool on = false;
  std::uint64_t dp = 1;       //!< DP ranks (--dp-size); 1 when off
  std::uint64_t attn_tp = 0;  //!< GPUs of one rank, tp / dp (0 when off)
  bool dp_lm_head = false;    //!< --enable-dp-lm-head
  std::uint64_t embedding_tp = 0;  //!< the token embedding's group: 1 (replicated) or attn_tp
  //! What the release's default mem_fraction_static reserves for the gathered CUDA-graph buffers,
  //! and that reserve's formula for the plan's notes.
  double reserve_mib = 0;
  std::string reserve_explain;
  //! The group sizes the weights split over (ShardOptions attention_tp / embedding_tp / head_tp).
  void apply(ShardOptions& shard) const;
  std::string explain;  //!< one sentence for the plan's notes ("" when off)
};

//! Why a DP-attention plan shows no decode / TTFT figures, for `plan` and `check` to say: its D
//! ranks step in lockstep, which only the serving simulator times (perf::dp_attention_step_seconds).
inline constexpr std::string_view kDpAttentionUnmodelled =
    "SGLang DP attention: the ranks' attention and the MoE over their gathered tokens step in lockstep, which "
    "'vramplan simulate' times (perf::dp_attention_step_seconds); the single-engine decode, TTFT and batch figures "
    "of plan and check do not apply (docs/simulator.md#dp-attention)";

//! Reads --dp-size, --enable-dp-attention and --enable-dp-lm-head for a server of `tp` GPUs with
//! `cuda_graph_max_bs` (the release's default or the user's). Throws Error(Usage), with SGLang's
//! own check, for a dp that does not divide tp, a --dp-size above 1 without DP attention (D
//! separate servers: plan one with --replicas) or --enable-dp-lm-head without DP attention.
SglangDpAttention sglang_dp_attention(const EngineArgs& a, const ModelArch& arch, const SglangRelease& release,
                                      std::uint64_t tp, std::uint64_t cuda_graph_max_bs);

}  // namespace vramplan::memory
