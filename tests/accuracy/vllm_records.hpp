// vllm_records.hpp — the vLLM start-up records (tests/accuracy/data) turned into the same
// PlanRequest a user's `vramplan plan` command builds, plus the figures to compare.
#pragma once

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/memory/engine_data.hpp"
#include "vramplan/memory/plan_request.hpp"
#include "vramplan/memory/vllm_activation.hpp"
#include "vramplan/model/load.hpp"

namespace vramplan::test {

inline std::filesystem::path accuracy_data() { return source_dir() / "tests" / "accuracy" / "data"; }

struct VllmCase {
  nlohmann::json record;
  std::string id;
  std::string config;  //!< path of the config.json copy
  std::optional<std::string> dtype;
  std::string note;
};

//! A record set's cases and the records left out, with the reason the map file gives.
template <class Case>
struct MappedRecords {
  std::vector<Case> cases;
  std::vector<std::pair<std::string, std::string>> excluded;  //!< id, reason
};

//! The records of `logs` (JSON lines under tests/accuracy/data), each with its entry in the map
//! file `models`: {"models": {id: mapping}, "excluded": {id: reason}}. Every record is one or the
//! other; `make(record, id, mapping)` turns a mapped one into its case.
template <class Case, class Make>
MappedRecords<Case> load_mapped_records(const char* logs, const char* models, Make make) {
  const auto map = read_json_file(accuracy_data() / models);
  MappedRecords<Case> out;
  std::ifstream in(accuracy_data() / logs);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto rec = nlohmann::json::parse(line);
    const std::string id = rec.at("id");
    if (map.at("excluded").contains(id)) {
      out.excluded.emplace_back(id, map.at("excluded").at(id).get<std::string>());
      continue;
    }
    out.cases.push_back(make(std::move(rec), id, map.at("models").at(id)));
  }
  return out;
}

//! The config.json copy a record's mapping names.
inline std::string mapped_config(const nlohmann::json& mapping) {
  return (accuracy_data() / "models" / mapping.at("config").get<std::string>()).string();
}

using VllmRecordSet = MappedRecords<VllmCase>;

//! The shared records (vllm_startup_logs.jsonl, a verbatim copy) or, with the extra file names,
//! the records vramplan transcribed beyond them (vllm_extra_logs.jsonl); the map file names each
//! record's config (and dtype) or its exclusion reason.
inline VllmRecordSet load_vllm_records(const char* logs = "vllm_startup_logs.jsonl",
                                       const char* models = "vllm_record_models.json") {
  return load_mapped_records<VllmCase>(logs, models, [](nlohmann::json rec, const std::string& id, const nlohmann::json& m) {
    VllmCase c{std::move(rec), id, mapped_config(m), std::nullopt, m.value("note", std::string())};
    if (m.contains("dtype")) c.dtype = m.at("dtype").get<std::string>();
    return c;
  });
}

inline VllmRecordSet load_vllm_extra_records() { return load_vllm_records("vllm_extra_logs.jsonl", "vllm_extra_models.json"); }

inline std::string num(const nlohmann::json& v) {
  return v.is_number_integer() ? std::to_string(v.get<long long>()) : nlohmann::json(v.get<double>()).dump();
}

//! What every vLLM start-up record states as `vramplan plan` options: the printed total, the
//! version, the scheduler and parallel sizes the run set, --enforce-eager.
inline void apply_vllm_record_flags(const nlohmann::json& r, memory::PlanRequest& q) {
  if (!r.at("total_gpu_memory_gib").is_null())
    q.gpu_memory = parse_bytes(num(r.at("total_gpu_memory_gib")) + "GiB");
  q.engine = "vllm@" + r.at("vllm_version").get<std::string>();
  auto flag = [&](const char* field, const char* name) {
    if (!r.at(field).is_null()) q.args[name] = num(r.at(field));
  };
  flag("gpu_memory_utilization", "gpu-memory-utilization");
  flag("max_model_len", "max-model-len");
  flag("max_num_seqs", "max-num-seqs");
  flag("max_num_batched_tokens", "max-num-batched-tokens");
  flag("block_size", "block-size");
  flag("tp", "tensor-parallel-size");
  flag("pp", "pipeline-parallel-size");
  if (r.at("enforce_eager") == true) q.args["enforce-eager"] = "true";
}

//! The request a user would type for this record: the same engine version, GPU and flags.
inline memory::PlanRequest vllm_request(const VllmCase& c) {
  const auto& r = c.record;
  memory::PlanRequest q;
  q.model = c.config;
  q.gpu = "h100-sxm-80";  // every mapped record ran on an H100 80GB
  apply_vllm_record_flags(r, q);
  if (r.at("kv_cache_dtype").is_string()) q.args["kv-cache-dtype"] = r.at("kv_cache_dtype").get<std::string>();
  if (r.at("quantization") == "fp8") q.args["quantization"] = "fp8";
  if (c.dtype) q.args["dtype"] = *c.dtype;
  return q;
}

//! Activation features of the stage whose figures the record's log line shows (the first).
inline memory::VllmActivationPoint activation_point(const VllmCase& c, const DataRoot& root) {
  const auto& r = c.record;
  const ModelSpec m = load_model(c.config, root);
  memory::VllmStageShape s;
  s.max_num_batched_tokens = r.at("max_num_batched_tokens").is_null() ? 8192 : r.at("max_num_batched_tokens").get<std::uint64_t>();
  s.max_num_seqs = r.at("max_num_seqs").is_null() ? 1024 : r.at("max_num_seqs").get<std::uint64_t>();
  s.tp = r.at("tp").is_null() ? 1 : r.at("tp").get<std::uint64_t>();
  s.compute_bytes = c.dtype == std::optional<std::string>("float32") ? 4 : 2;
  s.first_stage = true;
  s.last_stage = r.at("pp").is_null() || r.at("pp").get<int>() == 1;
  return {c.id, memory::vllm_activation_features(m.arch, s), r.at("activation_peak_gib").get<double>() * static_cast<double>(kGiB)};
}

//! Multimodal checkpoints: vLLM's profile run also runs the vision encoder on dummy images (a derived
//! term, memory/vllm_encoder_profile.hpp), so they stay out of the fit of the text-only law.
inline bool has_vision_tower(const VllmCase& c, const DataRoot& root) {
  const ModelSpec m = load_model(c.config, root);
  return std::any_of(m.tensors.begin(), m.tensors.end(), [](const TensorInfo& t) { return t.role == TensorRole::Vision; });
}

inline bool in_family(const VllmCase& c, const char* min, const char* max) {
  const std::string v = c.record.at("vllm_version");
  return memory::compare_versions(v, min) >= 0 && memory::compare_versions(v, max) <= 0;
}

inline double pct(double predicted, double reported) { return 100.0 * (predicted - reported) / reported; }

inline double median_abs(std::vector<double> v) {
  for (auto& x : v) x = std::fabs(x);
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace vramplan::test

namespace vramplan::test {

//! One record's predicted vs reported figures (GiB as vLLM prints them; nullopt = not reported).
struct VllmComparison {
  std::string id, version, model, note;
  //! A format a kernel backend repacks or pads (MXFP4, Marlin): the issue's 1 % weights target;
  //! every other dtype (bf16, fp16, fp32, fp8, int8) has 0.5 %.
  bool repacked = false;
  double weights_pred = 0, kv_pred = 0, act_pred = 0, nt_pred = 0, graph_pred = 0;
  std::optional<double> weights_rep, kv_rep, act_rep, nt_rep, graph_rep;
  bool mla = false;  //!< kv_lora_rank > 0
  std::uint64_t tokens_pred = 0, blocks_pred = 0, block_bytes = 0, block_size = 0, kv_groups = 0;
  std::optional<std::uint64_t> tokens_rep, blocks_rep;
  double conc_pred = 0;
  std::optional<double> conc_rep;
  bool fits = true;
};

inline std::optional<double> opt_d(const nlohmann::json& v) { return v.is_null() ? std::nullopt : std::optional(v.get<double>()); }
inline std::optional<std::uint64_t> opt_u(const nlohmann::json& v) {
  return v.is_null() ? std::nullopt : std::optional(v.get<std::uint64_t>());
}

inline VllmComparison compare_vllm(const VllmCase& c) {
  const auto outcome = memory::run_plan(vllm_request(c), DataRoot{source_dir()});
  const auto& v = outcome.plan.engine_view;
  const auto& r = c.record;
  VllmComparison x;
  x.id = c.id;
  x.version = r.at("vllm_version");
  x.model = r.at("model");
  x.note = c.note;
  const std::string precision = to_lower(outcome.plan.weights_precision);
  x.repacked = precision.find("mxfp4") != std::string::npos || precision.find("marlin") != std::string::npos;
  x.mla = outcome.model.arch.kv_lora_rank > 0;
  x.weights_pred = v.at("weights_gib");
  x.kv_pred = v.at("kv_cache_gib");
  x.act_pred = v.at("activation_peak_gib");
  x.nt_pred = v.at("non_torch_gib");
  x.graph_pred = v.at("cuda_graph_gib");
  x.tokens_pred = v.at("kv_cache_tokens");
  x.blocks_pred = v.at("gpu_blocks");
  x.block_bytes = v.at("kv_block_bytes");
  x.block_size = v.at("block_size");
  x.kv_groups = v.at("kv_cache_groups");
  x.conc_pred = v.at("max_concurrency");
  x.fits = outcome.plan.fits;
  x.weights_rep = opt_d(r.at("weights_gib"));
  x.kv_rep = opt_d(r.at("kv_cache_gib"));
  x.act_rep = opt_d(r.at("activation_peak_gib"));
  x.nt_rep = opt_d(r.at("non_torch_gib"));
  // 0.11 records carry the net change during capture (negative), not the pool: not comparable.
  if (x.version.rfind("0.19", 0) == 0) x.graph_rep = opt_d(r.at("cuda_graph_gib"));
  x.tokens_rep = opt_u(r.at("kv_cache_tokens"));
  x.blocks_rep = opt_u(r.at("gpu_blocks"));
  x.conc_rep = opt_d(r.at("max_concurrency"));
  return x;
}

}  // namespace vramplan::test
