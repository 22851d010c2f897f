// SGLang DP attention: docs/research/sglang-dp-attention.md has the source read for every rule.
#include "vramplan/memory/sglang_dp_attention.hpp"

#include "vramplan/core/error.hpp"

namespace vramplan::memory {

void SglangDpAttention::apply(ShardOptions& shard) const {
  if (!on) return;
  shard.attention_tp = attn_tp;
  if (dp_lm_head) shard.head_tp = attn_tp;
  shard.embedding_tp = embedding_tp;
}

SglangDpAttention sglang_dp_attention(const EngineArgs& a, const ModelArch& arch, const SglangRelease& release,
                                      std::uint64_t tp, std::uint64_t cuda_graph_max_bs) {
  SglangDpAttention d;
  const std::uint64_t dp = arg_u64(a, "dp-size").value_or(1);
  if (dp == 0) throw_usage("--dp-size must be >= 1");
  const bool wanted = arg_switch(a, "enable-dp-attention");
  d.dp_lm_head = arg_switch(a, "enable-dp-lm-head");
  // server_args.py _handle_data_parallelism: dp_size 1 turns DP attention (and the DP lm_head) off.
  if (dp == 1) {
    if (d.dp_lm_head && !wanted)
      throw_usage("--enable-dp-lm-head needs --enable-dp-attention (server_args.py _handle_data_parallelism asserts it)");
    d.dp_lm_head = false;
    return d;
  }
  if (!wanted)
    throw_usage("--dp-size " + std::to_string(dp) + " without --enable-dp-attention starts " + std::to_string(dp) +
                " separate servers of --tp-size GPUs each (managers/data_parallel_controller.py): plan one with "
                "--replicas " + std::to_string(dp));
  // The model code read for these rules (models/deepseek_v2.py, qwen3_moe.py / qwen2_moe.py):
  // DeepSeek-style MLA MoE models and Qwen2/3-MoE. Others split their layers their own way.
  const bool read = (arch.kv_lora_rank > 0 && arch.num_experts > 0) || arch.architecture == "Qwen3MoeForCausalLM" ||
                    arch.architecture == "Qwen2MoeForCausalLM";
  if (!read)
    throw_usage("--enable-dp-attention: SGLang's DP-attention layout is modelled for DeepSeek-style MLA MoE models and "
                "Qwen2/3-MoE (models/deepseek_v2.py, qwen3_moe.py), not " + arch.architecture);
  if (tp % dp != 0)
    throw_usage("--dp-size " + std::to_string(dp) + " must divide --tp-size " + std::to_string(tp) +
                " (server_args.py _handle_data_parallelism: tp_size % dp_size == 0)");
  d.on = true;
  d.dp = dp;
  d.attn_tp = tp / dp;
  // The token embedding: VocabParallelEmbedding(enable_tp = not DP attention), whole on every GPU,
  // up to 0.5.7; over the attention group (use_attn_tp_group) from 0.5.8 for DeepSeek
  // (deepseek_v2.py) and from 0.5.9 for Qwen2/3-MoE (qwen2_moe.py), taken here for every model.
  const bool mla = arch.kv_lora_rank > 0;
  d.embedding_tp = release.at_least({0, 5, 9}) || (mla && release.at_least({0, 5, 8})) ? d.attn_tp : 1;
  // _handle_gpu_memory_settings: the gathered buffers of every rank's CUDA graphs.
  const bool large_graphs = cuda_graph_max_bs > 300;
  d.reserve_mib = static_cast<double>(cuda_graph_max_bs) * static_cast<double>(dp) * (large_graphs ? 4.5 : 3.0);
  d.reserve_explain = "mem_fraction_static reserve + cuda_graph_max_bs " + std::to_string(cuda_graph_max_bs) + " x dp " +
                      std::to_string(dp) + " x " + (large_graphs ? "(3 + 1.5)" : "3") +
                      " MiB for DP attention's gathered graph buffers (server_args.py _handle_gpu_memory_settings)";
  d.explain = "DP attention: " + std::to_string(dp) + " ranks of " + std::to_string(d.attn_tp) +
              " GPU(s) each run their own requests, token pool and radix cache; the attention projections split over " +
              std::to_string(d.attn_tp) + ", the MoE / MLP layers over all " + std::to_string(tp) +
              " on every rank's tokens gathered, the token embedding " +
              (d.embedding_tp == 1 ? std::string("whole on every GPU") : "over " + std::to_string(d.attn_tp)) +
              " (models/deepseek_v2.py, layers/dp_attention.py)";
  return d;
}

}  // namespace vramplan::memory
