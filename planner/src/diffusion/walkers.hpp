// The module-tree walks of the component classes (one file each), registered in components.cpp.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "vramplan/diffusion/component.hpp"

namespace vramplan::diffusion {

Tally walk_clip_text(const nlohmann::json& config, const std::string& file, const Geometry* g);
Tally walk_clip_text_projection(const nlohmann::json& config, const std::string& file, const Geometry* g);
Tally walk_t5_encoder(const nlohmann::json& config, const std::string& file, const Geometry* g);
Tally walk_unet_2d_condition(const nlohmann::json& config, const std::string& file, const Geometry* g);
Tally walk_sd3_transformer(const nlohmann::json& config, const std::string& file, const Geometry* g);
Tally walk_flux_transformer(const nlohmann::json& config, const std::string& file, const Geometry* g);
Tally walk_cogvideox_transformer(const nlohmann::json& config, const std::string& file, const Geometry* g);
Tally walk_autoencoder_kl_cogvideox(const nlohmann::json& config, const std::string& file, const Geometry* g);
Tally walk_umt5_encoder(const nlohmann::json& config, const std::string& file, const Geometry* g);
Tally walk_wan_transformer(const nlohmann::json& config, const std::string& file, const Geometry* g);
Tally walk_autoencoder_kl_wan(const nlohmann::json& config, const std::string& file, const Geometry* g);
Tally walk_autoencoder_kl(const nlohmann::json& config, const std::string& file, const Geometry* g);

}  // namespace vramplan::diffusion
