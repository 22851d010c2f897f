// Flag parsing shared by every engine profile, and the MemoryPlan totals.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/memory/engine.hpp"

namespace vramplan::memory {

Bytes MemoryPlan::total_bytes() const {
  return weights_bytes() + kv_cache_bytes() + activation_bytes() + overhead_bytes();
}

std::int64_t MemoryPlan::headroom_bytes() const { return signed_difference(gpu_total, total_bytes()); }

std::optional<std::string> arg_string(const EngineArgs& args, const std::string& name) {
  const auto it = args.find(name);
  if (it == args.end()) return std::nullopt;
  return it->second;
}

std::optional<double> arg_double(const EngineArgs& args, const std::string& name) {
  const auto text = arg_string(args, name);
  if (!text) return std::nullopt;
  double value = 0;
  const auto* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value))
    throw_usage("--" + name + ": expected a number, got " + excerpt(*text));
  return value;
}

std::optional<std::uint64_t> arg_u64(const EngineArgs& args, const std::string& name) {
  const auto text = arg_string(args, name);
  if (!text) return std::nullopt;
  std::uint64_t value = 0;
  const auto* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end)
    throw_usage("--" + name + ": expected a non-negative integer, got " + excerpt(*text));
  // No engine setting (tokens, sequences, bytes) comes near 2^53; values from 2^63 up had wrapped
  // to 0 in signed arithmetic further on (a KV block of 2^63 tokens gave a pool of 0 bytes).
  if (value > kMaxFlagInteger)
    throw_usage("--" + name + ": " + *text + " is beyond any real setting (at most 2^53 = " +
                std::to_string(kMaxFlagInteger) + ")");
  return value;
}

bool arg_switch(const EngineArgs& args, const std::string& name) {
  const auto text = arg_string(args, name);
  if (!text) return false;
  if (*text == "true" || *text == "1" || text->empty()) return true;
  if (*text == "false" || *text == "0") return false;
  throw_usage("--" + name + ": expected true or false, got '" + *text + "'");
}

bool arg_on_off(const EngineArgs& args, const std::string& name, bool fallback) {
  const bool on = arg_switch(args, name), off = arg_switch(args, "no-" + name);
  if (on && off) throw_usage("--" + name + " and --no-" + name + " contradict each other: give one");
  return on ? true : off ? false : fallback;
}

std::string flag_with_alias(const std::vector<EngineOption>& options, std::string_view alias) {
  for (const auto& o : options) {
    if (o.name == alias) return o.name;
    for (const auto& a : o.aliases)
      if (a == alias) return o.name;
  }
  return "";
}

// Spellings of "the longest sequence the engine is configured for", one per engine family
// (vLLM --max-model-len, SGLang --context-length, TensorRT-LLM --max-seq-len, llama.cpp
// --ctx-size). The engine declares which one it takes.
constexpr std::array<std::string_view, 4> kContextFlags = {"max-model-len", "context-length", "max-seq-len", "ctx-size"};

std::string context_flag_of(const std::vector<EngineOption>& options) {
  for (const auto& o : options)
    for (const auto name : kContextFlags)
      if (o.name == name) return o.name;
  return "";
}

void check_known_args(const EngineArgs& args, const std::vector<EngineOption>& options,
                      std::string_view engine) {
  for (const auto& [key, value] : args) {
    // An init-capture: clang before 16 (the fuzz build) cannot capture a structured binding.
    const auto option = std::find_if(options.begin(), options.end(),
                                     [&flag = key](const EngineOption& o) { return o.name == flag; });
    if (option == options.end()) {
      std::string names;
      for (const auto& o : options) names += (names.empty() ? "--" : ", --") + o.name;
      throw_usage("--" + key + " is not a flag of engine '" + std::string(engine) +
                  "' (its flags: " + names + ")");
    }
    if (option->is_switch) continue;
    // The value's form, whether or not this plan reads it (the readers throw the same errors).
    switch (option->value) {
      case OptionValue::text: break;
      case OptionValue::whole: arg_u64(args, key); break;
      case OptionValue::number: arg_double(args, key); break;
      case OptionValue::bandwidth: parse_gbps(value, "--" + key); break;
    }
  }
}

}  // namespace vramplan::memory
