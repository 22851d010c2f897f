// The dimensions shared by the vision towers vramplan counts (vision_siglip.cpp, vision_llama4.cpp).
#include "model/hf_family.hpp"

namespace vramplan::hf {

VisionDims read_vision_dims(const JsonView& vision) {
  VisionDims d;
  d.hidden = vision.req_count("hidden_size");
  d.intermediate = vision.req_count("intermediate_size");
  d.layers = vision.req_count("num_hidden_layers");
  d.patch = vision.req_count("patch_size");
  d.image = vision.req_count("image_size");
  d.channels = vision.opt_u64("num_channels").value_or(3);
  if (d.image % d.patch != 0) vision.fail_at("image_size", "is not a multiple of patch_size");
  return d;
}

}  // namespace vramplan::hf
