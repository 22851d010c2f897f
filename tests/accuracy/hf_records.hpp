// hf_records.hpp — published peak-memory measurements of HF transformers generate()
// (tests/accuracy/data/hf_measurements.jsonl) turned into the request `vramplan plan --engine hf@4.30`
// builds, planned through memory::run_plan, and set against torch.cuda.max_memory_allocated.
#pragma once

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "accuracy/vllm_records.hpp"  // accuracy_data(), pct(), median_abs(), num()
#include "vramplan/memory/plan_request.hpp"

namespace vramplan::test {

//! The transformers profile the records' versions fall in (their version_basis: 4.33-4.4x, before
//! num_logits_to_keep reached generate()).
inline constexpr const char* kHfRecordEngine = "hf@4.30";

struct HfRecord {
  nlohmann::json j;
  std::string id;
  double measured_bytes = 0;  //!< max_memory_allocated, in bytes (GiB x 2^30 or MB x 10^6)
  //! Why the record cannot be planned or cannot meet the target (shown next to it in the doc).
  std::string exception;
};

inline std::vector<HfRecord> load_hf_records() {
  std::vector<HfRecord> out;
  std::ifstream in(accuracy_data() / "hf_measurements.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    HfRecord r{nlohmann::json::parse(line), "", 0, ""};
    r.id = r.j.at("id");
    r.measured_bytes = r.j.contains("peak_gib") ? r.j.at("peak_gib").get<double>() * static_cast<double>(kGiB)
                                                : r.j.at("peak_mb").get<double>() * 1e6;
    if (r.j.at("prompt_tokens").is_null())
      r.exception = "the prompt's token count is not printed (10 x the system prompt + the question), so the "
                    "prefill and logits terms cannot be set";
    out.push_back(std::move(r));
  }
  return out;
}

inline bool plannable(const HfRecord& r) { return !r.j.at("prompt_tokens").is_null(); }

//! The command a user would type for the record.
inline memory::PlanRequest hf_request(const HfRecord& r) {
  memory::PlanRequest q;
  q.model = (accuracy_data() / "models" / r.j.at("config").get<std::string>()).string();
  q.gpu = r.j.at("gpu");
  q.engine = kHfRecordEngine;
  q.args["dtype"] = r.j.at("dtype");
  q.args["attn-implementation"] = r.j.at("attn");
  q.args["max-new-tokens"] = num(r.j.at("max_new_tokens"));
  if (!r.j.at("weights").is_null()) q.weights = r.j.at("weights").get<std::string>();
  q.workload.batch = r.j.at("batch").get<std::uint64_t>();
  q.workload.context = r.j.at("prompt_tokens").get<std::uint64_t>() + r.j.at("max_new_tokens").get<std::uint64_t>();
  return q;
}

struct HfComparison {
  std::string id, exception, peak;
  double predicted = 0, measured = 0;  //!< bytes
  double weights = 0, kv = 0, activation = 0;
  double err() const { return pct(predicted, measured); }
};

//! max_memory_allocated counts PyTorch tensors only: the plan less its CUDA context.
inline HfComparison compare_hf(const HfRecord& r) {
  const auto out = memory::run_plan(hf_request(r), DataRoot{source_dir()});
  const auto& p = out.plan;
  HfComparison x;
  x.id = r.id;
  x.exception = r.exception;
  x.measured = r.measured_bytes;
  x.weights = static_cast<double>(p.weights_bytes().count());
  x.kv = static_cast<double>(p.kv_cache_bytes().count());
  x.activation = static_cast<double>(p.activation_bytes().count());
  x.predicted = x.weights + x.kv + x.activation;
  x.peak = p.engine_view.at("activation_peak");
  return x;
}

}  // namespace vramplan::test
