// catalogue_counts.hpp — the check every hand-counted catalogue entry shares: it loads through the
// real catalogue loader, its total and active parameter counts are the hand-derived ones, and it
// carries the publisher's stated total.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/model/inventory.hpp"

namespace vramplan::test {

//! Catalogue entry `id`, loaded once per test binary (the entries are read-only data).
inline const ModelSpec& cached_catalogue_model(const std::string& id) {
  static std::map<std::string, ModelSpec> cache;
  auto it = cache.find(id);
  if (it == cache.end()) it = cache.emplace(id, load_catalogue_model(source_root(), id)).first;
  return it->second;
}

//! Loads catalogue entry `id`, expects its counts and published total; returns the spec for the
//! entry's own checks.
inline ModelSpec expect_catalogue_counts(const std::string& id, std::uint64_t total, std::uint64_t active,
                                         std::uint64_t published_total) {
  ModelSpec spec = load_catalogue_model(source_root(), id);
  const ParamCounts c = count_params(spec);
  EXPECT_EQ(c.total, total) << id;
  EXPECT_EQ(c.active, active) << id;
  EXPECT_TRUE(spec.source.published_params.has_value()) << id << " has no _published_params";
  if (spec.source.published_params) {
    EXPECT_EQ(*spec.source.published_params, published_total) << id;
  }
  return spec;
}

//! The active count without `embedding_and_head` parameters, in billions (what publishers quote).
inline double active_billions_without(const ModelSpec& spec, std::uint64_t embedding_and_head) {
  return static_cast<double>(count_params(spec).active - embedding_and_head) / 1e9;
}

inline bool has_tensor(const ModelSpec& spec, const std::string& name) {
  return std::any_of(spec.tensors.begin(), spec.tensors.end(), [&](const auto& t) { return t.name == name; });
}

}  // namespace vramplan::test
