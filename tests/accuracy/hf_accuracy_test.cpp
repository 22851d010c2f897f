// HF transformers accuracy: every record of tests/accuracy/data/hf_measurements.jsonl with a known
// prompt length planned through run_plan() (the code path of `vramplan plan --engine hf@4.30`) and
// compared with the published torch.cuda.max_memory_allocated peak of generate(). Targets (issue 8):
// bf16/fp16 records with SDPA within 2.5 % each, median |error| <= 1 %; eager rows within 5 % (the
// table's eager runs carry 0-30 MB the profile does not model); records whose target the data
// cannot support carry the reason (hf_exception below).
// Renders docs/accuracy-hf.md; regenerate it with
//   VRAMPLAN_WRITE_ACCURACY_DOC=1 vramplan_tests --gtest_filter='HfAccuracy.*'
#include <cmath>
#include <sstream>

#include <gtest/gtest.h>

#include "accuracy/accuracy_doc.hpp"
#include "accuracy/hf_records.hpp"
#include "vramplan/model/load.hpp"

namespace vramplan::test {
namespace {

//! Records planned but outside the per-record target, and why (the data shows it, no rule misses it).
std::string hf_exception(const std::string& id) {
  if (id == "octocoder-int8-short")
    return "bitsandbytes LLM.int8() run-time buffers are not modelled (int8 activations and outlier columns, the "
           "CB -> CxB weight re-layout of bitsandbytes 0.41 on Ampere); the stored int8 weights + fp32 row scales are";
  if (id == "octocoder-fp4-short")
    return "bitsandbytes 4-bit kernels dequantize each weight to fp16 for prompts longer than one token and keep "
           "quant-state tensors the format table does not count; the profile plans the stored 4-bit bytes only";
  return "";
}

bool is(const HfComparison& x, const char* attn) { return x.id.find(std::string("-") + attn + "-") != std::string::npos; }

const std::vector<HfRecord>& records() {
  static const std::vector<HfRecord> all = load_hf_records();
  return all;
}

const std::vector<HfComparison>& hf_comparisons() {
  static const std::vector<HfComparison> all = [] {
    std::vector<HfComparison> v;
    for (const auto& r : records())
      if (plannable(r)) {
        v.push_back(compare_hf(r));
        if (v.back().exception.empty()) v.back().exception = hf_exception(r.id);
      }
    return v;
  }();
  return all;
}

TEST(HfAccuracy, RecordsNameTheirSourceMethodAndFigureVerbatim) {
  ASSERT_EQ(records().size(), 35u);
  for (const auto& r : records()) {
    EXPECT_FALSE(r.j.at("source").get<std::string>().empty()) << r.id;
    EXPECT_NE(r.j.at("method").get<std::string>().find("max_memory_allocated"), std::string::npos) << r.id;
    EXPECT_FALSE(r.j.at("version_basis").get<std::string>().empty()) << r.id;
    // The peak appears in a quoted line exactly as published.
    const std::string figure = r.j.contains("peak_gib") ? r.j.at("peak_gib").dump() : r.j.at("peak_mb").dump();
    bool quoted = false;
    for (const auto& l : r.j.at("lines")) quoted = quoted || l.get<std::string>().find(figure) != std::string::npos;
    EXPECT_TRUE(quoted) << r.id << ": " << figure;
  }
}

// The two families added for these records (model/family_gpt_neox.cpp, family_gpt_bigcode.cpp) give
// the published parameter counts: Pythia-410M 405,334,016 exactly (EleutherAI/pythia README);
// OctoCoder/StarCoder "15.5B": 40 x 379,128,064 per layer + wte 301,989,888 + wpe 50,331,648 +
// ln_f 12,288 = 15,517,456,384.
TEST(HfAccuracy, RecordModelsGiveThePublishedParameterCounts) {
  const auto count = [](const char* config) {
    std::uint64_t n = 0;
    for (const auto& t : load_model((accuracy_data() / "models" / config).string(), DataRoot{source_dir()}).tensors)
      n += t.elements();
    return n;
  };
  EXPECT_EQ(count("EleutherAI__pythia-410m-deduped.json"), 405334016u);
  EXPECT_EQ(count("bigcode__octocoder.json"), 15517456384u);
}

// The two long-prompt OctoCoder runs print no token count: they are kept (their figures are sourced)
// but not planned.
TEST(HfAccuracy, OnlyRecordsWithAKnownPromptAreCompared) {
  EXPECT_EQ(hf_comparisons().size(), 33u);
  for (const auto& r : records())
    if (!plannable(r)) {
      EXPECT_FALSE(r.exception.empty()) << r.id;
    }
}

TEST(HfAccuracy, Bf16OctoCoderWithinHalfAPercent) {
  for (const auto& x : hf_comparisons())
    if (x.id == "octocoder-bf16-short") {
      EXPECT_LE(std::fabs(x.err()), 0.5) << x.predicted << " vs " << x.measured;
    }
}

TEST(HfAccuracy, SdpaRowsWithinTargets) {
  std::vector<double> errs;
  for (const auto& x : hf_comparisons()) {
    if (!is(x, "sdpa")) continue;
    errs.push_back(x.err());
    EXPECT_LE(std::fabs(x.err()), 2.5) << x.id;
  }
  EXPECT_EQ(errs.size(), 15u);
  EXPECT_LE(median_abs(errs), 1.0);
}

TEST(HfAccuracy, EagerRowsWithinTargets) {
  std::vector<double> errs;
  for (const auto& x : hf_comparisons()) {
    if (!is(x, "eager")) continue;
    errs.push_back(x.err());
    EXPECT_LE(std::fabs(x.err()), 5.0) << x.id;
  }
  EXPECT_EQ(errs.size(), 15u);
  EXPECT_LE(median_abs(errs), 2.0);
}

// The logits after the last layer and one layer's eager scores are never live together: at batch 4 x
// 2048 the table's eager peak is 0.25 % above SDPA's, where summing 4 x 16 heads x 2048² x 6 B =
// 1.61 GB of scores onto the logits would put it 39 % above.
TEST(HfAccuracy, EagerScoresDoNotAddToTheLogitsPeak) {
  const HfComparison *eager = nullptr, *sdpa = nullptr;
  for (const auto& x : hf_comparisons()) {
    if (x.id == "pythia410m-fp16-eager-b4-s2048") eager = &x;
    if (x.id == "pythia410m-fp16-sdpa-b4-s2048") sdpa = &x;
  }
  ASSERT_TRUE(eager && sdpa);
  EXPECT_EQ(eager->peak, "prefill logits");
  EXPECT_DOUBLE_EQ(eager->predicted, sdpa->predicted);
  EXPECT_LT(pct(eager->measured, sdpa->measured), 0.5);
}

// The bitsandbytes records sit under the measurement for the stated reason.
TEST(HfAccuracy, QuantizedRecordsAreUnderForTheStatedReason) {
  int n = 0;
  for (const auto& x : hf_comparisons()) {
    if (x.id != "octocoder-int8-short" && x.id != "octocoder-fp4-short") continue;
    EXPECT_FALSE(x.exception.empty()) << x.id;
    EXPECT_LT(x.err(), 0.0) << x.id;
    EXPECT_GT(x.err(), -10.0) << x.id;
    ++n;
  }
  EXPECT_EQ(n, 2);
}

std::string mb(double bytes) { return fmt("%.1f", bytes / 1e6); }

std::string hf_doc() {
  std::ostringstream md;
  md << "# Accuracy against published HF transformers generate() peaks\n\n"
     << "Generated by `tests/accuracy/hf_accuracy_test.cpp` (run it with "
        "`VRAMPLAN_WRITE_ACCURACY_DOC=1 build/bin/vramplan_tests --gtest_filter='HfAccuracy.*'`). Every record with a "
        "known prompt length is planned through `run_plan()`, the code path of `vramplan plan --engine hf@4.30 "
        "--dtype <d> --attn-implementation <a> --batch B --context P+N --max-new-tokens N [--weights <bnb>]`, and "
        "compared with the published `torch.cuda.max_memory_allocated()` peak. That counter holds PyTorch tensors "
        "only, so the comparison is the plan's weights + KV cache + activation, without the CUDA context. Records, "
        "with their source, method, version basis and the published lines verbatim: "
        "`tests/accuracy/data/hf_measurements.jsonl`; model configs under `tests/accuracy/data/models/`.\n\n"
     << "Sources: the transformers guide [Optimizing LLMs for Speed and Memory]"
        "(https://huggingface.co/docs/transformers/llm_tutorial_optimization) (bigcode/octocoder, GiB = 2^30) and the "
        "GPT-NeoX model page's SDPA inference table (https://huggingface.co/docs/transformers/model_doc/gpt_neox, "
        "EleutherAI/pythia-410m-deduped fp16, MB = 10^6 B). Neither states its transformers version; both predate "
        "`num_logits_to_keep` in generate() (4.45), hence the `hf@4.30` profile.\n\n"
     << "Targets: bf16/fp16 with SDPA within 2.5 % each and median |error| <= 1 %; eager rows within 5 %, median <= 2 %; "
        "bf16 OctoCoder within 0.5 %.\n\n"
     << "| record | batch | prompt + new | attn | weights | planned (MB) | measured (MB) | error | peak moment |\n"
     << "|---|---|---|---|---|---|---|---|---|\n";
  std::vector<double> sdpa, eager, octo;
  for (const auto& r : records()) {
    if (!plannable(r)) continue;
    for (const auto& x : hf_comparisons()) {
      if (x.id != r.id) continue;
      (is(x, "eager") ? eager : is(x, "sdpa") ? sdpa : octo).push_back(x.err());
      md << "| " << x.id << " | " << r.j.at("batch").get<int>() << " | " << r.j.at("prompt_tokens").get<int>() << " + "
         << r.j.at("max_new_tokens").get<int>() << " | " << r.j.at("attn").get<std::string>() << " | "
         << (r.j.at("weights").is_null() ? r.j.at("dtype").get<std::string>() : r.j.at("weights").get<std::string>())
         << " | " << mb(x.predicted) << " | " << mb(x.measured) << " | " << signed_pct(x.err()) << " | " << x.peak << " |\n";
    }
  }
  md << "\nSummary: Pythia SDPA rows median |error| " << f2(median_abs(sdpa)) << " % (" << sdpa.size()
     << " records); Pythia eager rows " << f2(median_abs(eager)) << " % (" << eager.size() << "); OctoCoder "
     << f2(median_abs(octo)) << " % (" << octo.size() << ", the two bitsandbytes records included).\n\n## Records outside a target or not planned, and why\n\n";
  for (const auto& x : hf_comparisons())
    if (!x.exception.empty()) md << "- " << x.id << " (" << signed_pct(x.err()) << "): " << x.exception << ".\n";
  for (const auto& r : records())
    if (!plannable(r))
      md << "- " << r.id << " (published " << fmt("%.3f", r.j.at("peak_gib").get<double>()) << " GiB): " << r.exception
         << ".\n";
  md << "- Eager rows run 0-30 MB over their SDPA twins at the same shape (up to 2.7 % at batch 2-4 x 128-256); "
        "the logits peak does not include any eager attention tensor, and what the eager path keeps live there is "
        "not identified from the table.\n"
     << "- Small shapes sit 10-20 MB under (b1 x 128: -12 MB): buffers the profile does not count (per-layer rotary "
        "cos/sin caches in fp32, cuBLAS workspaces taken from the caching allocator).\n\n"
     << "## What decides the numbers\n\n"
     << "- The peak is one of two moments, never their sum: the prefill (the cache holds the prompt's B x P tokens "
        "while the larger of one layer's live set (+ eager scores) and the logits is live) or the last decode step "
        "(B x (P + N) tokens cached, one position's fp32 logits). Every record here peaks in the prefill.\n"
     << "- Before transformers 4.45, the prefill returns the logits of every prompt position and they are upcast "
        "(`logits = logits.float()`): B x P x vocab x (a + 4) bytes. The Pythia table shows it: after weights, mask "
        "buffers and KV cache, 5.85-6.4 B remain per prompt position x vocab entry at every shape; at 4 x 2048 that is "
        "2.47 GB of a 4.17 GB peak. `hf@4` (4.45+) keeps the last position only.\n"
     << "- The logits are computed after the last layer has freed its activations, so eager attention scores do not "
        "add to a logits peak (`EagerScoresDoNotAddToTheLogitsPeak`).\n"
     << "- Causal-mask buffers registered at load (bool max_positions²): once in GPTBigCodeModel (64 MiB for "
        "OctoCoder's 8192 positions), in every GPTNeoXAttention before the 4.48 refactor (24 x 4 MiB for Pythia).\n"
     << "- Not modelled: the torch.cat growth of tuple caches / DynamicCache before 4.42 (two copies of a layer's "
        "cache during a decode step; no record here peaks in decode), bitsandbytes run-time buffers, the caching "
        "allocator's block rounding (max_memory_allocated counts requested sizes rounded to 512 B).\n\n"
     << "## Before this profile\n\n"
     << "Before issue 8 the `hf` profile summed KV(B x (P + N)), one layer's prefill set at P + N tokens, eager scores "
        "and fp32 logits of the last position, and the catalogue had no GPTBigCode or GPT-NeoX family (both models "
        "failed with 'architecture is not supported'). With the two families added, that profile gave: "
        "octocoder-bf16-short -0.36 %, int8 -2.72 %, fp4 -9.66 %; Pythia SDPA rows -13.8 % (1 x 128) to -53.9 % "
        "(4 x 2048), eager rows -11.6 % to -27.5 %: the full-prompt logits and the mask buffers were missing.\n";
  return md.str();
}

TEST(HfAccuracy, RendersTheAccuracyDocument) {
  const std::string md = hf_doc();
  for (const auto& x : hf_comparisons()) EXPECT_NE(md.find("| " + x.id + " |"), std::string::npos) << x.id;
  write_accuracy_doc_if_asked("accuracy-hf.md", md);
}

}  // namespace
}  // namespace vramplan::test
