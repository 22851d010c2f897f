// The upper-bound margins of data/accuracy_bounds.json recomputed from the accuracy records: each
// margin is the largest under-prediction the records show for that engine and component (GiB per
// GPU), rounded up to the next 0.01 GiB — no more (a padded margin turns fits into MARGINAL for
// no measured reason), no less (a record would exceed its own bound).
//
//   vLLM   weights / activation / non-torch / CUDA graphs: logged - predicted, over the shared and
//          extra start-up records (vllm_records.hpp; CUDA graphs: 0.19 records, which log the pool)
//   SGLang KV pool: predicted - logged tokens x KV bytes per token (the pool is free-before-load x
//          mem_fraction_static - weights, so what the profile misses outside the weights shows
//          up there); carried by overhead.context
//   TRT-LLM KV pool, the same way, over the records whose GPU total is known (a catalogue card
//          or the logged total); carried by overhead.runtime
//   HF     generate() peak: measured torch.cuda.max_memory_allocated - planned weights + KV +
//          activation, over the records with a known prompt length (hf_records.hpp). Weights
//          and KV are exact sums over the tensors, so what is missed is run-time buffers (the
//          bitsandbytes kernels' dequantized weights, cuBLAS workspaces); carried by activation
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "hf_records.hpp"
#include "sglang_records.hpp"
#include "support/sanitizer.hpp"
#include "trtllm_records.hpp"
#include "vllm_records.hpp"
#include "vramplan/plan/bounds.hpp"

namespace vramplan::test {
namespace {

struct Worst {
  double gib = 0;  //!< largest under-prediction (> 0), GiB per GPU
  std::string record;
  void see(double under, const std::string& id) {
    if (under > gib) {
      gib = under;
      record = id;
    }
  }
};

// The margin the data file must hold: the observed maximum rounded up to 0.01 GiB.
double rounded_up(double gib) { return std::ceil(gib * 100.0 - 1e-9) / 100.0; }

std::map<std::string, Worst> observed() {
  std::map<std::string, Worst> w;
  for (const auto* set : {"shared", "extra"}) {
    const VllmRecordSet records = std::string(set) == "shared" ? load_vllm_records() : load_vllm_extra_records();
    for (const auto& c : records.cases) {
      const VllmComparison x = compare_vllm(c);
      if (x.weights_rep) w["vllm weights"].see(*x.weights_rep - x.weights_pred, x.id);
      if (x.act_rep) w["vllm activation"].see(*x.act_rep - x.act_pred, x.id);
      if (x.nt_rep) w["vllm overhead.non_torch"].see(*x.nt_rep - x.nt_pred, x.id);
      if (x.graph_rep) w["vllm overhead.cuda_graphs"].see(*x.graph_rep - x.graph_pred, x.id);
    }
  }
  for (const auto& x : compare_sglang_all())
    w["sglang overhead.context"].see(
        (static_cast<double>(x.tokens_pred) - static_cast<double>(x.tokens_rep)) * static_cast<double>(x.cell) / static_cast<double>(kGiB),
        x.id);
  for (const auto& c : load_trtllm_records()) {
    const bool total_known = c.record.at("gpu").get<std::string>().find(' ') == std::string::npos;
    const TrtllmComparison x = compare_trtllm(c);
    if (!total_known || !x.tokens_rep) continue;
    w["trtllm overhead.runtime"].see((static_cast<double>(x.tokens_pred) - static_cast<double>(*x.tokens_rep)) *
                                         static_cast<double>(x.bytes_per_token) / static_cast<double>(kGiB),
                                     x.id);
  }
  for (const auto& r : load_hf_records())
    if (plannable(r)) {
      const HfComparison x = compare_hf(r);
      w["hf activation"].see((x.measured - x.predicted) / static_cast<double>(kGiB), x.id);
    }
  return w;
}

TEST(AccuracyBounds, EveryMarginIsTheLargestObservedError) {
  VRAMPLAN_SKIP_REFIT_UNDER_ASAN();  // the margins are re-derived from every record
  const auto bounds = plan::ErrorBounds::load(source_dir() / "data" / "accuracy_bounds.json");
  const auto worst = observed();
  for (const auto& [key, w] : worst) {
    const std::string engine = key.substr(0, key.find(' ')), prefix = key.substr(key.find(' ') + 1);
    std::printf("%-28s largest under-prediction %.3f GiB (%s)\n", key.c_str(), w.gib, w.record.c_str());
    const plan::ErrorBounds engine_bounds = bounds.for_engine(engine);
    const plan::ComponentMargin* m = engine_bounds.margin_for(prefix);
    ASSERT_NE(m, nullptr) << key;
    EXPECT_EQ(m->engine, engine) << key;
    EXPECT_EQ(m->relative, 0.0) << key;
    EXPECT_NEAR(static_cast<double>(m->absolute) / static_cast<double>(kGiB), rounded_up(w.gib), 1e-9) << key << ": observed " << w.gib << " GiB on " << w.record;
    EXPECT_NE(m->source.find(w.record), std::string::npos) << key << ": the source must name " << w.record;
  }
  // Every margin in the file is one of these (none kept from a test target).
  for (const auto& m : bounds.margins()) EXPECT_TRUE(worst.count(m.engine + " " + m.prefix)) << m.engine << " " << m.prefix;
}

}  // namespace
}  // namespace vramplan::test
