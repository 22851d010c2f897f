// GGUF header -> ModelSpec: tensor table -> TensorInfo inventory, `<arch>.*` metadata ->
// ModelArch, so the KV-cache code treats a GGUF like a config.json model. Key names and their
// defaults follow llama.cpp (src/llama-arch.cpp LLM_KV_NAMES, src/llama-model.cpp load_hparams).
#include <algorithm>
#include <charconv>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/limits.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/gguf.hpp"
#include "vramplan/model/gguf_model.hpp"

namespace vramplan {
namespace {

// Sliding-window layouts llama.cpp sets in code per architecture, for GGUFs that carry no
// `<arch>.attention.sliding_window_pattern` (ggml-org/llama.cpp src/llama-model.cpp @00342301,
// llama_model::load_hparams, and the per-architecture src/models/<arch>.cpp load_arch_hparams of
// the 2026-10-01 tree (0c1e5709) that took it over, where load_swa_pattern reads a per-layer array
// or a scalar period from the file before falling back to these).
// llama_hparams::set_swa_pattern(period, dense_first) windows layer il when il % period < period - 1
// (the last layer of each period is global), or with dense_first when il % period != 0 (the first
// is); a period of 0 windows every layer.
// A loader that windows only when the file's sliding_window is present and > 0 (gemma3, olmo2,
// smallthinker, afmoe, mellum, plamo3) is a row with no default_window: a window of 0 windows nothing.
enum class WindowWhen {
  Always,        // the window from the file, else default_window
  Only64Layers,  // exaone4: `if (hparams.n_layer == 64) // 32B`; other sizes have no window
  Never,         // phi3: "Phi SWA is currently disabled": every layer full whatever the file says
};
struct WindowLayout {
  std::string_view arch;
  LayerAttention kind;
  std::uint64_t period = 0;
  std::uint64_t default_window = 0;  // tokens, when the file has no sliding_window key (0: none)
  WindowWhen when = WindowWhen::Always;
  bool dense_first = false;
  std::uint64_t forced_window = 0;  // smallthinker: n_swa = 4096 whatever the file says
  std::uint64_t kv_layers = 0;      // gemma3n n_layer_kv_from_start: later layers reuse earlier caches (>= 2)
};
constexpr WindowLayout kWindowLayouts[] = {
    // n_swa = 4096 "default value of gemma 2" when the file has none
    {.arch = "gemma2", .kind = LayerAttention::Sliding, .period = 2, .default_window = 4096},
    {.arch = "gemma3", .kind = LayerAttention::Sliding, .period = 6},
    {.arch = "gemma3n", .kind = LayerAttention::Sliding, .period = 5, .kv_layers = 20},
    {.arch = "cohere2", .kind = LayerAttention::Sliding, .period = 4},
    {.arch = "olmo2", .kind = LayerAttention::Sliding, .period = 4},  // OLMo-3
    {.arch = "exaone4", .kind = LayerAttention::Sliding, .period = 4, .default_window = 4096,
     .when = WindowWhen::Only64Layers},
    {.arch = "gpt-oss", .kind = LayerAttention::Sliding, .period = 2},
    {.arch = "smallthinker", .kind = LayerAttention::Sliding, .period = 4,
     .dense_first = true, .forced_window = 4096},
    {.arch = "phi3", .kind = LayerAttention::Full, .period = 1, .when = WindowWhen::Never},
    {.arch = "cohere2moe", .kind = LayerAttention::Sliding, .period = 4, .dense_first = true},
    {.arch = "exaone-moe", .kind = LayerAttention::Sliding, .period = 4},
    {.arch = "afmoe", .kind = LayerAttention::Sliding, .period = 4},
    {.arch = "mellum", .kind = LayerAttention::Sliding, .period = 4},
    {.arch = "plamo3", .kind = LayerAttention::Sliding, .period = 8},
    // Llama-4: 3 chunked layers then 1 global; chunk of 8192 tokens hard-coded ("currently
    // the same for Scout and Maverick").
    {.arch = "llama4", .kind = LayerAttention::Chunked, .period = 4, .default_window = 8192},
};

const WindowLayout* window_layout(std::string_view arch) {
  for (const auto& w : kWindowLayouts)
    if (w.arch == arch) return &w;
  return nullptr;
}

// Architectures llama.cpp builds no memory for (llama_model::create_memory: `res = nullptr`;
// ggml-org/llama.cpp src/llama-model.cpp, names from src/llama-arch.cpp LLM_ARCH_NAMES): encoders
// and diffusion LMs attend over the whole batch and keep no KV cache.
constexpr std::string_view kCachelessArchs[] = {
    "bert",        "jina-bert-v2", "jina-bert-v3",     "nomic-bert",  "nomic-bert-moe", "neo-bert", "eurobert",
    "modern-bert", "gemma-embedding", "wavtokenizer-dec", "dream",     "llada",          "llada-moe", "rnd1"};

// Every general.architecture llama.cpp loads: LLM_ARCH_NAMES, ggml-org/llama.cpp
// src/llama-arch.cpp @00395eb2. llm_arch_from_string maps any other name to LLM_ARCH_UNKNOWN and
// llama_model_loader refuses the file ("unknown model architecture: '%s'", src/llama-model.cpp).
constexpr std::string_view kLlamaCppArchs[] = {
    "clip", "llama", "llama4", "deci", "falcon", "grok", "gpt2", "gptj", "gptneox", "mpt", "baichuan", "starcoder",
    "refact", "bert", "modern-bert", "nomic-bert", "nomic-bert-moe", "neo-bert", "jina-bert-v2", "jina-bert-v3",
    "eurobert", "bloom", "stablelm", "qwen", "qwen2", "qwen2moe", "qwen2vl", "qwen3", "qwen3moe", "qwen3next",
    "qwen3vl", "qwen3vlmoe", "qwen35", "qwen35moe", "phi2", "phi3", "phimoe", "plamo", "plamo2", "plamo3",
    "codeshell", "orion", "internlm2", "minicpm", "minicpm3", "gemma", "gemma2", "gemma3", "gemma3n", "gemma4",
    "gemma4-assistant", "gemma-embedding", "starcoder2", "mamba", "mamba2", "jamba", "falcon-h1", "xverse",
    "command-r", "cohere2", "cohere2moe", "dbrx", "olmo", "olmo2", "olmoe", "openelm", "arctic", "deepseek",
    "deepseek2", "deepseek2-ocr", "deepseek32", "deepseek4", "chatglm", "glm4", "glm4moe", "glm-dsa", "bitnet", "t5",
    "t5encoder", "jais", "jais2", "nemotron", "nemotron_h", "nemotron_h_moe", "exaone", "exaone4", "exaone-moe",
    "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7", "granite", "granitemoe", "granitehybrid", "chameleon",
    "wavtokenizer-dec", "plm", "bailingmoe", "bailingmoe2", "dots1", "arcee", "afmoe", "laguna", "ernie4_5",
    "ernie4_5-moe", "hunyuan-moe", "hunyuan-dense", "hunyuan_vl", "hy_v3", "smollm3", "gpt-oss", "lfm2", "lfm2moe",
    "dream", "smallthinker", "llada", "llada-moe", "seed_oss", "grovemoe", "apertus", "minimax-m2", "cogvlm", "rnd1",
    "pangu-embedded", "mistral3", "eagle3", "dflash", "mistral4", "paddleocr", "mimo2", "step35", "llama-embed",
    "maincoder", "kimi-linear", "talkie", "mellum"};

bool llama_cpp_knows(std::string_view arch) {
  return std::find(std::begin(kLlamaCppArchs), std::end(kLlamaCppArchs), arch) != std::end(kLlamaCppArchs);
}

// Architectures whose attention projections llama.cpp creates as {n_embd, n_embd_head_k * n_head},
// {n_embd, n_embd_head_k * n_head_kv}, {n_embd, n_embd_head_v * n_head_kv} and {n_embd_head_v *
// n_head, n_embd} (llama_model::load_tensors, e.g. src/models/llama.cpp, qwen2.cpp, qwen3.cpp,
// gemma3.cpp: create_tensor(tn(LLM_TENSOR_ATTN_Q, "weight", i), {n_embd, n_embd_head_k * n_head}, 0)),
// and refuses a file whose tensor differs ("tensor '%s' has wrong shape; expected ..., got ...",
// llama_model_loader::check_tensor_dims).
constexpr std::string_view kPlainAttentionArchs[] = {"llama",    "mistral3", "qwen2",  "qwen2moe", "qwen3",
                                                     "qwen3moe", "gemma",    "gemma2", "gemma3"};

bool cacheless(std::string_view arch) {
  return std::find(std::begin(kCachelessArchs), std::end(kCachelessArchs), arch) != std::end(kCachelessArchs);
}

// Typed access to `<arch>.<suffix>` keys with errors naming the file and key.
class Meta {
 public:
  Meta(const GgufFile& f, std::string arch) : f_(f), arch_(std::move(arch)) {}

  std::string key(std::string_view suffix) const { return arch_ + "." + std::string(suffix); }
  const GgufValue* find(std::string_view suffix) const { return f_.find(key(suffix)); }

  [[noreturn]] void fail(std::string_view full_key, std::string_view message) const {
    throw_input(f_.path, "key '" + std::string(full_key) + "'", message);
  }

  //! The value of integer key `full_key`, within the plausibility limit of its suffix
  //! (core/limits.hpp: "block_count", "attention.head_count", ...).
  std::uint64_t to_u64(const GgufValue& v, std::string_view full_key) const {
    if (const auto u = v.as_u64()) {
      const bool ours = full_key.size() > arch_.size() && full_key.starts_with(arch_) && full_key[arch_.size()] == '.';
      const auto& limit = config_field_limit(ours ? full_key.substr(arch_.size() + 1) : full_key);
      if (*u > limit.max)
        fail(full_key, std::to_string(*u) + " is above the plausibility limit " + std::to_string(limit.max) +
                           " for " + std::string(limit.kind) + " (largest public model: " +
                           std::string(limit.largest) + ")");
      return *u;
    }
    fail(full_key, "expected a non-negative integer, got " +
                       (v.is_integer() ? std::to_string(v.int_value) : std::string(gguf_type_name(v.type))));
  }

  std::optional<std::uint64_t> opt_u64(std::string_view suffix) const {
    const GgufValue* v = find(suffix);
    if (!v) return std::nullopt;
    if (v->is_array()) fail(key(suffix), "expected an integer, got an array");
    return to_u64(*v, key(suffix));
  }
  std::uint64_t req_u64(std::string_view suffix) const {
    if (auto v = opt_u64(suffix)) return *v;
    fail(key(suffix), "missing (required to describe the model)");
  }
  std::optional<double> opt_number(std::string_view suffix) const {
    const GgufValue* v = find(suffix);
    if (!v) return std::nullopt;
    if (auto d = v->as_number()) return d;
    fail(key(suffix), "expected a number, got " + std::string(gguf_type_name(v->type)));
  }
  std::optional<bool> opt_bool(std::string_view suffix) const {
    const GgufValue* v = find(suffix);
    if (!v) return std::nullopt;
    if (v->type != GgufType::Bool) fail(key(suffix), "expected a bool, got " + std::string(gguf_type_name(v->type)));
    return v->bool_value;
  }
  std::optional<std::string> opt_string(std::string_view full_key) const {
    const GgufValue* v = f_.find(full_key);
    if (!v) return std::nullopt;
    if (v->type != GgufType::String)
      fail(full_key, "expected a string, got " + std::string(gguf_type_name(v->type)));
    return v->string_value;
  }

  //! A value llama.cpp reads with get_key_or_arr: a scalar for every layer or one per layer.
  std::optional<std::vector<std::uint64_t>> per_layer(std::string_view suffix, std::uint64_t layers) const {
    const GgufValue* v = find(suffix);
    if (!v) return std::nullopt;
    if (!v->is_array()) return std::vector<std::uint64_t>(layers, to_u64(*v, key(suffix)));
    if (v->count != layers)
      fail(key(suffix), "per-layer array has " + std::to_string(v->count) + " entries for " +
                            std::to_string(layers) + " layers");
    if (v->items.size() != v->count)
      fail(key(suffix), "per-layer arrays longer than " + std::to_string(kKeptArrayItems) +
                            " entries are not supported");
    std::vector<std::uint64_t> out;
    for (const auto& item : v->items)
      out.push_back(item.type == GgufType::Bool ? std::uint64_t{item.bool_value} : to_u64(item, key(suffix)));
    return out;
  }

 private:
  const GgufFile& f_;
  std::string arch_;
};

// "blk.12.ffn_down_exps.weight" -> layer 12, role name "ffn_down_exps", suffix "weight".
struct NameParts {
  std::optional<int> layer;
  std::string_view role;
  std::string_view suffix;
};
NameParts split_name(std::string_view name) {
  NameParts p;
  std::string_view rest = name;
  if (rest.starts_with("blk.")) {
    rest.remove_prefix(4);
    const auto dot = rest.find('.');
    int layer = -1;
    const auto* end = rest.data() + (dot == std::string_view::npos ? rest.size() : dot);
    const auto [ptr, ec] = std::from_chars(rest.data(), end, layer);
    if (ec == std::errc() && ptr == end && dot != std::string_view::npos) {
      p.layer = layer;
      rest.remove_prefix(dot + 1);
    } else {
      rest = name;
    }
  }
  const auto last = rest.rfind('.');
  p.role = last == std::string_view::npos ? rest : rest.substr(0, last);
  p.suffix = last == std::string_view::npos ? std::string_view{} : rest.substr(last + 1);
  return p;
}

TensorRole role_of(std::string_view name, const NameParts& parts) {
  // Multimodal projector files (mmproj) name their towers "v." / "mm." / "a.".
  if (name.starts_with("v.") || name.starts_with("mm.")) return TensorRole::Vision;
  if (name.starts_with("a.")) return TensorRole::Audio;
  return tensor_role_from_name(parts.role).value_or(TensorRole::Other);
}

std::uint64_t max_of(const std::vector<std::uint64_t>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

// Adds "<key> varies per layer (a..b)" when a per-layer value is not uniform; the arch keeps
// the maximum (the KV code sizes the largest layer; per-layer detail needs the raw GGUF).
void note_varying(ModelSpec& spec, const std::string& key, const std::vector<std::uint64_t>& v) {
  std::vector<std::uint64_t> nonzero;
  for (auto x : v)
    if (x != 0) nonzero.push_back(x);
  if (nonzero.empty()) return;
  const auto [lo, hi] = std::minmax_element(nonzero.begin(), nonzero.end());
  const bool has_zero = nonzero.size() != v.size();
  if (*lo != *hi || has_zero)
    spec.warnings.push_back(key + " varies per layer (" + std::to_string(*lo) + ".." + std::to_string(*hi) +
                            (has_zero ? ", 0 in some layers" : "") + "); the maximum is used");
}

// `owned`: the file's own tensor table when the caller gives it up (model_from_gguf_file), so
// the names are moved rather than copied (a million names, a million allocations); nullptr to copy.
void map_tensors(const GgufFile& f, std::vector<GgufTensor>* owned, ModelSpec& spec, std::uint64_t block_count,
                 std::uint64_t main_layers) {
  spec.tensors.reserve(spec.tensors.size() + f.tensors.size());
  for (std::size_t k = 0; k < f.tensors.size(); ++k) {
    const GgufTensor& t = f.tensors[k];
    const NameParts parts = split_name(t.name);
    TensorInfo info;
    info.role = role_of(t.name, parts);
    info.shape.assign(t.ne.rbegin(), t.ne.rend());
    info.layer = parts.layer;
    info.is_bias = parts.suffix == "bias";
    info.stored_format = t.format;
    info.stored_bytes = t.bytes;
    if (parts.layer) {
      if (static_cast<std::uint64_t>(*parts.layer) >= block_count)
        throw_input(f.path, "tensor '" + t.name + "'",
                    "layer " + std::to_string(*parts.layer) + " but block_count is " + std::to_string(block_count));
      // Layers past the main stack are the multi-token-prediction module (nextn_predict_layers).
      if (static_cast<std::uint64_t>(*parts.layer) >= main_layers) info.role = TensorRole::Mtp;
    }
    // Last: `parts` views t.name, which a move empties.
    info.name = owned ? std::move((*owned)[k].name) : t.name;
    spec.tensors.push_back(std::move(info));
  }
}

const TensorInfo* first_with_role(const ModelSpec& spec, TensorRole role) {
  for (const auto& t : spec.tensors)
    if (t.role == role && !t.is_bias) return &t;
  return nullptr;
}

// The router's hparams as llama.cpp loads them (deepseek2.cpp / glm4-moe.cpp load_arch_hparams,
// llama-model.cpp for the groups): without expert_gating_func, deepseek2 scores by softmax (sigmoid
// for GLM-4.7-Flash: 47 / 48 layers and a 154,880-token vocabulary) and glm4moe by sigmoid.
void map_routing(const Meta& m, ModelSpec& spec) {
  ModelArch& a = spec.arch;
  auto& r = a.moe_routing;
  constexpr std::uint64_t kSoftmax = 1, kSigmoid = 2;  // llama_expert_gating_func_type
  const auto gating = m.opt_u64("expert_gating_func");
  if (gating && *gating != kSoftmax && *gating != kSigmoid && a.model_type == "deepseek2")
    m.fail(m.key("expert_gating_func"), std::to_string(*gating) + " is not a gating vramplan models (1 softmax, 2 sigmoid)");
  r.sigmoid = gating ? *gating == kSigmoid
                     : a.model_type == "glm4moe" ||
                           (a.model_type == "deepseek2" && r.deepseek2_default_sigmoid(a.num_layers, a.vocab_size));
  r.norm_topk = m.opt_bool("expert_weights_norm").value_or(false);
  r.scale = m.opt_number("expert_weights_scale").value_or(0.0);
  r.groups = m.opt_u64("expert_group_count").value_or(0);
  r.groups_used = m.opt_u64("expert_group_used_count").value_or(0);
  if (r.groups > 1 && (a.num_experts % r.groups != 0 || r.groups_used == 0 || r.groups_used >= r.groups))
    m.fail(m.key("expert_group_count"), std::to_string(r.groups) + " groups of " + std::to_string(a.num_experts) +
                                            " experts with " + std::to_string(r.groups_used) +
                                            " used: llama.cpp needs groups dividing the experts and 0 < used < groups");
}

// DeepSeek sparse attention (deepseek32, glm-dsa): the lightning indexer's heads and key size
// (attention.indexer.*), and which layers run one: attention.indexer.types (1 = full, per layer)
// where the file has it, else every layer, except a glm-dsa file with a context of 2^20 or more
// (GLM-5.2), which llama.cpp gives GLM_5_2_DEFAULT_INDEXER_TYPES (glm-dsa.cpp load_arch_hparams:
// layers 0 and 1, then every fourth from layer 2, up to its 78 entries).
void map_dsa_indexer(const Meta& m, ModelSpec& spec) {
  ModelArch& a = spec.arch;
  const auto head = m.opt_u64("attention.indexer.key_length");
  if (!head) return;
  a.index_head_dim = *head;
  a.index_n_heads = m.opt_u64("attention.indexer.head_count").value_or(0);
  a.index_topk = m.opt_u64("attention.indexer.top_k").value_or(0);
  a.layer_has_indexer.assign(a.num_layers, true);
  constexpr std::uint64_t kGlm52Context = 1048576, kGlm52TableLayers = 78;
  if (a.model_type == "glm-dsa" && a.max_position_embeddings >= kGlm52Context)
    for (std::uint64_t l = 0; l < a.num_layers; ++l)
      a.layer_has_indexer[l] = l < kGlm52TableLayers && (l < 2 || (l - 2) % 4 == 0);
  if (auto types = m.per_layer("attention.indexer.types", a.num_layers))
    for (std::uint64_t l = 0; l < a.num_layers; ++l) a.layer_has_indexer[l] = (*types)[l] != 0;
}

void map_experts(const Meta& m, ModelSpec& spec) {
  ModelArch& a = spec.arch;
  a.num_experts = m.opt_u64("expert_count").value_or(0);
  if (a.num_experts == 0) return;
  a.experts_per_token = m.opt_u64("expert_used_count").value_or(0);
  a.num_shared_experts = m.opt_u64("expert_shared_count").value_or(0);
  if (auto v = m.opt_u64("expert_feed_forward_length")) {
    a.moe_intermediate_size = *v;
  } else if (const auto* up = first_with_role(spec, TensorRole::FfnUpExps); up && up->shape.size() == 3) {
    a.moe_intermediate_size = up->shape[1];  // {E, I_e, hidden}
  }
  const auto* shexp_up = first_with_role(spec, TensorRole::FfnUpShexp);
  if (a.num_shared_experts == 0 && shexp_up) a.num_shared_experts = 1;  // Qwen2-MoE writes no count
  if (auto v = m.opt_u64("expert_shared_feed_forward_length")) {
    a.shared_expert_intermediate_size = *v;
  } else if (shexp_up && shexp_up->shape.size() == 2) {
    a.shared_expert_intermediate_size = shexp_up->shape[0];  // {I_shared, hidden}
  }
  // nemotron-h.cpp: the experts' width is moe_latent_size when the file gives one (Nemotron-3 Super),
  // else n_embd; a latent wider than the model is no such model.
  if (auto v = m.opt_u64("moe_latent_size"); v && *v > 0) {
    if (*v > a.hidden_size) m.fail(m.key("moe_latent_size"), "is larger than embedding_length");
    a.moe_latent_size = *v;
  }
  map_routing(m, spec);
  // Which layers are MoE: the tensors say it; without tensors, leading_dense_block_count does.
  a.layer_is_moe.assign(a.num_layers, false);
  bool any = false;
  for (const auto& t : spec.tensors)
    if (is_routed_expert_role(t.role) && t.layer && static_cast<std::uint64_t>(*t.layer) < a.num_layers)
      a.layer_is_moe[static_cast<std::size_t>(*t.layer)] = any = true;
  if (!any) {
    const std::uint64_t dense = m.opt_u64("leading_dense_block_count").value_or(0);
    for (std::uint64_t l = dense; l < a.num_layers; ++l) a.layer_is_moe[l] = true;
  }
}

// A Mamba mixer's sizes (ssm.* keys, llama-hparams.cpp n_embd_r / n_embd_s). Mamba-2: d_inner
// channels in time_step_rank heads, group_count groups of B and C of state_size each, a conv of
// conv_kernel. Mamba-1 (no group_count; time_step_rank is dt's rank): a conv over d_inner channels
// and a state of state_size per channel.
void map_ssm(const Meta& m, ModelArch& a) {
  const auto inner = m.opt_u64("ssm.inner_size"), state = m.opt_u64("ssm.state_size");
  const auto heads = m.opt_u64("ssm.time_step_rank"), kernel = m.opt_u64("ssm.conv_kernel");
  if (!inner || !state || !heads || !kernel) return;
  const std::uint64_t groups = m.opt_u64("ssm.group_count").value_or(0);
  if (*inner == 0 || *state == 0 || *kernel == 0)
    m.fail(m.key("ssm.inner_size"), "ssm.inner_size, ssm.state_size and ssm.conv_kernel must be positive");
  auto& s = a.recurrent_shape;
  if (groups == 0) {  // Mamba-1: n_embd_r = (d_conv - 1) x d_inner, n_embd_s = d_state x d_inner
    s = {*kernel - 1, *inner, 0, 0, *inner, *state};
    a.recurrent_conv_state_elems = checked_mul(*kernel - 1, *inner, "ssm conv");
    a.recurrent_ssm_state_elems = checked_mul(*inner, *state, "ssm state");
    return;
  }
  if (*heads == 0 || *inner % *heads != 0 || *inner % groups != 0) return;  // not a Mamba-2 shape
  s.conv_window = *kernel - 1;
  s.conv_channels = *inner;
  s.groups = groups;
  s.group_state = *state;
  s.ssm_heads = *heads;
  s.ssm_head_elems = checked_mul(*inner / *heads, *state, "ssm state per head");
  a.recurrent_conv_state_elems =
      checked_mul(s.conv_window, checked_add(*inner, checked_mul(checked_mul(2, groups, "ssm B/C"), *state, "ssm B/C"), "ssm conv"), "ssm conv");
  a.recurrent_ssm_state_elems = checked_mul(*inner, *state, "ssm state");
}

void map_attention_layout(const Meta& m, const std::string& arch_name, ModelSpec& spec,
                          std::uint64_t block_count, const std::vector<std::uint64_t>& kv_heads) {
  ModelArch& a = spec.arch;
  const std::uint64_t n = a.num_layers;
  if (cacheless(arch_name)) {
    a.layer_attention.assign(n, LayerAttention::None);
    return;
  }
  a.layer_attention.assign(n, a.kv_lora_rank > 0 ? LayerAttention::Mla : LayerAttention::Full);

  // Hybrid recurrent models: Qwen3-Next marks every full_attention_interval-th layer global
  // (llama.cpp: recurrent when (il + 1) % interval != 0); others give 0 KV heads per layer.
  if (auto interval = m.opt_u64("full_attention_interval"); interval && *interval > 0) {
    for (std::uint64_t l = 0; l < n; ++l)
      if ((l + 1) % *interval != 0) a.layer_attention[l] = LayerAttention::Recurrent;
  }
  const bool has_ssm = m.find("ssm.state_size") != nullptr;
  // Nemotron-H writes feed_forward_length per layer: a layer with neither KV heads nor an FFN is a
  // Mamba-2 mixer, one with an FFN and no heads an MLP-only block (nemotron-h.cpp load_arch_hparams:
  // is_recr = n_head_kv(il) == 0 && n_ff(il) == 0). A single value says nothing per layer.
  const GgufValue* ffn_key = m.find("feed_forward_length");
  const auto ffn = ffn_key && ffn_key->is_array() ? m.per_layer("feed_forward_length", block_count) : std::nullopt;
  for (std::uint64_t l = 0; l < n && l < kv_heads.size(); ++l)
    if (kv_heads[l] == 0)
      a.layer_attention[l] = has_ssm && (!ffn || (*ffn)[l] == 0) ? LayerAttention::Recurrent : LayerAttention::None;
  // SSM keys with attention in every layer: Falcon-H1's parallel attention + Mamba-2 layers.
  if (has_ssm && std::none_of(a.layer_attention.begin(), a.layer_attention.end(),
                              [](LayerAttention k) { return k == LayerAttention::Recurrent; }))
    a.recurrent_in_every_layer = true;

  const WindowLayout* layout = window_layout(arch_name);
  const auto window_key = m.opt_u64("attention.sliding_window");
  if (layout && (layout->when == WindowWhen::Never || (layout->when == WindowWhen::Only64Layers && n != 64))) return;
  std::uint64_t window = window_key.value_or(layout ? layout->default_window : 0);
  if (window == 0) return;
  if (layout && layout->forced_window > 0) window = layout->forced_window;
  const LayerAttention windowed = layout ? layout->kind : LayerAttention::Sliding;

  std::vector<bool> is_windowed(n, false);
  const GgufValue* pattern = m.find("attention.sliding_window_pattern");
  if (pattern && pattern->is_array()) {
    const auto flags = *m.per_layer("attention.sliding_window_pattern", block_count);  // gemma-4 style
    for (std::uint64_t l = 0; l < n; ++l) is_windowed[l] = flags[l] != 0;
  } else if (pattern || layout) {
    const std::uint64_t period = pattern ? m.to_u64(*pattern, m.key("attention.sliding_window_pattern"))
                                         : layout->period;
    const bool dense_first = layout && layout->dense_first;
    for (std::uint64_t l = 0; l < n; ++l)
      is_windowed[l] = period == 0 || (dense_first ? l % period != 0 : l % period < period - 1);
  } else {
    spec.warnings.push_back(m.key("attention.sliding_window") + " = " + std::to_string(window) +
                            " but no per-layer pattern is known for '" + arch_name +
                            "': every layer is counted as full attention (an over-estimate)");
    return;
  }
  for (std::uint64_t l = 0; l < n; ++l)
    if (is_windowed[l] && a.layer_attention[l] == LayerAttention::Full) a.layer_attention[l] = windowed;
  (windowed == LayerAttention::Chunked ? a.attention_chunk_size : a.sliding_window) = window;
  // llama_hparams::has_kv: layers from n_layer_kv_from_start on hold no cache and attend over the
  // last layer of their kind before it (create_memory's reuse callback: kv_from_start - 2 for a
  // sliding layer, - 1 for a global one).
  if (layout && layout->kv_layers > 0 && layout->kv_layers < n) {
    a.kv_shared_with.assign(n, -1);
    for (std::uint64_t l = layout->kv_layers; l < n; ++l)
      a.kv_shared_with[l] = static_cast<int>(layout->kv_layers - (is_windowed[l] ? 2 : 1));
  }
}

// Gemma 4 (src/models/gemma4.cpp load_arch_hparams, written by conversion/gemma.py
// Gemma4Model.set_gguf_parameters): two attention geometries. key_length / value_length are the full
// layers' head size (global_head_dim), key_length_swa / value_length_swa the sliding layers'
// (llama_hparams::n_embd_head_k(il)), and head_count_kv holds one value a layer: num_key_value_heads
// on the sliding layers, num_global_key_value_heads on the full ones (llama_hparams::n_head_kv(il)).
// ModelArch keeps the sliding geometry in head_dim / num_kv_heads and the full layers' in
// global_head_dim / global_kv_heads, as model/family_gemma4.cpp reads a config.json, so that
// layer_head_dim / layer_kv_heads give each layer's cache row. A full layer without attn_v is a K=V
// layer (attention_k_eq_v: gemma4.cpp's Vcur = Kcur). shared_kv_layers (E2B / E4B) become
// kv_shared_with as llama-model.cpp create_memory's reuse callback maps them.
void map_gemma4_geometry(const Meta& m, ModelSpec& spec, const std::vector<std::uint64_t>& kv_heads) {
  ModelArch& a = spec.arch;
  const auto k_swa = m.opt_u64("attention.key_length_swa");
  if (a.model_type != "gemma4" || !k_swa) return;
  const auto v_swa = m.opt_u64("attention.value_length_swa").value_or(*k_swa);
  a.global_head_dim = a.head_dim;  // key_length: the full layers'
  a.head_dim = *k_swa;
  a.v_head_dim = v_swa;
  std::optional<std::uint64_t> swa_kv, full_kv;
  for (std::size_t l = 0; l < a.layer_attention.size() && l < kv_heads.size(); ++l) {
    auto& kind = a.layer_attention[l] == LayerAttention::Full ? full_kv : swa_kv;
    if (!kind) kind = kv_heads[l];
    if (*kind != kv_heads[l])
      m.fail(m.key("attention.head_count_kv"), "layer " + std::to_string(l) + " has " + std::to_string(kv_heads[l]) +
                                                   " KV heads where the other layers of its kind have " +
                                                   std::to_string(*kind) + ": not a Gemma 4 layout");
  }
  if (swa_kv) a.num_kv_heads = *swa_kv;
  if (full_kv) a.global_kv_heads = *full_kv;
  // The KV heads are now per layer kind: drop note_varying's "the maximum is used".
  const std::string varying = m.key("attention.head_count_kv") + " varies per layer";
  std::erase_if(spec.warnings, [&](const std::string& w) { return w.starts_with(varying); });
  // One pass over the tensors (work linear in the file): K=V when no full layer has an attn_v.
  bool any_full = false, full_with_v = false;
  for (const auto kind : a.layer_attention) any_full = any_full || kind == LayerAttention::Full;
  for (const auto& t : spec.tensors)
    if (t.layer && t.role == TensorRole::AttnV && static_cast<std::size_t>(*t.layer) < a.layer_attention.size() &&
        a.layer_attention[static_cast<std::size_t>(*t.layer)] == LayerAttention::Full)
      full_with_v = true;
  a.attention_k_eq_v = any_full && !full_with_v;
  const std::uint64_t shared = m.opt_u64("attention.shared_kv_layers").value_or(0);
  if (shared > 0) {
    const std::uint64_t from = a.num_layers > shared ? a.num_layers - shared : 0;
    if (from < 2) m.fail(m.key("attention.shared_kv_layers"), "leaves fewer than 2 layers with a cache (llama.cpp asserts n_layer_kv_from_start >= 2)");
    a.kv_shared_with.assign(a.num_layers, -1);
    for (std::uint64_t l = from; l < a.num_layers; ++l)
      a.kv_shared_with[l] = static_cast<int>(from - (a.layer_attention[l] == LayerAttention::Full ? 1 : 2));
  }
}

// What llama.cpp's loader refuses before it allocates anything, checked after the metadata
// (a missing key is named first): an architecture it does not know, and attention projections
// whose shape is not the metadata's (kPlainAttentionArchs). Work is one pass over the tensors.
// Missing tensors are gguf_missing_tensors' (the load path refuses them, inspect warns).
void check_llama_cpp_loads(const GgufFile& f, const std::string& arch, const ModelSpec& spec,
                           const std::vector<std::uint64_t>& heads,
                           const std::vector<std::uint64_t>& kv_heads, std::optional<std::uint64_t> key_len,
                           std::optional<std::uint64_t> value_len) {
  if (!llama_cpp_knows(arch))
    throw_unknown(f.path + ": key 'general.architecture': '" + arch +
                  "' is not an architecture llama.cpp loads (src/llama-arch.cpp LLM_ARCH_NAMES; llama.cpp refuses the file: "
                  "\"unknown model architecture\"), so no graph or buffer of it can be planned");
  if (std::find(std::begin(kPlainAttentionArchs), std::end(kPlainAttentionArchs), arch) == std::end(kPlainAttentionArchs))
    return;
  const std::uint64_t E = spec.arch.hidden_size;
  for (const auto& t : spec.tensors) {
    if (!t.layer || t.is_bias || t.shape.size() != 2) continue;
    const auto l = static_cast<std::size_t>(*t.layer);
    if (l >= heads.size() || l >= kv_heads.size() || heads[l] == 0) continue;
    const std::uint64_t dk = key_len.value_or(E / heads[l]), dv = value_len.value_or(dk);
    std::uint64_t rows = 0, cols = E;
    std::string why;
    switch (t.role) {
      case TensorRole::AttnQ: rows = heads[l] * dk, why = "head_count " + std::to_string(heads[l]) + " x key_length " + std::to_string(dk); break;
      case TensorRole::AttnK: rows = kv_heads[l] * dk, why = "head_count_kv " + std::to_string(kv_heads[l]) + " x key_length " + std::to_string(dk); break;
      case TensorRole::AttnV: rows = kv_heads[l] * dv, why = "head_count_kv " + std::to_string(kv_heads[l]) + " x value_length " + std::to_string(dv); break;
      case TensorRole::AttnOutput: rows = E, cols = heads[l] * dv, why = "head_count " + std::to_string(heads[l]) + " x value_length " + std::to_string(dv); break;
      default: continue;
    }
    if (t.shape[0] == rows && t.shape[1] == cols) continue;
    // ggml order (innermost first), as llama.cpp prints it.
    throw_input(f.path, "tensor '" + t.name + "'",
                "shape [" + std::to_string(t.shape[1]) + ", " + std::to_string(t.shape[0]) + "] is not the [" +
                    std::to_string(cols) + ", " + std::to_string(rows) + "] the metadata gives (embedding_length " +
                    std::to_string(E) + ", " + why + "); llama.cpp refuses it (\"tensor has wrong shape\")");
  }
}

// The tensor names of `f` are read only by map_tensors, so `owned` may give them away there.
ModelSpec spec_from_gguf(const GgufFile& f, std::vector<GgufTensor>* owned) {
  ModelSpec spec;
  const Meta general(f, "general");
  const auto arch_name = general.opt_string("general.architecture");
  if (!arch_name || arch_name->empty())
    throw_input(f.path, "key 'general.architecture'", "missing (required to read the model metadata)");
  const Meta m(f, *arch_name);

  // general.name is printed as the model's name: control characters and bytes that are not UTF-8
  // are written \xHH (core/text.hpp escape_control), so a file cannot drive the terminal.
  spec.id = escape_control(general.opt_string("general.name").value_or(std::filesystem::path(f.path).stem().string()));
  spec.source.kind = "gguf";
  spec.source.path = f.path;

  ModelArch& a = spec.arch;
  a.model_type = *arch_name;
  a.family = "gguf";
  a.hidden_size = m.req_u64("embedding_length");
  const std::uint64_t block_count = m.req_u64("block_count");
  // Bounded (req_u64: the layer limit) before any per-layer vector is sized from it.
  if (block_count == 0) m.fail(m.key("block_count"), "must be greater than zero");
  a.mtp_layers = m.opt_u64("nextn_predict_layers").value_or(0);
  if (a.mtp_layers > block_count)
    m.fail(m.key("nextn_predict_layers"), std::to_string(a.mtp_layers) + " exceeds block_count " +
                                              std::to_string(block_count));
  a.num_layers = block_count - a.mtp_layers;
  map_tensors(f, owned, spec, block_count, a.num_layers);

  const auto heads = m.per_layer("attention.head_count", block_count).value_or(std::vector<std::uint64_t>{});
  const auto kv_heads = m.per_layer("attention.head_count_kv", block_count).value_or(heads);
  note_varying(spec, m.key("attention.head_count"), heads);
  note_varying(spec, m.key("attention.head_count_kv"), kv_heads);
  a.num_heads = max_of(heads);
  a.num_kv_heads = max_of(kv_heads);
  // As a config.json's heads are checked (hf_common): per layer, the KV heads divide the query
  // heads (llama.cpp's GQA: n_head % n_head_kv == 0). A layer of 0 heads is a recurrent one.
  // A hybrid file (ssm.* keys) gives its Mamba and MLP layers 0 KV heads beside a single head count.
  const bool hybrid = m.find("ssm.state_size") != nullptr;
  for (std::size_t i = 0; i < std::min(heads.size(), kv_heads.size()); ++i)
    if (heads[i] > 0 && !(hybrid && kv_heads[i] == 0) &&
        (kv_heads[i] == 0 || kv_heads[i] > heads[i] || heads[i] % kv_heads[i] != 0))
      m.fail(m.key("attention.head_count_kv"), std::to_string(kv_heads[i]) + " KV heads do not divide the " +
                                                   std::to_string(heads[i]) + " query heads of layer " + std::to_string(i));
  if (a.num_heads == 0 && !hybrid && !m.find("wkv.head_size"))
    m.fail(m.key("attention.head_count"), "is 0 on every layer of a model without recurrent layers (no ssm.* / wkv.* keys)");
  if (const auto* embd = first_with_role(spec, TensorRole::TokenEmbedding);
      embd && embd->shape.size() == 2 && embd->shape[1] != a.hidden_size)
    m.fail(m.key("embedding_length"), std::to_string(a.hidden_size) + " is not the token embedding's width " +
                                          std::to_string(embd->shape[1]) + " (tensor " + embd->name + ")");

  // MLA files converted by current llama.cpp store the latent sizes in key_length/value_length
  // and the per-head sizes in *_mla; older files only have the per-head sizes.
  const auto first_of = [&](std::string_view preferred, std::string_view fallback) {
    const auto v = m.opt_u64(preferred);
    return v ? v : m.opt_u64(fallback);
  };
  const auto key_len = first_of("attention.key_length_mla", "attention.key_length");
  const auto value_len = first_of("attention.value_length_mla", "attention.value_length");
  a.head_dim = key_len.value_or(a.num_heads > 0 ? a.hidden_size / a.num_heads : 0);
  a.v_head_dim = value_len.value_or(a.head_dim);

  a.q_lora_rank = m.opt_u64("attention.q_lora_rank").value_or(0);
  a.kv_lora_rank = m.opt_u64("attention.kv_lora_rank").value_or(0);
  const std::uint64_t rope_dim = m.opt_u64("rope.dimension_count").value_or(a.head_dim);
  if (a.kv_lora_rank > 0) {
    a.qk_rope_head_dim = rope_dim;
    if (rope_dim > a.head_dim)
      m.fail(m.key("rope.dimension_count"), std::to_string(rope_dim) + " exceeds the key head size " +
                                                std::to_string(a.head_dim));
    a.qk_nope_head_dim = a.head_dim - rope_dim;
  }

  if (auto ffn = m.per_layer("feed_forward_length", block_count)) {
    note_varying(spec, m.key("feed_forward_length"), *ffn);
    a.intermediate_size = max_of(*ffn);
  }

  a.max_position_embeddings = m.opt_u64("context_length").value_or(0);
  if (auto v = m.opt_u64("vocab_size")) {
    a.vocab_size = *v;
  } else if (const GgufValue* tokens = f.find("tokenizer.ggml.tokens"); tokens && tokens->is_array()) {
    a.vocab_size = tokens->count;
  } else if (const auto* embd = first_with_role(spec, TensorRole::TokenEmbedding); embd && !embd->shape.empty()) {
    a.vocab_size = embd->shape[0];  // {vocab, hidden}
  }
  a.tied_embeddings = std::none_of(spec.tensors.begin(), spec.tensors.end(),
                                   [](const TensorInfo& t) { return t.name == "output.weight"; });

  map_experts(m, spec);
  map_dsa_indexer(m, spec);
  a.deepstack_layers = m.opt_u64("n_deepstack_layers").value_or(0);
  if (a.deepstack_layers > a.num_layers)
    m.fail(m.key("n_deepstack_layers"), std::to_string(a.deepstack_layers) + " is more than the " +
                                            std::to_string(a.num_layers) + " layers");
  a.sequential_residual = !m.opt_bool("use_parallel_residual").value_or(true);  // gptneox (llama.cpp default true)
  a.attn_temperature_scale = m.opt_number("attention.temperature_scale").value_or(0.0);  // mistral3
  map_attention_layout(m, *arch_name, spec, block_count, kv_heads);
  map_gemma4_geometry(m, spec, kv_heads);
  map_ssm(m, a);

  RopeTable rope;
  rope.rotary_dim = rope_dim;
  rope.max_positions = a.max_position_embeddings;
  const std::string scaling = m.opt_string(m.key("rope.scaling.type")).value_or("");
  rope.scaling_type = scaling == "none" ? "" : scaling;
  rope.scaling_factor = m.opt_number("rope.scaling.factor").value_or(1.0);
  if (rope.scaling_factor == 0.0) rope.scaling_factor = 1.0;  // llama.cpp writes 0 for "none"
  if (!(rope.scaling_factor > 0.0 && rope.scaling_factor <= kMaxRopeScalingFactor))
    m.fail(m.key("rope.scaling.factor"), "must be in (0, " + std::to_string(static_cast<int>(kMaxRopeScalingFactor)) +
                                             "] (real files stretch the context 2 to 40 times)");
  // Granite-4.0-H writes rope.scaling.finetuned = false for "no RoPE" (conversion/granite.py
  // GraniteHybridModel: use_rope; granite-hybrid.cpp has_rope = rope_finetuned).
  const bool granite_nope = *arch_name == "granitehybrid" && !m.opt_bool("rope.scaling.finetuned").value_or(true);
  if (rope.rotary_dim > 0 && rope.max_positions > 0 && !granite_nope) a.rope_tables.push_back(rope);
  // All splits counted (a first split may hold metadata only): none at all is a vocabulary-only file.
  if (spec.tensors.empty()) throw_input(f.path, "tensor count", "0 tensors: a vocabulary-only GGUF has no weights to plan");
  check_llama_cpp_loads(f, *arch_name, spec, heads, kv_heads, key_len, value_len);
  return spec;
}

}  // namespace

std::string gguf_missing_tensors(const ModelSpec& spec) {
  const ModelArch& a = spec.arch;
  if (spec.source.kind != "gguf" || a.model_type == "clip") return {};  // an mmproj file: the projector's own tensors
  // llama_model_loader::create_tensor fails on "missing tensor '%s'": every architecture creates
  // token_embd and tensors in every block (the nextn layers included).
  const std::uint64_t block_count = a.num_layers + a.mtp_layers;
  std::vector<bool> layer_seen(block_count, false);
  bool embd = false;
  for (const auto& t : spec.tensors) {
    if (t.name == "token_embd.weight") embd = true;
    if (t.layer && static_cast<std::uint64_t>(*t.layer) < block_count) layer_seen[static_cast<std::size_t>(*t.layer)] = true;
  }
  const std::string file = spec.source.path + ": ";
  if (!embd) return file + "tensor 'token_embd.weight': missing (llama.cpp refuses the file: \"missing tensor 'token_embd.weight'\")";
  for (std::uint64_t l = 0; l < block_count; ++l)
    if (!layer_seen[l])
      return file + "key '" + a.model_type + ".block_count': " + std::to_string(block_count) + " blocks, but no tensor blk." +
             std::to_string(l) + ".* is in the file (llama.cpp refuses it: \"missing tensor 'blk." + std::to_string(l) +
             ".attn_norm.weight'\" or the like)";
  return {};
}

ModelSpec model_from_gguf(const GgufFile& f, const FormatTable& catalog) {
  (void)catalog;  // formats were resolved against the same catalogue when the header was read
  return spec_from_gguf(f, nullptr);
}

ModelSpec model_from_gguf_file(const std::filesystem::path& path, const FormatTable& catalog) {
  GgufFile file = read_gguf_model(path, catalog);
  return spec_from_gguf(file, &file.tensors);
}

}  // namespace vramplan
