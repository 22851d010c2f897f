#include "vramplan/memory/engine_data.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "vramplan/core/error.hpp"
#include "vramplan/core/version.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/io/json_skim.hpp"

namespace vramplan::memory {

namespace {

std::vector<std::uint64_t> prefix(const std::vector<std::uint64_t>& v, std::size_t n) {
  return {v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(v.size(), n))};
}

// Versions compare on the precision of the bound: "0.18.2" lies inside [0.17, 0.18] because
// its first two parts (0.18) do.
bool within(std::string_view v, std::string_view min, const std::optional<std::string>& max) {
  const auto pv = version_numbers(v);
  const auto pmin = version_numbers(min);
  if (prefix(pv, pmin.size()) < pmin) return false;
  if (!max) return true;
  const auto pmax = version_numbers(*max);
  return prefix(pv, pmax.size()) <= pmax;
}

}  // namespace

int compare_versions(std::string_view a, std::string_view b) {
  const auto pa = version_numbers(a), pb = version_numbers(b);
  return pa < pb ? -1 : (pb < pa ? 1 : 0);
}

EngineProfileData EngineProfileData::load(const std::filesystem::path& data_dir,
                                          std::string_view engine, std::string_view version) {
  // A plan needs one profile of the file: the file is skimmed (io/json_skim.hpp) and only the
  // version bounds of each profile and the chosen profile are parsed. Parsing all of vllm.json
  // was a sixth of `vramplan check` (callgrind); every profile is still validated by
  // tests/unit/memory/engine_data_test.cpp, which loads each one.
  const auto path = data_dir / "engines" / (std::string(engine) + ".json");
  const SkimmedFile file = SkimmedFile::read(path, "an object with \"engine\" and \"profiles\"");
  const auto top_string = [&](std::string_view key) {
    const nlohmann::json v = file.parse(file.required(key));
    return JsonView(v, file.file(), "/" + std::string(key)).as_string();
  };
  EngineProfileData out;
  out.file_ = file.file();
  out.engine_ = top_string("engine");
  if (out.engine_ != engine)
    throw_input(out.file_, "/engine", "expected '" + std::string(engine) + "'");
  const std::string wanted = version.empty() ? top_string("default_profile") : std::string(version);
  out.assumed_ = version.empty();
  out.release_ = wanted;

  // Each profile's name and version range. A profile whose bounds the skimmer cannot read as
  // strings is parsed, so that its fault is worded as the full reader words it.
  struct Bounds {
    std::string name, min;
    std::optional<std::string> max;
  };
  const auto texts = skim_array(file.required("profiles"), file.source());
  std::vector<Bounds> bounds;
  bounds.reserve(texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    Bounds b{skim_string_member(texts[i], "version", file.source()),
             skim_string_member(texts[i], "min_version", file.source()), std::nullopt};
    const std::string max = skim_string_member(texts[i], "max_version", file.source());
    if (!max.empty()) b.max = max;
    if (b.name.empty() || b.min.empty()) {
      const nlohmann::json doc = file.parse(texts[i]);
      const JsonView p(doc, file.file(), "/profiles/" + std::to_string(i));
      b = {p.req_string("version"), p.req_string("min_version"), p.opt_string("max_version")};
    }
    bounds.push_back(std::move(b));
  }

  std::string known;
  // A version no range holds is planned with the nearest older profile (the one with the
  // highest min_version at or below it), or with the oldest one when it predates them all; the
  // note says which (issue 17: an unknown version is never an error).
  std::optional<std::size_t> chosen, nearest_older, oldest;
  // A version written as a profile's own name ("sglang@0.5") is that profile, even where an older
  // profile's range also holds it ("0.5" reads as 0.5.0, inside 0.4.7 - 0.5.2).
  for (std::size_t i = 0; i < bounds.size() && !out.assumed_; ++i)
    if (bounds[i].name == wanted) chosen = i;
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    const auto& [name, min, max] = bounds[i];
    known += (known.empty() ? "" : ", ") + name + " (" + min + (max ? "-" + *max : "+") + ")";
    if (out.assumed_ ? name == wanted : within(wanted, min, max)) {
      if (!chosen) chosen = i;
      continue;
    }
    if (out.assumed_) continue;
    if (!oldest || compare_versions(min, bounds[*oldest].min) < 0) oldest = i;
    if (compare_versions(min, wanted) <= 0 &&
        (!nearest_older || compare_versions(min, bounds[*nearest_older].min) > 0))
      nearest_older = i;
  }
  if (!chosen && !out.assumed_) {
    chosen = nearest_older ? nearest_older : oldest;
    if (chosen)
      out.substitute_ = nearest_older ? "no profile covers " + std::string(engine) + " " + wanted +
                                            ": planned with the nearest older profile"
                                      : std::string(engine) + " " + wanted +
                                            " is older than every profile (outside the profiled range): "
                                            "planned with the oldest profile";
  }
  if (!chosen)
    throw_unknown("unknown " + std::string(engine) + " version '" + wanted + "' (profiles: " + known + ")");
  const nlohmann::json doc = file.parse(texts[*chosen]);
  const JsonView p(doc, file.file(), "/profiles/" + std::to_string(*chosen));
  const std::string min = p.req_string("min_version");
  const auto max = p.opt_string("max_version");
  out.version_ = p.req_string("version");
  out.description_ = p.req_string("description");
  out.range_ = min + (max ? " - " + *max : "+");
  out.profile_index_ = *chosen;
  out.params_ = p.at("params").raw();
  if (!out.params_.is_object()) p.fail_at("params", "expected an object");
  return out;
}

std::string EngineProfileData::note() const {
  return engine_ + " " + version_ + " profile (versions " + range_ + ")" +
         (assumed_ ? "; assumed because no version was given (use --engine " + engine_ +
                         "@<version>)"
                   : "") +
         (substitute_.empty() ? "" : "; " + substitute_);
}

const nlohmann::json& EngineProfileData::param(const std::string& name) const {
  const auto it = params_.find(name);
  const std::string ptr = "/profiles/" + std::to_string(profile_index_) + "/params/" + name;
  if (it == params_.end() || !it->is_object() || !it->contains("value") || !it->contains("source"))
    throw_input(file_, ptr, "expected {\"value\": ..., \"source\": ...}");
  return *it;
}

double EngineProfileData::number(const std::string& p) const {
  const auto& v = param(p).at("value");
  if (!v.is_number()) throw_input(file_, p, "expected a number");
  return v.get<double>();
}

std::uint64_t EngineProfileData::u64(const std::string& p) const {
  const auto& v = param(p).at("value");
  if (!v.is_number_unsigned()) throw_input(file_, p, "expected a non-negative integer");
  return v.get<std::uint64_t>();
}

bool EngineProfileData::flag(const std::string& p) const {
  const auto& v = param(p).at("value");
  if (!v.is_boolean()) throw_input(file_, p, "expected true or false");
  return v.get<bool>();
}

std::string EngineProfileData::string(const std::string& p) const {
  const auto& v = param(p).at("value");
  if (!v.is_string()) throw_input(file_, p, "expected a string");
  return v.get<std::string>();
}

std::string EngineProfileData::source(const std::string& p) const {
  const auto& v = param(p).at("source");
  return v.is_string() ? v.get<std::string>() : std::string();
}

JsonView EngineProfileData::table(const std::string& p) const {
  return JsonView(param(p).at("value"), file_, "/profiles/" + std::to_string(profile_index_) + "/params/" + p + "/value");
}

}  // namespace vramplan::memory
