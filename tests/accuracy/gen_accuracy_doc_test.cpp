// Generates docs/accuracy.md from the vLLM records (predicted vs reported, error % and GiB).
// Regenerate with:  VRAMPLAN_WRITE_ACCURACY_DOC=1 vramplan_tests --gtest_filter='AccuracyDoc.*'
// Without the variable the test only renders the document and checks its rows.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "accuracy/accuracy_doc.hpp"
#include "accuracy/vllm_legacy_records.hpp"
#include "accuracy/vllm_records.hpp"

namespace vramplan::test {
namespace {


//! One row per record (same columns for the shared and the extra set) and the summary line.
void render_table(std::ostringstream& md, const VllmRecordSet& set) {
  md << "| record | vLLM | weights pred / rep (GiB) | err | activation pred / rep | non-torch pred / rep | "
        "KV cache pred / rep (GiB) | KV err | KV err GiB | tokens pred / rep | tokens err | blocks pred / rep | "
        "CUDA graphs pred / rep |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::vector<double> kv_errs, tok_errs, w_errs;
  for (const auto& c : set.cases) {
    const auto x = compare_vllm(c);
    const double kv_err = pct(x.kv_pred, *x.kv_rep);
    kv_errs.push_back(kv_err);
    md << "| " << x.id << " | " << x.version << " | " << f2(x.weights_pred) << " / "
       << (x.weights_rep ? f2(*x.weights_rep) : "-") << " | "
       << (x.weights_rep ? signed_pct(pct(x.weights_pred, *x.weights_rep)) : "-") << " | " << f2(x.act_pred) << " / "
       << (x.act_rep ? f2(*x.act_rep) : "-") << " | " << f2(x.nt_pred) << " / " << (x.nt_rep ? f2(*x.nt_rep) : "-")
       << " | " << f2(x.kv_pred) << " / " << f2(*x.kv_rep) << " | " << signed_pct(kv_err) << " | "
       << signed_gib(x.kv_pred - *x.kv_rep) << " | " << x.tokens_pred << " / "
       << (x.tokens_rep ? std::to_string(*x.tokens_rep) : "-") << " | ";
    if (x.tokens_rep) {
      const double t = pct(static_cast<double>(x.tokens_pred), static_cast<double>(*x.tokens_rep));
      tok_errs.push_back(t);
      md << signed_pct(t);
    } else {
      md << "-";
    }
    md << " | " << x.blocks_pred << " / " << (x.blocks_rep ? std::to_string(*x.blocks_rep) : "-") << " | "
       << f2(x.graph_pred) << " / " << (x.graph_rep ? f2(*x.graph_rep) : "-") << " |\n";
    if (x.weights_rep) w_errs.push_back(pct(x.weights_pred, *x.weights_rep));
  }
  md << "\nSummary over " << set.cases.size() << " records: KV cache GiB median |error| " << f2(median_abs(kv_errs))
     << " %, KV tokens median |error| " << f2(median_abs(tok_errs)) << " %, weights median |error| "
     << f2(median_abs(w_errs)) << " %.\n\n";
}

//! What the records beyond the shared set show (mechanisms found, misses and their reasons).
constexpr const char* kExtraNotes =
    "Notes on these records:\n\n"
    "- Gemma-3 (4b, 27b): vLLM warns \"Add 1 padding layers\" / \"Add 8 padding layers\" (v1/core/kv_cache_utils.py). "
    "The KV group size is the smallest layer-type count (5 and 10 full-attention layers), so 29 sliding layers "
    "take 6 groups of 5 and 52 take 6 groups of 10 (memory/vllm_kv_groups.cpp); the token check above holds on both. "
    "Multimodal profiling (memory/vllm_encoder_profile.hpp): before the text forward, vLLM's profile_run batches "
    "N dummy images onto the GPU, encodes them and stores the embeddings in the encoder cache; both stay alive "
    "through the text forward and the sampler (gpu_model_runner.py profile_run; encoder_cache.clear() comes after "
    "_dummy_sampler_run). N = min(encoder budget // tokens per image, max_num_seqs x images per prompt) = "
    "8192 // 256 = 32 (v1/core/encoder_cache_manager.py compute_mm_encoder_budget, "
    "multimodal/encoder_budget.py _get_max_items), each image 3 x 896 x 896 bf16 pixel values (0.144 GiB for 32) "
    "plus mm_tokens_per_image 256 x h embeddings, all from config.json. This adds 0.18 / 0.20 / 0.23 GiB "
    "(4b / 12b / 27b) to the text law: activation 3.69 -> 3.87 (logged 3.89), 3.71 -> 3.91 (3.94), "
    "3.73 -> 3.95 (3.99) GiB; KV +0.31 -> +0.02 %, +0.49 -> +0.07 %, +1.40 -> +0.24 %. The remaining 0.02-0.04 GiB "
    "is within the text law's residuals. The encoder's own transient peak is not modelled (it is below the "
    "text-phase peak here).\n"
    "- Weights: these records check the caching-allocator replay of \"Model loading took\" "
    "(memory/vllm_weight_allocation.hpp, `allocator_rounding` in data/engines/vllm.json) out of sample. Planned as "
    "checkpoint tensor bytes alone, gemma-2-2b-it was -0.54 % (4.8735 GiB vs 4.9) and gpt-oss-20b TP2 -1.15 % "
    "(6.93 vs 7.01 GiB); with the allocator blocks both are inside their targets. gpt-oss's remaining gap lies in "
    "the MXFP4 Triton swizzle after loading: its log shows 6.76 GiB peak after load_weights and 7.01 GiB after "
    "process_weights_after_loading.\n"
    "- The activation law is not refitted on these records: they are held out and check it. Text-only records "
    "are within 0.05 GiB; gpt-oss-20b TP2 (MoE with attention sinks, MXFP4) is over by about 0.26 GiB and its KV "
    "still meets the target.\n"
    "- Llama-4-Scout TP4 (Llama4ForConditionalGeneration): weights match once the vision encoder, pixel-shuffle "
    "adapter and projector are counted (model/vision_llama4.cpp, 871,932,416 parameters, sharded by TP as vLLM's "
    "mllama4.py builds them: +0.41 GiB per GPU; without them the weights were -0.77 %). The 2.50 GiB per GPU "
    "rope cos/sin table (10,485,760 positions x 128 x 2 B) is part of the logged 53.12 GiB. KV: vLLM's hybrid "
    "allocator puts the 12 global NoPE layers in one group and the 36 chunked-local (8192) layers in 3 groups of "
    "12; 91,495 blocks // 4 groups x 16 = 365,968 tokens, as logged, and the 196,608 B block divides the logged "
    "pool into the logged block count to within its 0.005 GiB print rounding. The profile run also "
    "encodes dummy images through the vision encoder and keeps them and their embeddings during the text "
    "forward, as for Gemma-3: Llama-4's largest image is max_patches (16, the published preprocessor_config.json; "
    "config.json lacks it) tiles plus the global tile, 17 x 144 = 2448 embeddings (mllama4.py "
    "Mllama4ProcessingInfo), so N = 8192 // 2448 = 3 images of 17 x 3 x 336 x 336 pixel values: +0.10 GiB, "
    "activation 3.02 -> 3.12 GiB (logged 3.19), KV +1.45 -> +0.84 %. The rest of the KV error is that 0.07 GiB of "
    "activation and non-torch memory (2.10 vs 2.17 GiB). "
    "FULL_AND_PIECEWISE falls back to PIECEWISE for the chunked-local attention backend; 51 piecewise captures "
    "give 1.15 vs 1.13 GiB.\n"
    "- Llama-3.3-70B FP8-dynamic TP4: the TP4 twin of the shared TP2 record; weights within 0.01 %, KV GiB and tokens within "
    "0.25 %, activation 0.02 GiB under. Its non-torch memory, 2.21 GiB, is the highest of the TP>1 logs (2.07-2.17 GiB elsewhere), 0.11 GiB "
    "over the 2.1 GiB figure (data/accuracy_bounds.json covers it).\n"
    "- Refusal reproduced: the same sweep's phi-2 run at --max-model-len 8192 stopped with \"User-specified "
    "max_model_len (8192) is greater than the derived max_model_len (max_position_embeddings=2048.0 ...)\" "
    "(microsoft-phi-2--h100-80gb--tp1pp1dp1--8192.FAILED.log). Without rope scaling the planner now refuses the "
    "same request in vLLM's words (test VllmExtraAccuracy.Phi2BeyondItsPositionsIsRefusedAsVllmDid); with rope "
    "scaling it keeps a note, the scaled limit not being modelled.\n\n";

//! What the legacy records show, per record where a figure misses (tests/accuracy/vllm_legacy_accuracy_test.cpp).
constexpr const char* kLegacyNotes =
    "Notes on these records:\n\n"
    "- Coverage: 6 re-planned records across 0.6.4, 0.6.4.post1, 0.6.5 (development build), 0.7.2 and 0.9.2, "
    "below the 8 the issue aims for: no 0.6.0 - 0.6.3, 0.8.x or 0.10.x paste with the GPU, the flags and a KV "
    "figure was found (the 0.8.5 one lacks its command line and is excluded). The 0.6, 0.8 and 0.9 profiles are "
    "therefore derived from the source and the neighbouring releases' figures only.\n"
    "- The last column plans the same logs without a version, i.e. with the 0.19 profile (V1 batch defaults, "
    "0.25 GiB non-torch): V0 profiles the whole context in one batch below 32K (max_model_len 20000: 2.07 GiB "
    "of activation, 29000: 2.99 GiB) where V1 profiles 2048 tokens, so the 0.19 profile overstates those pools and "
    "does not refuse the 29k start; with TP the V0 driver's sampler is missing from it.\n"
    "- gh-vllm-10517 (20k, 29k): the activation peak is the dense forward of the whole context (2.06 / 2.99 GiB vs "
    "2.07 / 2.99 logged); the remaining -1 % is the non-torch figure, 0.40 GiB (mean of the two 0.6.4 logs) vs "
    "0.35 logged. The 29k run is refused as vLLM refused it (block count x 16 < 29000).\n"
    "- gh-vllm-pr10511: a development build whose non-torch figure, 1.79 GiB at TP 1, is 7x the released "
    "0.6.5 log (0.26 GiB); that 1.5 GiB difference is the record's whole error (+2.9 %).\n"
    "- gh-vllm-13061 (TP2): the quoted figures are the non-driver worker's. Its pool (8.69 GiB) would be 5932 "
    "blocks, but vLLM allocated 5096 (the minimum over workers): the driver's sampler, 1.23 GiB, makes the "
    "difference. The plan is the driver's, compared on the allocated tokens.\n"
    "- gh-vllm-10360 (AWQ): the log prints no weights line; the KV error includes the AWQ-Marlin weight estimate.\n"
    "- tokenkaki (0.9.2): the total is the catalogue's A100-SXM4-40GB runtime figure (39.39 GiB), not printed by "
    "the log; sampler and non-torch terms are the 0.11 family's.\n\n";

//! vLLM 0.6 - 0.10 (V0 and the first V1 releases): tests/accuracy/vllm_legacy_accuracy_test.cpp.
void render_legacy(std::ostringstream& md) {
  const auto set = load_vllm_legacy_records();
  md << "\n## vLLM 0.6 - 0.10 (V0 engine and the first V1 releases)\n\n"
     << "Start-up logs of vLLM 0.6 - 0.10 pasted in public GitHub issues, pull requests and repository files, "
        "transcribed into `tests/accuracy/data/vllm_legacy_logs.jsonl` (each record names its `source`, how its "
        "version is known and quotes the printed lines); configs, catalogue GPUs and exclusions in "
        "`tests/accuracy/data/vllm_legacy_models.json`. Planned through `run_plan()` with the record's version (its "
        "release profile, docs/engines.md), GPU, printed total and flags; `tests/accuracy/vllm_legacy_accuracy_test.cpp` "
        "asserts the targets: KV capacity median |error| <= 2 %, every record within 5 %. Capacity is compared on the "
        "block count where the log prints it, else on tokens (V0 TP: the minimum over workers, the driver's), else on "
        "the pool in GiB. Activation \"rep\" for 0.6.4 is the printed torch peak minus the weights; for the TP2 V0 "
        "record it is a non-driver worker's (no sampler), while the plan is the driver's.\n\n"
     << "| record | vLLM | profile | weights pred / rep (GiB) | activation pred / rep | non-torch pred / rep | "
        "KV pool pred / rep (GiB) | capacity | pred / rep | error | refused pred / log | error, default 0.19 profile |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::vector<double> errors, default_errors;
  double worst = 0, default_worst = 0;
  for (const auto& c : set.cases) {
    const auto x = compare_vllm_legacy(c);
    const auto unversioned = compare_vllm_legacy(c, "vllm");
    errors.push_back(x.error_pct());
    default_errors.push_back(unversioned.error_pct());
    worst = std::max(worst, std::fabs(x.error_pct()));
    default_worst = std::max(default_worst, std::fabs(unversioned.error_pct()));
    const bool gib = x.basis == "GiB";
    md << "| " << x.id << " | " << x.version << " | " << x.profile << " | " << f2(x.weights_pred) << " / "
       << (x.weights_rep ? f2(*x.weights_rep) : "-") << " | " << f2(x.act_pred) << " / " << (x.act_rep ? f2(*x.act_rep) : "-")
       << " | " << f2(x.nt_pred) << " / " << (x.nt_rep ? f2(*x.nt_rep) : "-") << " | " << f2(x.kv_pred_gib) << " / "
       << (x.kv_rep_gib ? f2(*x.kv_rep_gib) : "-") << " | " << x.basis << " | "
       << (gib ? f2(x.capacity_pred) : fmt("%.0f", x.capacity_pred)) << " / "
       << (gib ? f2(x.capacity_rep) : fmt("%.0f", x.capacity_rep)) << " | " << signed_pct(x.error_pct()) << " | "
       << (x.fits ? "no" : "yes") << " / " << (x.refused ? "yes" : "no") << " | " << signed_pct(unversioned.error_pct())
       << (unversioned.fits == !x.refused ? "" : " (refusal missed)") << " |\n";
  }
  md << "\nSummary over " << errors.size() << " records: KV capacity median |error| " << f2(median_abs(errors))
     << " %, largest " << f2(worst) << " %. Planned without a version (the default 0.19 profile, as before these "
        "profiles existed): median |error| "
     << f2(median_abs(default_errors)) << " %, largest " << f2(default_worst) << " %.\n\n" << kLegacyNotes;
  md << "### Excluded records (vLLM 0.6 - 0.10)\n\n| record | reason |\n|---|---|\n";
  for (const auto& [id, reason] : set.excluded) md << "| " << id << " | " << reason << " |\n";
  const auto map = read_json_file(accuracy_data() / "vllm_legacy_models.json");
  md << "\n### Logs found but not transcribed\n\n| log | reason |\n|---|---|\n";
  for (const auto& [log, reason] : map.at("logs_not_transcribed").items())
    md << "| " << log << " | " << reason.get<std::string>() << " |\n";
}

//! Records beyond the shared set: same columns, same targets (tests/accuracy/vllm_extra_accuracy_test.cpp).
void render_extra(std::ostringstream& md) {
  const auto set = load_vllm_extra_records();
  md << "\n## Records beyond the shared set\n\n"
     << "Start-up logs of the same llm-d-planner sweep (vLLM 0.19.0, H100 80GB, commit "
        "d3121e059da88662db39a926a3ead964be97359b) that the shared file does not carry, transcribed into "
        "`tests/accuracy/data/vllm_extra_logs.jsonl` (each record names its log); configs and exclusions in "
        "`tests/accuracy/data/vllm_extra_models.json`. Planned through the same `run_plan()` path; the same targets "
        "are asserted by `tests/accuracy/vllm_extra_accuracy_test.cpp`. Most of these records give tokens but "
        "their block counts and captured CUDA-graph pools were not transcribed (\"-\"); KV bytes per token is "
        "checked through the tokens instead. The two TP4 records (Llama-4-Scout, Llama-3.3-70B FP8) carry both.\n\n";
  render_table(md, set);
  md << kExtraNotes;
  md << "### Excluded records beyond the shared set\n\n| record | reason |\n|---|---|\n";
  for (const auto& [id, reason] : set.excluded) md << "| " << id << " | " << reason << " |\n";
  const auto map = read_json_file(accuracy_data() / "vllm_extra_models.json");
  md << "\n### Logs of that sweep not transcribed\n\n| log | reason |\n|---|---|\n";
  for (const auto& [log, reason] : map.at("logs_not_transcribed").items())
    md << "| " << log << " | " << reason.get<std::string>() << " |\n";
}

std::string planner_doc() {
  const auto set = load_vllm_records();
  std::ostringstream md;
  md << "# Accuracy against published vLLM start-up logs\n\n"
     << "Generated by `tests/accuracy/gen_accuracy_doc_test.cpp` (run it with "
        "`VRAMPLAN_WRITE_ACCURACY_DOC=1 build/bin/vramplan_tests --gtest_filter='AccuracyDoc.*'`). "
        "Every record is planned through `run_plan()`, the code path of `vramplan plan`, with the record's "
        "engine version, GPU total and flags; the config used for each model is in "
        "`tests/accuracy/data/vllm_record_models.json`. GiB = 2^30 bytes, as vLLM prints. "
        "Records: `tests/accuracy/data/vllm_startup_logs.jsonl` (sources in each record).\n\n"
     << "Targets: weights <= 0.5 % (plain dtypes: bf16, fp16, fp32, fp8, int8), <= 1 % (formats a kernel backend repacks or pads: MXFP4, Marlin); KV bytes per token exact; "
        "KV cache capacity median |error| <= 1 %, every record <= 3 % or within 0.3 GiB when the pool is under 6 GiB.\n\n";
  render_table(md, set);
  md << "Notes:\n\n"
     << "- PP records: vLLM's log line shows the first stage's pool, while blocks and tokens are the minimum over "
        "stages (the last stage also holds the sampler); the table compares the same quantities.\n"
     << "- Activation peak and non-torch memory are not inputs: they are predicted (fitted law and per-version "
        "defaults in data/engines/vllm.json), so the KV error includes their error.\n"
     << "- Weights are what vLLM's 'Model loading took' counts: DeviceMemoryProfiler.consumed_memory "
        "(vllm/utils/mem_utils.py), torch's allocated bytes after minus before GPUModelRunner.load_model. Those are "
        "PyTorch caching-allocator blocks, not tensor bytes: a request is rounded to 512 B, one of 10 MiB or more gets "
        "its own segment rounded up to 2 MiB, and a large block's tail is split off only when it is over 1 MiB "
        "(c10/cuda/CUDACachingAllocator.cpp: kMinBlockSize, kMinLargeAlloc, kRoundLarge, kSmallSize, should_split). "
        "The planner replays vLLM's parameters in construction order (fused qkv_proj, gate_up_proj, experts w13 / "
        "w2, the rope cache with its fp32 scratch) through a model of that allocator "
        "(memory/vllm_weight_allocation.hpp; component weights.allocator_rounding). This closes the dense gaps: "
        "qwen2.5-7b +57 MiB (qkv 31.5, gate_up 259, down 129.5 MiB a layer, embedding and lm_head 1039.5 MiB; "
        "-0.40 % -> -0.01 %), phi-4 +80 MiB (qkv 75 -> 76, down 175 -> 176 MiB a layer; -0.29 % -> -0.01 %), "
        "gemma-3-12b +54 MiB (-0.20 % -> +0.02 %), qwen3-32b TP2 +64 MiB (-0.22 % -> -0.02 %); llama-3.1-8b, "
        "gemma-2-9b and codellama-7b have only 2 MiB multiples (+0).\n"
     << "- DeepSeek-V2-Lite weights are 0.13 GiB (0.44 %) under vLLM's figure (29.30 vs 29.43 GiB: checkpoint "
        "29.255 GiB + the 20 MiB deepseek-yarn cos/sin cache of 4096 x 40 positions x 64 in bf16 + 26 MiB of "
        "allocator blocks: the 26 shared-expert down_proj tensors of 11 MiB become 12 MiB blocks and layer 0's "
        "gate_up of 85.5 MiB an 86 MiB one). The log's 'Peak GPU memory after loading weights: 29.46 GiB' "
        "(base_loader.py:70, printed before process_weights_after_loading) sits 0.03 GiB above the figure, the same "
        "margin as the Qwen1.5-MoE-A2.7B log of the same sweep (26.70 vs 26.67; same hidden size and scheduler "
        "limits), so the excess is resident when weight loading ends, not built after it. Ruled out in vLLM's source: "
        "W_UK_T / W_UV (MLAAttention.process_weights_after_loading: get_and_maybe_dequant_weights returns "
        "weight.to(act_dtype), the same tensor in bf16, and both are transpose/permute views of it); per-layer "
        "buffers of FlashAttnMLAImpl and the FlashAttention MLA prefill backend (none; FA3 scheduler_metadata "
        "belongs to the metadata builder, built after loading); the router (GateLinear [64 x 2048] bf16, 256 KiB "
        "a layer; no e_score_correction_bias with topk_method greedy); fused shared experts (not fused: the log "
        "enables a separate stream for shared_experts and counts silu_and_mul x 27); more than one rope cache "
        "(the log counts rotary_embedding x 1, rms_norm x 82 = 27 x 3 + 1; DeepseekScalingRotaryEmbedding keeps "
        "fp32 only on its FlashInfer path, and the op is disabled). "
        "The remaining ~0.13 GiB (~5 MiB per MoE layer) is not explained by anything found in the source; "
        "no per-model constant is fitted to it.\n"
     << "- CUDA graphs: estimate = base + captured batch sizes x decoder layers on the stage x per-piece cost "
        "(memory/vllm_cuda_graphs.hpp), fitted by tests/accuracy/vllm_cuda_graph_test.cpp on the 0.19 logs: dense "
        "records within 0.21 GiB (median 0.05 GiB; TP > 1 and gemma-3 are over by 0.1-0.2 GiB). DeepSeek-V2-Lite's "
        "pool (1.57 GiB) is twice the dense law and is not fitted. vLLM 0.19 does not subtract the pool from the KV "
        "budget, so this estimate does not change the KV figures. 0.11 records log the net change during capture, not "
        "the pool (not compared).\n"
     << "- Non-torch memory is an observed figure per configuration class (see docs/engines.md item 4 for what is "
        "known of the mechanism).\n"
     << "- Mistral-Small-3.2 (llmd-doc-v011-mistral-small-32-24b, excluded below from the KV targets): with the Pixtral "
        "encoder, patch merger and projector counted (model/vision_pixtral.cpp, 438,958,080 parameters) the weights "
        "are 44.76 planned vs 44.76 GiB logged (43.91 GiB, -1.9 %, with the text model alone); KV bytes per token "
        "163,840 as the log's 1,444 blocks of 128 tokens imply. Its KV pool is 25.36 planned vs 28.2 GiB: the whole "
        "gap is the activation peak (4.97 planned vs 2.12 logged); with the logged peak the pool is 28.21 GiB "
        "(tests/accuracy/vllm_multimodal_accuracy_test.cpp).\n\n";
  md << "## Excluded records\n\n| record | reason |\n|---|---|\n";
  for (const auto& [id, reason] : set.excluded) md << "| " << id << " | " << reason << " |\n";
  render_extra(md);
  render_legacy(md);
  md << "\n## Activation-peak fit\n\nThe coefficients of the activation law (planner/include/vramplan/memory/"
        "vllm_activation.hpp) are the least-squares fit printed by `vramplan_tests "
        "--gtest_filter='VllmActivationFit.*'` (tests/accuracy/vllm_activation_fit_test.cpp), which also checks "
        "that data/engines/vllm.json holds them. Residuals per record are printed there; all are under 0.1 GiB "
        "for 0.17-0.19 and under 0.02 GiB for 0.11-0.16. Multimodal records (gemma-3-12b) are planned but left out "
        "of the fit: vLLM's profile run also encodes dummy images, a derived term added on top of the text law "
        "(memory/vllm_encoder_profile.hpp; gemma-3-12b: 3.71 GiB text law + 0.20 GiB images and embeddings = "
        "3.91 GiB, logged 3.94).\n";
  return md.str();
}

TEST(AccuracyDoc, RendersOneRowPerRecord) {
  const std::string md = planner_doc();
  for (const auto& c : load_vllm_records().cases) EXPECT_NE(md.find("| " + c.id + " |"), std::string::npos) << c.id;
  for (const auto& c : load_vllm_extra_records().cases) EXPECT_NE(md.find("| " + c.id + " |"), std::string::npos) << c.id;
  for (const auto& c : load_vllm_legacy_records().cases) EXPECT_NE(md.find("| " + c.id + " |"), std::string::npos) << c.id;
  write_accuracy_doc_if_asked("accuracy.md", md);
}

}  // namespace
}  // namespace vramplan::test
