// llama.cpp profile: the buffers one `llama-server` / `llama-cli` load reserves (model, KV,
// output, compute), from llamacpp::plan (planner/src/memory/llamacpp/), with the flags spelled as
// llama.cpp spells them (-c -ngl -ub -b -fa -ctk -ctv -np --swa-full -nr -kvu). Mechanisms and
// sources: docs/llamacpp.md.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "vramplan/core/error.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/engine_setup.hpp"
#include "vramplan/memory/engine_profiles.hpp"
#include "vramplan/memory/llamacpp.hpp"
#include "vramplan/quant/format.hpp"
#include "vramplan/quant/scheme.hpp"

namespace vramplan::memory {

namespace {

namespace lc = llamacpp;

// llama.cpp prints buffer sizes as MiB with two decimals; six are kept here (a byte is 0.00000095
// MiB), enough to round as llama.cpp does: 131,136 B is 0.125061 MiB, printed 0.13 (four decimals
// cut to 0.1250, which prints 0.12).
double mib(std::uint64_t bytes) {
  return std::round(static_cast<double>(bytes) / (1024.0 * 1024.0) * 1e6) / 1e6;
}

std::string mib_text(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / 1048576.0);
  return buf;
}

lc::FlashAttn parse_flash_attn(const std::string& v) {
  // common/arg.cpp: -fa on|off|auto (the boolean spellings of older builds are accepted too).
  if (v == "on" || v == "1" || v == "true" || v == "enabled") return lc::FlashAttn::On;
  if (v == "off" || v == "0" || v == "false" || v == "disabled") return lc::FlashAttn::Off;
  if (v == "auto") return lc::FlashAttn::Auto;
  throw_usage("--flash-attn: expected on, off or auto, got '" + v + "'");
}

// --llamacpp-cuda-graphs on|off (default on: every CUDA build since May 2024 has them).
bool cuda_graphs_setting(const EngineArgs& args) {
  const auto v = arg_string(args, "llamacpp-cuda-graphs");
  if (!v || *v == "on") return true;
  if (*v == "off") return false;
  throw_usage("--llamacpp-cuda-graphs: expected on or off, got '" + *v + "'");
}

std::int64_t parse_gpu_layers(const std::string& v) {
  if (v == "all" || v == "auto" || v == "-1") return -1;
  const auto n = arg_u64({{"n-gpu-layers", v}}, "n-gpu-layers");
  return static_cast<std::int64_t>(std::min<std::uint64_t>(*n, 1u << 30));
}

class LlamacppEngine final : public Engine {
 public:
  LlamacppEngine(lc::LlamacppProfile profile, QuantCatalog quant)
      : profile_(std::move(profile)), quant_(std::move(quant)) {}
  std::string_view name() const override { return "llamacpp"; }
  // A view into profile_.commit (substr on the string would return a temporary).
  std::string_view version() const override { return std::string_view(profile_.commit).substr(0, 8); }

  std::vector<EngineOption> options() const override {
    return {
        {"ctx-size", "-c: context size in tokens, all sequences together (default: --context x -np, else 0 = the model's training context, llama.cpp's default)", false, {"c"}, OptionValue::whole},
        {"n-gpu-layers", "-ngl: layers offloaded to the GPU (default all; > n_layer also offloads the output layer)", false, {"ngl", "gpu-layers"}},
        {"ubatch-size", "-ub: physical micro-batch (default 512)", false, {"ub"}, OptionValue::whole},
        {"batch-size", "-b: logical batch (default 2048)", false, {"b"}, OptionValue::whole},
        {"flash-attn", "-fa: on, off or auto (default auto = on for CPU and CUDA)", false, {"fa"}},
        {"cache-type-k", "-ctk: K cache type (f16, q8_0, q4_0, ...)", false, {"ctk"}},
        {"cache-type-v", "-ctv: V cache type (quantized V needs -fa on)", false, {"ctv"}},
        {"parallel", "-np: sequences (KV streams) (default 1, or --batch)", false, {"np"}, OptionValue::whole},
        {"swa-full", "full-size cache for sliding-window layers", true, {}},
        {"no-repack", "-nr: no CPU_REPACK copies of Q4_0/Q4_K/IQ4_NL weights", true, {"nr"}},
        {"kv-unified", "-kvu: one KV stream shared by all sequences", true, {"kvu"}},
        {"host-bandwidth", "host memory bandwidth in GB/s for layers left on the CPU (speed only; default 60: dual-channel DDR5-4800)", false, {}, OptionValue::bandwidth},
        // Not a llama.cpp flag: which build runs (a compile-time choice). It changes the
        // compatibility answer (docs/compatibility.md), not the memory plan.
        {"llamacpp-backend", "llama.cpp build: cuda, hip, vulkan or cpu (default: cuda on NVIDIA, hip on AMD)", false, {}},
        // Not a llama.cpp flag either: whether the build captures a batch-1 decode step in CUDA
        // graphs (speed only: the per-layer launch cost, data/perf_defaults.json llamacpp vs
        // llamacpp-nograph; docs/performance.md §5).
        {"llamacpp-cuda-graphs", "on (default: CUDA builds since May 2024, llama.cpp PR #6766) or off (older builds, or GGML_CUDA_DISABLE_GRAPHS=1)", false, {}},
    };
  }

  MemoryPlan plan(const PlanInput& in) const override;

 private:
  lc::Settings settings(const PlanInput& in) const;
  ModelSpec gguf_spec(const PlanInput& in, std::string& precision, std::vector<std::string>& notes,
                      std::optional<PlannedWeights>& planned) const;

  lc::LlamacppProfile profile_;
  QuantCatalog quant_;  // formats + file types (the GGUF mixture needs the scheme table)
};

lc::Settings LlamacppEngine::settings(const PlanInput& in) const {
  const auto& a = in.args;
  lc::Settings s;
  s.device = in.gpu.id == "cpu" ? lc::Device::Cpu : lc::Device::Cuda;
  if (auto v = arg_u64(a, "parallel")) s.n_parallel = *v;
  else if (in.workload.batch) s.n_parallel = *in.workload.batch;
  if (auto v = arg_u64(a, "ctx-size")) s.n_ctx = *v;
  else if (in.workload.context) s.n_ctx = checked_mul(*in.workload.context, s.n_parallel, "--context x -np");
  // Neither: llama.cpp's own default, common/common.h common_params::n_ctx = 0 ("0 == context the
  // model was trained with"; the default since the --fit options, which the 3f545bec records turn
  // off with -fit off), so the same rule as -c 0. check / explain / sweep pass the model's maximum
  // as --context, and plan now gives the same n_ctx.
  else s.n_ctx = 0;
  if (s.n_ctx == 0) {
    // llama.cpp: -c 0 = the model's training context.
    if (in.model.arch.max_position_embeddings == 0)
      throw_usage(arg_u64(a, "ctx-size") ? "-c 0: the model gives no training context length"
                                         : "-c: the model gives no training context length (llama.cpp's default): give -c");
    s.n_ctx = in.model.arch.max_position_embeddings;
  }
  if (auto v = arg_string(a, "n-gpu-layers")) s.n_gpu_layers = parse_gpu_layers(*v);
  if (auto v = arg_u64(a, "ubatch-size")) s.n_ubatch = *v;
  if (auto v = arg_u64(a, "batch-size")) s.n_batch = *v;
  if (auto v = arg_string(a, "flash-attn")) s.flash_attn = parse_flash_attn(*v);
  if (auto v = arg_string(a, "cache-type-k")) s.type_k = *v;
  if (auto v = arg_string(a, "cache-type-v")) s.type_v = *v;
  s.swa_full = arg_switch(a, "swa-full");
  s.repack = !arg_switch(a, "no-repack");
  s.kv_unified = arg_switch(a, "kv-unified");
  return s;
}

// llama.cpp loads GGUF files: a .gguf model carries its tensor types and bytes; any other model
// needs --weights gguf:<FILE_TYPE> (the tensors llama-quantize would write for it).
ModelSpec LlamacppEngine::gguf_spec(const PlanInput& in, std::string& precision, std::vector<std::string>& notes,
                                    std::optional<PlannedWeights>& planned) const {
  const bool from_gguf = in.model.source.kind == "gguf";
  if (from_gguf) {
    if (in.weights)
      throw_usage("--weights " + *in.weights + ": the .gguf file fixes every tensor's type; drop --weights");
    precision = "GGUF file types (" + in.model.source.path + ")";
    return in.model;
  }
  if (!in.weights)
    throw_usage("llama.cpp loads GGUF files: give a .gguf --model, or --weights gguf:<FILE_TYPE> (e.g. gguf:Q4_K_M)");
  const WeightScheme scheme = parse_weight_scheme(*in.weights, quant_);
  if (scheme.kind != SchemeKind::GgufFileType)
    throw_usage("--weights " + *in.weights + ": llama.cpp needs a GGUF file type (gguf:Q4_K_M, gguf:Q8_0, ...)");
  const GgufFileType* ft = quant_.schemes().find_gguf_file_type(scheme.gguf_file_type);
  if (!ft) throw_internal("GGUF file type '" + scheme.gguf_file_type + "' parsed but not in the table");
  precision = scheme.name;
  planned = PlannedWeights{scheme.name, "", true};
  notes.push_back("tensor types: llama-quantize's " + ft->name +
                  " mixture (src/llama-quant.cpp) of an F16 conversion; a .gguf --model gives the file's own");
  std::uint64_t mmproj_params = 0;
  for (const auto& t : in.model.tensors)
    if (is_mmproj_role(t.role)) mmproj_params = checked_add(mmproj_params, t.elements(), "vision tower parameters");
  if (mmproj_params > 0)
    notes.push_back("vision / audio tower (" + grouped(mmproj_params) +
                    " parameters) not counted: convert_hf_to_gguf.py writes it to a separate mmproj GGUF, which "
                    "llama-server loads with --mmproj into buffers of its own");
  return lc::gguf_model_spec(in.model, *ft, quant_);
}

MemoryPlan LlamacppEngine::plan(const PlanInput& in) const {
  check_workload(in.workload);
  check_known_args(in.args, options(), "llamacpp");
  MemoryPlan p;
  p.engine = "llamacpp";
  p.engine_version = std::string(version());
  p.engine_profile_note = "llama.cpp " + std::string(version()) + " buffers (data/engines/llamacpp.json)";
  p.gpu_total = in.gpu.total;
  p.compute_precision = "f32 activations";

  const lc::Settings s = settings(in);
  const bool cpu = s.device == lc::Device::Cpu;
  // convert_hf_to_gguf.py has no converter for Llama-3.2-Vision (MllamaForConditionalGeneration,
  // conversion/__init__.py) and llama.cpp no mllama builder (src/models/): there is no file to load.
  if (in.model.arch.architecture == "MllamaForConditionalGeneration")
    throw_usage("--engine llamacpp: " + in.model.id + " (MllamaForConditionalGeneration) has no llama.cpp "
                "conversion or builder (its cross-attention layers); plan it under vllm or hf");
  const ModelSpec model = gguf_spec(in, p.weights_precision, p.notes, p.planned_weights);
  // The compute-graph replay (llamacpp/compute_graph.cpp) walks attention layers with a KV cache,
  // and the hybrids' recurrent and MLP layers over llama_memory_recurrent (Nemotron-H, Granite-4.0-H,
  // Falcon-H1, Jamba, Qwen3.5, Qwen3-Next): other models with recurrent layers (Mamba, RWKV, ...) or layers
  // without attention (DeciLM) are not replayed, so such a model is refused, not guessed; so is an
  // encoder or diffusion GGUF, for which llama.cpp builds no cache and runs a non-causal graph.
  const auto& kinds = model.arch.layer_attention;
  if (!kinds.empty() && std::all_of(kinds.begin(), kinds.end(), [](LayerAttention a) { return a == LayerAttention::None; }))
    throw_usage("--engine llamacpp: " + model.id + " (GGUF architecture '" + model.arch.model_type +
                "') keeps no KV cache in llama.cpp (an encoder or diffusion model: llama_model::create_memory builds "
                "none), and its non-causal compute graph is not modelled");
  if (model.arch.recurrent_in_every_layer && !lc::graph_has_recurrent_layers(model.arch))
    throw_usage("--engine llamacpp: " + model.id +
                " has recurrent (Mamba / linear-attention) state in every layer, whose llama.cpp buffers vramplan "
                "does not model; plan it under vllm or sglang");
  for (const LayerAttention a : model.arch.layer_attention)
    if ((a == LayerAttention::Recurrent || a == LayerAttention::None) && !lc::graph_has_recurrent_layers(model.arch))
      throw_usage("--engine llamacpp: " + model.id + " has " +
                  (a == LayerAttention::Recurrent ? "recurrent (Mamba / linear-attention) layers" : "layers without attention") +
                  ", whose llama.cpp buffers vramplan does not model; plan it under vllm or sglang");
  const lc::Plan lp = lc::plan(model, s, profile_, quant_);

  // Where each buffer lives. CPU run: everything is host memory (the "device" of the plan). CUDA
  // run: the plan counts the CUDA0 buffers; the host's are in engine_view.devices.CPU.
  const std::string device = cpu ? "CPU" : "CUDA0";
  std::uint64_t host_model = 0, device_model = 0;
  nlohmann::json buffers = nlohmann::json::object();
  for (const auto& b : lp.model) {
    buffers[b.name] = mib(b.bytes);
    if (b.on_gpu || cpu) {
      device_model = checked_add(device_model, b.bytes);
      p.weights.push_back({"weights." + b.name, Bytes(b.bytes), b.name + " model buffer " + mib_text(b.bytes)});
    } else {
      host_model = checked_add(host_model, b.bytes);
    }
  }
  const lc::Offload off = lc::offload_split(model.arch.num_layers, s);
  nlohmann::json view = {
      {"commit", profile_.commit},
      {"device", device},
      {"model_buffers_mib", buffers},  // by buffer name, as load_tensors logs them
  };
  if (!cpu) {
    view["offloaded_layers"] = std::to_string(model.arch.num_layers - off.first_gpu_layer + (off.output_on_gpu ? 1 : 0)) +
                               "/" + std::to_string(model.arch.num_layers + 1);
    view["tensor_placement"] = {
        {"token_embd", "host (CPU_Mapped): llama.cpp keeps the input layer on the CPU"},
        {"output", model.arch.tied_embeddings && std::none_of(model.tensors.begin(), model.tensors.end(),
                                                              [](const TensorInfo& t) { return t.role == TensorRole::Output; })
                       ? std::string(off.output_on_gpu ? "CUDA0: tied to token_embd, loaded a second time (TENSOR_DUPLICATED)"
                                                       : "host: tied to token_embd, output layer not offloaded")
                       : std::string(off.output_on_gpu ? "CUDA0 (output layer offloaded: -ngl > n_layer)" : "host")},
        {"layers", "blk." + std::to_string(off.first_gpu_layer) + ".. on CUDA0, the rest on the host"},
    };
  }
  if (!lp.ok) {
    p.fits = false;
    p.refuses_configuration = true;
    p.reason = "llama_init_from_model: " + lp.refusal;
    view["refusal"] = lp.refusal;
    p.engine_view = view;
    return p;
  }

  const auto& c = lp.context;
  const std::uint64_t kv_device = cpu ? lp.kv_host_bytes + lp.kv_gpu_bytes : lp.kv_gpu_bytes;
  std::string kv_explain;
  nlohmann::json kv_view = nlohmann::json::array();
  std::uint64_t per_cell = 0;
  for (const auto& kv : lp.kv) {
    // With -ngl below the layer count the row's size is the offloaded layers' KV (llamacpp/plan.cpp:
    // a layer's KV lives on its device), so the text states that part, and where the rest is.
    const auto on_gpu = static_cast<std::uint64_t>(
        cpu ? kv.layers.size()
            : std::count_if(kv.layers.begin(), kv.layers.end(),
                            [&](int l) { return static_cast<std::uint64_t>(l) >= off.first_gpu_layer; }));
    const std::uint64_t n_layers = kv.layers.size();
    const bool split = n_layers > 0 && on_gpu < n_layers;
    const std::uint64_t k_part = split ? kv.k_bytes / n_layers * on_gpu : kv.k_bytes;
    const std::uint64_t v_part = split ? kv.v_bytes / n_layers * on_gpu : kv.v_bytes;
    kv_explain += (kv_explain.empty() ? "" : "; ") + (kv.role.empty() ? std::string() : kv.role + " ") +
                  (split ? std::to_string(on_gpu) + " of " + std::to_string(n_layers) + " layers on " + device
                         : std::to_string(n_layers) + " layers") +
                  " x " + std::to_string(kv.cells) + " cells x " + std::to_string(kv.streams) + " streams: K " +
                  mib_text(k_part) + " (" + kv.type_k + "), V " + mib_text(v_part) + " (" + kv.type_v + ")" +
                  (split ? "; the other " + std::to_string(n_layers - on_gpu) + " layers' KV (" +
                               mib_text(kv.bytes() - k_part - v_part) + ") in host memory"
                         : std::string());
    kv_view.push_back({{"role", kv.role}, {"cells", kv.cells}, {"streams", kv.streams},
                       {"layers", kv.layers.size()}, {"k_mib", mib(kv.k_bytes)}, {"v_mib", mib(kv.v_bytes)}});
    if (kv.role != "SWA" && kv.cells) per_cell += kv.bytes() / (kv.cells * kv.streams);
  }
  p.kv_cache.push_back({"kv_cache", Bytes(kv_device), kv_explain});
  const std::uint64_t rs_device = cpu ? lp.rs_host_bytes + lp.rs_gpu_bytes : lp.rs_gpu_bytes;
  if (lp.recurrent) {
    const auto& rs = *lp.recurrent;
    p.kv_cache.push_back({"kv_cache.recurrent_state", Bytes(rs_device),
                          "llama_memory_recurrent: " + std::to_string(rs.layers.size()) + " recurrent layers x " +
                              std::to_string(rs.cells) + " cells (max(1, n_seq_max)): R (f32) " +
                              std::to_string(rs.r_values) + " values a cell " + mib_text(rs.r_bytes) + ", S (f32) " +
                              std::to_string(rs.s_values) + " values a cell " + mib_text(rs.s_bytes) +
                              "; a fixed size per sequence, whatever the context"});
  }
  p.kv.bytes_per_token = per_cell;
  p.kv.capacity_tokens = c.n_ctx;
  p.kv_fixed = true;  // -c cells, allocated whatever the other buffers take
  p.kv.max_concurrency = static_cast<double>(c.n_seq_max);
  if (!arg_u64(in.args, "ctx-size") && !in.workload.context)
    p.notes.push_back("n_ctx " + std::to_string(c.n_ctx) +
                      ": without -c llama.cpp uses the model's training context (common/common.h common_params::n_ctx = 0); "
                      "llama-server's --fit on (its default) would lower an unset -c to what the free memory holds (not "
                      "below 4096, fit_params_min_ctx), which is not modelled: give -c to plan another context");
  p.kv.explain = "llama.cpp reserves the whole context up front: n_ctx " + std::to_string(c.n_ctx) + " = " +
                 std::to_string(c.n_streams) + " stream(s) x " + std::to_string(c.n_ctx_seq) + " cells; " +
                 kv_explain;

  p.activation.push_back({"activation.compute_buffer", Bytes(lp.compute.bytes),
                          std::string(cpu ? "CPU" : "CUDA0") + " compute buffer " + mib_text(lp.compute.bytes) +
                              ": " + lp.compute.explain});
  if (cpu) p.overhead.push_back({"overhead.output_buffer", Bytes(lp.output_bytes),
                                 "CPU output buffer (logits of n_seq_max sequences) " + mib_text(lp.output_bytes)});

  view["n_ctx"] = c.n_ctx;
  view["n_ctx_seq"] = c.n_ctx_seq;
  view["n_seq_max"] = c.n_seq_max;
  view["n_batch"] = c.n_batch;
  view["n_ubatch"] = c.n_ubatch;
  view["flash_attn"] = c.flash_attn;
  // ggml-cuda.cu ggml_backend_cuda_graph_compute: one CUDA graph per decode step unless the build
  // predates it (or GGML_CUDA_DISABLE_GRAPHS is set). Read by the performance model's overhead.
  if (!cpu) view["cuda_graphs"] = cuda_graphs_setting(in.args);
  view["kv_caches"] = kv_view;
  // Per device, as llama.cpp logs them: model, KV and compute buffers (+ the host's output buffer).
  nlohmann::json devices = nlohmann::json::object();
  devices[device] = {{"model_buffer_mib", mib(device_model)},
                     {"kv_buffer_mib", mib(kv_device)},
                     {"compute_buffer_mib", mib(lp.compute.bytes)}};
  if (lp.recurrent) devices[device]["rs_buffer_mib"] = mib(rs_device);
  if (cpu) {
    devices[device]["output_buffer_mib"] = mib(lp.output_bytes);
  } else {
    devices["CPU"] = {{"model_buffer_mib", mib(host_model)},
                      {"kv_buffer_mib", mib(lp.kv_host_bytes)},
                      {"output_buffer_mib", mib(lp.output_bytes)},
                      {"compute_buffer_mib", mib(lp.compute.host_bytes)},
                      {"compute_buffer_name", "CUDA_Host"},
                      {"compute_buffer_basis", "estimate: graph inputs + gathered token embeddings"}};
    if (lp.recurrent) devices["CPU"]["rs_buffer_mib"] = mib(lp.rs_host_bytes);
  }
  view["devices"] = devices;
  if (!cpu) {
    p.notes.push_back("host memory (not in the per-GPU total): model " + mib_text(host_model) + ", KV " +
                      mib_text(lp.kv_host_bytes) + (lp.recurrent ? ", recurrent state " + mib_text(lp.rs_host_bytes) : "") +
                      ", output " + mib_text(lp.output_bytes) +
                      ", CUDA_Host compute " + mib_text(lp.compute.host_bytes));
    p.overhead.push_back({"overhead.cuda_context",
                          in.measured_context.value_or(Bytes(profile_.cuda_context_bytes)),
                          in.measured_context ? "CUDA context measured: " + in.measured_context_source
                                              : "CUDA context (not in llama.cpp's buffer log): " +
                                                    profile_.cuda_context_source});
    p.notes.push_back("CUDA compute buffers: the graph replay validated on CPU loads (docs/accuracy-llamacpp.md) with "
                      "CUDA's 128-byte alignment; not yet checked against a CUDA log of this commit");
    if (off.first_gpu_layer > 0)
      p.notes.push_back("partial offload: the CPU backend's own compute buffer for the host layers is not modelled");
  }
  p.notes.push_back("the flags are planned as given, as with -fit off: llama.cpp's --fit may lower -c / -ngl to fit the device");
  p.engine_view = view;

  if (cpu && in.gpu.total.count() == 0) {
    p.notes.push_back("CPU run: give --gpu-memory <host RAM> to check the fit");
  } else if (p.total_bytes() > in.gpu.total) {
    p.fits = false;
    p.reason = std::string(cpu ? "host" : "CUDA0") + " buffers need " + format_gib(p.total_bytes()) + " of " +
               format_gib(in.gpu.total) + " (llama.cpp would fail to allocate)";
  }
  return p;
}

}  // namespace

std::unique_ptr<Engine> make_llamacpp_engine(const std::filesystem::path& data_dir, std::string_view version) {
  lc::LlamacppProfile profile = lc::load_profile(data_dir / "engines" / "llamacpp.json");
  if (!version.empty() && !profile.commit.starts_with(version))
    throw_unknown("unknown llamacpp version '" + std::string(version) + "' (known: " + profile.commit.substr(0, 8) + ")");
  QuantCatalog quant = QuantCatalog::load(data_dir / "quant_formats.json", data_dir / "quant_schemes.json");
  return std::make_unique<LlamacppEngine>(std::move(profile), std::move(quant));
}

}  // namespace vramplan::memory
