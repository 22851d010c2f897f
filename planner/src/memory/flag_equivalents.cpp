// Which engine declares a flag, and what this engine calls the same setting. The table lists
// vramplan's names for each engine's flags (the options() of each profile); the engines' own
// argument parsers are cited where the profiles declare them (vllm_engine.cpp, sglang_engine.cpp,
// trtllm_engine.cpp, llamacpp_engine.cpp, tei_engine.cpp). A test checks that every spelling here is
// a flag of its engine.
#include "vramplan/memory/flag_equivalents.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "vramplan/core/error.hpp"
#include "vramplan/memory/engine.hpp"

namespace vramplan::memory {

const std::vector<FlagRole>& flag_roles() {
  static const std::vector<FlagRole> table = {
      {"the context length",
       {{"vllm", {"max-model-len"}, ""}, {"sglang", {"context-length"}, ""}, {"trtllm", {"max-seq-len"}, ""},
        {"llamacpp", {"ctx-size"}, ""}},
       ""},
      {kSettingRunningCap,
       {{"vllm", {"max-num-seqs"}, ""}, {"sglang", {"max-running-requests"}, ""}, {"trtllm", {"max-batch-size"}, ""},
        {"llamacpp", {"parallel"}, ""}},
       ""},
      {kSettingStepTokens,
       {{"vllm", {"max-num-batched-tokens"}, ""}, {"sglang", {"chunked-prefill-size"}, ""},
        {"trtllm", {"max-num-tokens"}, ""}, {"llamacpp", {"batch-size"}, ""}, {"tei", {"max-batch-tokens"}, ""}},
       ""},
      {kSettingMemoryShare,
       {{"vllm", {"gpu-memory-utilization"}, ""}, {"sglang", {"mem-fraction-static"}, ""},
        {"trtllm", {"free-gpu-memory-fraction"}, ""}},
       "not the same quantity: vLLM's is of the whole GPU for everything it allocates, SGLang's of the whole GPU "
       "for weights and KV pool, TensorRT-LLM's of the memory left after weights and activations, for the KV cache"},
      {"tensor parallelism",
       {{"vllm", {"tensor-parallel-size"}, ""}, {"sglang", {"tp-size"}, ""}, {"trtllm", {"tp-size"}, ""}}, ""},
      {"the KV block size",
       {{"vllm", {"block-size"}, ""}, {"sglang", {"page-size"}, ""}, {"trtllm", {"tokens-per-block"}, ""}}, ""},
      {"the KV pool's size",
       {{"vllm", {"kv-cache-memory"}, ""}, {"sglang", {"max-total-tokens"}, ""}, {"trtllm", {"max-tokens"}, ""}},
       "vLLM's in bytes, SGLang's and TensorRT-LLM's in tokens"},
      {"the KV cache's data type",
       {{"vllm", {"kv-cache-dtype"}, ""}, {"sglang", {"kv-cache-dtype"}, ""}, {"trtllm", {"kv-cache-dtype"}, ""},
        {"hf", {"kv-cache-dtype"}, ""}, {"llamacpp", {"cache-type-k", "cache-type-v"}, ""}},
       ""},
      {"eager execution (no CUDA graphs)",
       {{"vllm", {"enforce-eager"}, ""}, {"sglang", {"disable-cuda-graph"}, ""}}, ""},
      {"turning prefix caching off",
       {{"vllm", {"no-enable-prefix-caching"}, ""}, {"sglang", {"disable-radix-cache"}, ""},
        {"trtllm", {"enable-block-reuse"}, "false"}},
       ""},
  };
  return table;
}

namespace {

std::string bare(std::string_view flag) {
  while (!flag.empty() && flag.front() == '-') flag.remove_prefix(1);
  return std::string(flag);
}

std::string dashed(std::string_view flag) {
  std::string out = bare(flag);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

// The engine's option name for `flag` (its name or an alias), "" when it has none.
std::string declared_name(const Engine& engine, std::string_view flag) {
  return flag_with_alias(engine.options(), flag);
}

const FlagSpelling* spelling_of(const FlagRole& role, std::string_view engine) {
  for (const auto& s : role.spellings)
    if (s.engine == engine) return &s;
  return nullptr;
}

std::string shown(const FlagSpelling& s) {
  std::string text;
  for (const auto f : s.flags) text += (text.empty() ? "--" : " and --") + std::string(f);
  if (!s.value.empty()) text += " " + std::string(s.value);
  return text;
}

}  // namespace

std::string_view flag_for_setting(std::string_view setting, std::string_view engine) {
  for (const FlagRole& role : flag_roles())
    if (role.setting == setting)
      if (const FlagSpelling* s = spelling_of(role, engine); s && !s->flags.empty()) return s->flags.front();
  return {};
}

std::string foreign_flag_hint(std::string_view flag, std::string_view engine_spec,
                              const std::filesystem::path& data_dir) {
  std::unique_ptr<Engine> engine;
  try {
    engine = make_engine(engine_spec, data_dir);
  } catch (const Error&) {
    return "";
  }
  const std::string name = bare(flag), with_dashes = dashed(flag);
  // TensorRT-LLM's and llama-server's own spellings use underscores (--max_seq_len, --n_gpu_layers).
  if (with_dashes != name) {
    if (const std::string own = declared_name(*engine, with_dashes); !own.empty())
      return "; did you mean --" + with_dashes + "? (vramplan writes engine flags with dashes)";
  }
  std::vector<std::string> owners;
  std::string canonical;      // the owning engine's option name, for the role lookup
  std::string spelled = name;  // as the owner writes it (dashes for an underscored --max_num_seqs)
  for (const auto& entry : engine_registry()) {
    if (entry.name == engine->name()) continue;
    std::unique_ptr<Engine> other;
    try {
      other = entry.make(data_dir, "");
    } catch (const Error&) {
      continue;
    }
    std::string own = declared_name(*other, name);
    if (own.empty() && !(own = declared_name(*other, with_dashes)).empty()) spelled = with_dashes;
    if (own.empty()) continue;
    owners.emplace_back(entry.name);
    if (canonical.empty()) canonical = own;
  }
  if (owners.empty()) return "";
  std::string who;
  for (std::size_t i = 0; i < owners.size(); ++i)
    who += (i == 0 ? "" : i + 1 == owners.size() ? " and " : ", ") + owners[i];
  std::string hint = "; --" + spelled + " is a flag of " + who + ", not of " + std::string(engine->name());
  for (const auto& role : flag_roles()) {
    const bool in_role = std::any_of(role.spellings.begin(), role.spellings.end(), [&](const FlagSpelling& s) {
      return std::find(s.flags.begin(), s.flags.end(), canonical) != s.flags.end();
    });
    if (!in_role) continue;
    const FlagSpelling* mine = spelling_of(role, engine->name());
    if (mine == nullptr) return hint + "; " + std::string(engine->name()) + " takes no flag for " + std::string(role.setting);
    hint += "; " + std::string(engine->name()) + (mine->flags.size() > 1 ? "'s flags for " : "'s flag for ") +
            std::string(role.setting) + (mine->flags.size() > 1 ? " are " : " is ") + shown(*mine);
    if (!role.caveat.empty()) hint += " (" + std::string(role.caveat) + ")";
    return hint;
  }
  return hint;
}

}  // namespace vramplan::memory
