// sim::ColdStartState: the first-use compile stalls of a freshly started vLLM V1 server's fused-MoE
// Triton kernel (vramplan/sim/cold_start.hpp says the mechanism, docs/simulator.md#cold-start the
// sources).
#include "vramplan/sim/cold_start.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"

namespace vramplan::sim {

namespace {

// The batch sizes vLLM's tuning script benchmarks (benchmarks/kernels/benchmark_moe.py
// `batch_sizes`), hence the keys of every tuned table under
// model_executor/layers/fused_moe/configs/ (e.g. E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json,
// Mixtral-8x7B at TP 2). A table may give two keys the same tiles (one compiled kernel); the
// model counts one variant per key, which can overcount a stall where such keys meet.
constexpr std::array<std::uint64_t, 18> kTunedBatches = {1,   2,   4,   8,    16,   24,   32,   48,   64,
                                                         96,  128, 256, 512, 1024, 1536, 2048, 3072, 4096};

}  // namespace

std::uint64_t nearest_tuned_batch(std::uint64_t tokens) {
  std::uint64_t best = kTunedBatches.front();
  std::uint64_t best_gap = tokens > best ? tokens - best : best - tokens;
  for (const std::uint64_t b : kTunedBatches) {
    const std::uint64_t gap = tokens > b ? tokens - b : b - tokens;
    if (gap < best_gap) best = b, best_gap = gap;  // strict: ties keep the smaller (first) key
  }
  return best;
}

FusedMoeVariant fused_moe_variant(std::uint64_t tokens, std::uint64_t experts, std::uint64_t top_k) {
  FusedMoeVariant v;
  v.config_batch = nearest_tuned_batch(tokens);
  const std::uint64_t valid = tokens * top_k;  // num_valid_tokens = topk_ids.numel()
  v.valid_tokens_div16 = valid % 16 == 0;
  // EM = valid + E x (BLOCK_SIZE_M - 1) with BLOCK_SIZE_M a multiple of 16 in every tuned and
  // default config: EM = valid - E (mod 16).
  v.sorted_len_div16 = (valid + 16 * experts - experts % 16) % 16 == 0;
  return v;
}

double ColdStartState::charge(std::uint64_t tokens) {
  if (experts == 0 || top_k == 0 || tokens == 0 || tokens <= graph_tokens) return 0;
  if (!compiled.insert(fused_moe_variant(tokens, experts, top_k)).second) return 0;
  ++first_uses;
  stalled_s += compile_s;
  return compile_s;
}

ColdStartState vllm_fresh_server(std::uint64_t experts, std::uint64_t top_k, std::uint64_t max_num_seqs,
                                 std::uint64_t max_num_batched_tokens, bool eager, double compile_s) {
  ColdStartState s;
  s.experts = experts;
  s.top_k = top_k;
  s.compile_s = compile_s;
  // config/vllm.py _set_cudagraph_sizes: max capture size min(2 x max_num_seqs, 512), capped by
  // max_num_batched_tokens; --enforce-eager captures nothing.
  s.graph_tokens = eager ? 0 : std::min<std::uint64_t>({2 * max_num_seqs, 512, max_num_batched_tokens});
  // gpu_model_runner.py profile_run: one forward of max_num_batched_tokens tokens before serving.
  if (experts > 0 && top_k > 0 && max_num_batched_tokens > s.graph_tokens)
    s.compiled.insert(fused_moe_variant(max_num_batched_tokens, experts, top_k));
  return s;
}

double cold_start_compile_seconds(const DataRoot& root) {
  const auto path = root.data_file("cold_start.json");
  const nlohmann::json j = read_json_file(path);
  const auto* v = j.contains("vllm") ? &j.at("vllm") : nullptr;
  if (!v || !v->contains("compile_s") || !v->at("compile_s").is_number() || v->at("compile_s").get<double>() < 0)
    throw Error(ErrorKind::InputFile, path.string() + ": /vllm/compile_s: a non-negative number of seconds is required");
  return v->at("compile_s").get<double>();
}

StepClock with_cold_start(StepClock base, std::shared_ptr<ColdStartState> state) {
  return [base = std::move(base), state = std::move(state)](const perf::MixedStep& step) {
    return base(step) + state->charge(step.tokens());
  };
}

}  // namespace vramplan::sim
