// vramplan/memory/mtp_draft.hpp — a checkpoint's own multi-token-prediction (MTP) layer loaded as
// the draft of speculative decoding, as SGLang (models/deepseek_nextn.py) and vLLM
// (model_executor/models/deepseek_mtp.py) load DeepSeek-V3's: one decoder layer split over TP like
// the target's, enorm / hnorm / shared_head.norm and eh_proj whole on every rank (eh_proj is a
// plain nn.Linear in both, so it holds the model dtype), embed_tokens and shared_head.head left
// out (both engines point the draft at the target's). Its KV is one attention layer of the target's
// kind per token.
#pragma once

#include <cstdint>
#include <string>

#include "vramplan/memory/kv_cache.hpp"
#include "vramplan/memory/weights.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan::memory {

//! Whether `arch` is one whose MTP layer this planner loads as a draft: the DeepSeek-V3 layout
//! (DeepseekV3 / V32ForCausalLM, GlmMoeDsaForCausalLM, Glm4MoeLiteForCausalLM) with exactly one
//! MTP layer in its config. Otherwise the reason, for the engine's error message.
std::string mtp_draft_unsupported(const ModelArch& arch);

//! Bytes per rank of the draft's weights on `tp` ranks.
std::uint64_t mtp_draft_weight_bytes(const ModelSpec& model, const ResolvedWeights& rw, std::uint64_t tp);

//! The draft's one KV layer: the largest attention layer of `kv` (neither shared nor recurrent).
//! Throws Error(Internal) when `kv` has none (a supported architecture always has one).
LayerKv mtp_draft_kv_layer(const KvLayout& kv);

//! What a speculative plan's step times are, for the engines' notes: plain decoding's, with the
//! draft and verify steps where the user gives --spec-accept-length (sim/serving_plan.hpp,
//! sim/simulate.hpp).
inline constexpr const char* kMtpDraftStepsNote =
    "the decode / TTFT estimates are plain decoding's; with --spec-accept-length L, plan adds decode with the draft "
    "and verify steps and simulate runs them";

}  // namespace vramplan::memory
