// vramplan/memory/engine_profiles.hpp — the factory of each engine profile, one per file
// (planner/src/memory/<engine>_engine.cpp), listed once in engine_registry().
#pragma once

#include <filesystem>
#include <memory>
#include <string_view>

#include "vramplan/memory/engine.hpp"

namespace vramplan::memory {

std::unique_ptr<Engine> make_vllm_engine(const std::filesystem::path& data_dir, std::string_view version);
std::unique_ptr<Engine> make_sglang_engine(const std::filesystem::path& data_dir, std::string_view version);
std::unique_ptr<Engine> make_trtllm_engine(const std::filesystem::path& data_dir, std::string_view version);
std::unique_ptr<Engine> make_hf_engine(const std::filesystem::path& data_dir, std::string_view version);
std::unique_ptr<Engine> make_tei_engine(const std::filesystem::path& data_dir, std::string_view version);
std::unique_ptr<Engine> make_llamacpp_engine(const std::filesystem::path& data_dir, std::string_view version);

}  // namespace vramplan::memory
