// One forward of a BERT-style encoder under transformers, allocation by allocation, through the
// caching allocator (memory/torch_allocator.hpp). The order of allocations and frees follows
// transformers 4.34 models/bert/modeling_bert.py (RobertaModel: the same code); tensors are freed
// where Python drops the last reference (a name rebound, a frame returning). See the header.
#include "vramplan/memory/hf_encoder_replay.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "vramplan/core/bytes.hpp"
#include "vramplan/memory/torch_allocator.hpp"

namespace vramplan::memory {
namespace {

using Handle = TorchCachingAllocator::Handle;

struct Sizes {
  std::uint64_t th = 0;      // one token-major activation: T x hidden x a
  std::uint64_t ti = 0;      // the intermediate: T x intermediate x a
  std::uint64_t sc = 0;      // one score matrix: n x heads x s x s x a
  std::uint64_t stats = 0;   // LayerNorm mean / rstd: T x 4 B (fp32 whatever the input)
  std::uint64_t mask = 0;    // the extended mask: n x s x a
  std::uint64_t pooled = 0;  // n x hidden x a
  std::uint64_t pos = 0;     // the position lookup: s x hidden x a (BERT), T x hidden x a (RoBERTa)
  std::uint64_t pos_ids = 0; // RoBERTa's per-token position ids (int64), 0 for BERT
};

class Forward {
 public:
  Forward(TorchCachingAllocator& a, const Sizes& z, bool eager) : a_(a), z_(z), eager_(eager) {}

  // F.layer_norm -> native_layer_norm returns (out, mean, rstd); under no_grad mean / rstd are
  // dropped as soon as the op returns.
  Handle layer_norm() {
    const Handle out = a_.malloc(z_.th);
    const Handle mean = a_.malloc(z_.stats), rstd = a_.malloc(z_.stats);
    a_.free(mean);
    a_.free(rstd);
    return out;
  }

  // BertEmbeddings.forward: word + token-type lookups, their sum, += positions (in place on the
  // sum, the position lookup allocated first), LayerNorm; dropout is the identity in eval.
  // RobertaEmbeddings.forward first builds per-token position ids from input_ids
  // (create_position_ids_from_input_ids: int64, n x s; its int32 temporaries are not replayed) and
  // looks them up per token, where BERT looks up one (1, s) row block.
  Handle embeddings() {
    std::optional<Handle> ids;
    if (z_.pos_ids > 0) ids = a_.malloc(z_.pos_ids);
    const Handle words = a_.malloc(z_.th), types = a_.malloc(z_.th), sum = a_.malloc(z_.th);
    const Handle positions = a_.malloc(z_.pos);
    const Handle out = layer_norm();
    for (Handle h : {words, types, sum, positions}) a_.free(h);
    if (ids) a_.free(*ids);
    return out;
  }

  // BertSelfAttention.forward (eager) and BertSelfOutput; returns the attention output.
  Handle attention() {
    const Handle q = a_.malloc(z_.th), k = a_.malloc(z_.th), v = a_.malloc(z_.th);  // query / key / value Linear
    Handle context = 0;
    if (eager_) {
      // torch.matmul(query_layer, key_layer.transpose(-1, -2)): both 4-D operands are permuted views,
      // and at::matmul folds them to 3-D for bmm with reshape(), which copies a non-viewable tensor.
      const Handle qc = a_.malloc(z_.th), kc = a_.malloc(z_.th);
      Handle scores = a_.malloc(z_.sc);
      a_.free(qc);
      a_.free(kc);
      // attention_scores / math.sqrt(head_size), then + attention_mask: each a new tensor, the
      // previous one dropped when the name is rebound.
      for (int op = 0; op < 2; ++op) {
        const Handle next = a_.malloc(z_.sc);
        a_.free(scores);
        scores = next;
      }
      const Handle probs = a_.malloc(z_.sc);  // softmax; `attention_scores` stays alive until return
      // torch.matmul(attention_probs, value_layer): value_layer is a permuted view, copied by reshape.
      const Handle vc = a_.malloc(z_.th);
      context = a_.malloc(z_.th);
      a_.free(vc);
      const Handle contiguous = a_.malloc(z_.th);  // context_layer.permute(0, 2, 1, 3).contiguous()
      a_.free(context);
      context = contiguous;
      // Return: the locals (query, key, value outputs, scores, probs) go with the frame.
      for (Handle h : {q, k, v, scores, probs}) a_.free(h);
    } else {
      // F.scaled_dot_product_attention (no score matrix), then transpose(1, 2).reshape(): a copy.
      const Handle out = a_.malloc(z_.th);
      context = a_.malloc(z_.th);
      a_.free(out);
      for (Handle h : {q, k, v}) a_.free(h);
    }
    // BertSelfOutput: dense, LayerNorm(hidden + input_tensor).
    const Handle dense = a_.malloc(z_.th), sum = a_.malloc(z_.th);
    const Handle out = layer_norm();
    for (Handle h : {dense, sum, context}) a_.free(h);
    return out;
  }

  // BertIntermediate (dense, GELU) and BertOutput (dense, LayerNorm(hidden + attention_output)).
  // feed_forward_chunk holds the intermediate output until BertOutput returns.
  Handle mlp(Handle attention_output) {
    const Handle up = a_.malloc(z_.ti), act = a_.malloc(z_.ti);
    a_.free(up);
    const Handle dense = a_.malloc(z_.th), sum = a_.malloc(z_.th);
    const Handle out = layer_norm();
    for (Handle h : {dense, sum, act}) a_.free(h);
    a_.free(attention_output);  // BertLayer.forward returns: the attention output goes
    return out;
  }

  // BertModel.forward with the inputs already on the device; returns its outputs
  // (last_hidden_state, pooler_output), which the caller holds.
  std::pair<Handle, Handle> run(std::uint64_t layers, bool& workspace_pending, std::uint64_t workspace,
                                std::optional<Handle>& workspace_block) {
    // get_extended_attention_mask: mask[:, None, None, :].to(dtype), (1.0 - mask), * finfo.min.
    const Handle m0 = a_.malloc(z_.mask), m1 = a_.malloc(z_.mask);
    a_.free(m0);
    const Handle extended = a_.malloc(z_.mask);
    a_.free(m1);
    // `embedding_output` stays bound in BertModel.forward until it returns: the first layer's
    // input is held through the whole encoder.
    const Handle embedding_output = embeddings();
    Handle hidden = embedding_output;
    for (std::uint64_t l = 0; l < layers; ++l) {
      if (workspace_pending) {  // the first GEMM of the process creates the handle's workspace
        workspace_block = a_.malloc(workspace);
        workspace_pending = false;
      }
      const Handle attn = attention();
      const Handle out = mlp(attn);
      if (hidden != embedding_output) a_.free(hidden);  // BertEncoder: hidden_states = layer_outputs[0]
      hidden = out;
    }
    // BertPooler: dense over the first token, tanh.
    const Handle dense = a_.malloc(z_.pooled), pooled = a_.malloc(z_.pooled);
    a_.free(dense);
    a_.free(extended);
    a_.free(embedding_output);
    return {hidden, pooled};
  }

 private:
  TorchCachingAllocator& a_;
  const Sizes& z_;
  bool eager_;
};

}  // namespace

bool hf_encoder_replay_applies(const ModelSpec& model) {
  return model.arch.family == "bert" || model.arch.family == "roberta";
}

std::uint64_t cublas_workspace_bytes(int compute_major) {
  return compute_major >= 9 ? 4096ull * 1024 * 8 : 4096ull * 1024 * 2 + 16ull * 1024 * 8;
}

HfEncoderReplay replay_hf_encoder_forward(const ModelSpec& model, const std::vector<std::uint64_t>& tensor_bytes,
                                          const EncoderForward& f, std::uint64_t cublas_workspace) {
  const auto& arch = model.arch;
  const std::uint64_t a = f.compute_bytes, n = f.inputs, s = f.seq_len;
  const std::uint64_t T = checked_mul(n, s, "tokens");
  Sizes z;
  z.th = checked_mul(checked_mul(T, arch.num_heads * arch.head_dim, "activation"), a, "activation");
  z.ti = checked_mul(checked_mul(T, arch.intermediate_size, "intermediate"), a, "intermediate");
  z.sc = checked_mul(checked_mul(checked_mul(n, arch.num_heads, "scores"), checked_mul(s, s, "scores"), "scores"), a, "scores");
  z.stats = checked_mul(T, 4, "layer norm stats");
  z.mask = checked_mul(T, a, "mask");
  z.pooled = checked_mul(n * arch.hidden_size, a, "pooled");
  const bool roberta = model.arch.family == "roberta";
  z.pos = roberta ? z.th : checked_mul(s * arch.hidden_size, a, "positions");
  z.pos_ids = roberta ? checked_mul(T, 8, "position ids") : 0;

  TorchCachingAllocator alloc;
  // model.to(device): one block per parameter in checkpoint order, then the int64 buffers
  // position_ids and token_type_ids (1 x max_position_embeddings each).
  for (const auto b : tensor_bytes)
    if (b > 0) alloc.malloc(b);
  const std::uint64_t positions = std::max<std::uint64_t>(arch.max_position_embeddings, 1);
  alloc.malloc(positions * 8);
  alloc.malloc(positions * 8);
  HfEncoderReplay r;
  r.weights_allocated = alloc.allocated();
  // The inputs (input_ids, attention_mask, token_type_ids: int64), kept across forwards.
  for (int i = 0; i < 3; ++i) alloc.malloc(checked_mul(T, 8, "inputs"));
  bool workspace_pending = true;
  std::optional<Handle> workspace;
  Forward fwd(alloc, z, f.eager_scores);
  // Identical forwards in a loop (warm-up, then the measured one), each output bound to a name
  // that the next call's result rebinds: the previous forward's outputs stay allocated while the
  // next one runs. sentence-transformers SentenceTransformer.encode rebinds `out_features =
  // self.forward(features)` per batch; optimum-benchmark's InferenceBenchmark.run_forward_tracking
  // runs `_ = backend.forward(...)`. The first forward leaves the cache in a state the next may
  // still grow; stop when a forward reserves nothing new.
  std::uint64_t before = 0;
  std::optional<std::pair<Handle, Handle>> previous;
  do {
    before = alloc.reserved();
    const auto out = fwd.run(arch.num_layers, workspace_pending, cublas_workspace, workspace);
    if (previous) {
      alloc.free(previous->first);
      alloc.free(previous->second);
    }
    previous = out;
    ++r.forwards;
  } while (alloc.reserved() != before && r.forwards < 4);
  r.peak_allocated = alloc.peak_allocated();
  r.reserved = alloc.reserved();
  r.workspace = workspace ? alloc.block_size(*workspace) : 0;
  return r;
}

}  // namespace vramplan::memory
