// The dimensions shared by the vision towers vramplan counts (vision_siglip.cpp, vision_llama4.cpp).
#include "model/hf_family.hpp"

namespace vramplan::hf {

namespace {

std::uint64_t count(const JsonView& vision, std::string_view key) {
  const auto n = checked_dimension(vision.at(key), key);
  if (n == 0) vision.fail_at(key, "must be greater than zero");
  return n;
}

}  // namespace

VisionDims read_vision_dims(const JsonView& vision) {
  VisionDims d;
  d.hidden = count(vision, "hidden_size");
  d.intermediate = count(vision, "intermediate_size");
  d.layers = count(vision, "num_hidden_layers");
  d.patch = count(vision, "patch_size");
  d.image = count(vision, "image_size");
  const auto channels = vision.get("num_channels");
  d.channels = channels ? checked_dimension(*channels, "num_channels") : 3;
  if (d.image % d.patch != 0) vision.fail_at("image_size", "is not a multiple of patch_size");
  return d;
}

}  // namespace vramplan::hf
