// vramplan/model/spec.hpp — the one description of a model every later layer reads.
//
// Whatever a model comes from (catalogue entry, HF config.json, safetensors headers, GGUF header),
// it becomes a ModelSpec: the architecture hyper-parameters the KV-cache / activation code needs
// (ModelArch) plus ONE tensor inventory (name, role, shape, layer, stored format). Weights,
// quantization and sharding code walk the inventory; parameter counts are sums over it, never a
// separate formula.
//
// Shapes are outermost-first (PyTorch order): a linear layer's weight is {out_features,
// in_features}; a stacked expert tensor is {n_experts, out, in}. The last dimension is the
// contiguous row that block quantization formats cut into blocks. (GGUF stores ne[] innermost
// first; the GGUF reader reverses it.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vramplan {

//! What a tensor does. Names follow llama.cpp's tensor names (token_embd, attn_v, ffn_down, ...)
//! because the GGUF quantization mixture rules, sharding rules and "what stays in higher
//! precision" rules are all keyed on them. The table of names is in model/tensor_role.cpp.
enum class TensorRole {
  TokenEmbedding,     // token_embd
  PositionEmbedding,  // pos_embd (learned absolute positions)
  Output,             // output (lm_head)
  OutputNorm,         // output_norm
  AttnNorm,           // attn_norm (input_layernorm)
  AttnQ,              // attn_q
  AttnK,              // attn_k
  AttnV,              // attn_v
  AttnQKV,            // attn_qkv (fused, Phi-3 / Falcon)
  AttnOutput,         // attn_output (o_proj)
  AttnQNorm,          // attn_q_norm (Qwen3, Gemma-3 per-head-dim norms)
  AttnKNorm,          // attn_k_norm
  AttnPostNorm,       // post_attention_norm (Gemma-2/3 sandwich norms)
  AttnSinks,          // attn_sinks (gpt-oss per-head sink logits)
  AttnQA,             // attn_q_a        (MLA q down-projection, q_lora_rank)
  AttnQANorm,         // attn_q_a_norm
  AttnQB,             // attn_q_b        (MLA q up-projection)
  AttnKVAMqa,         // attn_kv_a_mqa   (MLA kv down-projection + rope key)
  AttnKVANorm,        // attn_kv_a_norm
  AttnKVB,            // attn_kv_b       (MLA kv up-projection; llama.cpp may split k_b / v_b)
  IndexerQB,          // indexer.attn_q_b (DeepSeek sparse attention's indexer: q from the q latent)
  IndexerK,           // indexer.attn_k   (its one key head, from the hidden state)
  IndexerKNorm,       // indexer.k_norm   (LayerNorm of that key)
  IndexerProj,        // indexer.proj     (per-head score weights, kept unquantized)
  FfnNorm,            // ffn_norm (post_attention_layernorm in HF Llama naming)
  FfnPostNorm,        // post_ffw_norm (Gemma-2/3)
  FfnGate,            // ffn_gate
  FfnUp,              // ffn_up
  FfnDown,            // ffn_down
  FfnGateUp,          // fused gate+up (Phi-3 gate_up_proj)
  FfnGateInp,         // ffn_gate_inp (MoE router)
  FfnExpProbsBias,    // exp_probs_b (DeepSeek-V3 e_score_correction_bias)
  FfnGateExps,        // ffn_gate_exps (stacked routed experts, {E, I_e, h})
  FfnUpExps,          // ffn_up_exps
  FfnDownExps,        // ffn_down_exps
  FfnGateUpExps,      // fused stacked gate+up experts (gpt-oss)
  FfnGateShexp,       // ffn_gate_shexp (shared experts)
  FfnUpShexp,         // ffn_up_shexp
  FfnDownShexp,       // ffn_down_shexp
  FfnGateInpShexp,    // ffn_gate_inp_shexp (Qwen2-MoE shared-expert gate)
  FfnLatentDown,      // ffn_latent_down (latent MoE: hidden -> moe_latent_size before the routed experts)
  FfnLatentUp,        // ffn_latent_up   (latent MoE: back to hidden after them)
  RopeFreqs,          // rope_freqs (llama3 / longrope factors stored in the file)
  Recurrent,          // state-space / linear-attention weights (Mamba, DeltaNet)
  Vision,             // vision tower / projector (multimodal)
  Audio,              // audio encoder
  Mtp,                // multi-token-prediction module (DeepSeek-V3 layer 61), reported separately
  Other,              // anything else (named, counted, never guessed about)
};

std::string_view tensor_role_name(TensorRole role);  //!< "attn_v", "ffn_down_exps", ...
std::optional<TensorRole> tensor_role_from_name(std::string_view name);

//! True for the stacked expert tensors whose first dimension is the expert index.
bool is_routed_expert_role(TensorRole role);
//! True for a multimodal tower's tensors: convert_hf_to_gguf.py --mmproj writes them to the projector
//! file, apart from the text model (llama.cpp loads them through tools/mtmd).
bool is_mmproj_role(TensorRole role);

struct TensorInfo {
  std::string name;                 //!< checkpoint name (HF or GGUF naming)
  TensorRole role = TensorRole::Other;
  std::vector<std::uint64_t> shape;  //!< outermost first; the last dim is the contiguous row
  std::optional<int> layer;         //!< decoder block index; nullopt for global tensors
  bool is_bias = false;             //!< a bias vector (never quantized)
  //! Storage format name as in data/quant_formats.json ("bf16", "Q4_K", "fp8-e4m3", ...);
  //! empty when not known yet (a config-derived inventory before the precision plan).
  std::string stored_format;
  //! Exact stored bytes when read from a file (safetensors offsets, GGUF type sizes).
  std::optional<std::uint64_t> stored_bytes;

  std::uint64_t elements() const;  //!< product of shape (checked; throws on overflow)
};

//! How one decoder layer attends (drives KV-cache size and engine grouping).
enum class LayerAttention {
  Full,       //!< global causal attention: KV for every token
  Sliding,    //!< sliding window: KV for the last `sliding_window` tokens
  Chunked,    //!< chunked local attention (Llama-4): KV within `attention_chunk_size`
  Mla,        //!< DeepSeek multi-head latent attention: compressed KV
  Recurrent,  //!< linear attention / SSM: fixed-size state per sequence, no per-token KV
  None,       //!< no attention / KV in this layer
};
std::string_view layer_attention_name(LayerAttention kind);
//! The kind layer_attention_name gives `name`; nullopt for a name it never gives.
std::optional<LayerAttention> layer_attention_from_name(std::string_view name);

//! One rotary-embedding table an engine materialises (vLLM keeps a cos/sin cache per
//! distinct rope configuration: max_positions x rotary_dim values in the model dtype).
struct RopeTable {
  std::uint64_t rotary_dim = 0;
  std::uint64_t max_positions = 0;  //!< rows, including any linear-scaling factor
  std::string scaling_type;         //!< "", "linear", "llama3", "yarn", "longrope", ...
  double scaling_factor = 1.0;
};

struct ModelArch {
  std::string architecture;  //!< HF `architectures[0]`, e.g. "LlamaForCausalLM"
  std::string model_type;    //!< HF `model_type`, e.g. "llama", "qwen3_moe"
  std::string family;        //!< vramplan's family handler that built the inventory

  std::uint64_t hidden_size = 0;
  std::uint64_t num_layers = 0;  //!< decoder layers of the main model (MTP excluded)
  std::uint64_t num_heads = 0;
  std::uint64_t num_kv_heads = 0;
  std::uint64_t head_dim = 0;    //!< K head size (config head_dim, else hidden/heads)
  std::uint64_t v_head_dim = 0;  //!< V head size (== head_dim unless the config differs)
  //! Gemma 4: the full-attention layers of a model that also has sliding ones attend with their
  //! own head size (config global_head_dim) and, with attention_k_eq_v, their own KV-head count
  //! (num_global_key_value_heads). 0 = the same as head_dim / num_kv_heads. Read per layer through
  //! layer_head_dim / layer_kv_heads, never directly.
  std::uint64_t global_head_dim = 0;
  std::uint64_t global_kv_heads = 0;
  //! Gemma 4 attention_k_eq_v: the full layers have no v_proj; V is k_proj's output (normed without
  //! a scale, no RoPE), and every engine still caches it. vLLM and SGLang build the V slot of their
  //! fused QKV projection and copy k_proj into it at load (resident weights beyond the checkpoint).
  bool attention_k_eq_v = false;
  std::uint64_t intermediate_size = 0;
  std::uint64_t vocab_size = 0;
  std::uint64_t max_position_embeddings = 0;
  bool tied_embeddings = false;

  // Mixture of experts (0 when dense).
  std::uint64_t num_experts = 0;
  std::uint64_t experts_per_token = 0;
  std::uint64_t moe_intermediate_size = 0;
  std::uint64_t num_shared_experts = 0;
  std::uint64_t shared_expert_intermediate_size = 0;
  //! Latent MoE (Nemotron-3 Super, config moe_latent_size): the routed experts run on a
  //! projection of the hidden state to this width (fc1_latent_proj) and are projected back
  //! (fc2_latent_proj). 0 = the experts take the hidden state itself.
  std::uint64_t moe_latent_size = 0;
  std::uint64_t moe_hidden_size() const { return moe_latent_size ? moe_latent_size : hidden_size; }
  std::vector<bool> layer_is_moe;  //!< per layer (empty when dense)
  //! How the router picks experts, as llama.cpp's build_moe_ffn takes it from a deepseek2 / glm4moe
  //! GGUF (expert_gating_func, expert_weights_norm / _scale, expert_group_count / _used_count) and
  //! convert_hf_to_gguf.py writes it from the config (scoring_func, norm_topk_prob,
  //! routed_scaling_factor, n_group / topk_group). The score bias is a tensor of the inventory
  //! (TensorRole::FfnExpProbsBias). Read by the llama.cpp compute graph only (its router tensors).
  struct MoeRouting {
    bool sigmoid = false;            //!< sigmoid scores, else softmax
    bool norm_topk = false;          //!< the k selected weights renormalised
    double scale = 0.0;              //!< routed_scaling_factor; 0 = not given (no scale op)
    std::uint64_t groups = 0;        //!< n_group: group-limited top-k when > 1
    std::uint64_t groups_used = 0;   //!< topk_group
    //! llama.cpp's deepseek2 loader when the file names no gating: softmax, except for GLM-4.7-Flash
    //! (47 / 48 layers and a 154,880-token vocabulary), which is sigmoid.
    static bool deepseek2_default_sigmoid(std::uint64_t layers, std::uint64_t vocab) {
      return (layers == 47 || layers == 48) && vocab == 154880;
    }
  } moe_routing;

  // MLA (DeepSeek-V2/V3); 0 when absent.
  std::uint64_t q_lora_rank = 0;
  std::uint64_t kv_lora_rank = 0;
  std::uint64_t qk_rope_head_dim = 0;
  std::uint64_t qk_nope_head_dim = 0;
  //! DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): a lightning indexer scores every cached
  //! token with index_n_heads heads of index_head_dim and the MLA reads only the index_topk best.
  //! 0 when absent. layer_has_indexer: layers that run their own indexer (and keep its key
  //! cache); the others reuse the previous indexer's choice (config indexer_types).
  std::uint64_t index_n_heads = 0;
  std::uint64_t index_head_dim = 0;
  std::uint64_t index_topk = 0;
  std::vector<bool> layer_has_indexer;

  // Attention pattern.
  std::vector<LayerAttention> layer_attention;  //!< one per decoder layer
  std::uint64_t sliding_window = 0;             //!< tokens; 0 when no sliding layers
  std::uint64_t attention_chunk_size = 0;       //!< Llama-4 chunked local attention
  //! Per-sequence recurrent state bytes per recurrent layer (hybrid models), in the state dtype.
  std::uint64_t recurrent_state_bytes_per_layer = 0;
  //! The two parts of that state, in elements per layer at TP 1 (0 when unknown): engines size
  //! them in different dtypes (SGLang keeps the SSM state in float32).
  std::uint64_t recurrent_conv_state_elems = 0;
  std::uint64_t recurrent_ssm_state_elems = 0;
  //! The state's shape, so engines split it over TP as vLLM / SGLang do (model/recurrent_state.hpp;
  //! vLLM mamba_utils.py MambaStateShapeCalculator). All 0 when unknown (GGUF): the totals above
  //! are then divided by TP.
  struct RecurrentShape {
    std::uint64_t conv_window = 0;    //!< conv kernel - 1 (tokens the conv state keeps)
    std::uint64_t conv_channels = 0;  //!< conv channels split over TP (Mamba: d_inner; GDN: 2 key + value dim)
    std::uint64_t groups = 0;         //!< Mamba2 n_groups: B and C channels, replicated up to TP
    std::uint64_t group_state = 0;    //!< d_state of each group's B / C
    std::uint64_t ssm_heads = 0;      //!< SSM state rows split over TP (Mamba2 heads; Mamba1 d_inner)
    std::uint64_t ssm_head_elems = 0; //!< values per row (head_dim x d_state; Mamba1 d_state)
  } recurrent_shape;
  //! The SSM (temporal) state's dtype when it differs from the model dtype ("" = model dtype):
  //! the config's mamba_ssm_cache_dtype, which vLLM honours for Nemotron-H (float32 when absent,
  //! vllm/model_executor/models/config.py NemotronHForCausalLMConfig).
  std::string recurrent_ssm_dtype;
  //! Every decoder layer also runs a Mamba mixer next to its attention (Falcon-H1's parallel
  //! hybrid): each layer then holds KV and a recurrent state.
  bool recurrent_in_every_layer = false;
  //! Layers that reuse another layer's KV (config-declared KV sharing); empty when none.
  std::vector<int> kv_shared_with;

  std::vector<RopeTable> rope_tables;
  //! Qwen3-VL: the first layers add the vision tower's deepstack features to the residual stream
  //! (len(vision_config.deepstack_visual_indexes); GGUF n_deepstack_layers). llama.cpp's input
  //! embedding then holds (1 + deepstack_layers) x hidden_size values per token.
  std::uint64_t deepstack_layers = 0;
  //! Attention temperature tuning as llama.cpp's mistral3 graph applies it (Ministral-3:
  //! rope_parameters.llama_4_scaling_beta, GGUF attention.temperature_scale): Q is multiplied by a
  //! per-token scale input on every layer. 0 when absent.
  double attn_temperature_scale = 0.0;
  //! GPT-NeoX with use_parallel_residual false (RedPajama-INCITE): attention, then the MLP on the
  //! updated residual, instead of both off the same input.
  bool sequential_residual = false;
  std::uint64_t mtp_layers = 0;  //!< DeepSeek-V3 num_nextn_predict_layers (reported separately)

  std::string torch_dtype;  //!< checkpoint dtype from the config ("bfloat16", ...)

  //! The attention geometry of decoder layer `layer`: global_head_dim / global_kv_heads on a full
  //! layer of a model that sets them, head_dim / num_kv_heads everywhere else.
  bool layer_has_global_geometry(std::size_t layer) const {
    return (global_head_dim != 0 || global_kv_heads != 0) && layer < layer_attention.size() &&
           layer_attention[layer] == LayerAttention::Full;
  }
  std::uint64_t layer_head_dim(std::size_t layer) const {
    return layer_has_global_geometry(layer) && global_head_dim != 0 ? global_head_dim : head_dim;
  }
  std::uint64_t layer_v_head_dim(std::size_t layer) const {
    if (layer_has_global_geometry(layer) && global_head_dim != 0) return global_head_dim;
    return v_head_dim != 0 ? v_head_dim : head_dim;
  }
  std::uint64_t layer_kv_heads(std::size_t layer) const {
    return layer_has_global_geometry(layer) && global_kv_heads != 0 ? global_kv_heads : num_kv_heads;
  }
  //! The config describes a vision / audio tower (counted as role Vision/Audio, or listed in
  //! ModelSpec::exclusions when vramplan cannot count it).
  bool multimodal = false;
  //! One dummy image as vLLM's encoder profiling builds it, from config.json (0 when the config
  //! does not fix it, e.g. Llama-4 whose tiles per image are a preprocessor setting).
  std::uint64_t mm_tokens_per_item = 0;        //!< embeddings one image yields (Gemma-3 mm_tokens_per_image)
  std::uint64_t mm_pixel_values_per_item = 0;  //!< pixel values of one image: channels x image_size^2
  //! vision_config's num_hidden_layers / hidden_size as the file states them (0: absent), for
  //! rules that read them raw (SGLang's adjust_mem_fraction_for_vlm, memory/sglang_engine.cpp).
  std::uint64_t vision_config_layers = 0;
  std::uint64_t vision_config_hidden = 0;
  //! Width of one cached embedding; 0 means hidden_size. Qwen3-VL caches the merger output
  //! concatenated with its deepstack levels: out_hidden_size x (1 + deepstack levels).
  std::uint64_t mm_embedding_width = 0;
  //! Rows of the position table the model's position ids skip: RoBERTa / XLM-R / CamemBERT number
  //! positions from padding_idx + 1 (transformers models/roberta/modeling_roberta.py
  //! create_position_ids_from_input_ids: cumsum(mask) + padding_idx), so their longest input is
  //! max_position_embeddings - position_offset (model/encoder.hpp encoder_max_input). 0 otherwise.
  std::uint64_t position_offset{};
};

//! Where a ModelSpec came from, for every output that shows it.
struct ModelSource {
  std::string kind;     //!< "catalogue", "hf-config", "safetensors", "gguf"
  std::string path;     //!< file or directory read, or the catalogue id
  std::string url;      //!< publisher's page / pinned copy, when known
  std::optional<std::uint64_t> published_params;  //!< the publisher's stated count
};

struct ModelSpec {
  std::string id;  //!< catalogue id or a name derived from the file
  ModelSource source;
  ModelArch arch;
  std::vector<TensorInfo> tensors;
  //! Raw `quantization_config` of the checkpoint as JSON text ("" when none); the precision plan
  //! interprets it.
  std::string quantization_config_json;
  //! Parts of the checkpoint deliberately not in `tensors` (e.g. "vision tower: not described
  //! by the config") — shown in every output.
  std::vector<std::string> exclusions;
  std::vector<std::string> warnings;  //!< e.g. --assume-llama-like
};

}  // namespace vramplan
