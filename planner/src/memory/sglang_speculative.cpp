// SGLang speculative decoding with the checkpoint's MTP layer as the draft; the rules and their
// sources are in vramplan/memory/sglang_speculative.hpp.
#include "vramplan/memory/sglang_speculative.hpp"

#include <algorithm>
#include <cctype>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/engine_setup.hpp"
#include "vramplan/memory/mtp_draft.hpp"

namespace vramplan::memory {

SglangSpeculative sglang_speculative(const EngineArgs& a, const ModelSpec& model, const SglangRelease& release) {
  SglangSpeculative s;
  const auto algorithm = arg_string(a, "speculative-algorithm");
  if (!algorithm) {
    for (const char* flag : {"speculative-num-steps", "speculative-eagle-topk", "speculative-num-draft-tokens",
                             "speculative-draft-model-path"})
      if (arg_string(a, flag)) throw_usage(std::string("--") + flag + " needs --speculative-algorithm");
    return s;
  }
  std::string name = *algorithm;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (name != "EAGLE" && name != "NEXTN") {
    if (name == "EAGLE3" || name == "STANDALONE" || name == "NGRAM")
      throw_usage("--speculative-algorithm " + *algorithm +
                  ": not modelled (only EAGLE / NEXTN with the checkpoint's own MTP layer as the draft)");
    throw_usage("--speculative-algorithm: expected EAGLE, EAGLE3, NEXTN, STANDALONE or NGRAM, got '" + *algorithm + "'");
  }
  // Read in the 0.5.3-0.5.13 wheels; 0.5.14 moved these rules to arg_groups/ (speculative_hook.py,
  // memory_hook.py) and dropped the draft's reserve, and the newest releases size pools otherwise.
  if (release.numbers.empty() || !release.at_least({0, 5, 3}) || release.at_least({0, 5, 14}))
    throw_usage("--speculative-algorithm: SGLang's speculative decoding is modelled for releases 0.5.3 to 0.5.13 "
                "(read in their wheels): plan with --engine sglang@0.5.13 or an earlier 0.5 release");
  const std::string& arch = model.arch.architecture;
  if (const std::string why = mtp_draft_unsupported(model.arch); !why.empty())
    throw_usage("--speculative-algorithm " + *algorithm + ": " + why);
  if (arg_string(a, "speculative-draft-model-path"))
    throw_usage("--speculative-draft-model-path: a separate draft checkpoint is not modelled (leave it unset: "
                "SGLang then loads the target's own MTP layer)");
  s.on = true;
  s.algorithm = "EAGLE";
  if (name == "NEXTN") s.notes.push_back("--speculative-algorithm NEXTN runs as EAGLE (server_args.py _handle_speculative_decoding)");
  const auto steps = arg_u64(a, "speculative-num-steps");
  const auto topk = arg_u64(a, "speculative-eagle-topk");
  const auto draft = arg_u64(a, "speculative-num-draft-tokens");
  if (!steps) {
    if (topk || draft)
      throw_usage("--speculative-eagle-topk / --speculative-num-draft-tokens need --speculative-num-steps "
                  "(SGLang chooses all three or takes all three)");
    // auto_choose_speculative_params: (3, 1, 4) for these architectures.
    s.steps = 3;
    s.topk = 1;
    s.draft_tokens = 4;
    s.notes.push_back("speculative steps 3, top-k 1, 4 draft tokens: SGLang's choice for " + arch +
                      " (server_args.py auto_choose_speculative_params)");
  } else {
    if (!topk || !draft)
      throw_usage("--speculative-num-steps needs --speculative-eagle-topk and --speculative-num-draft-tokens as well");
    if (*steps == 0 || *topk == 0 || *draft == 0) throw_usage("--speculative-num-steps / -eagle-topk / -num-draft-tokens must be >= 1");
    s.steps = *steps;
    s.topk = *topk;
    s.draft_tokens = *draft;
    if (s.topk == 1 && s.draft_tokens != s.steps + 1) {
      s.notes.push_back("--speculative-num-draft-tokens " + std::to_string(s.draft_tokens) + " replaced by " +
                        std::to_string(s.steps + 1) + ": with top-k 1 SGLang uses steps + 1");
      s.draft_tokens = s.steps + 1;
    }
  }
  return s;
}

double sglang_speculative_reserve_mib(const SglangRelease& release) {
  // server_args.py _handle_gpu_memory_settings: reserved_mem += 2 * 1024 for EAGLE drafts ("eagle
  // draft models and cuda graphs") in 0.5.3-0.5.9, 4 * 1024 in 0.5.10-0.5.13.
  return release.at_least({0, 5, 10}) ? 4096.0 : 2048.0;
}

std::uint64_t sglang_speculative_extra_tokens(const SglangSpeculative& s, const SglangRelease& release,
                                              std::uint64_t max_running_requests) {
  if (!s.on || release.at_least({0, 5, 7})) return 0;
  // 0.5.6.post1 model_runner.py init_memory_pool: draft_runner_cache_size = max_total_num_tokens +
  // max_num_reqs x steps x topk (draft) + max_num_reqs x draft tokens (verify) + 100.
  const char* what = "speculative slots (--speculative-num-steps x --speculative-eagle-topk + draft tokens)";
  return checked_add(checked_mul(max_running_requests, checked_add(checked_mul(s.steps, s.topk, what), s.draft_tokens, what), what),
                     100, what);
}

}  // namespace vramplan::memory
