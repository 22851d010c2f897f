// vramplan/core/version.hpp — an engine release number as comparable parts, shared by the engine
// profiles (memory/engine_data.cpp: which profile a version selects) and the release defaults an
// engine resolves (memory/vllm_async_scheduling.cpp: whether a vLLM release schedules asynchronously).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace vramplan {

//! "0.6.4.post1", "0.8.5.dev169+gce17db808", "0.7.4rc1" -> {0, 6, 4}, {0, 8, 5}, {0, 7, 4}: the
//! leading dotted numbers are the version; a pre/post/dev/local suffix (PEP 440) after them is
//! ignored, so a pip-reported version selects the profile of its release. The vectors compare
//! lexicographically. Throws Error(Usage) on anything else.
std::vector<std::uint64_t> version_numbers(std::string_view v);

//! The numbers of a release an engine resolves its defaults for; empty for an empty or
//! non-numeric release ("nightly"), which stands for the current one.
std::vector<std::uint64_t> release_numbers(std::string_view release);

//! Whether `numbers` (release_numbers) name a release before `first`, the first release with a
//! feature; empty numbers stand for the current release, which is before none.
bool released_before(const std::vector<std::uint64_t>& numbers, const std::vector<std::uint64_t>& first);

}  // namespace vramplan
