#include "vramplan/plan/launch_command.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string_view>
#include <utility>

#include "vramplan/core/bytes.hpp"

namespace vramplan::plan {
namespace {

std::string text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v.get<double>());
  return b;
}

// Appends `flag value` when the plan's engine_view has `key`.
void from_view(std::vector<std::string>& argv, const nlohmann::json& view, const char* key, const char* flag) {
  const auto it = view.find(key);
  if (it == view.end() || it->is_null()) return;
  argv.push_back(flag);
  argv.push_back(text(*it));
}

// Appends `flag value` for a user flag that the view does not carry.
void from_args(std::vector<std::string>& argv, const memory::EngineArgs& args, const char* name, const char* flag) {
  const auto it = args.find(name);
  if (it == args.end()) return;
  argv.push_back(flag);
  if (it->second != "true") argv.push_back(it->second);
}

bool view_flag(const nlohmann::json& view, const char* key) {
  const auto it = view.find(key);
  return it != view.end() && it->is_boolean() && it->get<bool>();
}

using Builder = void (*)(const memory::PlanOutcome&, const memory::EngineArgs&, const std::string&, LaunchCommand&);

// vLLM data parallelism over several nodes (data/compat vllm-dp-multi-node): each node starts its
// own engines, --data-parallel-size-local of them (EngineArgs.create_engine_config defaults it to
// the whole --data-parallel-size), reaching the first node at --data-parallel-address; the others
// run --headless from --data-parallel-start-rank (vllm/entrypoints/cli/serve.py, 0.9.1 - 0.34.0).
// The argv is the first node's; the note gives the others'.
void vllm_dp_nodes(const memory::PlanOutcome& o, LaunchCommand& c) {
  const std::uint64_t dp = o.plan.engine_view.value("data_parallel_size", std::uint64_t{1});
  const std::uint64_t engine_gpus = o.tp * o.pp;
  if (dp < 2 || !o.gpu.node_gpus || dp * engine_gpus <= *o.gpu.node_gpus || engine_gpus > *o.gpu.node_gpus) return;
  const std::uint64_t local = *o.gpu.node_gpus / engine_gpus;
  const std::uint64_t nodes = ceil_div(dp, local);
  c.argv.insert(c.argv.end(), {"--data-parallel-size-local", std::to_string(local), "--data-parallel-address", "NODE0_IP",
                               "--data-parallel-rpc-port", "13345"});
  std::string others;
  for (std::uint64_t k = 1; k < nodes; ++k) {
    const std::uint64_t here = std::min(local, dp - k * local);
    others += (k > 1 ? ", " : "") + std::string("node ") + std::to_string(k) + ": --data-parallel-size-local " +
              std::to_string(here) + " --data-parallel-start-rank " + std::to_string(k * local);
  }
  c.note = "this is node 0's command for " + std::to_string(dp) + " engines over " + std::to_string(nodes) +
           " nodes of " + std::to_string(*o.gpu.node_gpus) + " GPUs (NODE0_IP: its address); on the others the same "
           "command with --headless and (" + others + ")";
}

// vLLM (vllm/entrypoints/cli/serve.py; flags of vllm/engine/arg_utils.py EngineArgs).
void vllm(const memory::PlanOutcome& o, const memory::EngineArgs& a, const std::string& model, LaunchCommand& c) {
  const auto& v = o.plan.engine_view;
  c.argv = {"vllm", "serve", model, "--tensor-parallel-size", std::to_string(o.tp)};
  if (v.value("runner", "") == "pooling") c.argv.insert(c.argv.end(), {"--runner", "pooling"});
  if (o.pp > 1) c.argv.insert(c.argv.end(), {"--pipeline-parallel-size", std::to_string(o.pp)});
  from_view(c.argv, v, "data_parallel_size", "--data-parallel-size");  // memory/vllm_data_parallel.hpp
  vllm_dp_nodes(o, c);
  from_args(c.argv, a, "enable-expert-parallel", "--enable-expert-parallel");
  from_view(c.argv, v, "max_model_len", "--max-model-len");
  from_view(c.argv, v, "gpu_memory_utilization", "--gpu-memory-utilization");
  from_view(c.argv, v, "max_num_seqs", "--max-num-seqs");
  from_view(c.argv, v, "max_num_batched_tokens", "--max-num-batched-tokens");
  from_view(c.argv, v, "block_size", "--block-size");
  from_args(c.argv, a, "kv-cache-dtype", "--kv-cache-dtype");
  from_args(c.argv, a, "quantization", "--quantization");
  from_args(c.argv, a, "dtype", "--dtype");
  from_args(c.argv, a, "kv-cache-memory", "--kv-cache-memory");
  from_args(c.argv, a, "enforce-eager", "--enforce-eager");
  // Only as given: without them vLLM resolves the release default (memory/vllm_async_scheduling.cpp).
  from_args(c.argv, a, "async-scheduling", "--async-scheduling");
  from_args(c.argv, a, "no-async-scheduling", "--no-async-scheduling");
  // As given too: memory/vllm_admission.hpp resolves the release default.
  from_args(c.argv, a, "scheduler-reserve-full-isl", "--scheduler-reserve-full-isl");
  from_args(c.argv, a, "no-scheduler-reserve-full-isl", "--no-scheduler-reserve-full-isl");
  from_args(c.argv, a, "watermark", "--watermark");
  from_args(c.argv, a, "speculative-config", "--speculative-config");  // as given: memory/vllm_speculative.hpp
  from_view(c.argv, v, "num_scheduler_steps", "--num-scheduler-steps");  // V0 multi-step: memory/vllm_multi_step.hpp
  c.argv.push_back(view_flag(v, "enable_prefix_caching") ? "--enable-prefix-caching" : "--no-enable-prefix-caching");
  c.argv.push_back(view_flag(v, "enable_chunked_prefill") ? "--enable-chunked-prefill" : "--no-enable-chunked-prefill");
}

// SGLang (python/sglang/srt/server_args.py ServerArgs).
void sglang(const memory::PlanOutcome& o, const memory::EngineArgs& a, const std::string& model, LaunchCommand& c) {
  const auto& v = o.plan.engine_view;
  c.argv = {"python", "-m", "sglang.launch_server", "--model-path", model, "--tp", std::to_string(o.tp)};
  if (o.pp > 1) c.argv.insert(c.argv.end(), {"--pp-size", std::to_string(o.pp)});
  from_args(c.argv, a, "nnodes", "--nnodes");
  const std::uint64_t ep = v.value("ep_size", std::uint64_t{1});
  if (ep > 1) c.argv.insert(c.argv.end(), {"--ep-size", std::to_string(ep)});
  // DP attention: the view holds one rank's request limit and prompt chunk, which SGLang derives
  // by dividing the flags by dp (server_args.py _handle_data_parallelism, model_runner.py
  // max_running_requests // dp_size): the flags carry dp times them.
  const bool dp_attention = view_flag(v, "enable_dp_attention");
  const std::uint64_t dp = dp_attention ? v.value("dp_size", std::uint64_t{1}) : 1;
  if (dp_attention) {
    c.argv.insert(c.argv.end(), {"--dp-size", std::to_string(dp), "--enable-dp-attention"});
    if (view_flag(v, "enable_dp_lm_head")) c.argv.push_back("--enable-dp-lm-head");
  }
  from_view(c.argv, v, "context_length", "--context-length");
  from_view(c.argv, v, "mem_fraction_static", "--mem-fraction-static");
  for (const auto& [key, flag] : {std::pair{"max_running_requests", "--max-running-requests"},
                                  std::pair{"chunked_prefill_size", "--chunked-prefill-size"}}) {
    const auto it = v.find(key);
    if (it == v.end() || it->is_null()) continue;
    const std::uint64_t per_rank = it->get<std::uint64_t>();
    c.argv.push_back(flag);
    c.argv.push_back(std::to_string(per_rank * dp));
  }
  from_view(c.argv, v, "max_prefill_tokens", "--max-prefill-tokens");
  from_view(c.argv, v, "page_size", "--page-size");
  from_args(c.argv, a, "kv-cache-dtype", "--kv-cache-dtype");
  from_args(c.argv, a, "quantization", "--quantization");
  from_args(c.argv, a, "dtype", "--dtype");
  // The MTP draft (memory/sglang_speculative.hpp), with the settings SGLang resolves; it turns
  // the overlap scheduler off itself.
  const bool speculative = v.contains("speculative_algorithm");
  from_view(c.argv, v, "speculative_algorithm", "--speculative-algorithm");
  from_view(c.argv, v, "speculative_num_steps", "--speculative-num-steps");
  from_view(c.argv, v, "speculative_eagle_topk", "--speculative-eagle-topk");
  from_view(c.argv, v, "speculative_num_draft_tokens", "--speculative-num-draft-tokens");
  if (view_flag(v, "enable_mixed_chunk")) c.argv.push_back("--enable-mixed-chunk");
  // Speculative decoding and pipeline parallelism turn it off themselves (server_args.py).
  if (!view_flag(v, "overlap_schedule") && !speculative && o.pp == 1) c.argv.push_back("--disable-overlap-schedule");
  if (!view_flag(v, "radix_cache")) c.argv.push_back("--disable-radix-cache");
}

// TensorRT-LLM (tensorrt_llm/commands/serve.py); the capacity policy and KV options go in the
// --extra_llm_api_options YAML, which the note spells out.
void trtllm(const memory::PlanOutcome& o, const memory::EngineArgs&, const std::string& model, LaunchCommand& c) {
  const auto& v = o.plan.engine_view;
  c.argv = {"trtllm-serve", model, "--tp_size", std::to_string(o.tp), "--pp_size", std::to_string(o.pp)};
  from_view(c.argv, v, "max_batch_size", "--max_batch_size");
  from_view(c.argv, v, "max_num_tokens", "--max_num_tokens");
  from_view(c.argv, v, "max_seq_len", "--max_seq_len");
  from_view(c.argv, v, "free_gpu_memory_fraction", "--kv_cache_free_gpu_memory_fraction");
  const auto policy = v.find("capacity_scheduler_policy");
  c.note = "put in the --extra_llm_api_options YAML: scheduler_config.capacity_scheduler_policy " +
           (policy != v.end() ? text(*policy) : std::string("GUARANTEED_NO_EVICT")) +
           ", kv_cache_config.enable_block_reuse " + (view_flag(v, "enable_block_reuse") ? "true" : "false") +
           ", enable_chunked_prefill " + (view_flag(v, "enable_chunked_prefill") ? "true" : "false");
}

// llama.cpp server (tools/server/server.cpp; common/arg.cpp).
void llamacpp(const memory::PlanOutcome& o, const memory::EngineArgs& a, const std::string& model, LaunchCommand& c) {
  const auto& v = o.plan.engine_view;
  c.argv = {"llama-server", "-m", model};
  from_view(c.argv, v, "n_ctx", "-c");
  from_view(c.argv, v, "n_seq_max", "-np");
  if (a.count("n-gpu-layers")) from_args(c.argv, a, "n-gpu-layers", "-ngl");
  else c.argv.insert(c.argv.end(), {"-ngl", "999"});
  from_view(c.argv, v, "n_batch", "-b");
  from_view(c.argv, v, "n_ubatch", "-ub");
  c.argv.insert(c.argv.end(), {"-fa", view_flag(v, "flash_attn") ? "on" : "off"});
  from_args(c.argv, a, "cache-type-k", "-ctk");
  from_args(c.argv, a, "cache-type-v", "-ctv");
  // The build is chosen when llama.cpp is compiled (docs/build.md), not by a server flag.
  if (const auto b = a.find("llamacpp-backend"); b != a.end()) {
    std::string option = b->second;
    for (char& ch : option) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    c.note = b->second == "cpu" ? "a llama-server built without a GPU backend (the CPU build)"
                                : "a llama-server built with cmake -DGGML_" + option + "=ON";
  }
}

void hf(const memory::PlanOutcome& o, const memory::EngineArgs&, const std::string&, LaunchCommand& c) {
  const auto& v = o.plan.engine_view;
  const auto it = v.find("batch");
  const std::string batch = it != v.end() ? text(*it) : std::string("1");
  if (v.value("runner", "") == "pooling") {  // an encoder: sentence-transformers, not generate()
    c.note = "no server: SentenceTransformer(model).encode(texts, batch_size=" + batch + ") with max_seq_length " +
             text(v.at("sequence_length"));
    return;
  }
  c.note = "HF transformers has no server: the plan is model.generate() on batches of " + batch + " prompts";
}

// text-embeddings-inference (router/src/main.rs Args).
void tei(const memory::PlanOutcome& o, const memory::EngineArgs& a, const std::string& model, LaunchCommand& c) {
  const auto& v = o.plan.engine_view;
  c.argv = {"text-embeddings-router", "--model-id", model};
  from_view(c.argv, v, "max_batch_tokens", "--max-batch-tokens");
  from_args(c.argv, a, "max-batch-requests", "--max-batch-requests");
  from_view(c.argv, v, "max_concurrent_requests", "--max-concurrent-requests");
  from_view(c.argv, v, "dtype", "--dtype");
}

struct Row {
  std::string_view engine;
  Builder build;
};
constexpr Row kLaunchers[] = {{"vllm", vllm}, {"sglang", sglang}, {"trtllm", trtllm}, {"llamacpp", llamacpp}, {"hf", hf}, {"tei", tei}};

bool is_path(const std::string& model) {
  return model.find('/') != std::string::npos || model.ends_with(".gguf") || model.ends_with(".json");
}

// A plan for other weights than the checkpoint stores (--weights): the command must load weights in
// that format. Where the engine converts the checkpoint at load the flag is added, unless the user
// gave it; otherwise the note says to load a checkpoint in that format.
void require_planned_weights(LaunchCommand& c, std::string_view engine, const memory::PlannedWeights& w,
                             const memory::EngineArgs& args) {
  if (c.argv.empty()) return;
  // A dtype: vLLM and SGLang cast at load (vllm/engine/arg_utils.py and sglang server_args.py --dtype).
  struct Cast {
    std::string_view scheme, dtype;
  };
  constexpr Cast kCasts[] = {{"bf16", "bfloat16"}, {"fp16", "float16"}, {"fp32", "float32"}};
  const bool loads_any = engine == "vllm" || engine == "sglang";
  for (const auto& cast : kCasts)
    if (w.scheme == cast.scheme && loads_any) {
      if (!args.count("dtype")) c.argv.insert(c.argv.end(), {"--dtype", std::string(cast.dtype)});
      return;
    }
  // Quantizing an unquantized checkpoint at load: vLLM's Fp8Config without a serialized fp8
  // checkpoint (quantization/fp8.py Fp8LinearMethod.process_weights_after_loading, dynamic
  // per-tensor scales) and SGLang's port of it (srt/layers/quantization/fp8.py); vLLM's
  // bitsandbytes loader quantizes a 16-bit checkpoint to 4 bits in flight
  // (model_loader/bitsandbytes_loader.py _quantize_loaded_weights, nf4).
  struct Online {
    std::string_view engine, scheme, method;
  };
  constexpr Online kOnline[] = {{"vllm", "fp8", "fp8"}, {"sglang", "fp8", "fp8"}, {"vllm", "nf4", "bitsandbytes"}};
  for (const auto& o : kOnline)
    if (o.engine == engine && o.scheme == w.scheme && !w.checkpoint_quantized) {
      if (!args.count("quantization")) c.argv.insert(c.argv.end(), {"--quantization", std::string(o.method)});
      return;
    }
  if (args.count("quantization")) return;
  const std::string need = "the plan is for " + w.scheme + " weights: load a " + w.scheme + " checkpoint of the model" +
                           (w.engine_method.empty() || engine == "llamacpp"
                                ? std::string()
                                : ", whose quantization_config names the method (" + w.engine_method + ")");
  c.note = c.note.empty() ? need : need + "; " + c.note;
}

}  // namespace

std::string LaunchCommand::line() const {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += a.find_first_of(" \"'$") == std::string::npos ? a : "'" + a + "'";
  }
  return s;
}

LaunchCommand launch_command(const memory::PlanOutcome& outcome, const memory::EngineArgs& args, const std::string& model) {
  LaunchCommand c;
  const auto row = std::find_if(std::begin(kLaunchers), std::end(kLaunchers),
                                [&](const Row& r) { return r.engine == outcome.plan.engine; });
  if (row == std::end(kLaunchers)) {
    c.note = "no launch command known for engine " + outcome.plan.engine;
    return c;
  }
  // A config.json path: every server takes the checkpoint directory or a hub id, never the JSON
  // file (vllm serve / sglang --model-path / trtllm-serve / TEI --model-id load config.json and
  // the weights from the directory). A config.json names its directory; a config under another
  // name has none to name, so a placeholder stands in, with a note.
  std::string served = model;
  std::string config_note;
  if (model.ends_with(".json")) {
    const std::filesystem::path p(model);
    if (p.filename() == "config.json") {
      served = p.has_parent_path() ? p.parent_path().string() : std::string(".");
    } else {
      served = "<checkpoint-dir>";
      config_note = "'" + model + "' is a config file, which no server loads: put the checkpoint directory that holds it "
                    "as config.json (with the weights), or its HF repo id, in place of <checkpoint-dir>";
    }
  }
  row->build(outcome, args, served, c);
  if (!config_note.empty()) c.note = c.note.empty() ? config_note : config_note + "; " + c.note;
  if (outcome.plan.planned_weights) require_planned_weights(c, outcome.plan.engine, *outcome.plan.planned_weights, args);
  if (!c.argv.empty() && !is_path(model)) {
    const std::string fill = "'" + model + "' is the catalogue id: put the checkpoint's HF repo or path in its place";
    c.note = c.note.empty() ? fill : fill + "; " + c.note;
  }
  return c;
}

LaunchCommand launch_command(const memory::MemoryPlan& plan, const GpuSpec& gpu, std::uint64_t tp, std::uint64_t pp,
                             const memory::EngineArgs& args, const std::string& model) {
  memory::PlanOutcome o;
  o.plan = plan;
  o.gpu = memory::gpu_target_of(gpu);
  o.tp = tp;
  o.pp = pp;
  return launch_command(o, args, model);
}

nlohmann::json launch_json(const LaunchCommand& c) {
  return {{"argv", c.argv}, {"note", c.note.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.note)}};
}

}  // namespace vramplan::plan
