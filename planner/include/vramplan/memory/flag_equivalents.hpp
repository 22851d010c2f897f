// vramplan/memory/flag_equivalents.hpp — one setting, spelled by each engine's own flag.
//
// vramplan takes each engine's flags under the engine's own names (vLLM --max-model-len, SGLang
// --context-length, ...). A user who plans one deployment under several engines, or copies a launch
// line, types another engine's flag; the command line then says whose flag it is and, where the
// engines share the setting, this engine's spelling of it (planner/src/memory/flag_equivalents.cpp).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace vramplan::memory {

//! One engine's flag(s) for a setting, as vramplan declares them ("max-model-len"), and the value
//! that gives the setting when the flag is a switch of the opposite sense ("false").
struct FlagSpelling {
  std::string_view engine;                 //!< registry name ("vllm")
  std::vector<std::string_view> flags;     //!< option names, without dashes
  std::string_view value;                  //!< "" or the value to give
};

//! A setting several engines take under different flags.
struct FlagRole {
  std::string_view setting;  //!< "the context length"
  std::vector<FlagSpelling> spellings;
  std::string_view caveat;   //!< where the engines' quantities differ; "" when they agree
};

//! Every shared setting (planner/src/memory/flag_equivalents.cpp).
const std::vector<FlagRole>& flag_roles();

//! The settings the simulator names when a limit held requests back (sim::HeldBack).
inline constexpr std::string_view kSettingMemoryShare = "the share of GPU memory it takes";
inline constexpr std::string_view kSettingRunningCap = "the running-sequence cap";
inline constexpr std::string_view kSettingStepTokens = "the tokens of one forward step";

//! Engine `engine`'s (registry name) first flag for `setting` (a FlagRole::setting), without
//! dashes; "" when it takes none.
std::string_view flag_for_setting(std::string_view setting, std::string_view engine);

//! For a flag the engine `engine_spec` ("sglang", "vllm@0.17") does not declare: a clause naming
//! the engines that declare it and this engine's flag for the same setting, or the dashed spelling
//! of an underscored flag (TensorRT-LLM's own `--max_seq_len`). "" when nothing is known of the
//! flag (or the engine itself is unknown: that error is reported elsewhere).
std::string foreign_flag_hint(std::string_view flag, std::string_view engine_spec,
                              const std::filesystem::path& data_dir);

}  // namespace vramplan::memory
