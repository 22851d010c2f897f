// vramplan/memory/engine.hpp — the inference-engine interface and the registry of profiles.
//
// Ramulator-style: one abstract interface, one implementation per engine (one .cpp each, under
// planner/src/memory/<engine>/ or planner/src/memory/<engine>_engine.cpp), chosen by name from ONE
// explicit table, engine_registry() in planner/src/memory/engine_registry.cpp. Per-version
// parameters (defaults, overheads, fitted coefficients) live in data/engines/<engine>.json, each
// with its source; a version profile is picked there, never by an if-chain in code.
//
// Adding an engine: write the implementation file, add one line to engine_registry(), add
// data/engines/<name>.json (docs/engines.md).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/core/bytes.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/memory/component.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan {
class QuantCatalog;
}

namespace vramplan::memory {

//! The GPU as the engine sees it.
struct GpuTarget {
  std::string id;             //!< catalogue id ("h100-sxm-80gb") or "custom:46068MiB"
  std::string name;           //!< display name
  Bytes total;                //!< runtime-reported total per GPU (cudaMemGetInfo), e.g. 79.19 GiB
  std::uint64_t count = 1;    //!< GPUs available / used
  std::string compute_capability;  //!< "9.0"; "" when unknown
  std::string vendor;              //!< "nvidia", "amd"; "" when unknown (a custom size)
  //! GPUs one host holds (data/gpus.json node_gpus); nullopt when unknown. A deployment beyond
  //! it is launched node by node (plan/launch_command.cpp).
  std::optional<std::uint64_t> node_gpus;

  //! compute_capability as numbers; nullopt when unknown or not "major[.minor]".
  std::optional<ComputeCapability> capability() const;
};

//! The GpuTarget an engine sees for a catalogue entry (one GPU; callers set count).
GpuTarget gpu_target_of(const GpuSpec& gpu);

//! What the user wants to serve (engine flags that mean the same thing take precedence).
struct Workload {
  std::optional<std::uint64_t> batch;    //!< concurrent sequences (--batch)
  std::optional<std::uint64_t> context;  //!< tokens per sequence (--context)
};

//! Engine flags as typed by the user, keyed by the canonical long name without dashes
//! ("gpu-memory-utilization" -> "0.9"; switches map to "true"). Each engine declares the names it
//! accepts (Engine::options) and parses the values itself with the helpers below, so an error
//! names the flag.
using EngineArgs = std::map<std::string, std::string>;

//! The form an option's value takes. check_known_args refuses a value of another form even where
//! the plan never reads it, as the engine's own argument parser would (vLLM's `--max-loras abc`
//! is an argparse error whether or not LoRA is enabled): a typo never passes silently.
enum class OptionValue {
  text,       //!< checked where it is used (a dtype, a policy name, JSON)
  whole,      //!< a non-negative integer (arg_u64)
  number,     //!< a finite decimal number (arg_double); ranges are checked where it is used
  bandwidth,  //!< GB/s: "60", "60GB/s" (parse_gbps)
};

struct EngineOption {
  std::string name;           //!< long name without dashes ("max-model-len")
  std::string help;
  bool is_switch = false;     //!< takes no value
  std::vector<std::string> aliases;  //!< other spellings accepted on the command line ("tp")
  OptionValue value = OptionValue::text;  //!< ignored for a switch
};

//! Everything one plan needs. References stay owned by the caller for the call's duration.
struct PlanInput {
  const ModelSpec& model;
  const QuantCatalog& quant;
  GpuTarget gpu;
  Workload workload;
  EngineArgs args;
  //! --weights W: the user's weight format ("bf16", "fp8-e4m3", "Q4_K_M", ...); nullopt = the
  //! checkpoint's / engine's choice.
  std::optional<std::string> weights;
  //! A calibration file's measured CUDA-context overhead (calib/calibration.hpp); when set it
  //! replaces the engine data's documented default (sglang, trtllm, hf).
  std::optional<Bytes> measured_context = std::nullopt;
  std::string measured_context_source = {};  //!< the calibration file
  //! A calibration file's figures of this very deployment (calib::DeploymentFigures, written by
  //! `vramplan reconcile --update-calibration`): what the engine's log stated, used in place of the
  //! profile's modelled figures (vLLM: non-torch, activation peak, CUDA graphs; SGLang: free memory
  //! before loading, CUDA graphs; TensorRT-LLM: free memory for the KV cache, execution context,
  //! runtime and decoder buffers).
  struct Deployment {
    std::optional<Bytes> non_torch, activation_peak, cuda_graphs;
    std::optional<Bytes> free_before_load;  //!< SGLang
    std::optional<Bytes> free_for_kv, execution_context, runtime_buffers, decoder_buffers;  //!< TensorRT-LLM
    std::string source;  //!< "calibration FILE (x.log lines ...)"
  };
  std::optional<Deployment> deployment = std::nullopt;
};

//! KV-cache figures of a plan (per GPU).
struct KvFigures {
  std::uint64_t bytes_per_token = 0;            //!< per GPU (after TP/PP sharding)
  std::optional<std::uint64_t> capacity_tokens; //!< as the engine prints it; nullopt = unknown
  std::optional<double> max_concurrency;        //!< sequences of the planned length that fit
  std::string explain;                          //!< bytes/token derivation
  //! Recurrent (Mamba / linear-attention) state one sequence holds on this GPU in the engine's
  //! state dtypes, over its recurrent layers; 0 when the model has none. The performance model
  //! reads and writes it once per decode token (perf::ShapeOptions::state_bytes_per_seq_per_gpu).
  std::uint64_t state_bytes_per_sequence = 0;
};

//! The result: per GPU (the limiting rank / stage), four categories of named components.
struct MemoryPlan {
  std::string engine;          //!< "vllm"
  std::string engine_version;  //!< version profile used ("0.19")
  std::string engine_profile_note;  //!< "vLLM V1 0.19+ profile (assumed: no version given)"
  std::uint64_t gpu_count = 1;
  Bytes gpu_total;             //!< capacity per GPU (runtime-reported)

  std::vector<Component> weights;     //!< per GPU, by part (layers, embeddings, lm_head, rope)
  std::vector<Component> kv_cache;    //!< per GPU
  std::vector<Component> activation;  //!< per GPU transient peak
  std::vector<Component> overhead;    //!< per GPU (non-torch, CUDA graphs, context, ...)

  KvFigures kv;
  //! The KV allocation is fixed by a flag (llama.cpp -c), not sized from what a budget leaves
  //! (vLLM, SGLang, TensorRT-LLM, HF's free memory): an error in another component then adds to
  //! what the engine holds instead of shrinking its pool (plan/fit.hpp).
  bool kv_fixed = false;
  bool fits = true;
  std::string reason;          //!< when !fits: what breaks, in the engine's words
  //! The engine refuses the configuration itself, whatever the memory (llama.cpp's n_ctx_seq == 0,
  //! a quantized V cache without flash attention): no layout or card would start it.
  bool refuses_configuration = false;
  std::string weights_precision;
  std::string compute_precision;
  nlohmann::json engine_view = nlohmann::json::object();  //!< figures in the engine's own words
  std::vector<std::string> notes;     //!< assumptions, exclusions, uncertainty
  std::optional<PlannedWeights> planned_weights{};  //!< --weights in place of the checkpoint's format
  //! Flags taken without a modelled effect (a dense model's --enable-expert-parallel, TensorRT-LLM's
  //! STATIC_BATCH policy): also in `notes`; check / explain show them as warnings.
  std::vector<std::string> flag_warnings{};

  Bytes weights_bytes() const { return sum_bytes(weights); }
  Bytes kv_cache_bytes() const { return sum_bytes(kv_cache); }
  Bytes activation_bytes() const { return sum_bytes(activation); }
  Bytes overhead_bytes() const { return sum_bytes(overhead); }
  Bytes total_bytes() const;        //!< sum of the four categories
  std::int64_t headroom_bytes() const;  //!< gpu_total - total (negative when over)
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string_view name() const = 0;     //!< "vllm"
  virtual std::string_view version() const = 0;  //!< version profile ("0.19")
  //! The release asked for ("0.5.9"), or the default profile's name when none was: what the
  //! compatibility rules compare, where the profile may cover many releases.
  virtual std::string_view release() const { return version(); }
  virtual std::vector<EngineOption> options() const = 0;
  //! Plans memory. Invalid inputs throw Error(Usage); a configuration the engine would refuse is
  //! a plan with fits = false and the engine's reason, never an exception.
  virtual MemoryPlan plan(const PlanInput& input) const = 0;
  //! The batch and length the engine plans when the command gives none, for an engine without a
  //! length flag or a pooling model (HF transformers: generate() at its default length,
  //! sentence-transformers encode(batch_size=32) at min(longest input, 512); TEI: its max input
  //! length; vLLM: an encoder's longest input). One rule for every command: plan::PlanSession
  //! asks it (planned_context, default_batch). Empty fields: the command's own default.
  virtual Workload default_workload(const ModelSpec& /*model*/, const EngineArgs& /*args*/) const { return {}; }
};

//! One registry row: an engine family and how to make it for a requested version.
struct EngineEntry {
  std::string_view name;     //!< "vllm"
  std::string_view summary;  //!< one line for --help / docs
  //! Builds the engine for `version` ("" = the default/newest profile) from the engine's data
  //! file data_dir/engines/<name>.json. Throws Error(UnknownName) for an unknown version.
  std::unique_ptr<Engine> (*make)(const std::filesystem::path& data_dir, std::string_view version);
};

//! Every engine profile, in one table (planner/src/memory/engine_registry.cpp).
const std::vector<EngineEntry>& engine_registry();

//! "vllm", "vllm@0.17", "vllm@0.17.1", "sglang", "llamacpp", ... Throws
//! Error(UnknownName, "unknown engine 'x' (known: hf, llamacpp, sglang, tei, trtllm, vllm)").
std::unique_ptr<Engine> make_engine(std::string_view spec, const std::filesystem::path& data_dir);

// ---- flag parsing helpers (errors name the flag: "--max-model-len: expected ...") ----------------
std::optional<double> arg_double(const EngineArgs& args, const std::string& name);
//! The largest whole-number flag value arg_u64 takes: 2^53.
inline constexpr std::uint64_t kMaxFlagInteger = 1ull << 53;
std::optional<std::uint64_t> arg_u64(const EngineArgs& args, const std::string& name);
std::optional<std::string> arg_string(const EngineArgs& args, const std::string& name);
bool arg_switch(const EngineArgs& args, const std::string& name);
//! A feature with a --NAME / --no-NAME pair of switches (vLLM's argparse BooleanOptionalAction):
//! true for --NAME, false for --no-NAME, `fallback` for neither; both is Error(Usage).
bool arg_on_off(const EngineArgs& args, const std::string& name, bool fallback);
//! The option spelled `alias` ("tp", "pp") by its name or one of its aliases; "" when none is.
std::string flag_with_alias(const std::vector<EngineOption>& options, std::string_view alias);
//! The engine's context-length flag (max-model-len, context-length, max-seq-len or ctx-size); "" = none.
std::string context_flag_of(const std::vector<EngineOption>& options);
//! Throws Error(Usage) for a key of `args` that `options` does not declare, or whose value is not of
//! the option's OptionValue form.
void check_known_args(const EngineArgs& args, const std::vector<EngineOption>& options,
                      std::string_view engine);

}  // namespace vramplan::memory
