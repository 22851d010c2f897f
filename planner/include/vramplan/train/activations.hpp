// vramplan/train/activations.hpp — the tensors autograd keeps between forward and backward, per
// GPU: per decoder layer (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", §4, adapted to RMSNorm computed in fp32, GQA, SwiGLU and MoE), times the
// layers and micro-batches a GPU holds, plus the logits and the loss.
//
// Per token and layer, activation dtype b (2 for bf16), what PyTorch saves (HF / torchtune /
// LitGPT Llama-style blocks; a linear layer saves its input only when its weight trains —
// autograd's generated code guards every saved tensor by the gradients it feeds):
//   each RMSNorm      4h (fp32 input, x.to(float32)) + 4 (rstd) + b h (normalised, for x weight)
//   each LayerNorm    b h (input) + 8 (mean, rstd): torch.nn.LayerNorm is one native_layer_norm,
//                     whose backward takes input, mean and rstd (aten derivatives.yaml), not an fp32
//                     copy or the output. A norm with a bias is a LayerNorm (the model inventory).
//   norms per layer   as the model has them: Phi-2 and Falcon-7B run attention and MLP in parallel
//                     on one shared input_layernorm (HF PhiDecoderLayer / FalconDecoderLayer, LitGPT
//                     shared_attention_norm), most blocks have two, Gemma-2 / 3 four (input,
//                     post_attention, pre_feedforward, post_feedforward: Gemma2DecoderLayer.forward),
//                     post-norm encoders (BERT) two after the sublayers.
//   q / k norms       per normalised row of q and k (Qwen3, Gemma-3 q_norm / k_norm over head_dim):
//                     4 q + 4 (q / width) + b q, and the same for kv (inside attention: TP-split)
//   q/k/v input       b h           (when any of q, k, v trains or carries an adapter)
//   attention, flash  b (2 q + 2 kv) (q, k, v, out) + 4 a (logsumexp)          q = a d, kv = a_kv d
//   attention, eager  b (q + 2 kv) + a s (4 + b) (fp32 softmax output + its bf16 cast) + b q
//   o_proj input      b q           (when it trains / carries an adapter)
//   gate/up input     b h           (when gate or up trains / carries an adapter)
//   SwiGLU            3 b I (gate out for SiLU, SiLU out and up out for the product)
//   GELU MLP          b I (fc1 out for the GELU)
//   down input        b I           (when down trains / carries an adapter)
//   MoE               the MLP terms with I = moe_intermediate x experts_per_token, plus the
//                     dispatched copies of the input, b h k, and the shared experts' MLP terms
// Recomputation (activation checkpointing per block): selective drops the s-proportional eager
// attention terms (Korthikanti §4.2) and rematerialises one layer's of them in backward
// (`recomputed_attention`); full keeps only the block input, b h, and rematerialises one block
// during backward.
// Op-level selective recomputation (torchtitan, --grad-checkpointing selective-op;
// torchtitan/parallelisms/parallelize_llama.py _apply_ac_to_transformer_block, commit 9dec370:
// _save_list = {aten.mm, SDPA flash / efficient, reduce_scatter, max}, and _custom_policy
// recomputes every second mm): a dense SwiGLU block with flash attention keeps its input b h and
// the outputs of mm 1, 3, 5, 7 in call order (wq -> b q, wv -> b kv, w1 -> b I, w2 -> b h) and of
// SDPA (b q + 4 a logsumexp); backward rematerialises the rest of one block.
// Parallelism: TP divides the terms inside attention and MLP; the h-sized terms (norms, block
// input) only with sequence parallelism; CP divides the tokens; the first pipeline stage holds
// min(PP, micro-batches per step) in flight under 1F1B (Korthikanti §4.2.3; Megatron-LM
// megatron/core/pipeline_parallel/schedules.py forward_backward_pipelining_without_interleaving:
// num_warmup_microbatches = min(pp_size - pp_rank - 1, num_microbatches), then one more forward
// before the first backward while any remain).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/memory/component.hpp"
#include "vramplan/model/spec.hpp"
#include "vramplan/train/train_setup.hpp"

namespace vramplan::train {

enum class Recompute { None, Selective, Full };
enum class AttentionImpl { Flash, Eager };  //!< Flash covers SDPA's flash / memory-efficient kernels

//! How the loss treats the logits, per token and vocabulary entry V (b = activation width):
//!   Fp32      the loss upcasts (transformers >= 4.46 ForCausalLMLoss logits.float(), torchtune):
//!             logits b + fp32 log-softmax 4 kept, + 4 for one chunk's upcast / gradient
//!   Bf16      cross_entropy on the bf16 logits (LitGPT bf16-true): b + b kept, + b transient
//!   HfLegacy  transformers <= 4.45: logits.float() in the model's forward (the fp32 logits are
//!             returned, the bf16 ones freed), loss on shift_logits.contiguous() (another fp32
//!             copy): 4 + 4 + 4 kept, + 4 transient
enum class LossImpl { Fp32, Bf16, HfLegacy };
LossImpl loss_from_name(std::string_view name);  //!< fp32, bf16, hf-legacy
std::string_view loss_name(LossImpl l);

Recompute recompute_from_name(std::string_view name);       //!< none, selective, full
AttentionImpl attention_from_name(std::string_view name);   //!< flash (sdpa), eager
std::string_view recompute_name(Recompute r);
std::string_view attention_name(AttentionImpl a);

//! Which linear layers save their input (their weight or an adapter on them trains).
struct SavedLinearInputs {
  bool qkv = true, o = true, gate_up = true, down = true;
};

struct ActivationInput {
  ModelArch arch;
  bool gated_mlp = true;  //!< SwiGLU / GeGLU (gate, up, down) rather than fc1 / fc2
  std::uint64_t norms_per_layer = 2;  //!< pre-attention / pre-MLP norms of one block (norm_layout())
  bool layer_norm = false;            //!< LayerNorm (has a bias) rather than RMSNorm
  std::uint64_t micro_batch = 1, seq_len = 2048;
  Recompute recompute = Recompute::None;
  //! With Recompute::Selective: torchtitan's op-level policy instead of Korthikanti's (see above).
  bool selective_op = false;
  AttentionImpl attention = AttentionImpl::Flash;
  std::uint64_t act_bytes = 2;  //!< bf16 / fp16 activations
  //! Width of the hidden states between and inside blocks where the model keeps them in fp32:
  //! PEFT's prepare_model_for_kbit_training upcasts the embedding and the RMSNorm weights to fp32
  //! (peft/utils/other.py), so the embedding output, every norm output (fp32 weight x normalised)
  //! and the residual adds are fp32, and bitsandbytes' Linear4bit returns its input's dtype
  //! (bnb/nn/modules.py Linear4bit.forward: out.to(inp_dtype)): the block input kept under
  //! recomputation and the SwiGLU gate / up outputs are 4 B wide. 0 = act_bytes.
  std::uint64_t residual_bytes = 0;
  SavedLinearInputs saved;
  //! Adapter side branch per token and layer (LoRA dropout copies, rank-sized outputs), bytes.
  std::uint64_t adapter_bytes_per_token_layer = 0;
  Parallelism parallel;
  bool sequence_parallel = false;
  //! Cross-entropy in this many chunks (torchtune CEWithChunkedOutputLoss: 8); 1 = whole logits.
  std::uint64_t loss_chunks = 1;
  LossImpl loss = LossImpl::Fp32;
  //! Micro-batches per optimizer step (gradient accumulation): under PP with 1F1B the first stage
  //! holds min(PP, this) in flight.
  std::uint64_t micro_batches{1};
  //! RMSNorms on q and k inside attention (Qwen3 / Gemma-3 q_norm, k_norm over head_dim,
  //! transformers Qwen3Attention.forward: self.q_norm(self.q_proj(x).view(..., head_dim))): each
  //! keeps its fp32 input, one fp32 rstd per normalised row and the normalised output, as the
  //! block's norms do. The width each row is normalised over (head_dim, or the whole projection);
  //! 0 = no q / k norms.
  std::uint64_t qk_norm_width{0};
};

struct Activations {
  std::vector<memory::Component> parts;     //!< on the GPU shown
  std::uint64_t per_token_layer = 0;        //!< saved bytes per token per layer, no recompute, before splits
};

//! Throws Error(Usage) for a zero batch or length, or a sequence CP does not divide.
Activations activations(const ActivationInput& in);

//! True when the inventory has separate gate projections (SwiGLU / GeGLU).
bool has_gated_mlp(const ModelSpec& spec);
//! The first block's norms over the hidden state (AttnNorm, FfnNorm, AttnPostNorm, FfnPostNorm
//! weights; 2 when the inventory has none), whether they are LayerNorms (a bias vector beside the
//! weight), and its q / k norms (AttnQNorm / AttnKNorm: qk_norm_width).
void norm_layout(const ModelSpec& spec, ActivationInput& in);

}  // namespace vramplan::train
