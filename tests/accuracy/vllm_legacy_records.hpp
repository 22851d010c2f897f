// vllm_legacy_records.hpp — the vLLM 0.6 - 0.10 start-up records (data/vllm_legacy_logs.jsonl,
// V0 engine and the first V1 releases) turned into the PlanRequest `vramplan plan` builds for
// them, and the figures to compare. Configs, GPUs and exclusions: data/vllm_legacy_models.json.
//
// KV capacity is compared on what the log fixes best: the block count when printed, else the
// token count (blocks x block size; for V0 TP the minimum over workers), else the pool in GiB.
#pragma once

#include <cmath>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "accuracy/vllm_records.hpp"
#include "vramplan/memory/engine_data.hpp"

namespace vramplan::test {

struct VllmLegacyCase {
  nlohmann::json record;
  std::string id, config, gpu, note;
};

using VllmLegacySet = MappedRecords<VllmLegacyCase>;

inline VllmLegacySet load_vllm_legacy_records() {
  return load_mapped_records<VllmLegacyCase>(
      "vllm_legacy_logs.jsonl", "vllm_legacy_models.json",
      [](nlohmann::json rec, const std::string& id, const nlohmann::json& m) {
        return VllmLegacyCase{std::move(rec), id, mapped_config(m), m.at("gpu").get<std::string>(),
                              m.value("note", std::string())};
      });
}

//! The request a user would type for the record: its version, catalogue GPU (with the printed
//! total when the log has one) and the flags the log shows.
inline memory::PlanRequest vllm_legacy_request(const VllmLegacyCase& c) {
  const auto& r = c.record;
  memory::PlanRequest q;
  q.model = c.config;
  q.gpu = c.gpu;
  apply_vllm_record_flags(r, q);
  return q;
}

//! The activation peak the log gives: printed, or (V0 0.6.4) torch's peak minus the weights.
inline std::optional<double> legacy_activation_gib(const nlohmann::json& r) {
  if (!r.at("activation_peak_gib").is_null()) return r.at("activation_peak_gib").get<double>();
  if (!r.at("peak_torch_gib").is_null() && !r.at("weights_gib").is_null())
    return r.at("peak_torch_gib").get<double>() - r.at("weights_gib").get<double>();
  return std::nullopt;
}

struct VllmLegacyComparison {
  std::string id, version, profile, basis;  //!< basis: "blocks", "tokens" or "GiB"
  double capacity_pred = 0, capacity_rep = 0;
  double kv_pred_gib = 0;
  std::optional<double> kv_rep_gib, weights_rep, act_rep, nt_rep;
  double weights_pred = 0, act_pred = 0, nt_pred = 0;
  std::uint64_t blocks_pred = 0, block_bytes = 0, max_num_seqs = 0, max_num_batched_tokens = 0;
  bool fits = true, refused = false;
  std::string reason;
  double error_pct() const { return pct(capacity_pred, capacity_rep); }
};

//! `engine` replaces the record's "vllm@<version>" (e.g. "vllm": the default profile, to show what
//! an unversioned plan of the same log gives).
inline VllmLegacyComparison compare_vllm_legacy(const VllmLegacyCase& c, const std::string& engine = "") {
  auto request = vllm_legacy_request(c);
  if (!engine.empty()) request.engine = engine;
  const auto outcome = memory::run_plan(request, DataRoot{source_dir()});
  const auto& v = outcome.plan.engine_view;
  const auto& r = c.record;
  VllmLegacyComparison x;
  x.id = c.id;
  x.version = r.at("vllm_version");
  x.profile = outcome.plan.engine_version;
  x.kv_pred_gib = v.at("kv_cache_gib");
  x.blocks_pred = v.at("gpu_blocks");
  x.block_bytes = v.at("kv_block_bytes");
  x.max_num_seqs = v.at("max_num_seqs");
  x.max_num_batched_tokens = v.at("max_num_batched_tokens");
  x.weights_pred = v.at("weights_gib");
  x.act_pred = v.at("activation_peak_gib");
  x.nt_pred = v.at("non_torch_gib");
  x.fits = outcome.plan.fits;
  x.reason = outcome.plan.reason;
  x.refused = r.at("refused") == true;
  x.kv_rep_gib = opt_d(r.at("kv_cache_gib"));
  x.weights_rep = opt_d(r.at("weights_gib"));
  x.act_rep = legacy_activation_gib(r);
  x.nt_rep = opt_d(r.at("non_torch_gib"));
  if (!r.at("gpu_blocks").is_null()) {
    x.basis = "blocks";
    x.capacity_rep = r.at("gpu_blocks").get<double>();
    x.capacity_pred = static_cast<double>(x.blocks_pred);
  } else if (!r.at("kv_cache_tokens").is_null()) {
    x.basis = "tokens";
    x.capacity_rep = r.at("kv_cache_tokens").get<double>();
    x.capacity_pred = v.at("kv_cache_tokens").get<double>();
  } else {
    x.basis = "GiB";
    x.capacity_rep = *x.kv_rep_gib;
    x.capacity_pred = x.kv_pred_gib;
  }
  return x;
}

inline std::vector<VllmLegacyComparison> compare_all_legacy(const VllmLegacySet& set) {
  std::vector<VllmLegacyComparison> v;
  for (const auto& c : set.cases) v.push_back(compare_vllm_legacy(c));
  return v;
}

//! V0 with TP > 1: the quoted figures are a non-driver worker's (no sampler; see the record notes).
inline bool quotes_non_driver_rank(const VllmLegacyCase& c) {
  return c.record.at("engine") == "V0" && c.record.at("tp").get<int>() > 1;
}

}  // namespace vramplan::test
