// llama.cpp compute buffer: ggml-alloc's reservation for the worst-case micro-batch graph
// (graph_reserve with n_tokens = n_outputs = n_ubatch), replayed on the model's graph.
// Mechanism and accuracy: docs/llamacpp.md#compute-buffer, docs/accuracy-llamacpp.md.
#include <cstdio>
#include <string>

#include "vramplan/core/bytes.hpp"
#include "vramplan/memory/llamacpp.hpp"

namespace vramplan::llamacpp {
namespace {

constexpr std::uint64_t kF32ComputeBytes = 4;
// ggml_backend_buft_get_alignment: the CPU buffer type aligns tensors to 32 B (ggml-cpu
// TENSOR_ALIGNMENT), CUDA buffers to 128 B (ggml-cuda.cu).
constexpr std::uint64_t kCpuAlignment = 32, kCudaAlignment = 128;

std::string mib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

ComputeEstimate compute_buffer(const ModelSpec& model, const Context& c,
                               const std::vector<KvCache>& caches, Device device) {
  const ModelArch& a = model.arch;
  ComputeEstimate e;
  const ComputeGraph graph = llama_graph(model, c, caches);
  e.graph_nodes = graph.nodes().size();
  e.bytes = gallocr_peak(graph, device == Device::Cuda ? kCudaAlignment : kCpuAlignment);
  e.logits = checked_mul(checked_mul(a.vocab_size, c.n_ubatch), kF32ComputeBytes, "logits");
  e.explain = "ggml-alloc peak of the " + std::to_string(c.n_ubatch) + "-token graph (" +
              std::to_string(e.graph_nodes) + " nodes, flash attention " + (c.flash_attn ? "on" : "off") +
              ") = " + mib(e.bytes) + "; its largest tensor is the logits " + mib(e.logits) + " (n_vocab " +
              std::to_string(a.vocab_size) + " x n_ubatch " + std::to_string(c.n_ubatch) + " x 4 B)";
  if (!graph_is_transcribed(a))
    e.explain += "; approximate: no transcription of llama.cpp's '" + a.model_type + "' graph, built as llama";
  // CUDA (estimate, not checked against a log of this commit): ggml_backend_sched keeps the graph
  // inputs on the CPU backend and runs the token-embedding GET_ROWS there (token_embd stays in host
  // memory), so the CUDA_Host compute buffer holds every input plus the gathered embeddings.
  if (device == Device::Cuda) {
    std::uint64_t inputs = 0;
    for (int leaf : graph.leafs())
      if (graph.tensors()[static_cast<std::size_t>(leaf)].input)
        inputs = checked_add(inputs, graph.tensors()[static_cast<std::size_t>(leaf)].bytes);
    e.host_bytes = checked_add(inputs, checked_mul(checked_mul(a.hidden_size, c.n_ubatch), kF32ComputeBytes));
  }
  return e;
}

std::uint64_t output_buffer_bytes(const ModelArch& a, const Context& c) {
  // llama_context reserves logits for n_seq_max outputs at creation (output_reserve).
  return checked_mul(checked_mul(a.vocab_size, c.n_seq_max), kF32ComputeBytes, "output buffer");
}

}  // namespace vramplan::llamacpp
