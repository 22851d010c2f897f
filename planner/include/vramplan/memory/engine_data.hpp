// vramplan/memory/engine_data.hpp — per-engine, per-version parameters (data/engines/<name>.json).
//
// A file holds version profiles; each profile covers [min_version, max_version] and carries
// named parameters, every one with its value and its source:
//   {"engine": "vllm", "default_profile": "0.19",
//    "profiles": [{"version": "0.19", "min_version": "0.19", "max_version": null,
//                  "description": "...",
//                  "params": {"block_size": {"value": 16, "source": "https://..."}, ...}}]}
// Engines read their parameters through EngineProfileData so a missing or mistyped parameter is
// an error naming the file and JSON pointer.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "vramplan/io/json_file.hpp"

namespace vramplan::memory {

class EngineProfileData {
 public:
  //! Loads data_dir/engines/<engine>.json and selects the profile for `version` ("" = the
  //! default profile; "0.15" or "0.15.1" = the profile whose range contains it). A version no
  //! range contains gets the nearest older profile, or the oldest when it predates them all,
  //! and note() says so. Throws Error(UnknownName) only when the file has no profile at all.
  static EngineProfileData load(const std::filesystem::path& data_dir, std::string_view engine,
                                std::string_view version);

  const std::string& engine() const { return engine_; }
  const std::string& version() const { return version_; }         //!< profile name ("0.19")
  //! The release asked for ("0.15.1"; the default profile's name when none was given). A profile
  //! covers a range of releases; a default that changed inside it (vLLM's async scheduling from
  //! 0.14, inside the 0.11 profile) follows the release, not the profile.
  const std::string& release() const { return release_; }
  const std::string& description() const { return description_; }
  bool assumed() const { return assumed_; }  //!< true when the caller gave no version
  //! True when no profile's range holds the requested version (a neighbouring one was used).
  bool substituted() const { return !substitute_.empty(); }
  //! "vLLM 0.19 profile (versions 0.19+; assumed, no version given)"
  std::string note() const;

  //! Whether the profile carries `param` (for parameters only some versions have).
  bool has(const std::string& param) const { return params_.contains(param); }
  double number(const std::string& param) const;
  std::uint64_t u64(const std::string& param) const;
  bool flag(const std::string& param) const;
  std::string string(const std::string& param) const;
  std::string source(const std::string& param) const;
  //! A table-valued parameter (array or object) as a JsonView whose errors name this file and
  //! the value's JSON pointer; the engine validates its rows.
  JsonView table(const std::string& param) const;

 private:
  const nlohmann::json& param(const std::string& name) const;
  std::string file_;
  std::string engine_, version_, description_, range_, release_;
  std::string substitute_;  //!< why another profile stands in for the requested version
  std::size_t profile_index_ = 0;
  bool assumed_ = false;
  nlohmann::json params_;
};

//! "0.17.1" -> comparable tuple (a PEP 440 suffix such as ".post1" is ignored); throws
//! Error(Usage) on anything else but dotted integers.
int compare_versions(std::string_view a, std::string_view b);

}  // namespace vramplan::memory
