// The micro-batch graph llama.cpp reserves its compute buffer for, reduced to what ggml-alloc
// needs: every intermediate's size, its sources and views, in the order ggml_build_forward_expand
// visits them (depth first, sources left to right). Transcribed from llama.cpp's builders:
// src/models/{llama,qwen2,qwen2moe,qwen3,qwen3moe,gemma,gemma2,gemma3,deepseek2,phi2,phi3,olmo2,qwen2vl,
// openai-moe,glm4-moe,llama4,qwen3vl,qwen3vlmoe,minimax-m2,ernie4-5-moe,gptneox,falcon,nemotron-h,
// granite-hybrid,falcon-h1,jamba,mamba-base,qwen35,qwen35moe,qwen3next,delta-net-base,deepseek32,glm-dsa,
// gemma4}.cpp
// and src/llama-graph.cpp (build_inp_embd, build_attn, build_attn_mha, build_ffn, build_moe_ffn),
// src/llama-kv-cache.cpp (cpy_k, cpy_v, get_k, get_v, input idxs). Weights and the KV cache are
// external (they live in other buffers).
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/llamacpp.hpp"

namespace vramplan::llamacpp {
namespace {

constexpr std::uint64_t kF32 = 4, kI32 = 4, kI64 = 8;

// Per-architecture graph features (src/models/<arch>.cpp); anything else builds as llama.
struct Features {
  bool qk_norm = false;         // per-head RMS norm on Q and K before RoPE (qwen3, gemma3)
  bool sandwich_norms = false;  // post-attention and post-FFN norms (gemma3)
  bool embed_scale = false;     // inpL = scale(inpL, sqrt(n_embd)) (gemma3)
  bool q_scale = false;         // Q = scale(Q, f_attention_scale) (gemma3; phi3: 1 / sqrt(head_dim))
  bool fused_qkv = false;       // one wqkv projection, Q / K / V strided views of it (phi3 build_qkv)
  bool fused_up_glu = false;    // ffn_up of 2 n_ff, SWIGLU over its halves, no ffn_gate (phi3)
  bool residual_first = false;  // l_out = add(ffn_inp, ffn_out): the residual is the first source (phi3)
  bool no_pre_norms = false;    // attention and FFN read the residual stream unnormed (olmo2)
  bool qk_norm_2d = false;      // RMS norm over the whole Q / K projection, before the 3-D reshape (olmo2)
  bool qkv_bias = false;        // Q / K / V projection biases, added in place (qwen2)
  bool attn_softcap = false;    // without FA, KQ = cap x tanh(KQ / cap) in place (gemma2: hparams.attn_soft_cap)
  bool final_softcap = false;   // logits = cap x tanh(logits / cap): three in-place ops (gemma2)
  bool parallel_layernorm = false;  // phi2: one LayerNorm (+ bias) feeds attention and a GELU MLP in
                                    // parallel; biases on wo, ffn_up, ffn_down and the output
  bool moe_norm_w = false;      // top-k weights / their sum: sum_rows, clamp, div (build_moe_ffn norm_w)
  bool shexp_gate = false;      // shared expert x sigmoid(ffn_gate_inp_shexp . x) (qwen2moe)
  bool mrope = false;           // M-RoPE: 4 positions per token in inp_pos (hparams.n_pos_per_embd, qwen2vl)
  bool attn_out_bias = false;   // wo bias added to the attention output in place (build_attn's wo_b)
  bool late_out_ids = false;    // the output rows are taken after the last layer, not inside it
                                // (openai-moe.cpp: get_rows(l_out) before the final norm); the last
                                // layer's output is res->t_h_nextn, a graph output (never freed)
  bool router_bias = false;     // ffn_moe_logits + ffn_gate_inp.bias, in place
  bool softmax_weight = false;  // LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX_WEIGHT: top-k on the raw
                                // logits, softmax over the k selected weights
  bool expert_bias = false;     // ADD_ID of a per-expert bias after each MUL_MAT_ID, in place
  bool nope_full_layers = false;  // the layers of an iSWA model's full cache skip RoPE and scale Q by
                                  // the inp_attn_scale input (llama4.cpp: NoPE, temperature tuning)
  bool kq_l2_norm = false;        // weightless RMS norm of Q and K after RoPE (llama4 use_kq_norm)
  bool weight_before_experts = false;  // llama4's router: sigmoid, top-k on the raw logits, the
                                       // weights multiplied into a REPEAT of the input before the
                                       // experts (build_moe_ffn weight_before_ffn), not after
  bool mlp_first = false;        // GPT-NeoX / Falcon: LayerNorms with biases, attention and a GELU MLP
                                 // off the same input, the MLP added first (mlp_first_layer)
  bool neox = false;             // GPT-NeoX: the MLP reads its own norm (ffn_norm); biases everywhere
  bool temperature_tuning = false;  // mistral3: Q x the inp_attn_scale input after RoPE on every layer
                                    // when the file sets attention.temperature_scale (Ministral-3)
  bool nemotron_h = false;       // one block a layer after an RMS norm, added to the residual: Mamba-2
                                 // (recurrent layers), attention without RoPE, or a ReLU^2 MLP (none)
  bool granite_hybrid = false;   // Mamba-2 or attention (RoPE only where the model has a rope table),
                                 // then llama's FFN / MoE sub-block, on every layer
  bool jamba = false;            // Mamba-1 mixers (build_mamba_layer) and attention without RoPE, then
                                 // a SwiGLU FFN or softmax-routed experts (jamba_layer)
  bool falcon_h1 = false;        // attention and a Mamba-2 mixer side by side on every layer, their sum
                                 // added to the input, then a SwiGLU FFN (falcon_h1_layer)
  bool qwen35 = false;           // Qwen3.5: gated-DeltaNet layers (fused GATED_DELTA_NET) and every
                                 // full_attention_interval-th layer gated attention (Q projection of 2 x
                                 // heads, sigmoid(gate) x attention before wo), post-attention norms
  bool shexp_sigmoid = false;    // shared expert x sigmoid(ffn_gate_inp_shexp . x): one SIGMOID (qwen35moe)
  bool qwen3next = false;        // qwen3next.cpp's variant of qwen35: beta and alpha from one ssm_ba
                                 // projection (contiguous copies of its two views), q / k repeated to the
                                 // value heads before the fused op when there are fewer key heads, and
                                 // Q / gate as views of a 4-D reshape of the joint projection
  bool dsa = false;              // a lightning indexer picks the MLA's top-k cached tokens (dsa_indexer)
  bool gemma4 = false;           // Gemma 4: per-layer attention geometry, V RMS-normed without a weight
                                 // (V = K's projection on a layer without attn_v), no Q scale, the MoE
                                 // block beside the MLP, a per-layer output scale (gemma4_layer)
  bool hparams_routing = false;  // the router as the model's hparams say (ModelArch::moe_routing:
                                 // deepseek2.cpp passes expert_gating_func, expert_weights_norm / _scale
                                 // and ffn_exp_probs_b to build_moe_ffn)
};

// The model types whose llama.cpp builder this file transcribes, keyed by the HF model_type of a
// config and by the GGUF general.architecture of a .gguf. Checked against the measured loads of
// llama, qwen3, gemma3_text and deepseek_v2 (docs/accuracy-llamacpp.md), and against llama.cpp
// 0c1e5709's own CPU loads of the others (tests/accuracy/data/llamacpp_oracle_loads.jsonl):
//  - phi3 (src/models/phi3.cpp): build_qkv's fused path, Q scaled before build_attn (kq_scale 1),
//    build_ffn(ffn_up, LLM_FFN_SWIGLU, LLM_FFN_SEQ), l_out = add(residual, ffn_out);
//  - olmo2: no pre-norms, post-attention / post-FFN norms, Q / K normed as 2-D projections
//    (build_qkv with reshape = false), kq_scale in build_attn;
//  - qwen2 / qwen2moe: llama's graph with build_qkv's bias adds;
//  - gemma2: gemma3's layer without Q / K norms, with attention and final logit soft-capping;
//  - phi2: one LayerNorm feeding attention and a GELU MLP in parallel, biases;
//  - MoE top-k weights renormalised (build_moe_ffn norm_w): the llama architecture's MoE (Mixtral)
//    and qwen3moe pass true, qwen2moe false;
//  - gpt-oss (openai-moe.cpp): see its entry below; 117 graph nodes for two layers, as llama.cpp;
//  - deepseek2 with a q latent and the hparams' router (V3 groups, V2 softmax + scale, Kimi-K2):
//    small configs of their own (the oracle records that carry a `config`);
//  - glm4moe: GLM-4.5-Air cut to two layers, and a small config with Q / K norms;
//  - llama4: small Scout-like and Maverick-like configs; mistral3 (built as llama): Mistral-Small-3.1;
//  - qwen3vl: Qwen3-VL-8B / 4B cut to four layers (three deepstack adds);
//  - minimax-m2: a small config; ernie4_5-moe: ERNIE-4.5-21B-A3B cut to two layers;
//  - gptneox: StableLM-alpha-3B cut to two layers (parallel and sequential residual); falcon: Falcon-7B
//    (multi-query, one norm) and Falcon-40B (two norms) cut to two layers.
const std::map<std::string, Features>& feature_table() {
  static const Features qwen3{.qk_norm = true};
  static const Features qwen3moe{.qk_norm = true, .moe_norm_w = true};
  static const Features gemma3{.qk_norm = true, .sandwich_norms = true, .embed_scale = true, .q_scale = true};
  static const Features phi3{.q_scale = true, .fused_qkv = true, .fused_up_glu = true, .residual_first = true};
  static const Features olmo2{.sandwich_norms = true, .no_pre_norms = true, .qk_norm_2d = true};
  static const Features qwen2{.qkv_bias = true, .shexp_gate = true};  // the gate acts on MoE layers only
  static const Features gemma2{.sandwich_norms = true, .embed_scale = true, .q_scale = true, .attn_softcap = true,
                               .final_softcap = true};
  static const Features phi2{.q_scale = true, .qkv_bias = true, .parallel_layernorm = true};
  static const Features llama{.moe_norm_w = true};  // the norm only acts on MoE layers
  static const Features gemma1{.embed_scale = true, .q_scale = true};  // src/models/gemma.cpp
  // src/models/mistral3.cpp (Mistral-Small-3.x, Ministral-3): llama's layer with optional temperature
  // tuning (ModelArch::attn_temperature_scale).
  static const Features mistral3{.moe_norm_w = true, .temperature_tuning = true};
  // src/models/deepseek2.cpp (DeepSeek-V2 / V3, Kimi-K2, GLM-4.7-Flash: convert_hf_to_gguf.py writes
  // them all as deepseek2): MLA (mla_attention below), the router from the hparams.
  static const Features deepseek2{.hparams_routing = true};
  // src/models/deepseek32.cpp and glm-dsa.cpp (DeepSeek-V3.2, GLM-5): deepseek2's MLA with the
  // lightning indexer of DeepSeek sparse attention in every layer (dsa_indexer below).
  static const Features dsa{.dsa = true, .hparams_routing = true};
  // src/models/glm4-moe.cpp (GLM-4.5 / 4.6 / 4.7, GLM-4.5-Air): llama's layer (Q / K / V biases and
  // per-head Q / K norms when the file has them), dense lead layers, the hparams' router and one
  // shared expert.
  static const Features glm4moe{.hparams_routing = true};
  // src/models/gptneox.cpp (Pythia, StableLM-alpha, GPT-NeoX-20B): fused, biased wqkv, partial RoPE, a
  // biased wo, LayerNorms, a biased GELU MLP; falcon.cpp: fused wqkv without biases, the MLP on the
  // attention's norm (Falcon-40B: attention on attn_norm_2), no biases.
  static const Features gptneox{
      .fused_qkv = true, .qkv_bias = true, .attn_out_bias = true, .mlp_first = true, .neox = true};
  static const Features falcon{.fused_qkv = true, .mlp_first = true};
  // src/models/minimax-m2.cpp (MiniMax-M2 / M2.5): Q / K RMS-normed as whole projections (build_qkv
  // with reshape = false), partial RoPE, every layer MoE with the hparams' gating, the score bias
  // and normalised weights, no shared expert.
  static const Features minimax_m2{.qk_norm_2d = true, .moe_norm_w = true, .hparams_routing = true};
  // src/models/ernie4-5-moe.cpp (ERNIE-4.5 MoE): llama's layer, dense lead layers, softmax routing with
  // the score bias and normalised weights, shared experts.
  static const Features ernie45moe{.moe_norm_w = true, .hparams_routing = true};
  // src/models/llama4.cpp (Llama-4 Scout / Maverick): chunked iSWA attention whose full layers are
  // NoPE, L2-normed Q / K (not for 128 experts: Maverick), the llama4 router, a shared expert.
  static const Features llama4{.nope_full_layers = true, .kq_l2_norm = true, .weight_before_experts = true};
  // src/models/qwen2vl.cpp: qwen2's layer with ggml_rope_multi (Qwen2-VL and Qwen2.5-VL text models).
  static const Features qwen2vl{.qkv_bias = true, .mrope = true};
  // src/models/qwen3vl.cpp / qwen3vlmoe.cpp (Qwen3-VL text models): qwen3's / qwen3moe's layer with
  // M-RoPE and the deepstack adds (ModelArch::deepstack_layers, in build()).
  static const Features qwen3vl{.qk_norm = true, .mrope = true};
  static const Features qwen3vlmoe{.qk_norm = true, .moe_norm_w = true, .mrope = true};
  // src/models/openai-moe.cpp (gpt-oss): biased Q / K / V / wo, attention sinks (a weight source
  // of the softmax / FA node, no memory of its own), attn_post_norm as the FFN norm, a biased
  // router with SOFTMAX_WEIGHT gating, biased experts under SWIGLU_OAI (a GLU: not in place).
  static const Features gpt_oss{.qkv_bias = true, .attn_out_bias = true, .late_out_ids = true,
                                .router_bias = true, .softmax_weight = true, .expert_bias = true};
  // src/models/nemotron-h.cpp (Nemotron-H; nemotron_h_moe runs the same graph): Mamba-2 mixers
  // (mamba-base.cpp build_mamba2_layer over llama_memory_recurrent), attention layers without RoPE,
  // ReLU^2 MLP layers or MoE layers (a sigmoid router with the score bias, ReLU^2 experts without a
  // gate, a ReLU^2 shared expert), one per layer.
  static const Features nemotron_h{.nemotron_h = true, .hparams_routing = true};
  // src/models/granite-hybrid.cpp (Granite-4.0-H): a Mamba-2 mixer or attention, then build_layer_ffn
  // (a SwiGLU FFN, or softmax-routed SwiGLU experts with normalised weights and a SwiGLU shared
  // expert). Its embedding / residual / logit multipliers are in-place SCALEs: no memory (checked).
  static const Features granite_hybrid{.moe_norm_w = true, .granite_hybrid = true};
  // src/models/falcon-h1.cpp (Falcon-H1): attention and build_mamba2_layer on the same input, each
  // after its own RMS norm with attn_norm's weight, both states in every layer (llama_memory_hybrid
  // with filters that accept every layer, llama-model.cpp create_memory). The converter bakes the
  // muP multipliers into the weights (conversion/falcon_h1.py): no scale nodes.
  static const Features falcon_h1{.falcon_h1 = true};
  // src/models/jamba.cpp (Jamba): a Mamba-1 mixer (mamba-base.cpp build_mamba_layer, with the RMS
  // norms of dt, B and C the file has) or attention without RoPE on each layer's norm, the residual,
  // then a SwiGLU FFN or softmax-routed experts (no weight norm or scale).
  static const Features jamba{.jamba = true};
  // src/models/qwen35.cpp / qwen35moe.cpp with delta-net-base.cpp (Qwen3.5, dense or MoE): each layer
  // gated-DeltaNet (build_layer_attn_linear: the conv state through build_conv_state, the fused
  // GATED_DELTA_NET op, llama.cpp 0c1e5709's default on every backend) or gated attention with M-RoPE
  // (build_layer_attn), then the post-attention norm and a SwiGLU FFN (qwen35moe: softmax-routed
  // experts with normalised weights and a sigmoid-gated shared expert).
  static const Features qwen35{.qk_norm = true, .mrope = true, .qwen35 = true};
  static const Features qwen35moe{.qk_norm = true, .moe_norm_w = true, .mrope = true, .qwen35 = true, .shexp_sigmoid = true};
  // src/models/qwen3next.cpp (Qwen3-Next, Qwen3-Coder-Next): qwen35moe's layers with plain RoPE, beta and
  // alpha from the joint ssm_ba projection, and q / k repeated to the value heads (TAG_GGML_GDN_BCAST).
  static const Features qwen3next{.qk_norm = true, .moe_norm_w = true, .qwen35 = true, .shexp_sigmoid = true,
                                  .qwen3next = true};
  // src/models/gemma4.cpp (Gemma 4 26B-A4B / 31B): gemma3's sandwich-normed layer with each layer's
  // own head size and KV heads, the routed experts beside the dense MLP, a per-layer output scale, and
  // the output rows taken after the final norm (res->t_h_nextn, a graph output).
  static const Features gemma4{.qk_norm = true, .sandwich_norms = true, .embed_scale = true, .final_softcap = true,
                               .moe_norm_w = true, .gemma4 = true};
  static const std::map<std::string, Features> table = {
      {"llama", llama}, {"mistral", llama}, {"mixtral", llama}, {"llava", llama},
      {"mistral3", mistral3}, {"ministral3", mistral3},
      {"deepseek_v2", deepseek2}, {"deepseek_v3", deepseek2}, {"kimi_k2", deepseek2},
      {"glm4_moe_lite", deepseek2}, {"deepseek2", deepseek2},
      {"deepseek_v32", dsa}, {"deepseek32", dsa}, {"glm_moe_dsa", dsa}, {"glm-dsa", dsa},
      {"qwen3", qwen3}, {"qwen3_moe", qwen3moe}, {"qwen3moe", qwen3moe},
      {"gemma3", gemma3}, {"gemma3_text", gemma3}, {"phi3", phi3}, {"olmo2", olmo2}, {"qwen2", qwen2},
      {"qwen2_moe", qwen2}, {"qwen2moe", qwen2}, {"gemma2", gemma2}, {"phi", phi2}, {"phi2", phi2},
      {"gemma", gemma1}, {"qwen2vl", qwen2vl}, {"qwen2_vl", qwen2vl}, {"qwen2_5_vl", qwen2vl},
      {"gpt_oss", gpt_oss}, {"gpt-oss", gpt_oss}, {"glm4_moe", glm4moe}, {"glm4moe", glm4moe},
      {"qwen3_vl", qwen3vl}, {"qwen3_vl_text", qwen3vl}, {"qwen3vl", qwen3vl},
      {"qwen3_vl_moe", qwen3vlmoe}, {"qwen3_vl_moe_text", qwen3vlmoe}, {"qwen3vlmoe", qwen3vlmoe},
      {"gpt_neox", gptneox}, {"gptneox", gptneox},
      {"falcon", falcon}, {"RefinedWeb", falcon}, {"RefinedWebModel", falcon},
      {"minimax_m2", minimax_m2}, {"minimax-m2", minimax_m2},
      {"ernie4_5_moe", ernie45moe}, {"ernie4_5-moe", ernie45moe},
      {"llama4", llama4}, {"llama4_text", llama4},
      {"nemotron_h", nemotron_h}, {"nemotron_h_moe", nemotron_h},
      {"granitemoehybrid", granite_hybrid}, {"granitehybrid", granite_hybrid},
      {"falcon_h1", falcon_h1}, {"falcon-h1", falcon_h1}, {"jamba", jamba},
      {"qwen3_5_text", qwen35}, {"qwen35", qwen35}, {"qwen3_5_moe_text", qwen35moe}, {"qwen35moe", qwen35moe},
      {"qwen3_next", qwen3next}, {"qwen3next", qwen3next},
      {"gemma4", gemma4}, {"gemma4_text", gemma4},
  };
  return table;
}

std::uint64_t isqrt(std::uint64_t v) {
  std::uint64_t r = 0;
  while ((r + 1) * (r + 1) <= v) ++r;
  return r;
}

std::uint64_t cache_elem_bytes(const std::string& type) {
  // Only plain-float caches reach the paths that copy cache data (quantized V needs FA).
  if (type == "f32") return 4;
  return 2;  // f16, bf16
}

bool quantized(const std::string& type) { return type != "f32" && type != "f16" && type != "bf16"; }

class Builder {
 public:
  Builder(const ModelSpec& m, const Context& c, const std::vector<KvCache>& caches)
      // graph_reserve rounds the micro-batch up to a multiple of its n_seq_max sequences (-np 3 and
      // -ub 512 reserve 513 tokens) but keeps n_outputs = min(n_ubatch, n_outputs_max) output rows
      // (llama-context.cpp sched_reserve, graph_reserve).
      : a_(m.arch), c_(c), T_(round_up(c.n_ubatch, std::max<std::uint64_t>(1, c.n_seq_max), "reserved tokens")),
        O_(std::min(c.n_ubatch, c.n_outputs_max)), rows_(T_), f_(features(m.arch)) {
    for (const auto& kv : caches) {
      if (kv.role == "indexer") indexer_ = &kv;  // the DSA indexer's key cache, not the layer's attention cache
      else for (int l : kv.layers) layer_cache_[l] = &kv;
    }
    // deepseek32.cpp / glm-dsa.cpp load_arch_hparams require the indexer's keys (ml.get_key).
    if (f_.dsa && (a_.index_head_dim == 0 || a_.index_n_heads == 0 || a_.index_topk == 0 || a_.kv_lora_rank == 0))
      throw_usage("--engine llamacpp: '" + a_.model_type + "' is DeepSeek sparse attention, and llama.cpp loads it only "
                  "with MLA and its indexer's head count, key length and top-k (GGUF attention.indexer.head_count, "
                  ".key_length, .top_k; config index_n_heads, index_head_dim, index_topk)");
    // Optional tensors the builders test for: Q / K / V biases (build_qkv: `if (layer.bq)`) and
    // per-head Q / K norms (glm4-moe.cpp: `if (model.layers[il].attn_q_norm)`).
    const auto any_tensor = [&](auto&& pred) { return std::any_of(m.tensors.begin(), m.tensors.end(), pred); };
    if (!f_.fused_qkv && any_tensor([](const TensorInfo& t) { return t.role == TensorRole::AttnQ && t.is_bias; }))
      f_.qkv_bias = true;
    if (!f_.qk_norm_2d && any_tensor([](const TensorInfo& t) { return t.role == TensorRole::AttnQNorm && !t.is_bias; }))
      f_.qk_norm = true;
    if (f_.kq_l2_norm && a_.num_experts == 128) f_.kq_l2_norm = false;  // llama4 load_arch_hparams
    // The score bias added before the top-k: the builders that pass model.layers[il].ffn_exp_probs_b
    // (the hparams' routers) use it when the file has the tensor.
    score_bias_ = f_.hparams_routing &&
                  any_tensor([](const TensorInfo& t) { return t.role == TensorRole::FfnExpProbsBias; });
    // The recurrent mixers' optional tensors, by name: a config's (mamba. / mixer. namespaces, role
    // Recurrent) or a GGUF's (ssm_*, which has no role of its own).
    const auto named = [&](std::initializer_list<std::string_view> endings) {
      return any_tensor([&](const TensorInfo& t) {
        return std::any_of(endings.begin(), endings.end(), [&](std::string_view e) { return t.name.ends_with(e); });
      });
    };
    conv_bias_ = named({"ssm_conv1d.bias", "mamba.conv1d.bias", "mixer.conv1d.bias"});
    ssm_norm_ = named({"ssm_norm.weight", "mamba.norm.weight", "mixer.norm.weight"});
    dt_b_c_norms_ = named({"ssm_dt_norm.weight", "mamba.dt_layernorm.weight"});
    // Mamba-1's dt rank: x_proj's (ssm_x's) rows less B's and C's d_state each.
    for (const TensorInfo& t : m.tensors)
      if (t.shape.size() == 2 && (t.name.ends_with("ssm_x.weight") || t.name.ends_with("mamba.x_proj.weight")) &&
          t.shape[0] > 2 * a_.recurrent_shape.ssm_head_elems)
        dt_rank_ = t.shape[0] - 2 * a_.recurrent_shape.ssm_head_elems;
    // Falcon-40B's second per-layer norm: ln_mlp in a config's inventory, attn_norm_2 in a GGUF.
    falcon_two_norms_ = f_.mlp_first && !f_.neox && any_tensor([](const TensorInfo& t) {
                          return t.role == TensorRole::FfnNorm || t.name.find("attn_norm_2") != std::string::npos;
                        });
    // gemma4.cpp's optional tensors: attn_v (absent on a K=V full layer: Vcur = Kcur), the layer
    // output scale (layer_scalar) and the per-expert scale (router.per_expert_scale, which convert
    // writes as ffn_down_exps.scale and build_lora_mm_id applies after the down experts), by a GGUF's
    // name or a checkpoint's.
    if (f_.gemma4) {
      if (named({"per_layer_token_embd.weight", "embed_tokens_per_layer.weight"}))
        throw_usage("--engine llamacpp: Gemma 4's per-layer input embeddings (E2B / E4B) are not modelled in llama.cpp's "
                    "graph yet");
      for (const TensorInfo& t : m.tensors)
        if (t.layer && t.role == TensorRole::AttnV && !t.is_bias) has_wv_.insert(*t.layer);
      out_scale_ = named({"layer_output_scale.weight", ".layer_scalar"});
      down_exps_scale_ = named({"ffn_down_exps.scale", ".router.per_expert_scale"});
    }
  }

  ComputeGraph build() {
    if (f_.nemotron_h || f_.granite_hybrid || f_.qwen35 || f_.falcon_h1 || f_.jamba) return hybrid_build();
    // build_inp_embd: tokens -> GET_ROWS(token_embd); the vector-embedding input (inp_embd) is a
    // second input of the same shape that ggml_build_forward_select keeps in the graph.
    // With deepstack layers (Qwen3-VL) an input embedding is n_embd_inp = (1 + n) x n_embd wide: the
    // token path pads the gathered rows to it, layer 0 reads the first n_embd and layer il < n adds
    // the (il + 1)-th slice after its FFN.
    const std::uint64_t D = a_.deepstack_layers, width = (1 + D) * E();
    const int tokens = g_.input("inp_tokens", T_ * kI32);
    g_.input("inp_embd", width * T_ * kF32);
    int inpL = g_.op("get_rows(token_embd)", E() * T_ * kF32, {g_.external("token_embd"), tokens});
    const int embd = D > 0 ? g_.op("inp_pad", width * T_ * kF32, {inpL}) : -1;
    if (D > 0) inpL = g_.view("inp_embd_2d", embd, false, E() * T_ * kF32);
    if (f_.embed_scale) inpL = g_.op("inp_scaled", bytes(inpL), {inpL}, true);
    for (std::uint64_t il = 0; il < a_.num_layers; ++il) {
      inpL = f_.parallel_layernorm ? parallel_layer(static_cast<int>(il), inpL)
             : f_.mlp_first        ? mlp_first_layer(static_cast<int>(il), inpL)
             : f_.gemma4           ? gemma4_layer(static_cast<int>(il), inpL)
                                   : layer(static_cast<int>(il), inpL);
      if (il < D) {
        const int slice = g_.view("deepstack", embd, false, E() * T_ * kF32);
        inpL = g_.op("deepstack_add", bytes(inpL), {inpL, slice}, true);
      }
    }
    if (f_.late_out_ids) {
      g_.mark_output(inpL);
      inpL = output_rows("l_out", inpL);
    }
    const bool layernorm = f_.parallel_layernorm || f_.mlp_first;
    int norm = layernorm ? layer_norm("result_norm", inpL) : rms_mul("result_norm", inpL);
    if (f_.gemma4) {  // gemma4.cpp: the final norm is res->t_h_nextn (ggml_set_output), then the output rows
      g_.mark_output(norm);
      norm = output_rows("h_nextn", norm);
    }
    int logits = g_.op("result_output", a_.vocab_size * O_ * kF32, {g_.external("output"), norm});
    if (f_.parallel_layernorm) logits = g_.op("result_output_b", bytes(logits), {logits, g_.external("output.bias")}, true);
    if (f_.final_softcap)
      for (const char* step : {"logits_scaled", "logits_tanh", "logits_capped"})
        logits = g_.op(step, bytes(logits), {logits}, true);
    g_.mark_output(logits);
    return std::move(g_);
  }

 private:
  static Features features(const ModelArch& a) {
    const auto it = feature_table().find(a.model_type);
    return it == feature_table().end() ? Features{} : it->second;
  }
  std::uint64_t E() const { return a_.hidden_size; }
  std::uint64_t bytes(int t) const { return g_.tensors()[static_cast<std::size_t>(t)].bytes; }
  bool fa() const { return c_.flash_attn; }

  // The hybrids (nemotron-h.cpp, granite-hybrid.cpp, falcon-h1.cpp, jamba.cpp, qwen35*.cpp,
  // qwen3next.cpp). ggml orders nodes as ggml_build_forward_expand meets them, and in these graphs
  // only the recurrent-state copies (build_rs, the conv and SSM state stores), build_attn and
  // build_moe_ffn (its experts' outputs and their sum) expand where they are built: the rest of a
  // block (a mixer's output, an MLP or FFN, the attention projection, a shared expert) and its
  // residual adds reach the graph when the next expansion walks back through the residual stream.
  // `resid` emits what is pending and returns the stream.
  ComputeGraph hybrid_build() {
    const int tokens = g_.input("inp_tokens", T_ * kI32);
    g_.input("inp_embd", E() * T_ * kF32);  // build_inp_embd's vector-embedding input, as in build()
    const int embd = g_.op("get_rows(token_embd)", E() * T_ * kF32, {g_.external("token_embd"), tokens});
    std::function<int()> resid = [embd] { return embd; };
    for (std::uint64_t l = 0; l < a_.num_layers; ++l) {
      const int il = static_cast<int>(l);
      const bool moe = a_.num_experts > 0 && l < a_.layer_is_moe.size() && a_.layer_is_moe[l];
      const LayerAttention kind = l < a_.layer_attention.size() ? a_.layer_attention[l] : LayerAttention::Full;
      // What follows a Nemotron-H block: its residual add.
      const auto tail = [this](int out, int x) { return g_.op("block_out", bytes(out), {out, x}, true); };
      if (f_.granite_hybrid) {
        resid = granite_layer(resid, il, kind == LayerAttention::Recurrent, moe, l + 1 == a_.num_layers);
      } else if (f_.falcon_h1) {
        resid = falcon_h1_layer(resid, il, l + 1 == a_.num_layers);
      } else if (f_.jamba) {
        resid = jamba_layer(resid, il, kind == LayerAttention::Recurrent, moe, l + 1 == a_.num_layers);
      } else if (f_.qwen35) {
        resid = qwen35_layer(resid, il, kind == LayerAttention::Recurrent, moe);
      } else if (kind == LayerAttention::None) {  // nemotron-h.cpp build_ffn_layer: ReLU^2 MLP or experts
        if (moe) {  // build_moe_ffn expands the routed experts now (moe_routed); the shared one waits
          const int x = resid();
          const int normed = rms_mul("attn_norm", x);
          const int routed = moe_routed(normed);
          resid = [this, x, normed, routed, tail] { return tail(moe_shared(normed, routed), x); };
        } else {
          resid = [this, prev = resid, tail] {
            const int x = prev();
            return tail(relu_sqr_ffn(rms_mul("attn_norm", x), a_.intermediate_size, "ffn"), x);
          };
        }
      } else {  // nemotron-h.cpp: a Mamba-2 mixer or attention
        const Mixer m = kind == LayerAttention::Recurrent ? mamba_mixer(resid, false) : attention_mixer(resid, il);
        resid = [m, tail] { return tail(m.out(), m.x); };
      }
    }
    const int h = rms_mul("result_norm", resid());
    int logits_in = h;
    if (f_.nemotron_h || f_.qwen35) {  // the final norm is res->t_h_nextn, a graph output; the output rows follow it
      g_.mark_output(h);
      logits_in = output_rows("h", h);
    }
    const int logits = g_.op("result_output", a_.vocab_size * O_ * kF32, {g_.external("output"), logits_in});
    g_.mark_output(logits);
    return std::move(g_);
  }

  // granite-hybrid.cpp's layer: a Mamba-2 mixer or attention, then build_layer_ffn: the output rows on
  // the last layer, ffn_inp = out + x, the FFN (or experts and the shared expert) on its norm, added
  // to ffn_inp. With experts, build_moe_ffn pulls everything up to the routed experts' sum in as the
  // layer is built; only the shared expert and the adds after it wait for the walk.
  std::function<int()> granite_layer(const std::function<int()>& prev, int il, bool recurrent, bool moe, bool last) {
    const Mixer mixer = recurrent ? mamba_mixer(prev, false) : attention_mixer(prev, il);
    const auto head = [this, mixer, last] {  // {ffn_inp, its norm}
      int out = mixer.out(), in = mixer.x;
      if (last) {
        out = output_rows("cur", out);
        in = output_rows("inpSA", in);
      }
      const int ffn_inp = g_.op("ffn_inp", bytes(out), {out, in}, true);
      return std::pair<int, int>{ffn_inp, rms_mul("ffn_norm", ffn_inp)};
    };
    return ffn_sub_block(moe, head, [this](std::pair<int, int> h, int out) {
      return g_.op("l_out", bytes(out), {out, h.first}, true);
    });
  }

  // A hybrid layer's mixer: the input stream `x` (emitted) and its deferred output.
  struct Mixer {
    int x;
    std::function<int()> out;
  };
  // Attention on the layer's RMS norm: build_attn expands the KV stores (pulling the input in).
  Mixer attention_mixer(const std::function<int()>& prev, int il) {
    const int x = prev();
    const PendingAttention p = attention_inputs(il, rms_mul("attn_norm", x));
    return {x, [this, p] { return attention_output(p); }};
  }
  // A Mamba mixer (mamba-base.cpp): its state rows come before the input is pulled in.
  Mixer mamba_mixer(const std::function<int()>& prev, bool mamba1) {
    if (mamba1) {
      const Mamba1Pending m = mamba1_inputs(prev);
      return {m.x_in, [this, m] { return mamba1_output(m); }};
    }
    const Mamba2Pending m = mamba2_inputs(prev);
    return {m.x_in, [this, m] { return mamba2_output(m); }};
  }

  // The FFN sub-block after a hybrid layer's mixer: `head` emits up to the FFN's input and returns
  // {residual, normed input}, `finish` adds the FFN's output to the residual. build_moe_ffn expands
  // its experts' output views and their sum as it builds them ("order the views before the adds",
  // llama-graph.cpp), so with routed experts the head and the experts reach the graph while the layer
  // is built, before the next layer's state rows, and only the shared expert and `finish` wait for
  // the walk; a dense FFN waits whole.
  std::function<int()> ffn_sub_block(bool moe, const std::function<std::pair<int, int>()>& head,
                                     const std::function<int(std::pair<int, int>, int)>& finish) {
    if (moe) {
      const std::pair<int, int> h = head();
      const int routed = moe_routed(h.second);
      return [this, h, routed, finish] { return finish(h, moe_shared(h.second, routed)); };
    }
    return [this, head, finish] {
      const std::pair<int, int> h = head();
      return finish(h, ffn(h.second, a_.intermediate_size, "ffn"));
    };
  }

  // falcon-h1.cpp's layer: build_attn expands the KV stores (the input's norm, Q, K, V), then
  // build_mamba2_layer its state stores (the norm again, the mixer up to the scan). The walk meets
  // the rest: the attention output, the mixer's output, their sum, the residual add, the output rows
  // on the last layer (only inpSA's: the rows of the sum are not used), the FFN and its add.
  std::function<int()> falcon_h1_layer(const std::function<int()>& prev, int il, bool last) {
    const Mixer attn = attention_mixer(prev, il);
    const int x = attn.x;
    const Mixer ssm = mamba_mixer([x] { return x; }, false);
    return [this, attn, ssm, x, last] {
      const int attn_out = attn.out();
      const int sum = g_.op("layer_out", bytes(attn_out), {attn_out, ssm.out()}, true);
      int inp_sa = g_.op("inpSA", bytes(sum), {sum, x}, true);
      if (last) inp_sa = output_rows("inpSA", inp_sa);
      const int out = ffn(rms_mul("ffn_norm", inp_sa), a_.intermediate_size, "ffn");
      return g_.op("l_out", bytes(out), {out, inp_sa}, true);
    };
  }

  // jamba.cpp's layer: a Mamba-1 mixer's state stores expand from build_rs on (the layer's norm is
  // pulled in by the conv store), attention's KV stores from its Q on. Then, on the last layer, the
  // output rows of the input, the mixer's output and its rows; the residual add (input first), the
  // FFN norm, the FFN or experts, and the FFN's residual add. With experts, build_moe_ffn pulls
  // everything up to their sum in as the layer is built (moe_routed), so the next layer's state rows
  // come after it; a dense layer waits for the walk whole. (Found on -np 3: built lazily, the
  // compute buffer was 129.00 against 130.00 MiB.)
  std::function<int()> jamba_layer(const std::function<int()>& prev, int il, bool recurrent, bool moe, bool last) {
    const Mixer mixer = recurrent ? mamba_mixer(prev, true) : attention_mixer(prev, il);
    const auto head = [this, mixer, last] {  // {ffn_inp, its norm}
      const int residual = last ? output_rows("inpL", mixer.x) : mixer.x;
      int cur = mixer.out();
      if (last) cur = output_rows("cur", cur);
      const int ffn_inp = g_.op("ffn_inp", bytes(cur), {residual, cur}, true);
      return std::pair<int, int>{ffn_inp, rms_mul("ffn_norm", ffn_inp)};
    };
    return ffn_sub_block(moe, head, [this](std::pair<int, int> h, int out) {
      return g_.op("l_out", bytes(out), {h.first, out}, true);
    });
  }

  // mamba-base.cpp build_mamba_layer (Mamba-1: d_inner channels, one head of d_state per channel):
  // the conv state rows, the input projection to x and z, the conv window stored back, the conv,
  // x_proj to dt, B and C (each RMS-normed where the file has the norms), dt_proj, the scan from
  // the SSM state rows and its states stored back (mamba1_inputs); y + x D, gated by z, and ssm_out
  // (mamba1_output), which the walk meets later.
  struct Mamba1Pending {
    int xz, x, y_ssm, x_in;  // x: the conv's SiLU output, which y + x * D reads again
  };
  Mamba1Pending mamba1_inputs(const std::function<int()>& prev) {
    const auto& sh = a_.recurrent_shape;
    const std::uint64_t S = std::max<std::uint64_t>(1, c_.n_seq_max), I = sh.conv_channels, N = sh.ssm_head_elems;
    const ConvState conv = conv_state_rows(I);
    const int x_in = prev();
    const int xz = g_.op("ssm_in", 2 * I * T_ * kF32, {g_.external("ssm_in"), g_.view("cur_3d", rms_mul("attn_norm", x_in))});
    const int conv_x = conv_window(conv, g_.view("x_transposed", g_.view("x", xz, false), false), I);
    int x = g_.op("ssm_conv", I * T_ * kF32, {conv_x, g_.external("ssm_conv1d")});
    if (conv_bias_) x = g_.op("ssm_conv_b", bytes(x), {x, g_.external("ssm_conv1d.bias")}, true);
    x = g_.op("ssm_conv_silu", bytes(x), {x}, true);
    const int ssm_states = g_.external("cache_s");
    const int y_ssm = recurrent_rows(ssm_states, [&](int states, int ids) {
      const int states_4d = g_.view("ssm_states_4d", states);
      const int x_4d = g_.view("x_4d", x);
      // x_proj: dt (dt_rank), B and C (d_state each); with the norms each is a fresh RMS norm of its view.
      const int x_db = g_.op("x_db", (dt_rank_ + 2 * N) * T_ * kF32, {g_.external("ssm_x"), x});
      int dt = g_.view("dt", x_db, false, dt_rank_ * T_ * kF32);
      dt = dt_b_c_norms_ ? rms_mul("ssm_dt_norm", dt) : g_.op("dt_cont", dt_rank_ * T_ * kF32, {dt});
      dt = g_.op("dt_proj", I * T_ * kF32, {g_.external("ssm_dt"), dt});
      dt = g_.op("dt_b", bytes(dt), {dt, g_.external("ssm_dt.bias")}, true);
      int b = g_.view("B", x_db, false, N * T_ * kF32);
      if (dt_b_c_norms_) b = rms_mul("ssm_b_norm", b);
      int c = g_.view("C", x_db, false, N * T_ * kF32);
      if (dt_b_c_norms_) c = rms_mul("ssm_c_norm", c);
      // ggml_ssm_scan: y (d_inner x tokens) followed by the final states (d_state x d_inner x n_seqs).
      return g_.op("ssm_scan", (I * T_ + N * I * S) * kF32, {states_4d, x_4d, dt, g_.external("ssm_a"), b, c, ids});
    });
    g_.store("ssm_state_store", {g_.view("last_ssm", y_ssm, false), g_.view("ssm_state_dst", ssm_states)});
    return {xz, x, y_ssm, x_in};
  }
  int mamba1_output(const Mamba1Pending& m) {
    const int gated = gated_y(m.xz, m.x, m.y_ssm);
    return g_.view("ssm_out_2d", g_.op("ssm_out", E() * T_ * kF32, {g_.external("ssm_out"), gated}));
  }

  // qwen35.cpp's layer: attn_norm (expanded at once), then the mixer's expansions; the mixer's tail,
  // attn_residual = out + x, the post-attention norm, the FFN and its residual add wait for the walk.
  std::function<int()> qwen35_layer(const std::function<int()>& prev, int il, bool recurrent, bool moe) {
    const int x = prev();
    const int normed = rms_mul("attn_norm", x);
    std::function<int()> mixer_out;
    if (recurrent) {
      mixer_out = gated_delta_net(normed);
    } else {
      const PendingAttention p = attention_inputs(il, normed);
      mixer_out = [this, p] { return attention_output(p); };
    }
    const auto head = [this, mixer_out, x] {  // {attn_residual, its post-attention norm}
      const int residual = g_.op("attn_residual", E() * T_ * kF32, {mixer_out(), x}, true);
      return std::pair<int, int>{residual, rms_mul("attn_post_norm", residual)};
    };
    return ffn_sub_block(moe, head, [this](std::pair<int, int> h, int out) {
      return g_.op("l_out", bytes(out), {out, h.first}, true);
    });
  }

  // qwen35.cpp build_layer_attn_linear over delta-net-base.cpp (build_conv_state, build_rs,
  // build_recurrent_attn, build_delta_net_fused): what cpy(new_state) expands now, and the tail
  // (the gated RMS norm with z, ssm_out) the walk meets later. n_seqs = n_seq_max sequences.
  std::function<int()> gated_delta_net(int normed) {
    const auto& sh = a_.recurrent_shape;
    const std::uint64_t S = std::max<std::uint64_t>(1, c_.n_seq_max);
    // The state is H_v heads of S_k x S_v with S_k = S_v (build_delta_net_fused asserts it). The conv
    // runs over q, k (key_dim each) and v (value_dim): a GGUF's ssm.* keys give d_inner = value_dim
    // and n_group x d_state = key_dim, a config's shape the conv channels whole (groups 0).
    const std::uint64_t Hv = sh.ssm_heads, Sv = isqrt(sh.ssm_head_elems), Vd = Hv * Sv;
    const std::uint64_t channels = sh.conv_channels + 2 * sh.groups * sh.group_state;
    if (Hv == 0 || Sv * Sv != sh.ssm_head_elems || channels <= Vd || (channels - Vd) % 2 != 0)
      throw_usage("--engine llamacpp: llama.cpp's gated delta net needs key and value heads of one size (state of " +
                  std::to_string(sh.ssm_head_elems) + " values a head, conv over " + std::to_string(channels) +
                  " channels)");
    const std::uint64_t Kd = (channels - Vd) / 2;
    // delta-net-base.cpp build_conv_state: the cached rows, then the qkv projection after them.
    const ConvState conv = conv_state_rows(channels);
    const int qkv = g_.op("qkv_mixed", channels * T_ * kF32, {g_.external("attn_qkv"), normed});
    const int conv_input = conv_window(conv, g_.view("qkv_mixed_transposed", g_.view("qkv_3d", qkv), false), channels);
    const int ssm_states = g_.external("cache_s");
    const int state = recurrent_rows(ssm_states, [&](int states, int ids) {
      return g_.op("ssm_state_rows", Sv * Sv * Hv * S * kF32, {states, ids});
    });
    // build_recurrent_attn's cpy(new_state, ...) walks the fused op's sources: q, k, v, g, beta, state.
    const int conv_out = g_.op("conv_output_raw", channels * T_ * kF32, {conv_input, g_.external("ssm_conv1d")});
    const int silu = g_.op("conv_output_silu", bytes(conv_out), {conv_out}, true);
    // build_gdn_l2_norm: RMS norm, then a scale; qwen3next repeats q / k to the value heads.
    const bool repeat = f_.qwen3next && Kd != Vd;
    const auto l2_norm = [&](const char* name) {
      const int n = g_.op(std::string(name) + ".rms_norm", Kd * T_ * kF32, {g_.view(name, silu, false, Kd * T_ * kF32)}, true);
      const int scaled = g_.op(std::string(name) + "_predelta", bytes(n), {n}, true);
      if (!repeat) return scaled;
      return g_.view(std::string(name) + "_repeated_4d",
                     g_.op(std::string(name) + "_repeat", Vd * T_ * kF32, {g_.view(std::string(name) + "_1", scaled)}));
    };
    const int q = l2_norm("q_conv");
    const int k = l2_norm("k_conv");
    const int v = g_.view("v_conv", silu, false, Vd * T_ * kF32);
    // The gate's path, then beta's: alpha (+ dt bias, softplus, x A) and sigmoid(beta). qwen3next
    // takes both from one projection, each a contiguous copy of its view.
    const int mixed_ba = f_.qwen3next ? g_.op("mixed_ba", 2 * Hv * T_ * kF32, {g_.external("ssm_ba"), normed}) : -1;
    const int ba_4d = f_.qwen3next ? g_.view("mixed_ba_reshaped", mixed_ba) : -1;
    const int alpha = f_.qwen3next ? g_.op("alpha", Hv * T_ * kF32, {g_.view("a", ba_4d, false, Hv * T_ * kF32)})
                                      : g_.view("alpha_3d", g_.op("alpha", Hv * T_ * kF32, {g_.external("ssm_alpha"), normed}));
    const int biased = g_.op("alpha_biased", Hv * T_ * kF32, {alpha, g_.external("ssm_dt.bias")}, true);
    const int gate = g_.op("gate", bytes(biased), {g_.op("a_softplus", bytes(biased), {biased}, true), g_.external("ssm_a")}, true);
    const int beta = f_.qwen3next ? g_.op("b", Hv * T_ * kF32, {g_.view("b_view", ba_4d, false, Hv * T_ * kF32)})
                                     : g_.view("beta_4d", g_.op("beta", Hv * T_ * kF32, {g_.external("ssm_beta"), normed}));
    int beta_sigmoid = g_.op("beta_sigmoid", Hv * T_ * kF32, {beta}, true);
    if (f_.qwen3next) beta_sigmoid = g_.view("beta_4d", beta_sigmoid);  // reshaped after the sigmoid
    // GATED_DELTA_NET: the output (S_v x H_v per token) followed by the final states.
    const int gdn = g_.op("gated_delta_net", (Sv * Hv * T_ + Sv * Sv * Hv * S) * kF32,
                          {q, k, v, g_.view("gate_4d", gate), beta_sigmoid, g_.view("state_predelta", state)});
    g_.store("ssm_state_update", {g_.view("new_state", gdn, false), g_.view("ssm_state_dst", ssm_states)});
    return [this, gdn, normed, Sv, Hv, Vd] {
      const int normed_out = rms_mul("ssm_norm", g_.view("attn_output", gdn, false, Sv * Hv * T_ * kF32));
      const int z = g_.op("z", Vd * T_ * kF32, {g_.external("attn_gate"), normed});
      const int z_silu = g_.op("z_silu", bytes(z), {g_.view("z_4d", z)}, true);
      const int gated = g_.op("attn_out_norm", Vd * T_ * kF32, {normed_out, z_silu}, true);
      return g_.view("linear_attn_out_2d",
                     g_.op("linear_attn_out", E() * T_ * kF32, {g_.external("ssm_out"), g_.view("final_output", gated)}));
    };
  }

  // The conv state of a Mamba-2 or gated-DeltaNet layer (mamba-base.cpp build_mamba2_layer,
  // delta-net-base.cpp build_conv_state): build_rs's rows of the cached window, and, once the new
  // channels (`x_transposed`) are projected, the window concatenated ahead of them per sequence with
  // its last columns stored back to the cache.
  struct ConvState {
    int states, rows;
  };
  ConvState conv_state_rows(std::uint64_t channels) {
    const std::uint64_t S = std::max<std::uint64_t>(1, c_.n_seq_max), window = a_.recurrent_shape.conv_window;
    const int states = g_.external("cache_r");
    return {states, recurrent_rows(states, [&](int st, int ids) {
              return g_.op("conv_states", window * channels * S * kF32, {st, ids});
            })};
  }
  int conv_window(const ConvState& conv, int x_transposed, std::uint64_t channels) {
    const std::uint64_t S = std::max<std::uint64_t>(1, c_.n_seq_max), window = a_.recurrent_shape.conv_window;
    const int input = g_.op("conv_input", (window + T_ / S) * channels * S * kF32,
                            {g_.view("conv_states_reshaped", conv.rows), x_transposed});
    g_.store("conv_state_update", {g_.view("conv_state_last", input, false), g_.view("conv_state_dst", conv.states)});
    return input;
  }

  // build_rs over one of a layer's state tensors (`states`, external) for the reserved micro-batch:
  // the zeroed state (a SCALE in place), the rows of the micro-batch's sequences (`rows`: GET_ROWS,
  // or the SSM scan), the other cells' rows (GET_ROWS of none: a full reserve has n_rs = n_seqs)
  // copied back. Returns the first.
  // llama-graph.cpp build_rs: the states as 2-D rows (a reshape), a 1-D view of the row to zero, and
  // the two views of the s_copy input that build_inp_rs makes once for every layer.
  int recurrent_rows(int states, const std::function<int(int, int)>& rows) {
    const int states_2d = g_.view("states_2d", states);
    g_.store("rs_zero", {g_.view("rs_zero_view", states_2d)});
    const int main = rows(states_2d, s_copy_view("rs_s_copy_main"));
    const int extra = g_.op("rs_extra", 0, {states_2d, s_copy_view("rs_s_copy_extra")});
    g_.store("rs_extra_store", {extra, g_.view("rs_extra_dst", states)});
    return main;
  }
  int s_copy_view(const std::string& name) {
    const auto it = inputs_.find(name);
    if (it != inputs_.end()) return it->second;
    const int copy = input_once("rs_s_copy", std::max<std::uint64_t>(1, c_.n_seq_max) * kI32);
    return inputs_[name] = g_.view(name, copy);
  }

  // mamba-base.cpp build_mamba2_layer, n_seqs = n_seq_max sequences of n_ubatch / n_seqs tokens:
  // what its state stores expand (mamba2_inputs) and the output the walk meets later (mamba2_output).
  struct Mamba2Pending {
    int zx, x, y_ssm, x_in;  // x: the scan's view of the conv output, which y + x * D reads again
  };
  Mamba2Pending mamba2_inputs(const std::function<int()>& prev) {
    const auto& sh = a_.recurrent_shape;
    const std::uint64_t S = std::max<std::uint64_t>(1, c_.n_seq_max), I = sh.conv_channels, G = sh.groups,
                        N = sh.group_state, H = sh.ssm_heads;
    const std::uint64_t channels = I + 2 * G * N;
    const ConvState conv = conv_state_rows(channels);
    const int x_in = prev();
    // ssm_in projects to z (d_inner), xBC (the conv channels) and dt (one per head).
    // ggml_reshape_3d of the projection: z, xBC and dt are views of it.
    const int zx = g_.view("zxBCdt", g_.op("ssm_in", (I + channels + H) * T_ * kF32, {g_.external("ssm_in"), rms_mul("attn_norm", x_in)}));
    const int conv_x = conv_window(conv, g_.view("xBC_transposed", g_.view("xBC", zx, false), false), channels);
    const int ssm_states = g_.external("cache_s");
    int x = -1;
    const int y_ssm = recurrent_rows(ssm_states, [&](int states, int ids) {
      int xbc = g_.op("ssm_conv", channels * T_ * kF32, {conv_x, g_.external("ssm_conv1d")});
      if (conv_bias_) xbc = g_.op("ssm_conv_b", bytes(xbc), {xbc, g_.external("ssm_conv1d.bias")}, true);
      xbc = g_.op("ssm_conv_silu", bytes(xbc), {xbc}, true);
      const int dt = g_.op("dt_b", H * T_ * kF32, {g_.op("dt_cont", H * T_ * kF32, {g_.view("dt", zx, false)}),
                                                   g_.external("ssm_dt.bias")}, true);
      // ggml_ssm_scan: y (d_inner x tokens) followed by the final states (d_state x d_inner x n_seqs).
      const int states_4d = g_.view("ssm_states_4d", states);
      x = g_.view("x", xbc, false);
      return g_.op("ssm_scan", (I * T_ + N * I * S) * kF32,
                   {states_4d, x, dt, g_.external("ssm_a"), g_.view("B", xbc, false), g_.view("C", xbc, false), ids});
    });
    g_.store("ssm_state_store", {g_.view("last_ssm", y_ssm, false), g_.view("ssm_state_dst", ssm_states)});
    return {zx, x, y_ssm, x_in};
  }
  // Both Mamba mixers' output: y (the scan's first part) + x x D, gated by SiLU(z) (SWIGLU with z's
  // contiguous copy). `xz` is the projection z is a view of, `x` the scan's view of the conv output.
  int gated_y(int xz, int x, int y_ssm) {
    const std::uint64_t I = a_.recurrent_shape.conv_channels;
    const int z = g_.op("z_cont", I * T_ * kF32, {g_.view("z", xz, false)});
    const int xd = g_.op("x_d", I * T_ * kF32, {x, g_.external("ssm_d")}, true);
    const int y = g_.op("y_add_d", I * T_ * kF32, {g_.view("y", y_ssm, true, I * T_ * kF32), xd}, true);
    return g_.op("y_swiglu", I * T_ * kF32, {z, y});
  }
  int mamba2_output(const Mamba2Pending& m) {
    const int gated = gated_y(m.zx, m.x, m.y_ssm);
    // The grouped RMS norm only where the mixer has one (Falcon-H1 without mamba_rms_norm has not).
    const int normed = ssm_norm_ ? rms_mul("ssm_norm", g_.view("y_groups", gated)) : gated;
    return g_.op("ssm_out", E() * T_ * kF32, {g_.external("ssm_out"), g_.view("y_2d", normed)});
  }

  // build_norm(LLM_NORM) with a bias: ggml_norm (not an in-place op in ggml-alloc), then mul and add.
  int layer_norm(const std::string& name, int x) {
    const int n = g_.op(name + ".norm", bytes(x), {x});
    const int m = g_.op(name, bytes(n), {n, g_.external(name + ".weight")}, true);
    return g_.op(name + "_b", bytes(m), {m, g_.external(name + ".bias")}, true);
  }

  // phi2: attention and a GELU MLP off one LayerNorm, out = attn + mlp + residual.
  int parallel_layer(int il, int inpL) {
    int normed = layer_norm("attn_norm", inpL);
    int cur = attention(il, normed);
    cur = g_.op("attn_out_b", bytes(cur), {cur, g_.external("wo.bias")}, true);
    int residual = inpL;
    if (static_cast<std::uint64_t>(il) + 1 == a_.num_layers) {
      cur = output_rows("cur", cur);
      residual = output_rows("inpL", residual);
      normed = output_rows("attn_norm", normed);
    }
    const int down = gelu_mlp(normed, true);
    const int sum = g_.op("attn_ffn", bytes(cur), {cur, down}, true);
    return g_.op("l_out", bytes(sum), {sum, residual}, true);
  }

  // build_ffn(LLM_FFN_GELU, LLM_FFN_SEQ): up (+ bias), GELU in place, down (+ bias).
  int gelu_mlp(int x, bool biases) {
    int up = g_.op("ffn_up", a_.intermediate_size * rows_ * kF32, {g_.external("ffn_up"), x});
    if (biases) up = g_.op("ffn_up_b", bytes(up), {up, g_.external("ffn_up.bias")}, true);
    const int act = g_.op("ffn_gelu", bytes(up), {up}, true);
    int down = g_.op("ffn_down", E() * rows_ * kF32, {g_.external("ffn_down"), act});
    if (biases) down = g_.op("ffn_down_b", bytes(down), {down, g_.external("ffn_down.bias")}, true);
    return down;
  }

  // GPT-NeoX (gptneox.cpp) and Falcon (falcon.cpp). With a parallel residual the layer's output is
  // add(add(mlp, .), .) with the MLP first, so the walk meets the MLP's nodes between build_attn's
  // inputs and the attention output. The last layer keeps the output rows where llama.cpp takes them.
  int mlp_first_layer(int il, int inpL) {
    const bool last = static_cast<std::uint64_t>(il) + 1 == a_.num_layers;
    if (f_.neox && a_.sequential_residual) {  // x += attn(ln1(x)); x += mlp(ln2(x))
      int cur = attention(il, layer_norm("attn_norm", inpL));
      int residual = inpL;
      if (last) {
        cur = output_rows("cur", cur);
        residual = output_rows("inpL", inpL);
      }
      const int ffn_inp = g_.op("ffn_inp", bytes(cur), {cur, residual}, true);
      const int mlp = gelu_mlp(layer_norm("ffn_norm", ffn_inp), true);
      return g_.op("l_out", bytes(mlp), {mlp, ffn_inp}, true);
    }
    // Falcon-40B: attention reads attn_norm_2 and the MLP attn_norm, which the walk meets at the MLP.
    int attn_norm = falcon_two_norms_ ? -1 : layer_norm("attn_norm", inpL);
    const int attn_in = falcon_two_norms_ ? layer_norm("attn_norm_2", inpL) : attn_norm;
    const PendingAttention pending = attention_inputs(il, attn_in);
    int residual = inpL, mlp_in;
    if (f_.neox) {
      if (last) residual = output_rows("inpL", inpL);
      mlp_in = layer_norm("ffn_norm", residual);
    } else {
      if (attn_norm < 0) attn_norm = layer_norm("attn_norm", inpL);
      mlp_in = last ? output_rows("attn_norm", attn_norm) : attn_norm;
    }
    const int mlp = gelu_mlp(mlp_in, f_.neox);
    int attn = attention_output(pending);
    if (last) attn = output_rows("cur", attn);
    if (f_.neox) {  // add(add(mlp, inpL), attn_out)
      const int sum = g_.op("ffn_res", bytes(mlp), {mlp, residual}, true);
      return g_.op("l_out", bytes(sum), {sum, attn}, true);
    }
    const int sum = g_.op("ffn_attn", bytes(mlp), {mlp, attn}, true);  // add(add(mlp, attn_out), inpL)
    if (last) residual = output_rows("inpL", inpL);
    return g_.op("l_out", bytes(sum), {sum, residual}, true);
  }

  int rms_mul(const std::string& name, int x) {
    const int n = g_.op(name + ".rms_norm", bytes(x), {x}, true);
    return g_.op(name, bytes(n), {n, g_.external(name + ".weight")}, true);
  }

  // Inputs are leafs; ggml lists them in the order the graph walk first meets them.
  int input_once(const std::string& name, std::uint64_t size) {
    auto it = inputs_.find(name);
    if (it != inputs_.end()) return it->second;
    const int t = g_.input(name, size);
    inputs_[name] = t;
    return t;
  }
  int pos() { return input_once("inp_pos", T_ * (f_.mrope ? 4 : 1) * kI32); }
  int out_ids() { return input_once("inp_out_ids", O_ * kI32); }
  // The rows of the tokens that produce an output (get_rows with inp_out_ids).
  // From the first one on, the FFN that follows runs on the output rows only (rows_).
  int output_rows(const std::string& name, int t) {
    rows_ = O_;
    return g_.op("get_rows(" + name + ")", bytes(t) / T_ * O_, {t, out_ids()});
  }
  // One f32 scale per token that multiplies Q (build_inp_attn_scale: Llama-4's NoPE layers,
  // Ministral-3's temperature tuning).
  int attn_scale() { return input_once("inp_attn_scale", T_ * kF32); }

  const KvCache& cache_of(int il) const {
    const auto it = layer_cache_.find(il);
    if (it == layer_cache_.end()) throw_internal("layer " + std::to_string(il) + " has no KV cache");
    return *it->second;
  }
  std::string tag(const KvCache& kv) const { return kv.role.empty() ? "" : "_" + kv.role; }
  int k_idxs(const KvCache& kv) { return input_once("k_idxs" + tag(kv), T_ * kI64); }
  int v_idxs(const KvCache& kv, std::uint64_t v_values) {
    // Transposed V (no FA) is written element by element: one index per value.
    return input_once("v_idxs" + tag(kv), (fa() ? T_ : T_ * v_values) * kI64);
  }
  int mask(const KvCache& kv) {
    // [n_kv, n_tokens / n_stream, 1, n_stream]: the reserved micro-batch is spread over every stream
    // (graph_reserve uses n_seq_max sequences), so the mask and KQ cover n_kv = cells per stream.
    return input_once("kq_mask" + tag(kv), kv.cells * T_ * (fa() ? 2 : kF32));
  }
  // The Hadamard rotation matrix, f32 n x n (llama_kv_cache::build_input_k_rot / _v_rot): for K the
  // largest power of two from 64 up that divides the head size, for V 64.
  int rot(const std::string& name, std::uint64_t n) { return input_once(name, n * n * kF32); }
  static std::uint64_t k_rot_size(std::uint64_t head) {
    std::uint64_t n = 64;
    while (head % (2 * n) == 0) n *= 2;
    return n;
  }

  // llama_mul_mat_hadamard: reshape (a contiguous copy of a strided view), multiply by the rotation,
  // reshape back.
  int hadamard(int x, int rotation) {
    const GraphTensor& in = g_.tensors()[static_cast<std::size_t>(x)];
    const int r = in.view_of >= 0 && !in.contiguous ? g_.op("hadamard.cont", bytes(x), {x}) : g_.view("hadamard.reshape", x);
    const int m = g_.op("hadamard.mul_mat", bytes(x), {rotation, r});
    return g_.view("hadamard.reshape_4d", m);
  }

  int layer(int il, int inpL) {
    const int attn_in = f_.no_pre_norms ? inpL : rms_mul("attn_norm", inpL);
    int cur = a_.kv_lora_rank > 0 ? mla_attention(il, attn_in) : attention(il, attn_in);
    int residual = inpL;
    if (static_cast<std::uint64_t>(il) + 1 == a_.num_layers && !f_.late_out_ids) {
      // Only the output rows continue after the last layer (n_outputs = n_ubatch when reserving).
      cur = output_rows("cur", cur);
      residual = output_rows("inpSA", residual);
    }
    if (f_.sandwich_norms) cur = rms_mul("attn_post_norm", cur);
    const int ffn_inp = g_.op("ffn_inp", bytes(cur), {cur, residual}, true);
    const int x = f_.no_pre_norms ? ffn_inp : rms_mul("ffn_norm", ffn_inp);
    int out = moe_layer(il) ? moe_ffn(x) : f_.fused_up_glu ? fused_up_ffn(x) : ffn(x, a_.intermediate_size, "ffn");
    if (f_.sandwich_norms) out = rms_mul("ffn_post_norm", out);
    if (f_.residual_first) return g_.op("l_out", bytes(out), {ffn_inp, out}, true);
    return g_.op("l_out", bytes(out), {out, ffn_inp}, true);
  }

  // build_ffn(up = [n_embd, 2 n_ff], LLM_FFN_SWIGLU): ggml_swiglu over the two halves (not in place).
  int fused_up_ffn(int x) {
    const std::uint64_t n_ff = a_.intermediate_size;
    const int up = g_.op("ffn_up", 2 * n_ff * rows_ * kF32, {g_.external("ffn_up"), x});
    const int act = g_.op("ffn_swiglu", n_ff * rows_ * kF32, {up});
    return g_.op("ffn_down", E() * rows_ * kF32, {g_.external("ffn_down"), act});
  }

  // build_ffn(LLM_FFN_RELU_SQR) without a gate: up, ReLU, square (both in place), down.
  int relu_sqr_ffn(int x, std::uint64_t n_ff, const std::string& name) {
    const int up = g_.op(name + "_up", n_ff * rows_ * kF32, {g_.external(name + "_up"), x});
    const int act = g_.op(name + "_sqr", bytes(up), {g_.op(name + "_relu", bytes(up), {up}, true)}, true);
    return g_.op(name + "_down", E() * rows_ * kF32, {g_.external(name + "_down"), act});
  }

  // build_ffn with a parallel gate: the walk from the down projection meets gate before up.
  int ffn(int x, std::uint64_t n_ff, const std::string& name) {
    const int gate = g_.op(name + "_gate", n_ff * rows_ * kF32, {g_.external(name + "_gate"), x});
    const int up = g_.op(name + "_up", n_ff * rows_ * kF32, {g_.external(name + "_up"), x});
    const int act = g_.op(name + "_glu", n_ff * rows_ * kF32, {gate, up});  // GLU: not in place
    return g_.op(name + "_down", E() * rows_ * kF32, {g_.external(name + "_down"), act});
  }

  // build_moe_ffn's router: the scores, the top-k expert ids and their weights, created in the order
  // the walk from the weights meets them (the weights' reshaped scores first, then the selection).
  struct Routed {
    int selected, weights;
  };
  // `logits_in`: the router's logits where the builder computes them itself (build_moe_ffn's probs_in:
  // gemma4.cpp), else -1.
  Routed route(int x, int logits_in = -1) {
    const std::uint64_t X = a_.num_experts, K = a_.experts_per_token;
    ModelArch::MoeRouting r;  // softmax, no norm, no scale, no groups
    if (f_.hparams_routing) r = a_.moe_routing;
    if (f_.nemotron_h) r.sigmoid = true;  // nemotron-h.cpp passes LLAMA_EXPERT_GATING_FUNC_TYPE_SIGMOID
    if (f_.moe_norm_w) r.norm_topk = true;
    if (f_.weight_before_experts) r.sigmoid = true;
    int logits = logits_in >= 0 ? logits_in : g_.op("ffn_moe_logits", X * rows_ * kF32, {g_.external("ffn_gate_inp"), x});
    if (f_.router_bias)
      logits = g_.op("ffn_moe_logits_biased", bytes(logits), {logits, g_.external("ffn_gate_inp.bias")}, true);
    // SOFTMAX_WEIGHT: the scores are the logits; softmax and sigmoid are in-place unary ops.
    const int probs = f_.softmax_weight ? logits : g_.op("ffn_moe_probs", bytes(logits), {logits}, true);
    const int probs3 = g_.view("probs_3d", probs);
    int selection = f_.weight_before_experts ? logits : probs;  // llama4 selects on the logits
    if (score_bias_)
      selection = g_.op("ffn_moe_probs_biased", bytes(probs), {probs, g_.external("exp_probs_b")}, true);
    if (r.groups > 1 && r.groups_used >= r.groups)  // llama-model.cpp load_hparams asserts it
      throw_usage("--engine llamacpp: llama.cpp loads a grouped router only with topk_group below n_group (here " +
                  std::to_string(r.groups_used) + " of " + std::to_string(r.groups) + ")");
    if (r.groups > 1) selection = keep_best_groups(selection, r);
    const int argsort = g_.op("ffn_moe_argsort", X * rows_ * kI32, {selection});
    const int selected = g_.view("ffn_moe_topk", argsort, false, K * rows_ * kI32);
    int weights = g_.op("ffn_moe_weights", K * rows_ * kF32, {probs3, selected});
    if (f_.softmax_weight)
      weights = g_.view("weights_3d",
                        g_.op("ffn_moe_weights_softmax", K * rows_ * kF32, {g_.view("weights_2d", weights)}, true));
    if (r.norm_topk) {
      const int w2 = g_.view("weights_2d", weights);
      int sum = g_.op("ffn_moe_weights_sum", rows_ * kF32, {w2});
      sum = g_.op("ffn_moe_weights_sum_clamped", bytes(sum), {sum}, true);
      weights = g_.view("weights_3d", g_.op("ffn_moe_weights_norm", K * rows_ * kF32, {w2, sum}, true));
    }
    if (r.scale != 0.0 && r.scale != 1.0) weights = g_.op("ffn_moe_weights_scaled", K * rows_ * kF32, {weights}, true);
    return {selected, weights};
  }

  // Group-limited routing (n_expert_groups > 1): each group scored by its two best experts, the
  // groups_used best groups kept, the others' scores filled with -inf (a GET_ROWS of the kept
  // groups, a FILL of the whole and a SET_ROWS of the first into the second).
  int keep_best_groups(int selection, const ModelArch::MoeRouting& r) {
    const std::uint64_t X = a_.num_experts, G = r.groups, P = X / G, U = r.groups_used;
    const int groups = g_.view("selection_groups", selection);  // [P, G, T]
    const int groups_4d = g_.view("selection_groups_4d", groups);
    const int pair_sort = g_.op("group_argsort", X * rows_ * kI32, {groups});
    const int pairs = g_.view("group_top2", pair_sort, false, 2 * G * rows_ * kI32);
    const int pair_scores = g_.op("group_top2_scores", 2 * G * rows_ * kF32, {groups_4d, pairs});
    const int group_scores = g_.op("group_scores", G * rows_ * kF32, {g_.view("group_top2_3d", pair_scores)});
    const int group_sort = g_.op("group_argsort_2", G * rows_ * kI32, {g_.view("group_scores_2d", group_scores)});
    const int kept_groups = g_.view("ffn_moe_group_topk", group_sort, false, U * rows_ * kI32);
    const int kept = g_.op("selection_kept", P * U * rows_ * kF32, {groups, kept_groups});
    const int filled = g_.op("selection_filled", X * rows_ * kF32, {groups}, true);
    const int masked = g_.write_into("selection_set_rows", filled, {kept, kept_groups, filled});
    return g_.view("ffn_moe_probs_masked", masked);
  }

  int moe_ffn(int x) { return moe_shared(x, moe_routed(x)); }
  // build_moe_ffn: the router, the routed experts and their weighted sum. It expands the experts'
  // output views and the sum as it builds them ("order the views before the adds", llama-graph.cpp),
  // so in the hybrids' lazily walked layers everything up to here reaches the graph at once.
  int moe_routed(int x) {
    const std::uint64_t K = a_.experts_per_token, F = a_.moe_intermediate_size, He = a_.moe_hidden_size();
    // Plain ints, not a structured binding: clang before 16 lets no lambda capture a binding.
    const Routed routed = route(x);
    // A latent MoE (nemotron-h.cpp build_ffn_layer, Nemotron-3 Super): the experts take
    // ffn_latent_down's projection of the input; the router still reads the input itself.
    // build_moe_ffn expands the router's weights first (ggml_build_forward_expand(gf, weights)),
    // so the projection enters the graph with the experts, after the router.
    const int in = a_.moe_latent_size ? g_.op("ffn_latent_down", He * rows_ * kF32, {g_.external("ffn_latent_down"), x}) : x;
    const int selected = routed.selected, weights = routed.weights;
    // Experts: MUL_MAT_ID over [n_ff_exp, n_expert_used, n_tokens].
    int x3 = g_.view("cur_3d", in);
    if (f_.weight_before_experts)  // [n_embd, n_expert_used, n_tokens], weighted in place
      x3 = g_.op("ffn_moe_weighted_in", He * K * rows_ * kF32,
                 {g_.op("ffn_moe_repeat", He * K * rows_ * kF32, {x3}), weights}, true);
    const auto experts = [&](const std::string& name, std::uint64_t size, int input) {
      const int t = g_.op("ffn_moe_" + name, size, {g_.external("ffn_" + name + "_exps"), input, selected});
      if (!f_.expert_bias) return t;
      return g_.op("ffn_moe_" + name + "_biased", size, {t, g_.external("ffn_" + name + "_exps.bias"), selected}, true);
    };
    int act;
    if (f_.nemotron_h) {  // build_moe_ffn without gate_exps, LLM_FFN_RELU_SQR: relu, sqr
      const int up = experts("up", F * K * rows_ * kF32, x3);
      act = g_.op("ffn_moe_sqr", bytes(up), {g_.op("ffn_moe_relu", bytes(up), {up}, true)}, true);
    } else {
      const int gate = experts("gate", F * K * rows_ * kF32, x3);
      const int up = experts("up", F * K * rows_ * kF32, x3);
      act = g_.op("ffn_moe_glu", F * K * rows_ * kF32, {gate, up});
    }
    const int down = experts("down", He * K * rows_ * kF32, act);
    const int weighted = f_.weight_before_experts ? down : g_.op("ffn_moe_weighted", bytes(down), {down, weights}, true);
    return sum_experts(weighted, He);
  }
  // build_moe_ffn's tail: a view of each selected expert's rows, all of them before their adds
  // ("order the views before the adds"); one expert is made contiguous.
  int sum_experts(int weighted, std::uint64_t He) {
    const std::uint64_t K = a_.experts_per_token;
    std::vector<int> views;
    for (std::uint64_t i = 0; i < K; ++i) views.push_back(g_.view("expert_view", weighted, false, He * rows_ * kF32));
    int moe_out = views[0];
    for (std::uint64_t i = 1; i < K; ++i) moe_out = g_.op("ffn_moe_add", He * rows_ * kF32, {moe_out, views[i]}, true);
    if (K == 1) moe_out = g_.op("ffn_moe_cont", He * rows_ * kF32, {moe_out});
    return moe_out;
  }

  // A layer with routed experts: every layer of a MoE model unless the arch lists which.
  bool moe_layer(int il) const {
    const auto l = static_cast<std::size_t>(il);
    return a_.num_experts > 0 && (a_.layer_is_moe.empty() || (l < a_.layer_is_moe.size() && a_.layer_is_moe[l]));
  }

  // src/models/gemma4.cpp's layer. build_attn expands Q, K, V, the stores and the attention; the rest
  // is met by the next expansion's walk back from l_out, except in a MoE layer, where build_moe_ffn
  // expands the router's weights (pulling in wo, the post-attention norm, attn_out and the router's
  // input) and then the experts, before the dense MLP and the adds that the walk meets later:
  // l_out = (ffn_post_norm(mlp + moe) + attn_out) x layer_output_scale.
  int gemma4_layer(int il, int inpL) {
    const PendingAttention p = attention_inputs(il, rms_mul("attn_norm", inpL));
    const int cur = rms_mul("attn_post_norm", attention_output(p));
    const int attn_out = g_.op("attn_out", bytes(cur), {cur, inpL}, true);
    int out;
    if (moe_layer(il)) {
      const int experts = gemma4_experts(attn_out);
      const int mlp = rms_mul("ffn_post_norm_1", ffn(rms_mul("ffn_norm", attn_out), a_.intermediate_size, "ffn"));
      const int moe_out = rms_mul("ffn_post_norm_2", experts);
      out = g_.op("ffn_moe_combined", bytes(mlp), {mlp, moe_out}, true);
    } else {
      out = ffn(rms_mul("ffn_norm", attn_out), a_.intermediate_size, "ffn");
    }
    out = rms_mul("ffn_post_norm", out);
    out = g_.op("l_out", bytes(out), {out, attn_out}, true);
    if (out_scale_) out = g_.op("out_scaled", bytes(out), {out, g_.external("layer_output_scale")}, true);
    return out;
  }
  // gemma4.cpp's routed experts: the router reads attn_out through a weightless RMS norm, a 1/sqrt(n_embd)
  // scale and ffn_gate_inp.scale (logits passed to build_moe_ffn as probs_in: softmax, top-k, the weights
  // renormalised); the experts read ffn_pre_norm_2(attn_out) through the fused ffn_gate_up_exps (one
  // MUL_MAT_ID, gate and up views of it, GEGLU), and build_lora_mm_id multiplies the down experts by
  // their ffn_down_exps.scale: a reshape of it repeated to [1, n_expert, n_tokens] and the selected rows
  // gathered (GET_ROWS).
  int gemma4_experts(int attn_out) {
    const std::uint64_t X = a_.num_experts, K = a_.experts_per_token, F = a_.moe_intermediate_size;
    int router_in = g_.op("router_in.rms_norm", bytes(attn_out), {attn_out}, true);
    router_in = g_.op("router_in.scaled", bytes(router_in), {router_in}, true);
    router_in = g_.op("router_in", bytes(router_in), {router_in, g_.external("ffn_gate_inp.scale")}, true);
    const int logits = g_.op("ffn_moe_logits", X * rows_ * kF32, {g_.external("ffn_gate_inp"), router_in});
    const Routed routed = route(-1, logits);
    const int selected = routed.selected;
    const int x3 = g_.view("cur_3d", rms_mul("ffn_pre_norm_2", attn_out));
    const int gate_up = g_.op("ffn_moe_gate_up", 2 * F * K * rows_ * kF32, {g_.external("ffn_gate_up_exps"), x3, selected});
    const int gate = g_.view("ffn_moe_gate", gate_up, false, F * K * rows_ * kF32);
    const int up = g_.view("ffn_moe_up", gate_up, false, F * K * rows_ * kF32);
    const int act = g_.op("ffn_moe_geglu", F * K * rows_ * kF32, {gate, up});
    int down = g_.op("ffn_moe_down", E() * K * rows_ * kF32, {g_.external("ffn_down_exps"), act, selected});
    if (down_exps_scale_) {
      const int scale = g_.view("ffn_down_exps_s_3d", g_.external("ffn_down_exps.scale"));
      const int repeated = g_.op("ffn_down_exps_s_repeat", X * rows_ * kF32, {scale});
      const int picked = g_.op("ffn_down_exps_s_rows", K * rows_ * kF32, {repeated, selected});
      down = g_.op("ffn_moe_down_scaled", bytes(down), {down, picked}, true);
    }
    return sum_experts(g_.op("ffn_moe_weighted", bytes(down), {down, routed.weights}, true), E());
  }
  // The shared expert (the builders' ffn_shexp after build_moe_ffn) added to the routed experts' sum,
  // which a latent MoE first projects back to the hidden size (ffn_latent_up, built after
  // build_moe_ffn returns: the walk meets it as the first input of the final add).
  int moe_shared(int x, int moe_out) {
    if (a_.moe_latent_size)
      moe_out = g_.op("ffn_latent_up", E() * rows_ * kF32, {g_.external("ffn_latent_up"), moe_out});
    const std::uint64_t shared = a_.shared_expert_intermediate_size
                                     ? a_.shared_expert_intermediate_size
                                     : a_.num_shared_experts * a_.moe_intermediate_size;
    if (shared == 0) return moe_out;
    int shexp = f_.nemotron_h ? relu_sqr_ffn(x, shared, "ffn_shexp") : ffn(x, shared, "ffn_shexp");
    if (f_.shexp_sigmoid) {  // qwen35moe.cpp: ffn_shexp x sigmoid(ffn_gate_inp_shexp . x)
      const int gate_inp = g_.op("shared_expert_gate", rows_ * kF32, {g_.external("ffn_gate_inp_shexp"), x});
      shexp = g_.op("ffn_shexp_gated", bytes(shexp), {shexp, g_.op("shared_expert_gate_sigmoid", rows_ * kF32, {gate_inp}, true)}, true);
    } else if (f_.shexp_gate) {  // sigmoid as silu(g) / g; the walk meets it after the shared FFN
      const int gate_inp = g_.op("ffn_shexp_gate_inp", rows_ * kF32, {g_.external("ffn_gate_inp_shexp"), x});
      const int silu = g_.op("ffn_shexp_gate_silu", rows_ * kF32, {gate_inp}, true);
      const int shexp_weight = g_.op("ffn_shexp_gate", rows_ * kF32, {silu, gate_inp}, true);
      shexp = g_.op("ffn_shexp_out", bytes(shexp), {shexp, shexp_weight}, true);
    }
    return g_.op("ffn_out", E() * rows_ * kF32, {moe_out, shexp}, true);
  }

  // Q/K/V projections, RoPE, the KV store and attention of a standard (GQA) layer.
  int attention(int il, int x) { return attention_output(attention_inputs(il, x)); }

  // build_attn in two halves: what it expands when it is called (Q, K, V, the cache stores and the
  // attention up to kqv_out: build_attn_mha ends in ggml_build_forward_expand), and what the walk
  // meets only from the layer's output (the V rotation and wo). A layer whose output adds its FFN
  // first (GPT-NeoX, Falcon) has the FFN's nodes between the two.
  struct PendingAttention {
    const KvCache* kv;
    int kqv_out;
    bool v_rot;
    int q_full = -1;  // Qwen3.5: the Q projection whose second half per head gates the output
  };
  PendingAttention attention_inputs(int il, int x) {
    const KvCache& kv = cache_of(il);
    // The layer's own head size and KV heads (llama_hparams::n_embd_head_k(il) / n_head_kv(il)): Gemma 4's
    // full layers differ from its sliding ones; every other model has one geometry.
    const auto l = static_cast<std::size_t>(il);
    const std::uint64_t D = a_.layer_head_dim(l), Dv = a_.layer_v_head_dim(l);
    const std::uint64_t H = a_.num_heads, Hkv = a_.layer_kv_heads(l);
    // llama_kv_cache: attn_rot_k / _v when the cache type is quantized and the head size a multiple
    // of 64 (Phi-3's 96 and Phi-2's 80 are not rotated).
    const bool k_rot = quantized(kv.type_k) && D % 64 == 0, v_rot = quantized(kv.type_v) && Dv % 64 == 0;
    // build_attn expands q, then v, then k (q, k, v for an iSWA model's layers: the
    // llm_graph_input_attn_kv_iswa overload). A fused projection (build_qkv's wqkv path) is one
    // matmul whose Q / K / V are strided 3-D views: RoPE writes new tensors, and a transposed V
    // cache (no FA) needs a contiguous copy of V (cpy_v's ggml_cont_2d).
    int qkv = f_.fused_qkv ? g_.op("wqkv", (H * D + Hkv * D + Hkv * Dv) * T_ * kF32, {g_.external("wqkv"), x}) : -1;
    if (f_.fused_qkv && f_.qkv_bias) qkv = g_.op("wqkv_b", bytes(qkv), {qkv, g_.external("wqkv.bias")}, true);
    const auto projected = [&](const char* name, const char* weight, std::uint64_t size, const char* norm) {
      int t = g_.op(name, size, {g_.external(weight), x});
      if (f_.qkv_bias) t = g_.op(std::string(name) + "_bias", size, {t, g_.external(std::string(weight) + "_b")}, true);
      if (f_.qk_norm_2d && norm) t = rms_mul(norm, t);
      return g_.view(std::string(name) + "_3d", t);
    };
    // Qwen3.5's Q projection holds each head's query and its output gate: Q is a strided view.
    const int q_full = f_.qwen35 ? g_.op("Qcur_full", 2 * H * D * T_ * kF32, {g_.external("wq"), x}) : -1;
    int q = f_.fused_qkv ? g_.view("Qcur_view", qkv, false, H * D * T_ * kF32)
            : f_.qwen35  ? g_.view("Qcur_reshaped", f_.qwen3next ? g_.view("Qcur_full_4d", q_full) : q_full, false,
                                   H * D * T_ * kF32)
                         : projected("Qcur", "wq", H * D * T_ * kF32, "attn_q_norm");
    if (f_.qk_norm) q = rms_mul("attn_q_norm", q);
    // Nemotron-H has no RoPE; Granite-4.0-H only where the model has a rope table (has_rope).
    const bool no_rope = f_.nemotron_h || f_.jamba || (f_.granite_hybrid && a_.rope_tables.empty());
    const bool rope = !no_rope && !(f_.nope_full_layers && kv.role == "non-SWA");
    if (rope) q = g_.op("Qcur_rope", H * D * T_ * kF32, {q, pos()}, true);
    else if (!no_rope) q = g_.op("Qcur_attn_scaled", H * D * T_ * kF32, {q, attn_scale()}, true);
    if (rope && f_.kq_l2_norm) q = g_.op("Qcur_normed", bytes(q), {q}, true);
    if (f_.temperature_tuning && a_.attn_temperature_scale != 0.0)  // mistral3.cpp: Q x inp_attn_scale
      q = g_.op("Qcur_attn_temp_scaled", bytes(q), {q, attn_scale()}, true);
    if (f_.q_scale) q = g_.op("Qcur_scaled", bytes(q), {q}, true);
    if (k_rot) q = hadamard(q, rot("k_rot" + tag(kv), k_rot_size(D)));
    int k_3d = -1;  // K's projection as [head, heads, tokens]: a Gemma 4 K=V layer's V reshapes it again
    const auto build_v = [&] {
      int v = f_.fused_qkv                             ? g_.view("Vcur_view", qkv, false, Hkv * Dv * T_ * kF32)
              : f_.gemma4 && has_wv_.count(il) == 0 ? g_.view("Vcur_3d", g_.tensors()[static_cast<std::size_t>(k_3d)].view_of)
                                                       : projected("Vcur", "wv", Hkv * Dv * T_ * kF32, nullptr);
      if (f_.gemma4) v = g_.op("Vcur_normed", bytes(v), {v}, true);  // gemma4.cpp: ggml_rms_norm, no weight
      return v_rot ? hadamard(v, rot("v_rot" + tag(kv), 64)) : v;
    };
    const auto build_k = [&] {
      int k = f_.fused_qkv ? g_.view("Kcur_view", qkv, false, Hkv * D * T_ * kF32)
                           : projected("Kcur", "wk", Hkv * D * T_ * kF32, "attn_k_norm");
      k_3d = k;
      if (f_.qk_norm) k = rms_mul("attn_k_norm", k);
      if (rope) k = g_.op("Kcur_rope", Hkv * D * T_ * kF32, {k, pos()}, true);
      if (rope && f_.kq_l2_norm) k = g_.op("Kcur_normed", bytes(k), {k}, true);
      return k_rot ? hadamard(k, rot("k_rot" + tag(kv), k_rot_size(D))) : k;
    };
    // gemma4.cpp always builds the iSWA input (build_attn_inp_kv_iswa), so its layers order q, k, v.
    const bool iswa = !kv.role.empty() || f_.gemma4;
    int v = iswa ? -1 : build_v();
    const int k = build_k();
    if (iswa) v = build_v();
    // cpy_k / cpy_v: SET_ROWS into the cache (no memory of their own here). A transposed V cache
    // (no FA) is written through 1-wide reshapes of the cache and of V. A cache of several streams
    // (-np > 1 without -kvu) is reshaped to one 2-D table first, K always and V when not transposed
    // (llama-kv-cache.cpp cpy_k / cpy_v: "merge the buffer across all streams").
    const int k_cache = g_.external("cache_k");
    const int v_cache = g_.external("cache_v");
    const bool streams = kv.streams > 1;
    g_.store("set_rows_k", {streams ? g_.view("cache_k_streams", k_cache) : k_cache, g_.view("k_cur_2d", k), k_idxs(kv)});
    const int v_idx = v_idxs(kv, Hkv * Dv);
    const int v_2d = f_.fused_qkv && !fa() ? g_.op("v_cont_2d", Hkv * Dv * T_ * kF32, {v}) : g_.view("v_cur_2d", v);
    if (fa()) g_.store("set_rows_v", {streams ? g_.view("cache_v_streams", v_cache) : v_cache, v_2d, v_idx});
    else g_.store("set_rows_v", {g_.view("v_cache_1wide", v_cache), g_.view("v_cur_1wide", v_2d), v_idx});
    const int kq_mask = mask(kv);
    // build_attn_mha over get_k / get_v views of the whole cache.
    const int qp = g_.view("q_perm", g_.view("q_4d", q), false);
    const int kp = g_.view("k_perm", g_.view("get_k", k_cache), false);
    const int vp = g_.view("v_perm", g_.view("get_v", v_cache), false);
    int cur;
    if (fa()) {
      const int o = g_.op("flash_attn_ext", H * Dv * T_ * kF32, {qp, kp, vp, kq_mask});
      cur = g_.view("kqv_2d", o);
    } else {
      int kq = g_.op("kq", kv.cells * T_ * H * kF32, {kp, qp});
      if (f_.attn_softcap)
        for (const char* step : {"kq_scaled", "kq_tanh", "kq_capped"}) kq = g_.op(step, bytes(kq), {kq}, true);
      const int sm = g_.op("kq_soft_max", bytes(kq), {kq, kq_mask}, true);
      const int kqv = g_.op("kqv", Dv * T_ * H * kF32, {vp, sm});
      cur = g_.op("kqv_cont", H * Dv * T_ * kF32, {g_.view("kqv_perm", kqv, false)});
    }
    return {&kv, cur, v_rot, q_full};
  }

  int attention_output(const PendingAttention& p) {
    int cur = p.kqv_out;
    if (p.v_rot) cur = hadamard(cur, rot("v_rot" + tag(*p.kv), 64));
    if (p.q_full >= 0) {  // qwen35.cpp build_layer_attn: cur x sigmoid(cont(gate view))
      const std::uint64_t size = bytes(p.q_full) / 2;
      const int gate = g_.op("gate_reshaped", size, {g_.view("gate", p.q_full, false, size)});
      cur = g_.op("attn_gated", bytes(cur), {cur, g_.op("gate_sigmoid", size, {gate}, true)}, true);
    }
    cur = g_.op("attn_out", E() * T_ * kF32, {g_.external("wo"), cur});
    if (f_.attn_out_bias) cur = g_.op("attn_out_b", bytes(cur), {cur, g_.external("wo.bias")}, true);
    return cur;
  }

  // DeepSeek sparse attention's lightning indexer (deepseek32.cpp, glm-dsa.cpp; llama-graph.cpp
  // build_attn for llm_graph_input_attn_k_dsa). Its key: one head of index_head_dim from the layer's
  // input, LayerNorm with a bias, NeoX RoPE, the Hadamard rotation (a plain MUL_MAT by the
  // self_k_rot_lid input), stored to the indexer's cache.
  void dsa_indexer_keys(int x) {
    const KvCache& lid = indexer_cache();
    const std::uint64_t D = a_.index_head_dim;
    // The store's walk meets the rotation (the MUL_MAT's first source) before the RoPE positions:
    // the leaves' order, which is where ggml-alloc places them.
    const int rotation = k_rot_lid();
    int k = g_.op("indexer_k", D * T_ * kF32, {g_.external("indexer.attn_k"), x});
    k = g_.op("indexer_k.norm", bytes(k), {k});
    k = g_.op("indexer_k.norm_w", bytes(k), {k, g_.external("indexer.k_norm.weight")}, true);
    k = g_.op("indexer_k.norm_b", bytes(k), {k, g_.external("indexer.k_norm.bias")}, true);
    k = g_.op("indexer_k_rope", bytes(k), {g_.view("indexer_k_3d", k), pos()}, true);
    k = g_.op("indexer_k_rot", bytes(k), {rotation, k});
    const int dst = lid.streams > 1 ? g_.view("cache_lid_streams", g_.external("cache_lid")) : g_.external("cache_lid");
    g_.store("set_rows_lid", {dst, g_.view("indexer_k_2d", k), input_once("k_idxs_lid", T_ * kI64)});
  }
  // The mask of the top-k tokens, which the walk meets from the attention: zeros (a leaf, filled),
  // the indexer's query (from the q latent: index_n_heads heads, RoPE, the rotation) and per-head
  // weights (scaled), GGML_OP_LIGHTNING_INDEXER over the cached keys (cparams.fused_lid, on where
  // the backend has the op: an n_kv x n_tokens f32 score), TOP_K, then the attention mask filled with
  // -inf, the top-k set to zero (SET_ROWS into it), and the causal mask added.
  int dsa_top_k_mask(int il, int q_latent, int x, const KvCache& kv) {
    const KvCache& lid = indexer_cache();
    const std::uint64_t Hi = a_.index_n_heads, D = a_.index_head_dim;
    const std::uint64_t cells = lid.cells, top_k = std::min<std::uint64_t>(a_.index_topk, cells);
    const int zeros = g_.leaf("dsa_zeros_" + std::to_string(il), top_k * T_ * kF32);
    const int zeros_filled = g_.op("dsa_zeros_fill", bytes(zeros), {zeros}, true);
    // glm-dsa.cpp: a "shared" indexer layer (GLM-5.2's indexer_types) reuses the top-k of the last
    // full one and only rebuilds its mask.
    if (!own_indexer(il)) {
      if (top_k_ < 0) throw_usage("--engine llamacpp: a shared DSA indexer layer must follow a full one (layer " + std::to_string(il) + ")");
      return dsa_mask_of(zeros_filled, g_.view("top_k_3d", top_k_), kv);
    }
    int q = g_.op("indexer_q", Hi * D * T_ * kF32, {g_.external("indexer.attn_q_b"), q_latent});
    q = g_.op("indexer_q_rope", bytes(q), {g_.view("indexer_q_3d", q), pos()}, true);
    q = g_.op("indexer_q_rot", bytes(q), {k_rot_lid(), q});
    const int q4 = g_.view("indexer_q_4d", q);
    const int k = g_.view("indexer_k_cached", g_.external("cache_lid"));
    int w = g_.op("indexer_weights", Hi * T_ * kF32, {g_.external("indexer.proj"), x});
    w = g_.op("indexer_weights_scaled", bytes(w), {g_.view("indexer_weights_4d", w)}, true);
    // The lid mask is f16 when the fused indexer runs (build_attn_inp_k_dsa_impl: cparams.fused_lid).
    const int lid_mask = input_once("kq_mask_lid", cells * T_ * 2);
    const int score = g_.op("indexer_score", cells * T_ * kF32, {q4, k, w, lid_mask});
    const int picked = g_.op("indexer_top_k", top_k * T_ * kI32, {score});
    top_k_ = g_.op("top_k", bytes(picked), {picked});
    return dsa_mask_of(zeros_filled, g_.view("top_k_3d", top_k_), kv);
  }
  // llama-graph.cpp build_attn (DSA): the mask filled with -inf, the top-k rows set to the zeros
  // (SET_ROWS: sources zeros, indices, then the filled mask it writes into), the causal mask added.
  int dsa_mask_of(int zeros, int top_k_3d, const KvCache& kv) {
    const int kq_mask = mask(kv);
    const int all = g_.view("kq_mask_all_4d", g_.op("kq_mask_all", bytes(kq_mask), {kq_mask}, true));
    const int kept = g_.view("kq_mask_top_k_4d", g_.write_into("kq_mask_top_k", all, {zeros, top_k_3d, all}));
    return g_.op("kq_mask_top_k_add", bytes(kq_mask), {kept, kq_mask}, true);
  }
  bool own_indexer(int il) const {
    const auto l = static_cast<std::size_t>(il);
    return a_.layer_has_indexer.empty() || (l < a_.layer_has_indexer.size() && a_.layer_has_indexer[l]);
  }
  const KvCache& indexer_cache() const {
    if (!indexer_) throw_internal("a DSA model without its indexer cache");
    return *indexer_;
  }
  // llama_kv_cache::build_input_k_rot of the indexer cache: the index head's rotation, f32.
  int k_rot_lid() { return rot("k_rot_lid", k_rot_size(a_.index_head_dim)); }

  // DeepSeek MLA with the absorption optimisation (K-only latent cache, V read from K).
  int mla_attention(int il, int x) {
    const KvCache& kv = cache_of(il);
    const std::uint64_t H = a_.num_heads, R = a_.kv_lora_rank, rope = a_.qk_rope_head_dim;
    const std::uint64_t nope = a_.qk_nope_head_dim, Dv = a_.v_head_dim;
    // In the order the walk meets them: build_attn expands Qcur, then Vcur (the normed latent),
    // then Kcur; concat visits its first source first.
    // With a q latent (q_lora_rank: V2 / V3, not V2-Lite) Q is wq_b x norm(wq_a x).
    // DSA: the indexer's key path and its store are expanded first (deepseek32.cpp cpy_k of the
    // indexer cache, before build_attn).
    if (f_.dsa && own_indexer(il)) dsa_indexer_keys(x);
    const int q_in = a_.q_lora_rank > 0
                         ? rms_mul("attn_q_a_norm", g_.op("q_a", a_.q_lora_rank * T_ * kF32, {g_.external("wq_a"), x}))
                         : x;
    const int q = g_.op("q", H * (nope + rope) * T_ * kF32, {g_.external(a_.q_lora_rank > 0 ? "wq_b" : "wq"), q_in});
    const int q_nope = g_.view("q_nope", q, false, H * nope * T_ * kF32);
    const int q_abs = g_.op("q_nope_absorbed", R * T_ * H * kF32,
                            {g_.external("wk_b"), g_.view("q_nope_perm", q_nope, false)});
    const int q_abs_perm = g_.view("q_abs_perm", q_abs, false);
    const int q_pe_v = g_.view("q_pe", q, false, H * rope * T_ * kF32);
    const int q_pe = g_.op("q_pe_rope", H * rope * T_ * kF32, {q_pe_v, pos()}, true);
    const int qcur = g_.op("Qcur", (R + rope) * H * T_ * kF32, {q_abs_perm, q_pe});
    const int kv_pe = g_.op("kv_cmpr_pe", (R + rope) * T_ * kF32, {g_.external("wkv_a_mqa"), x});
    const int kv_cmpr_v = g_.view("kv_cmpr", kv_pe, false, R * T_ * kF32);
    const int kv_cmpr = rms_mul("attn_kv_a_norm", kv_cmpr_v);
    const int kv3 = g_.view("kv_cmpr_3d", kv_cmpr);
    const int k_pe_v = g_.view("k_pe", kv_pe, false, rope * T_ * kF32);
    const int k_pe = g_.op("k_pe_rope", rope * T_ * kF32, {k_pe_v, pos()}, true);
    const int kcur = g_.op("Kcur", (R + rope) * T_ * kF32, {kv3, k_pe});
    const int k_cache = g_.external("cache_k");
    // llama.cpp 3f545bec's cpy_k stored into a view of the cache; 0c1e5709's (the only tree with the
    // DSA builders) into the cache itself, reshaped when it has several streams.
    const int k_dst = !f_.dsa ? g_.view("k_cache_view", k_cache) : kv.streams > 1 ? g_.view("cache_k_streams", k_cache) : k_cache;
    g_.store("set_rows_k", {k_dst, g_.view("k_cur_2d", kcur), k_idxs(kv)});
    const int qp = g_.view("q_perm", g_.view("q_4d", qcur), false);
    const int kp = g_.view("k_perm", g_.view("get_k", k_cache), false);
    const int vp = g_.view("v_perm", g_.view("get_v", k_cache), false);
    const int wv_b = g_.external("wv_b");
    // DSA: the mask keeps only the indexer's top-k tokens of each query. Its chain is met where the
    // mask is a source: FA's fourth, or the soft max's second, after V's copy and KQ.
    const auto attn_mask = [&] { return f_.dsa ? dsa_top_k_mask(il, q_in, x, kv) : mask(kv); };
    int cur;
    if (fa()) {
      const int o = g_.op("flash_attn_ext", R * H * T_ * kF32, {qp, kp, vp, attn_mask()});
      const int mla = g_.op("fattn_mla", Dv * T_ * H * kF32, {wv_b, g_.view("fa_perm", o, false)});
      cur = g_.view("kqv_2d", g_.op("fattn_mla_cont", Dv * H * T_ * kF32, {g_.view("mla_perm", mla, false)}));
    } else {
      // The latent V is not stored transposed: a contiguous transposed copy of the cache. It is
      // kqv's first source, so the walk computes it before KQ.
      const int v_cont = g_.op("v_cont", kv.cells * kv.streams * R * cache_elem_bytes(kv.type_k),
                               {g_.view("v_trans", vp, false)});
      const int kq = g_.op("kq", kv.cells * T_ * H * kF32, {kp, qp});
      const int sm = g_.op("kq_soft_max", bytes(kq), {kq, attn_mask()}, true);
      const int kqv = g_.op("kqv", R * T_ * H * kF32, {v_cont, sm});
      const int mla = g_.op("kqv_mla", Dv * T_ * H * kF32, {wv_b, kqv});
      cur = g_.op("kqv_cont", Dv * H * T_ * kF32, {g_.view("kqv_perm", mla, false)});
    }
    return g_.op("attn_out", E() * T_ * kF32, {g_.external("wo"), cur});
  }

  const ModelArch& a_;
  const Context& c_;
  std::uint64_t T_;     // tokens of the reserved micro-batch
  std::uint64_t O_;     // its output rows
  std::uint64_t rows_;  // rows the FFN runs on: T_, then O_ after the output rows are taken
  Features f_;
  ComputeGraph g_;
  std::map<int, const KvCache*> layer_cache_;
  const KvCache* indexer_ = nullptr;
  int top_k_ = -1;  // the last full DSA indexer's top-k (glm-dsa.cpp prev_top_k)
  std::map<std::string, int> inputs_;
  bool falcon_two_norms_ = false;
  bool score_bias_ = false;
  bool conv_bias_ = false;  // Mamba-2's conv1d bias (ssm_conv1d.bias, optional in nemotron-h.cpp)
  bool ssm_norm_ = false;   // Mamba-2's grouped output norm (ssm_norm, optional in falcon-h1.cpp)
  bool dt_b_c_norms_ = false;     // Mamba-1's RMS norms of dt, B and C (Jamba: ssm_dt_norm, _b_norm, _c_norm)
  std::uint64_t dt_rank_ = 0;     // Mamba-1's dt rank: x_proj's (ssm_x's) rows less 2 d_state
  std::set<int> has_wv_;          // Gemma 4: the layers with their own attn_v (the others are K=V)
  bool out_scale_ = false;        // Gemma 4: layer_output_scale (layer_scalar) multiplies l_out
  bool down_exps_scale_ = false;  // Gemma 4: ffn_down_exps.scale (router.per_expert_scale)
};

}  // namespace

bool graph_is_transcribed(const ModelArch& arch) { return feature_table().count(arch.model_type) > 0; }

bool graph_has_recurrent_layers(const ModelArch& arch) {
  const auto it = feature_table().find(arch.model_type);
  return it != feature_table().end() &&
         (it->second.nemotron_h || it->second.granite_hybrid || it->second.qwen35 || it->second.falcon_h1 ||
          it->second.jamba);
}

ComputeGraph llama_graph(const ModelSpec& model, const Context& context, const std::vector<KvCache>& caches) {
  const ModelArch& arch = model.arch;
  if (arch.num_layers == 0 || arch.hidden_size == 0 || arch.vocab_size == 0)
    throw_usage("the model has no layers, hidden size or vocabulary: no llama.cpp graph to size");
  return Builder(model, context, caches).build();
}

}  // namespace vramplan::llamacpp
