// The diffusion request a record of tests/accuracy/data/diffusion_measured.jsonl describes: read
// once, so the accuracy doc and the check's upper bound plan each record the same way.
#pragma once

#include <nlohmann/json.hpp>

#include "vramplan/diffusion/diffusion_plan.hpp"

namespace vramplan::test {

inline diffusion::DiffusionRequest diffusion_request_of(const nlohmann::json& r) {
  diffusion::DiffusionRequest req;
  req.model = r.at("model").get<std::string>();
  req.gpu = r.at("gpu").get<std::string>();
  req.batch = r.at("batch").get<std::uint64_t>();
  req.dtype = r.at("dtype").get<std::string>();
  req.weights = r.at("weights").get<std::string>();
  const auto mode = diffusion::parse_offload(r.at("offload").get<std::string>());
  req.offload = mode.kind;
  req.group = mode.group;
  req.eager_attention = r.at("attention").get<std::string>() == "eager";
  req.vae_tiling = r.value("vae_tiling", false);
  if (r.contains("frames")) req.frames = r.at("frames").get<std::uint64_t>();
  return req;
}

}  // namespace vramplan::test
