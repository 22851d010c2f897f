// vramplan/memory/inert_flags.hpp — flags an engine takes that change neither its memory nor its
// step times: server addressing, logging, output parsing, multi-node wiring. vramplan accepts them
// so that a real launch command (its own `launch:` line included) can be given as it is, and names
// them in a note instead of dropping them silently. A flag that could move a figure does not
// belong here: vramplan models it or refuses it.
#pragma once

#include <span>
#include <string_view>

namespace vramplan::memory {

struct InertFlag {
  std::string_view name;  //!< long name without dashes, as the engine spells it
  bool takes_value = true;
  std::string_view what;  //!< what it sets, for the note
};

//! The inert flags of `engine` ("vllm", "sglang", "trtllm", "llamacpp"); empty for the others.
std::span<const InertFlag> inert_flags(std::string_view engine);

}  // namespace vramplan::memory
