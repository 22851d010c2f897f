// An engine's start-up log against the plan of the same configuration (plan/reconcile.hpp).
#include "vramplan/plan/reconcile.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <charconv>
#include <ctime>
#include <filesystem>
#include <span>
#include <vector>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/plan/bounds.hpp"

namespace vramplan::plan {

namespace {

// Both engines print memory with two decimals (vLLM in GiB, llama.cpp in MiB): half a unit of the
// last place is print rounding, allowed on top of every bound.
constexpr double kReconcilePrintRounding = 0.005;

double reconcile_view_number(const nlohmann::json& view, const char* key) {
  return view.contains(key) && view.at(key).is_number() ? view.at(key).get<double>() : 0.0;
}

// One compared component: the logged figure, the planned figure in GiB, the accuracy-bound
// prefix, and the likely cause of a difference beyond the bound (what the accuracy records found
// behind the largest errors, docs/accuracy.md, docs/accuracy-llamacpp.md).
struct ReconcileComponent {
  const char* name;
  std::optional<LoggedSize> EngineLog::*figure;
  double (*planned_gib)(const memory::MemoryPlan&);
  const char* bound_prefix;  //!< nullptr: the KV pool (its bound: see ReconcileEngine::kv_from_budget)
  const char* cause;
  //! A relative bound on top of the recorded margin, where the engine's accuracy target states
  //! one and data/accuracy_bounds.json records no margin (SGLang weights), with its source.
  double target_relative = 0;
  const char* target_source = nullptr;
};

// vLLM: the figures of engine_view (memory/vllm_engine.cpp), in vLLM's own terms.
constexpr std::array<ReconcileComponent, 5> kVllmReconcile = {{
    {"weights", &EngineLog::weights, [](const memory::MemoryPlan& p) { return reconcile_view_number(p.engine_view, "weights_gib"); },
     "weights",
     "the checkpoint is not the planned one (another revision, quantization, extra tensors such as a vision tower "
     "or MTP head): pass its config.json or directory with --model"},
    {"activation peak", &EngineLog::activation,
     [](const memory::MemoryPlan& p) { return reconcile_view_number(p.engine_view, "activation_peak_gib"); }, "activation",
     "the profile run differs: max_num_batched_tokens / max_num_seqs, a multimodal encoder profile, or a "
     "sampler / attention backend the fitted law was not measured on"},
    {"non-torch", &EngineLog::non_torch, [](const memory::MemoryPlan& p) { return reconcile_view_number(p.engine_view, "non_torch_gib"); },
     "overhead.non_torch",
     "NCCL / custom all-reduce buffers (TP > 1) or a driver / CUDA version whose context differs from the profile's"},
    {"CUDA graphs", &EngineLog::cuda_graphs, [](const memory::MemoryPlan& p) { return reconcile_view_number(p.engine_view, "cuda_graph_gib"); },
     "overhead.cuda_graphs",
     "other capture sizes (cudagraph_capture_sizes, max_num_seqs), enforce-eager, or an attention backend "
     "(MLA) whose graphs the dense law does not describe"},
    {"KV cache", &EngineLog::kv_cache, [](const memory::MemoryPlan& p) { return reconcile_view_number(p.engine_view, "kv_cache_gib"); },
     nullptr,
     "follows from the rows above (KV = total x utilization - weights - activation - non-torch), or a GPU total / "
     "gpu_memory_utilization other than the log's"},
}};

// llama.cpp: the CUDA0 buffers of the plan (memory/llamacpp_engine.cpp: weights = the model
// buffers on CUDA0, kv_cache = the KV buffer, activation = the compute buffer).
constexpr std::array<ReconcileComponent, 3> kLlamacppReconcile = {{
    {"model buffer", &EngineLog::weights, [](const memory::MemoryPlan& p) { return p.weights_bytes().gib(); }, "weights",
     "another GGUF type mixture than the planned one (pass the .gguf itself with --model), or another -ngl / "
     "output-layer placement"},
    {"KV buffer", &EngineLog::kv_cache, [](const memory::MemoryPlan& p) { return p.kv_cache_bytes().gib(); }, nullptr,
     "another n_ctx, cache type (-ctk / -ctv), sequence count (-np) or sliding-window setting than the log's"},
    {"compute buffer", &EngineLog::compute_buffer, [](const memory::MemoryPlan& p) { return p.activation_bytes().gib(); },
     "activation",
     "another llama.cpp build (the compute graph's buffer changes between builds; the profile is the commit of "
     "data/engines/llamacpp.json), -ub, or flash attention on / off"},
}};

double reconcile_sglang_kv_gib(const memory::MemoryPlan& p) { return p.kv_cache_bytes().gib(); }

// SGLang: the figures of engine_view (memory/sglang_engine.cpp); the pool is
// (free before loading) x mem_fraction_static - weights (model_runner.py profile_max_num_token).
constexpr std::array<ReconcileComponent, 5> kSglangReconcile = {{
    {"free before loading", &EngineLog::free_before_load,
     [](const memory::MemoryPlan& p) { return reconcile_view_number(p.engine_view, "free_before_load_gib"); },
     "overhead.context",
     "TP init (NCCL communicators, custom all-reduce buffers), another CUDA context size, or another process on the "
     "card (a desktop session) before SGLang loaded"},
    {"weights", &EngineLog::weights, [](const memory::MemoryPlan& p) { return reconcile_view_number(p.engine_view, "weights_gib"); },
     "weights",
     "the checkpoint is not the planned one (another revision, quantization, extra tensors): pass its config.json or "
     "directory with --model",
     0.005, "the SGLang weights target, 0.5 % (docs/accuracy-sglang.md)"},
    {"KV cache", &EngineLog::kv_cache, reconcile_sglang_kv_gib, nullptr,
     "follows from the rows above (pool = free x mem_fraction_static - weights), or another mem_fraction_static, "
     "KV dtype or page size than the log's"},
    {"after the KV pool", &EngineLog::after_pool,
     [](const memory::MemoryPlan& p) {
       return reconcile_view_number(p.engine_view, "free_before_load_gib") - reconcile_view_number(p.engine_view, "weights_gib") -
              reconcile_sglang_kv_gib(p);
     },
     nullptr,
     "SGLang allocates the request-to-token table (max_running_requests x context_len x 4 B, "
     "mem_cache/memory_pool.py ReqToTokenPool) and other buffers with the pool; vramplan does not plan them"},
    // Captured after the pool, out of the (1 - mem_fraction_static) share: the graphs do not move
    // the pool. The plan's figure is SGLang's own reserve rule, not a capture (memory/sglang_engine.cpp).
    {"CUDA graphs", &EngineLog::cuda_graphs, [](const memory::MemoryPlan& p) { return reconcile_view_number(p.engine_view, "cuda_graph_gib"); },
     "overhead.cuda_graphs",
     "the plan's figure is SGLang's reserve rule (cuda_graph_max_bs x 2 MiB, server_args.py), not a capture: the graphs "
     "depend on the captured batch sizes (--cuda-graph-max-bs / --cuda-graph-bs), the attention backend and TP. They "
     "come out of the (1 - mem_fraction_static) share and leave the KV pool as planned; --update-calibration records "
     "the logged figure"},
}};

// TensorRT-LLM: the first-order profile (memory/trtllm_engine.cpp). The pool is
// free_gpu_memory_fraction x the free memory the log prints, in whole blocks
// (kvCacheManager.cpp calculateMaxNumBlocks); the engine's execution context is the profile's
// activation estimate; the C++ runtime's runtime and decoder buffers are not planned (planned 0:
// their row shows what the runtime margin of data/accuracy_bounds.json stands for).
double reconcile_unplanned_gib(const memory::MemoryPlan&) { return 0.0; }

constexpr const char* kTrtllmUnplannedCause =
    "the C++ runtime allocates its runtime and decoder buffers (RuntimeBuffers, the decoder) from the engine's build "
    "flags; the first-order profile does not plan them (docs/accuracy-trtllm.md, 'Not modelled')";

constexpr std::array<ReconcileComponent, 6> kTrtllmReconcile = {{
    {"engine size", &EngineLog::weights, [](const memory::MemoryPlan& p) { return p.weights_bytes().gib(); }, "weights",
     "the engine holds other tensors than the checkpoint (a tied embedding stored again as lm_head, "
     "docs/accuracy-trtllm.md) or another precision than planned: pass --weights / --engine-arg quantization=..."},
    {"execution context", &EngineLog::compute_buffer, [](const memory::MemoryPlan& p) { return p.activation_bytes().gib(); },
     "activation",
     "TensorRT sizes the engine's activation workspace from its build flags (max_batch_size, max_num_tokens, "
     "max_seq_len), which the log does not print: pass them with --engine-arg"},
    {"runtime buffers", &EngineLog::runtime_buffers, reconcile_unplanned_gib, "overhead.runtime", kTrtllmUnplannedCause},
    {"decoder buffers", &EngineLog::decoder_buffers, reconcile_unplanned_gib, "overhead.runtime", kTrtllmUnplannedCause},
    {"free for the KV cache", &EngineLog::free_for_kv,
     [](const memory::MemoryPlan& p) { return reconcile_view_number(p.engine_view, "free_gib"); }, "overhead.runtime",
     "the runtime and decoder buffers and the engine's workspace (not planned), another GPU total, or another process on "
     "the card"},
    {"KV cache", &EngineLog::kv_cache, [](const memory::MemoryPlan& p) { return p.kv_cache_bytes().gib(); }, nullptr,
     "follows from the free memory (pool = free_gpu_memory_fraction x free, in whole blocks), or another fraction, KV "
     "dtype or tokens_per_block than the log's"},
}};

struct ReconcileEngine {
  std::string_view engine;
  std::string_view plan_engine;  //!< the engine profile that plans it (ollama runs llama.cpp)
  const char* unit;        //!< as the engine prints memory
  double per_gib;          //!< units per GiB
  bool kv_from_budget;     //!< the pool is what a budget leaves after the other components (vLLM)
  //! Profiles are chosen by the engine's version (vLLM); llama.cpp's one profile is a commit, and
  //! a build number in the log does not name one.
  bool versioned;
  const ReconcileComponent* components;
  std::size_t count;
  const char* tokens_key;  //!< engine_view key of the planned KV tokens (nullptr: none printed)
  const char* blocks_key;  //!< engine_view key of the planned block count (nullptr: none printed)
  const char* kv_bound_source;  //!< how the KV pool's bound is made
};

constexpr std::array<ReconcileEngine, 5> kReconcileEngines = {{
    {"vllm", "vllm", "GiB", 1.0, true, true, kVllmReconcile.data(), kVllmReconcile.size(), "kv_cache_tokens", "gpu_blocks",
     "sum of the weights, activation and non-torch bounds (the pool is what they leave)"},
    {"sglang", "sglang", "GiB", 1.0, true, true, kSglangReconcile.data(), kSglangReconcile.size(), "max_total_num_tokens", nullptr,
     "sum of the free-memory and weights bounds (the pool is what they leave)"},
    {"llamacpp", "llamacpp", "MiB", 1024.0, false, false, kLlamacppReconcile.data(), kLlamacppReconcile.size(), nullptr,
     nullptr, "print rounding: the KV buffer is sized by formula from -c (docs/accuracy-llamacpp.md)"},
    // ollama's runner is llama.cpp: its lines are compared as llama.cpp's, with llama.cpp's profile
    // (ollama vendors llama.cpp at a commit of its own; its version names no llama.cpp profile).
    {"ollama", "llamacpp", "MiB", 1024.0, false, false, kLlamacppReconcile.data(), kLlamacppReconcile.size(), nullptr,
     nullptr, "print rounding: the KV buffer is sized by formula from -c (docs/accuracy-llamacpp.md)"},
    {"trtllm", "trtllm", "GiB", 1.0, true, true, kTrtllmReconcile.data(), kTrtllmReconcile.size(), "max_tokens", "kv_blocks",
     "the free-memory bound (the pool is a fraction of what the runtime leaves)"},
}};

double reconcile_margin_gib(const ErrorBounds& bounds, const ReconcileComponent& c, double planned_gib) {
  const auto* m = bounds.margin_for(c.bound_prefix);
  const double target = c.target_relative * planned_gib;
  if (!m) return target;
  return m->relative * planned_gib + Bytes(m->absolute).gib() + target;
}

std::string reconcile_bound_source(const ErrorBounds& bounds, const ReconcileComponent& c) {
  const auto* m = bounds.margin_for(c.bound_prefix);
  if (c.target_source) return m ? "data/accuracy_bounds.json " + m->engine + " " + m->prefix + " + " + c.target_source : c.target_source;
  return m ? "data/accuracy_bounds.json " + m->engine + " " + m->prefix : "no bound recorded for this engine (print rounding only)";
}

// ollama's estimate keys (llm/memory.go MemoryEstimate.log) and the plan's figure for the same
// thing; nullptr: nothing planned is the same thing (free memory, the partial-offload graph).
struct ReconcileEstimateKey {
  std::string_view key;
  double (*planned_gib)(const memory::MemoryPlan&);
  const char* planned_as;
};
constexpr std::array<ReconcileEstimateKey, 7> kReconcileEstimates = {{
    {"memory.available", nullptr, ""},
    {"memory.required.full", [](const memory::MemoryPlan& p) { return p.total_bytes().gib(); }, "the plan's total on the GPU"},
    {"memory.required.partial", [](const memory::MemoryPlan& p) { return p.total_bytes().gib(); }, "the plan's total on the GPU"},
    {"memory.required.kv", [](const memory::MemoryPlan& p) { return p.kv_cache_bytes().gib(); }, "the plan's KV buffer"},
    {"memory.weights.total", [](const memory::MemoryPlan& p) { return p.weights_bytes().gib(); },
     "the plan's model buffers on the GPU (ollama counts every layer, the GPU holds the offloaded ones)"},
    {"memory.graph.full", [](const memory::MemoryPlan& p) { return p.activation_bytes().gib(); }, "the plan's compute buffer"},
    {"memory.graph.partial", nullptr, ""},
}};

const std::array<std::string_view, 4> kTunedSuffixes = {"-instruct", "-it", "-hf", "-chat"};

// The architecture fields two HF configs must share to be one model (the planned one and the
// catalogue entry the log's HF id names): "layers 32" ... for those that differ, both sides.
struct ReconcileArchField {
  const char* name;
  std::uint64_t ModelArch::*field;
};
constexpr std::array<ReconcileArchField, 7> kReconcileArchFields = {{
    {"layers", &ModelArch::num_layers},
    {"hidden size", &ModelArch::hidden_size},
    {"attention heads", &ModelArch::num_heads},
    {"KV heads", &ModelArch::num_kv_heads},
    {"intermediate size", &ModelArch::intermediate_size},
    {"vocabulary", &ModelArch::vocab_size},
    {"experts", &ModelArch::num_experts},
}};

// The fields on which the two architectures differ, as ("layers 32" from the log's model, "layers
// 36" planned) pairs; empty when they agree on every field.
std::vector<std::pair<std::string, std::string>> reconcile_hf_mismatch(const ModelArch& logged, const ModelArch& planned) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : kReconcileArchFields)
    if (logged.*(f.field) != planned.*(f.field))
      out.emplace_back(std::string(f.name) + " " + std::to_string(logged.*(f.field)),
                       std::string(f.name) + " " + std::to_string(planned.*(f.field)));
  return out;
}

// Both sides of a mismatch list, each joined: "layers 32, KV heads 8" and "layers 36, KV heads 4".
std::pair<std::string, std::string> joined_sides(const std::vector<std::pair<std::string, std::string>>& diff) {
  std::pair<std::string, std::string> out;
  for (const auto& [theirs, ours] : diff) {
    out.first += (out.first.empty() ? "" : ", ") + theirs;
    out.second += (out.second.empty() ? "" : ", ") + ours;
  }
  return out;
}

// llama.cpp's print_info figures against the planned model (llama-model.cpp: n_layer counts the
// NextN / MTP layers a GGUF carries, n_ff is the dense FFN width, n_vocab the tokenizer's tokens,
// which may be fewer than the embedding rows a config pads to). Returns the differing figures as
// "n_head_kv 32" (log) and "n_head_kv 8" (plan) pairs.
std::vector<std::pair<std::string, std::string>> reconcile_llamacpp_mismatch(const std::map<std::string, std::string>& stated,
                                                                             const ModelArch& a) {
  std::vector<std::pair<std::string, std::string>> out;
  auto number = [&](const char* key) -> std::optional<std::uint64_t> {
    const auto it = stated.find(key);
    if (it == stated.end()) return std::nullopt;
    std::uint64_t v = 0;
    const auto& t = it->second;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc{} || end != t.data() + t.size()) return std::nullopt;  // a per-layer array: not compared
    return v;
  };
  auto differs = [&](const char* key, std::uint64_t planned, bool also_ok = false) {
    if (const auto v = number(key); v && *v != planned && !also_ok)
      out.emplace_back(std::string(key) + " " + std::to_string(*v), std::string(key) + " " + std::to_string(planned));
  };
  if (const auto layers = number("n_layer"))
    differs("n_layer", a.num_layers, *layers == a.num_layers + a.mtp_layers);
  differs("n_embd", a.hidden_size);
  differs("n_head", a.num_heads);
  differs("n_head_kv", a.num_kv_heads);
  if (a.num_experts == 0) differs("n_ff", a.intermediate_size);
  if (const auto vocab = number("n_vocab"); vocab && *vocab > a.vocab_size) differs("n_vocab", a.vocab_size);
  return out;
}

}  // namespace

std::size_t Reconciliation::outside() const {
  std::size_t n = 0;
  for (const auto& r : rows) n += r.outside ? 1 : 0;
  return n;
}

std::optional<std::string> catalogue_id_for(const std::string& hf_id, const std::vector<std::string>& ids) {
  std::string name = to_lower(hf_id);
  if (const auto slash = name.find_last_of('/'); slash != std::string::npos) name = name.substr(slash + 1);
  auto known = [&](const std::string& id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  for (std::string candidate : {name, name.starts_with("meta-") ? name.substr(5) : name}) {
    if (known(candidate)) return candidate;
    for (const auto suffix : kTunedSuffixes)
      if (candidate.ends_with(suffix) && known(candidate.substr(0, candidate.size() - suffix.size())))
        return candidate.substr(0, candidate.size() - suffix.size());
  }
  return std::nullopt;
}

Reconciliation reconcile(const EngineLog& log, const ReconcileOptions& options, const DataRoot& root) {
  Reconciliation r;
  r.log = log;
  auto& q = r.request;
  const ReconcileEngine* engine = nullptr;
  for (const auto& e : kReconcileEngines)
    if (e.engine == log.engine) engine = &e;
  if (!engine) throw_internal("reconcile: no component table for engine '" + log.engine + "'");
  const bool with_version = engine->versioned && !log.engine_version.empty();
  q.engine = options.engine ? *options.engine : std::string(engine->plan_engine) + (with_version ? "@" + log.engine_version : "");
  // The model: --model, else the catalogue entry the log's model names.
  if (options.model) {
    q.model = *options.model;
    r.model_basis = "--model";
  } else if (log.model.empty()) {
    throw_usage(log.origin + ": the log does not name the model; pass --model (catalogue id, config.json or checkpoint dir)");
  } else if (std::error_code ec; std::filesystem::exists(log.model, ec)) {  // a path the log names, present here
    q.model = log.model;
    r.model_basis = "the log's model path";
  } else {
    const auto ids = catalogue_ids(root);
    const auto id = catalogue_id_for(log.model, ids);
    if (!id) {
      std::string close;
      for (const auto& c : closest_ids(to_lower(log.model.substr(log.model.find_last_of('/') + 1)), ids, 3))
        close += (close.empty() ? "" : ", ") + c;
      throw Error(ErrorKind::UnknownName, log.origin + ": model '" + log.model + "' is not in the catalogue" +
                                              (close.empty() ? "" : " (closest: " + close + ")") +
                                              "; pass --model with a catalogue id, config.json, checkpoint dir or .gguf");
    }
    q.model = *id;
    r.model_basis = "catalogue id '" + *id + "' for '" + log.model + "'";
  }
  // The GPU: --gpu with the log's total, else a custom card of the log's total.
  if (log.gpu_total) q.gpu_memory = log.gpu_total->bytes;
  if (options.gpu) {
    q.gpu = *options.gpu;
    r.gpu_basis = "--gpu" + std::string(log.gpu_total ? ", total from log line " + std::to_string(log.gpu_total->line) : "");
  } else if (log.gpu_total) {
    q.gpu = "custom:" + std::to_string(log.gpu_total->bytes.count()) + "B";
    r.gpu_basis = "a custom card of the log's total, line " + std::to_string(log.gpu_total->line) + "; --gpu names the card";
  } else {
    throw_usage(log.origin + ": the log does not print the GPU total (vLLM V1 prints it at DEBUG level, TensorRT-LLM in its KV-cache sizing line, SGLang and llama.cpp not at all); pass --gpu");
  }
  for (const auto& [k, v] : log.args) {
    // llama.cpp: the GGUF file type, a --weights choice, unless the model is the .gguf itself
    // (which carries every tensor's type).
    if (k == "weights") {
      if (!q.model.ends_with(".gguf")) q.weights = v;
    } else {
      q.args[k] = v;
    }
  }
  // What the user passes for what the log does not print (--weights, --engine-arg) wins, as
  // --model and --gpu do.
  if (options.weights) q.weights = *options.weights;
  for (const auto& [k, v] : options.args) q.args[k] = v;
  // vLLM prints "Maximum concurrency for N tokens per request" with N = max_model_len (V0
  // worker.py, V1 kv_cache_utils.py: blocks x block size / model_config.max_model_len): the
  // context length of a log that states it nowhere else.
  if (log.engine == "vllm" && log.concurrency_tokens && !q.args.contains("max-model-len"))
    q.args["max-model-len"] = std::to_string(*log.concurrency_tokens);
  // A llama.cpp log without a flash_attn line predates -fa (llama.cpp PR #5021, April 2024): its
  // attention ran without flash attention, which today's default (auto = on for CUDA) would not.
  if (engine->plan_engine == "llamacpp" && !log.args.contains("flash-attn")) q.args["flash-attn"] = "off";
  // A build whose KV lines are llama_kv_cache_init's kept one KV cache for all sequences
  // (per-sequence streams came with llama.cpp PR #14363, June 2025; `--kv-unified` selects the old
  // way): its attention spans every cell, so its compute buffer is the unified one. ollama#9221:
  // 4 sequences of 8192 cells, compute buffer 696.00 MiB logged, 710.01 planned unified, 317.00 split.
  if (engine->plan_engine == "llamacpp" && log.llamacpp_unified_kv && q.args.contains("parallel") &&
      q.args.at("parallel") != "1" && !options.args.contains("kv-unified"))
    q.args["kv-unified"] = "true";
  // A version no profile covers is planned with the nearest older profile, with a note
  // (memory/engine_data.cpp EngineProfileData::load): never an error here.
  r.outcome = memory::run_plan(q, root);

  // The model the log states against the one planned: a --model of another model makes every
  // row differ for a reason none of the per-row causes names.
  const auto& planned_arch = r.outcome.model.arch;
  const std::string planned_name = "--model " + q.model;
  if (options.model && !log.model.empty() && log.architecture.empty()) {
    const auto logged_id = catalogue_id_for(log.model, catalogue_ids(root));
    if (logged_id && *logged_id != r.outcome.model.id) {
      try {
        const auto named = load_catalogue_model(root, *logged_id);
        const auto diff = reconcile_hf_mismatch(named.arch, planned_arch);
        if (!diff.empty()) {
          const auto [theirs, ours] = joined_sides(diff);
          r.model_mismatch.push_back("the log names '" + log.model + "' (catalogue " + *logged_id + ": " + theirs + "); " +
                                     planned_name + " has " + ours);
        }
      } catch (const Error&) {
        // The entry the id maps to does not load: nothing to compare it with.
      }
    }
  }
  if (!log.architecture.empty()) {
    const auto diff = reconcile_llamacpp_mismatch(log.architecture, planned_arch);
    if (!diff.empty()) {
      const auto [theirs, ours] = joined_sides(diff);
      const auto params = log.architecture.find("model params");
      r.model_mismatch.push_back("the log states " + theirs +
                                 (params != log.architecture.end() ? " (model params " + params->second + ")" : "") + " at line " +
                                 std::to_string(log.architecture_line) + "; " +
                                 (options.model ? planned_name : "the planned model '" + r.outcome.model.id + "'") + " has " + ours);
    }
  }

  // With the model contradicted, another model is the first likely cause of every difference.
  auto reconcile_cause = [&](const std::string& cause) {
    return r.model_mismatch.empty() ? cause : "another model than the log's (the model line, JSON model_mismatch); else " + cause;
  };
  const auto bounds = ErrorBounds::load(root.data_file("accuracy_bounds.json")).for_engine(std::string(engine->plan_engine));
  const auto& plan = r.outcome.plan;
  const double per_gib = engine->per_gib;
  const std::span<const ReconcileComponent> components(engine->components, engine->count);
  // vLLM's pool is what the budget leaves after the components sized before it: its bound is
  // theirs (vLLM 0.19 does not subtract the CUDA graphs). llama.cpp's is fixed by -c: its own.
  // Each prefix counts once (TensorRT-LLM's runtime margin bounds three rows).
  double kv_bound = kReconcilePrintRounding;
  std::vector<std::string_view> counted;
  if (engine->kv_from_budget)
    for (const auto& c : components)
      if (c.bound_prefix && std::string_view(c.bound_prefix) != "overhead.cuda_graphs" &&
          std::find(counted.begin(), counted.end(), c.bound_prefix) == counted.end()) {
        counted.emplace_back(c.bound_prefix);
        kv_bound += per_gib * reconcile_margin_gib(bounds, c, c.planned_gib(plan));
      }
  for (const auto& c : components) {
    const auto& figure = log.*(c.figure);
    if (!figure) continue;
    ReconcileRow row;
    row.component = c.name;
    row.unit = engine->unit;
    row.logged = figure->bytes.gib() * per_gib;
    row.planned = c.planned_gib(plan) * per_gib;
    row.line = figure->line;
    if (c.bound_prefix) {
      row.bound = per_gib * reconcile_margin_gib(bounds, c, c.planned_gib(plan)) + kReconcilePrintRounding;
      row.bound_source = reconcile_bound_source(bounds, c);
    } else {
      row.bound = kv_bound;
      row.bound_source = engine->kv_bound_source;
    }
    row.outside = std::fabs(row.difference()) > row.bound;
    if (row.outside) row.likely_cause = reconcile_cause(c.cause);
    r.rows.push_back(std::move(row));
  }
  const auto& view = plan.engine_view;
  // Tokens, blocks and concurrency scale with the pool: their bound is the KV bound in proportion.
  double kv_gib = 0;
  for (const auto& c : components)
    if (c.figure == &EngineLog::kv_cache) kv_gib = c.planned_gib(plan);
  const double scale = kv_gib > 0 ? kv_bound / kv_gib : 0;
  auto scaled_row = [&](const char* name, const char* unit, double logged, double planned, std::size_t line) {
    ReconcileRow row;
    row.component = name;
    row.unit = unit;
    row.logged = logged;
    row.planned = planned;
    row.line = line;
    row.bound = scale * planned + (std::string_view(unit) == "x" ? 0.005 : 1.0);
    row.bound_source = "the KV cache bound in proportion";
    row.outside = std::fabs(row.difference()) > row.bound;
    if (row.outside)
      row.likely_cause = reconcile_cause("follows from the KV cache row, or another block size / KV dtype / max_model_len than the log's");
    r.rows.push_back(std::move(row));
  };
  if (log.kv_tokens && engine->tokens_key)
    scaled_row("KV tokens", "tokens", static_cast<double>(*log.kv_tokens), reconcile_view_number(view, engine->tokens_key), log.kv_tokens_line);
  // vLLM V0 and TensorRT-LLM print blocks ("# GPU blocks", "blocks in KV cache primary pool"),
  // the count the pool is allocated in.
  if (log.gpu_blocks && engine->blocks_key)
    scaled_row("KV blocks", "blocks", static_cast<double>(*log.gpu_blocks), reconcile_view_number(view, engine->blocks_key),
               log.gpu_blocks_line);
  // TensorRT-LLM's token budget before the round-up to whole blocks.
  if (log.kv_token_budget && log.engine == "trtllm")
    scaled_row("KV token budget", "tokens", static_cast<double>(*log.kv_token_budget),
               reconcile_view_number(view, "kv_tokens_budget"), log.kv_token_budget_line);
  if (log.max_concurrency)
    scaled_row("max concurrency", "x", *log.max_concurrency, reconcile_view_number(view, "max_concurrency"), log.concurrency_line);
  // The engine's own estimate (ollama's EstimateGPULayers) beside the plan's figure for the same thing.
  for (const auto& entry : log.engine_estimate) {
    const std::string& key = entry.first;  // (clang 15 captures no structured binding)
    const auto* match = std::find_if(kReconcileEstimates.begin(), kReconcileEstimates.end(),
                                     [&](const ReconcileEstimateKey& e) { return key == e.key; });
    EstimateRow row{key, entry.second.bytes.gib(), std::nullopt, "", entry.second.line};
    if (match != kReconcileEstimates.end() && match->planned_gib) {
      row.planned_gib = match->planned_gib(plan);
      row.planned_as = match->planned_as;
    }
    r.estimate.push_back(std::move(row));
  }
  return r;
}

namespace {

// The logged figures each engine's plan takes from a calibration file's deployment entry (the
// memory/<engine>_engine.cpp that reads them), and the lines that state them for the message.
using DeploymentSlot = std::optional<Bytes> calib::DeploymentFigures::*;
struct DeploymentSource {
  DeploymentSlot slot;
  std::optional<LoggedSize> EngineLog::*figure;
};
struct DeploymentEngine {
  std::string_view engine;
  std::vector<DeploymentSource> figures;
  const char* lines;  //!< the lines, for "the log states none of ..."
};

const std::vector<DeploymentEngine>& deployment_engines() {
  static const std::vector<DeploymentEngine> engines = {
      {"vllm",
       {{&calib::DeploymentFigures::non_torch, &EngineLog::non_torch},
        {&calib::DeploymentFigures::activation_peak, &EngineLog::activation},
        {&calib::DeploymentFigures::cuda_graphs, &EngineLog::cuda_graphs}},
       "non-torch, activation peak, CUDA graphs ('Memory profiling takes ...', 'Graph capturing finished')"},
      {"sglang",
       {{&calib::DeploymentFigures::free_before_load, &EngineLog::free_before_load},
        {&calib::DeploymentFigures::cuda_graphs, &EngineLog::cuda_graphs}},
       "free memory before loading, CUDA graphs ('Load weight begin. avail mem', 'Capture cuda graph end ... mem usage')"},
      {"trtllm",
       {{&calib::DeploymentFigures::free_for_kv, &EngineLog::free_for_kv},
        {&calib::DeploymentFigures::execution_context, &EngineLog::compute_buffer},
        {&calib::DeploymentFigures::runtime_buffers, &EngineLog::runtime_buffers},
        {&calib::DeploymentFigures::decoder_buffers, &EngineLog::decoder_buffers}},
       "free memory for the KV cache, execution context, runtime or decoder buffers ('Memory usage when calculating max "
       "tokens in paged kv cache', 'Allocated ... for execution context memory', '... for runtime buffers', '... for "
       "decoder')"},
  };
  return engines;
}

}  // namespace

calib::DeploymentFigures deployment_figures(const Reconciliation& r) {
  // llama.cpp (and ollama's runner) sizes its buffers from the flags the log states, by the
  // formulas the plan uses: the KV buffer is exact and the model buffer within print rounding on
  // every log (docs/reconcile.md); a compute buffer that differs is another build's graph, which a
  // per-deployment figure would hide rather than explain.
  if (r.log.engine == "llamacpp" || r.log.engine == "ollama")
    throw_usage(r.log.origin + ": --update-calibration: " + r.log.engine +
                "'s buffers are sized from the flags its log states by the formulas the plan uses (the KV buffer is "
                "exact, docs/reconcile.md): there is no deployment figure to take; a compute buffer that differs is "
                "another llama.cpp build");
  const auto engine = std::find_if(deployment_engines().begin(), deployment_engines().end(),
                                   [&](const DeploymentEngine& e) { return e.engine == r.log.engine; });
  if (engine == deployment_engines().end())
    throw_internal("--update-calibration: no deployment figures for engine '" + r.log.engine + "'");
  calib::DeploymentFigures d;
  d.model = r.outcome.model.id;
  d.engine = r.outcome.plan.engine;
  d.engine_version = r.outcome.plan.engine_version;
  d.gpu = r.outcome.gpu.id;
  d.tp = r.outcome.tp;
  d.pp = r.outcome.pp;
  std::vector<std::size_t> lines;
  for (const auto& f : engine->figures)
    if (const auto& figure = r.log.*(f.figure)) {
      d.*(f.slot) = figure->bytes;
      if (std::find(lines.begin(), lines.end(), figure->line) == lines.end()) lines.push_back(figure->line);
    }
  if (lines.empty())
    throw_usage(r.log.origin + ": --update-calibration: the log states none of " + engine->lines);
  std::sort(lines.begin(), lines.end());
  std::string listed;
  for (const auto n : lines) listed += (listed.empty() ? " " : ", ") + std::to_string(n);
  d.source = std::filesystem::path(r.log.origin).filename().string() + " line" + (lines.size() > 1 ? "s" : "") + listed;
  return d;
}

std::string replan_command(const Reconciliation& r, const std::string& calibration) {
  const auto& q = r.request;
  std::string out = "vramplan plan --model " + q.model + " --gpu " + q.gpu;
  if (q.gpu_memory) out += " --gpu-memory " + std::to_string(q.gpu_memory->count()) + "B";
  out += " --engine " + q.engine;
  if (q.weights) out += " --weights " + *q.weights;
  // Switches (enable-prefix-caching False reads as --no-enable-prefix-caching "true") stand alone,
  // as `planned as:` prints them.
  for (const auto& [k, v] : q.args) out += " --" + k + (v == "true" ? "" : " " + v);
  return out + " --calibration " + calibration;
}

calib::DeploymentFigures update_calibration(const Reconciliation& r, const std::filesystem::path& file) {
  auto d = deployment_figures(r);
  calib::Calibration cal;
  if (std::error_code ec; std::filesystem::exists(file, ec)) {
    cal = calib::load_calibration(file);
  } else {
    cal.origin = calib::CalibrationOrigin::Deployment;
    cal.source = file.string();
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
    cal.created_utc = stamp;
  }
  calib::put_deployment(cal, d);
  calib::write_calibration(cal, file);
  return d;
}

nlohmann::json reconcile_json(const Reconciliation& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& x : r.rows) {
    nlohmann::json j = {{"component", x.component},   {"unit", x.unit},
                        {"logged", rounded(x.logged, 4)}, {"planned", rounded(x.planned, 4)},
                        {"difference", rounded(x.difference(), 4)},
                        {"difference_pct", x.has_difference_pct() ? nlohmann::json(rounded(x.difference_pct(), 2)) : nlohmann::json()},
                        {"bound", rounded(x.bound, 4)}, {"bound_source", x.bound_source},
                        {"outside_bound", x.outside}, {"log_line", x.line}};
    if (x.outside) j["likely_cause"] = x.likely_cause;
    rows.push_back(std::move(j));
  }
  nlohmann::json args = nlohmann::json::object();
  for (const auto& [k, v] : r.request.args) args[k] = v;
  nlohmann::json out = {{"schema", "vramplan.reconcile/1"},
          {"log", {{"file", r.log.origin}, {"engine", r.log.engine}, {"engine_version", r.log.engine_version},
                   {"model", r.log.model}, {"lines", r.log.lines}, {"lines_recognised", r.log.recognised}}},
          {"planned_as",
           {{"model", r.request.model}, {"model_basis", r.model_basis}, {"gpu", r.request.gpu}, {"gpu_basis", r.gpu_basis},
            {"gpu_total_gib", rounded(r.outcome.gpu.total.gib(), 4)}, {"engine", r.outcome.plan.engine},
            {"engine_version", r.outcome.plan.engine_version}, {"engine_args", args}, {"tp", r.outcome.tp}, {"pp", r.outcome.pp},
            {"fits", r.outcome.plan.fits}}},
          {"components", rows},
          {"outside_bound", r.outside()}};
  if (r.request.weights) out["planned_as"]["weights"] = *r.request.weights;
  if (!r.outcome.plan.fits) out["planned_as"]["does_not_fit"] = r.outcome.plan.reason;
  if (!r.model_mismatch.empty()) out["model_mismatch"] = r.model_mismatch;
  if (!r.estimate.empty()) {
    nlohmann::json est = nlohmann::json::object();
    for (const auto& e : r.estimate) {
      nlohmann::json j = {{"logged_gib", rounded(e.logged_gib, 4)}, {"log_line", e.line}};
      if (e.planned_gib) {
        j["planned_gib"] = rounded(*e.planned_gib, 4);
        j["planned_as"] = e.planned_as;
      }
      est[e.key] = j;
    }
    out["engine_estimate"] = est;
  }
  return out;
}

}  // namespace vramplan::plan
