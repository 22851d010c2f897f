// vramplan/plan/launch_command.hpp — the command that starts the engine exactly as it was planned
// (issue 15, "what is rented is what was planned"): every flag the plan resolved — parallel sizes,
// max length, memory fraction, batch and token limits, KV dtype, quantization — from the plan's
// engine_view and the user's flags. One table row per engine.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/memory/plan_request.hpp"

namespace vramplan::plan {

struct LaunchCommand {
  std::vector<std::string> argv;  //!< empty when the engine has no server command (HF transformers)
  std::string note;               //!< what the user must fill in or know ("" when nothing)
  std::string line() const;       //!< argv joined for a shell (arguments with spaces quoted)
};

//! `model` is the --model the user gave (a catalogue id has no checkpoint path: the note says so).
//! A plan for other weights than the checkpoint stores (--weights) gets the flag that converts the
//! checkpoint at load (--dtype; vLLM and SGLang's online fp8, vLLM's in-flight bitsandbytes), unless
//! the user gave it, else a note to load a checkpoint in that format.
LaunchCommand launch_command(const memory::PlanOutcome& outcome, const memory::EngineArgs& args,
                             const std::string& model);
//! The same for a plan made outside memory::resolve_plan (check, sweep): the plan, the card it was
//! planned on (its node size decides a launch node by node) and its TP / PP layout.
LaunchCommand launch_command(const memory::MemoryPlan& plan, const GpuSpec& gpu, std::uint64_t tp, std::uint64_t pp,
                             const memory::EngineArgs& args, const std::string& model);

nlohmann::json launch_json(const LaunchCommand& command);

}  // namespace vramplan::plan
