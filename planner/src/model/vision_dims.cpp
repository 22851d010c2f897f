// The dimensions shared by the vision towers vramplan counts (vision_siglip.cpp, vision_llama4.cpp).
#include "model/hf_family.hpp"

namespace vramplan::hf {

std::uint64_t vision_count(const JsonView& vision, std::string_view key) {
  const auto n = checked_dimension(vision.at(key), key);
  if (n == 0) vision.fail_at(key, "must be greater than zero");
  return n;
}

VisionDims read_vision_dims(const JsonView& vision) {
  VisionDims d;
  d.hidden = vision_count(vision, "hidden_size");
  d.intermediate = vision_count(vision, "intermediate_size");
  d.layers = vision_count(vision, "num_hidden_layers");
  d.patch = vision_count(vision, "patch_size");
  d.image = vision_count(vision, "image_size");
  const auto channels = vision.get("num_channels");
  d.channels = channels ? checked_dimension(*channels, "num_channels") : 3;
  if (d.image % d.patch != 0) vision.fail_at("image_size", "is not a multiple of patch_size");
  return d;
}

}  // namespace vramplan::hf
