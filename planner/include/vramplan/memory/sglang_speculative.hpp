// vramplan/memory/sglang_speculative.hpp — what SGLang's speculative decoding (EAGLE, or NEXTN,
// which server_args.py renames EAGLE) changes in memory when the draft is the checkpoint's own MTP
// layer (DeepSeek-V3/R1/V3.2, GLM-5, GLM-4.7-Flash: server_args.py _handle_speculative_decoding points
// speculative_draft_model_path at the target's checkpoint). Read in the sglang 0.5.9 wheel, with
// 0.5.6.post1 and 0.5.10 where they differ, and checked in every 0.5.3-0.5.13 wheel (docs/engines.md,
// SGLang item 7); 0.5.14 moved the rules to arg_groups/ and dropped the reserve below, so later
// releases (and an unversioned "sglang") are refused:
//   * steps / topk / draft tokens: all three given, or none (auto_choose_speculative_params: 3, 1, 4
//     for these models; 5, 4, 8 for Llama and Grok); with topk 1 the draft tokens are steps + 1;
//   * max_running_requests 48 when unset; the overlap scheduler and mixed chunks off;
//   * the default mem_fraction_static reserve + 2048 MiB (+ 4096 in 0.5.10-0.5.13);
//   * the target's token pool is sized as without a draft (0.5.7+); 0.5.3-0.5.6 enlarged it by
//     max_running_requests x (steps x topk + draft tokens) + 100 tokens beyond the budget
//     (model_runner.py init_memory_pool draft_runner_cache_size);
//   * the draft's KV pool holds as many tokens as the target's, one layer each, and the draft's
//     weights (memory/mtp_draft.hpp) load after the target: both come out of the
//     (1 - mem_fraction_static) headroom, and SGLang checks neither (eagle_worker.py
//     EAGLEWorker.__init__).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/kv_cache.hpp"
#include "vramplan/memory/sglang_dsa.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::memory {

struct SglangSpeculative {
  bool on = false;
  std::string algorithm;  //!< "EAGLE" (NEXTN is renamed to it)
  std::uint64_t steps = 0, topk = 0, draft_tokens = 0;
  std::vector<std::string> notes;
};

//! The run's speculative settings from the engine flags; `on` false without
//! --speculative-algorithm. Throws Error(Usage) for what is not modelled (EAGLE3, STANDALONE,
//! NGRAM, a separate draft checkpoint, a model without MTP layers, a release outside 0.5.3-0.5.13) and for
//! settings SGLang refuses.
SglangSpeculative sglang_speculative(const EngineArgs& args, const ModelSpec& model, const SglangRelease& release);

//! MiB the default mem_fraction_static rule adds to its reserve for an EAGLE draft.
double sglang_speculative_reserve_mib(const SglangRelease& release);

//! Tokens 0.5.3-0.5.6 add to both pools beyond the budget (0 from 0.5.7).
std::uint64_t sglang_speculative_extra_tokens(const SglangSpeculative& s, const SglangRelease& release,
                                              std::uint64_t max_running_requests);

}  // namespace vramplan::memory
