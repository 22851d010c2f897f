// vramplan/train/adapters.hpp — LoRA / DoRA / QLoRA: which linear layers get an adapter (target
// names as PEFT, torchtune and LitGPT spell them), the adapter tensors, the frozen base in its
// stored format (bf16, LLM.int8, NF4 with or without double quantization — sizes from
// data/quant_formats.json), the dequantization buffer and the adapters' extra activations.
//
//   LoRA on a linear {out, in}: A {r, in} and B {out, r}          (PEFT tuners/lora/layer.py update_layer)
//   DoRA adds the magnitude vector {out}                          (PEFT lora/dora.py DoraLinearLayer)
//   activations per token and target: lora_A's output r x b (saved by lora_B); with dropout > 0,
//   dropout(x) in x b and its mask in x 1; DoRA also keeps the base output out x b (it rescales it).
//   4-bit / 8-bit bases: bitsandbytes dequantizes one linear's weight to the compute dtype for each
//   forward and backward matmul (bnb/autograd/_functions.py MatMul4Bit): the largest such weight
//   in bf16 is the transient buffer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vramplan/model/spec.hpp"
#include "vramplan/train/activations.hpp"
#include "vramplan/train/model_states.hpp"

namespace vramplan {
class QuantCatalog;
}

namespace vramplan::train {

struct AdapterSetup {
  Method method = Method::Lora;
  std::uint64_t rank = 8;
  //! Comma-separated module names: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj
  //! (PEFT), w1 / w2 / w3 / output_proj (torchtune), query / key / value / projection / mlp / head (LitGPT lora_*),
  //! c_attn / query_key_value / qkv_proj (fused), lm_head / output, or "all-linear".
  std::string targets = "q_proj,v_proj";
  //! Stored format of the frozen base's linear layers: "bf16", "bnb-int8", "nf4", "nf4-dq" (any
  //! data/quant_formats.json name). QLoRA defaults to nf4-dq.
  std::string base_format = "bf16";
  std::uint64_t base_bytes = 2;  //!< dtype of the frozen tensors that stay unquantized
  //! torchtune quantizes only the adapted linears (lora_*_qlora builders); bitsandbytes via
  //! transformers quantizes every linear in the decoder blocks.
  bool quantize_targets_only = false;
  bool dropout = false;  //!< lora_dropout > 0 (LitGPT 0.05; PEFT and torchtune default 0)
  //! PEFT prepare_model_for_kbit_training casts every fp16 / bf16 parameter that is not quantized
  //! (embedding, norms, lm_head) to fp32 (peft/utils/other.py); applies with a quantized base.
  bool upcast_unquantized = false;
  //! Quantize the lm_head too: Lightning Fabric's BitsandbytesPrecision (LitGPT --quantize bnb.*)
  //! replaces every torch.nn.Linear built under its init context, lm_head included
  //! (lightning/fabric/plugins/precision/bitsandbytes.py init_context: _ClassReplacementContextManager
  //! {"torch.nn.Linear": linear_cls}, no ignore_modules from LitGPT). transformers + bnb skip it.
  bool quantize_head = false;
  //! The quantization state is fp16 while compute is bf16: Fabric's _Linear4bit._quantize_weight
  //! quantizes weight.to(dtype=torch.half), so bnb's MatMul4Bit dequantizes to fp16 and then casts
  //! to the input's bf16 (F.dequantize_4bit(B, state).to(A.dtype)): two copies of the weight alive
  //! at each matmul instead of one.
  bool dequant_via_fp16 = false;
  //! q / k / v adapters on one fused projection: LitGPT's CausalSelfAttention has one `attn` Linear
  //! for q, k and v, and LoRAQKVLinear.forward applies one lora_dropout to the block input for all
  //! enabled parts (litgpt/lora.py: after_A = F.linear(self.lora_dropout(x), self.lora_A)), so a
  //! catalogue model with separate q / k / v projections keeps one dropped copy, not one per part.
  bool fused_qkv_dropout = false;
};

//! Whether the frozen base's linears are stored in a quantized format (anything but bf16 / fp16).
//! The frozen base QLoRA quantizes to when none is named: NF4 with double quantization (the QLoRA
//! paper's recipe, and PEFT / bitsandbytes examples' BitsAndBytesConfig).
inline constexpr const char* kQloraDefaultBase = "nf4-dq";
inline bool quantized_base(const AdapterSetup& s) { return s.base_format != "bf16" && s.base_format != "fp16"; }

//! The roles a target list names; Error(Usage) for a name vramplan does not know.
std::vector<TensorRole> lora_target_roles(std::string_view targets);

struct AdapterPlan {
  std::vector<ParamTensor> tensors;  //!< frozen base + trainable adapters
  SavedLinearInputs saved;
  //! The linear inputs bitsandbytes keeps as a ctx attribute (MatMul4Bit / MatMul8bitLt:
  //! ctx.tensors = (A, B)), which backward does not release: they live as long as the graph does
  //! (TrainRequest::holds_previous_graph). bnb_head: the lm_head is one of them.
  SavedLinearInputs bnb_saved{false, false, false, false};
  bool bnb_head = false;
  std::uint64_t adapter_params = 0;
  std::uint64_t adapter_bytes_per_token_layer = 0;  //!< activations of the adapter branch, first layer
  std::uint64_t dequant_buffer = 0;                 //!< bytes, 0 for a bf16 base
  std::uint64_t targeted_modules = 0;
};

//! `adapter_bytes` is the adapters' dtype width (the recipe's weight bytes).
AdapterPlan adapter_plan(const ModelSpec& spec, const AdapterSetup& setup, const QuantCatalog& formats,
                         std::uint64_t act_bytes);

}  // namespace vramplan::train
