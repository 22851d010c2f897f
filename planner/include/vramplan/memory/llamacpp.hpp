// vramplan/memory/llamacpp.hpp — llama.cpp's memory, buffer by buffer, as it logs them.
//
// Mirrors llama.cpp at commit 3f545bec (Aug 2026): the buffers a load prints ("CPU_Mapped model
// buffer size", "CPU_REPACK ...", "KV buffer size", "output buffer size", "compute buffer size")
// computed from the model and the command-line flags. Every function is pure (no I/O); the
// per-commit constants live in a LlamacppProfile read from data/engines/llamacpp.json.
// Mechanisms and sources: docs/llamacpp.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "vramplan/model/spec.hpp"

namespace vramplan {
class QuantCatalog;
struct GgufFileType;
}

namespace vramplan::llamacpp {

enum class FlashAttn { Off, On, Auto };  //!< -fa off|on|auto
enum class Device { Cpu, Cuda };         //!< the backend the layers are offloaded to

//! The llama.cpp flags that change memory, with llama.cpp's defaults.
struct Settings {
  std::uint64_t n_ctx = 4096;        //!< -c
  std::int64_t n_gpu_layers = -1;    //!< -ngl; negative = all layers and the output layer
  std::uint64_t n_ubatch = 512;      //!< -ub (physical micro-batch)
  std::uint64_t n_batch = 2048;      //!< -b (logical batch)
  FlashAttn flash_attn = FlashAttn::Auto;
  std::string type_k = "f16";        //!< -ctk
  std::string type_v = "f16";        //!< -ctv
  std::uint64_t n_parallel = 1;      //!< -np (n_seq_max)
  bool kv_unified = false;           //!< -kvu: one KV stream shared by all sequences
  bool swa_full = false;             //!< --swa-full
  bool repack = true;                //!< false = -nr / --no-repack
  Device device = Device::Cpu;
};

//! Per-commit constants (data/engines/llamacpp.json, each with its source there).
struct LlamacppProfile {
  std::string commit;
  std::uint64_t ctx_pad = 256;        //!< n_ctx and n_ctx_seq padding (llama-context.cpp)
  std::uint64_t swa_pad = 256;        //!< SWA cache cell padding (llama-kv-cache-iswa.cpp)
  std::uint64_t tensor_alignment = 32;  //!< GGUF data alignment and CPU buffer alignment
  std::vector<std::string> cache_types;   //!< accepted -ctk/-ctv values
  std::vector<std::string> repack_types;  //!< weight types the CPU backend repacks (AVX2)
  std::uint64_t repack_row_multiple = 8;  //!< rows (ne[1]) must divide into 8-row groups
  std::uint64_t cuda_context_bytes = 0;   //!< CUDA context per device (not in llama.cpp's log)
  std::string cuda_context_source;
};
LlamacppProfile load_profile(const std::filesystem::path& file);

//! The context llama.cpp builds from the flags (llama_context constructor).
struct Context {
  std::uint64_t n_ctx = 0;       //!< padded to ctx_pad (and a multiple of n_seq_max streams)
  std::uint64_t n_ctx_seq = 0;   //!< cells per KV stream
  std::uint64_t n_seq_max = 1;
  std::uint64_t n_streams = 1;   //!< 1 when unified, else n_seq_max
  std::uint64_t n_batch = 0;
  std::uint64_t n_ubatch = 0;    //!< min(n_ubatch, n_batch)
  std::uint64_t n_outputs_max = 0;
  std::uint64_t swa_pad = 256;   //!< the profile's SWA cell padding
  bool flash_attn = false;       //!< resolved (auto -> on: both backends have FA kernels)
};

//! Context or llama.cpp's refusal (its own log line), never an exception for a valid flag set.
struct ContextResult {
  std::optional<Context> context;
  std::string refusal;  //!< llama_init_from_model's error text when context is empty
};

//! Throws Error(Usage) for an unknown cache type or a zero size; refusals are results.
ContextResult make_context(const ModelArch& arch, const Settings& settings,
                           const LlamacppProfile& profile);

//! One llama_kv_cache (a model has one, or two with sliding-window layers: "non-SWA" + "SWA"; a
//! DeepSeek sparse-attention model adds its indexer's key cache, "indexer").
struct KvCache {
  std::string role;             //!< "" (single cache), "non-SWA", "SWA" or "indexer"
  std::uint64_t cells = 0;      //!< per stream
  std::uint64_t streams = 1;
  std::vector<int> layers;      //!< decoder layers stored in this cache
  std::string type_k, type_v;
  std::uint64_t k_bytes = 0;    //!< all layers, all streams
  std::uint64_t v_bytes = 0;    //!< 0 for MLA (no V tensor)
  std::uint64_t bytes() const { return k_bytes + v_bytes; }
};

//! K/V row widths of one layer as llama.cpp stores them (MLA: kv_lora_rank + rope dim, no V).
struct KvRow {
  std::uint64_t k_values = 0;
  std::uint64_t v_values = 0;
};
KvRow kv_row(const ModelArch& arch, int layer);

std::vector<KvCache> kv_caches(const ModelArch& arch, const Context& context,
                               const Settings& settings, const QuantCatalog& quant);

//! llama_memory_recurrent (src/llama-memory-recurrent.cpp; hybrid models keep it beside the KV
//! cache in llama_memory_hybrid): for each recurrent layer an f32 R row (the conv state,
//! hparams.n_embd_r) and an f32 S row (the SSM state, n_embd_s) per cell, and
//! max(1, n_seq_max) cells (llama_model::create_memory's recurrent_rs_size; n_rs_seq, the rollback
//! snapshots of speculative decoding, is 0 for llama-completion and llama-server without a draft).
struct RecurrentCache {
  std::vector<int> layers;     //!< the recurrent decoder layers
  std::uint64_t cells = 0;     //!< rows per layer
  std::uint64_t r_values = 0;  //!< n_embd_r: (d_conv - 1) x (d_inner + 2 n_group d_state)
  std::uint64_t s_values = 0;  //!< n_embd_s: d_state x d_inner
  std::uint64_t r_bytes = 0;   //!< all layers
  std::uint64_t s_bytes = 0;
  std::uint64_t bytes() const { return r_bytes + s_bytes; }
};

//! The recurrent state cache of a model with recurrent layers of a known (Mamba-2) shape; nullopt
//! when it has none. Throws Error(Usage) when a recurrent layer's shape is unknown.
std::optional<RecurrentCache> recurrent_cache(const ModelArch& arch, const Context& context);

//! One model buffer as load_tensors logs it.
struct ModelBuffer {
  std::string name;  //!< "CPU_Mapped", "CPU_REPACK", "CUDA0"
  bool on_gpu = false;
  std::uint64_t bytes = 0;
};

//! Where each tensor is loaded (-ngl: layers i >= n_layer - ngl on the GPU, the output layer on
//! the GPU when ngl > n_layer, the token embedding always on the host) and how the host part is
//! held (mmap'd span + repacked copies). Tensors are taken in `model.tensors` order, which is file
//! order for a GGUF-read spec. Throws Error(Usage) for a tensor with no stored bytes or format.
std::vector<ModelBuffer> model_buffers(const ModelSpec& model, const Settings& settings,
                                       const LlamacppProfile& profile, const QuantCatalog& quant);

//! The tensors llama-quantize writes for `model` at `file_type` (src/llama-quant.cpp mixture of an
//! F16 conversion, quant/gguf_mixture.hpp), each with its GGUF name, type and exact bytes, in file
//! order. `quant` must carry the scheme table. The attention layout is the converted
//! architecture's in llama.cpp: sliding / chunked layers stay only where llama.cpp's loader
//! windows that architecture (Gemma-2/3, Cohere2, gpt-oss, Llama-4); elsewhere they are full.
//! Vision / audio tower tensors are left out: the converter writes them to a separate mmproj GGUF.
ModelSpec gguf_model_spec(const ModelSpec& model, const GgufFileType& file_type, const QuantCatalog& quant);

//! Exact bytes of one tensor as stored (stored_bytes, else from its format and shape).
std::uint64_t stored_tensor_bytes(const TensorInfo& tensor, const QuantCatalog& quant);

//! True when the CPU backend would repack this tensor into CPU_REPACK.
bool is_repacked(const TensorInfo& tensor, const LlamacppProfile& profile);

//! Logits buffer reserved at context creation: n_vocab x n_seq_max x 4 B (host memory).
std::uint64_t output_buffer_bytes(const ModelArch& arch, const Context& context);

// ---- compute buffer: ggml-alloc replayed on the model's graph ----------------------------------

//! One tensor of a compute graph as ggml-alloc sees it (ggml/src/ggml-alloc.c).
struct GraphTensor {
  std::string name;
  std::uint64_t bytes = 0;      //!< ggml_nbytes (a view: of the viewed shape; it takes no memory)
  std::vector<int> src;         //!< indices of its sources (graph order is node order)
  int view_of = -1;             //!< view_src; a view takes no memory of its own
  bool can_inplace = false;     //!< ggml_op_can_inplace(op): may take over a dying source's memory
  bool contiguous = true;       //!< false for permuted / strided views (no in-place reuse)
  bool external = false;        //!< weights and KV cache: already in another buffer
  bool input = false;           //!< ggml_set_input leaf, allocated before any node
  bool output = false;          //!< ggml_set_output: never freed
};

//! A graph in ggml's order: leafs (inputs, weights) and nodes (ops) as ggml_build_forward_expand
//! visits them.
class ComputeGraph {
 public:
  int external(std::string name);
  int input(std::string name, std::uint64_t bytes);
  //! A tensor the builder creates without an op (ggml_new_tensor, e.g. the DSA mask's zeros): a
  //! leaf ggml-alloc allocates with the others, not a graph input (no host copy under CUDA).
  int leaf(std::string name, std::uint64_t bytes);
  //! An op producing `bytes` from `src` (can_inplace per ggml_op_can_inplace).
  int op(std::string name, std::uint64_t bytes, std::vector<int> src, bool can_inplace = false);
  //! A node that writes into an external tensor (SET_ROWS into the KV cache): no memory here.
  int store(std::string name, std::vector<int> src);
  //! A view / reshape / permute of `of` (contiguous = same layout as a fresh tensor of its shape);
  //! `bytes` is the size of the viewed shape (default: all of `of`).
  int view(std::string name, int of, bool contiguous = true, std::optional<std::uint64_t> bytes = std::nullopt);
  //! An op whose result is a view of its destination `into` (ggml_set_rows into a graph tensor):
  //! no memory of its own, every source in `src` (which holds `into`) consumed.
  int write_into(std::string name, int into, std::vector<int> src);
  void mark_output(int t) { tensors_.at(static_cast<std::size_t>(t)).output = true; }
  const std::vector<GraphTensor>& tensors() const { return tensors_; }
  const std::vector<int>& leafs() const { return leafs_; }
  const std::vector<int>& nodes() const { return nodes_; }

 private:
  int add(GraphTensor t, bool leaf);
  std::vector<GraphTensor> tensors_;
  std::vector<int> leafs_, nodes_;
};

//! The buffer ggml_gallocr reserves for `graph`: the dynamic allocator's high-water mark (best-fit
//! free blocks, the last block grows the buffer, freed neighbours merge; in-place reuse of a
//! source with one consumer and no views; a tensor freed after its last consumer).
std::uint64_t gallocr_peak(const ComputeGraph& graph, std::uint64_t alignment);

//! The micro-batch graph llama.cpp reserves (graph_reserve: n_tokens = n_outputs = n_ubatch, KV
//! views of the full cache), for the architectures of docs/llamacpp.md#compute-buffer. The tensor
//! inventory says what llama.cpp's builders test for (`if (layer.bq)`, `if (layer.attn_q_norm)`).
ComputeGraph llama_graph(const ModelSpec& model, const Context& context,
                         const std::vector<KvCache>& caches);

//! True when llama_graph follows this model type's own llama.cpp builder; other types are built as
//! llama (plus MoE / MLA from the architecture), an approximation.
bool graph_is_transcribed(const ModelArch& arch);

//! True when llama_graph transcribes this model type's recurrent (Mamba-1, Mamba-2, gated-DeltaNet)
//! and attention-free layers (Nemotron-H, dense or with routed experts; Granite-4.0-H; Falcon-H1;
//! Jamba; Qwen3.5; Qwen3-Next); other models with such layers have no graph here.
bool graph_has_recurrent_layers(const ModelArch& arch);

//! The compute buffer of the worst-case micro-batch graph.
struct ComputeEstimate {
  std::uint64_t bytes = 0;       //!< the device's compute buffer (ggml-alloc peak)
  std::uint64_t logits = 0;      //!< n_vocab x n_ubatch x 4, its largest tensor
  std::uint64_t host_bytes = 0;  //!< CUDA only: CUDA_Host compute buffer (inputs)
  std::size_t graph_nodes = 0;
  std::string explain;
};
ComputeEstimate compute_buffer(const ModelSpec& model, const Context& context,
                               const std::vector<KvCache>& caches, Device device);

//! Everything one llama.cpp load reserves.
struct Plan {
  bool ok = false;
  std::string refusal;  //!< llama.cpp's message when !ok
  Context context;
  std::vector<ModelBuffer> model;
  std::vector<KvCache> kv;
  std::optional<RecurrentCache> recurrent;  //!< hybrid / recurrent models ("RS buffer")
  std::uint64_t kv_gpu_bytes = 0;   //!< KV of offloaded layers (CUDA)
  std::uint64_t kv_host_bytes = 0;  //!< KV of host layers
  std::uint64_t rs_gpu_bytes = 0;   //!< recurrent state of offloaded layers
  std::uint64_t rs_host_bytes = 0;  //!< recurrent state of host layers
  std::uint64_t output_bytes = 0;   //!< host
  ComputeEstimate compute;
};
Plan plan(const ModelSpec& model, const Settings& settings, const LlamacppProfile& profile,
          const QuantCatalog& quant);

//! First decoder layer on the GPU and whether the output layer is there (llama-model.cpp).
struct Offload {
  std::uint64_t first_gpu_layer = 0;  //!< == n_layer when no layer is offloaded
  bool output_on_gpu = false;
};
Offload offload_split(std::uint64_t n_layer, const Settings& settings);

}  // namespace vramplan::llamacpp
