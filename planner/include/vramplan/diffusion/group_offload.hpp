// vramplan/diffusion/group_offload.hpp — diffusers group offloading (src/diffusers/hooks/
// group_offloading.py at diffusers 58eb52c0): the `--offload group:...` spelling and the weights one
// component keeps on the GPU while its forward runs (docs/diffusion.md "Group offloading").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vramplan/diffusion/component.hpp"

namespace vramplan::diffusion {

//! One component's setting: apply_group_offloading's offload_type / num_blocks_per_group /
//! use_stream / record_stream, or `gpu` (left out of the offloading and kept on the GPU, as
//! DiffusionPipeline.enable_group_offload does with exclude_modules).
struct GroupSetting {
  enum class Level { Block, Leaf, OnGpu };
  Level level = Level::Leaf;
  std::uint64_t blocks_per_group = 1;  //!< num_blocks_per_group (block level)
  bool stream = false;                 //!< use_stream: the next group is prefetched while one runs
  bool record_stream = false;          //!< record_stream (only with use_stream)
};

//! `--offload group:<setting>[/<component>=<setting>]...`: the first setting for every component
//! (DiffusionPipeline.enable_group_offload), then per-component settings (apply_group_offloading
//! on that component, as the diffusers docs mix them).
struct GroupOffload {
  GroupSetting all;
  std::vector<std::pair<std::string, GroupSetting>> components;
  const GroupSetting& setting(std::string_view component) const;
};

//! `text` is what follows "group:"; Error(Usage) with the accepted spellings otherwise.
GroupOffload parse_group_offload(std::string_view text);
std::string group_offload_text(const GroupOffload& g);  //!< canonical spelling, without "group:"
std::string group_setting_text(const GroupSetting& s);

//! What one component holds on the GPU during its own forward under a setting.
struct GroupResident {
  std::uint64_t elements = 0;  //!< parameters + buffers (block level, OnGpu)
  std::uint64_t leaves = 0;    //!< leaf level: how many largest leaves (1, 2 with use_stream); elements 0
  std::string detail;          //!< the groups in words
};
//! Error(Usage) where diffusers' hooks cannot serve the stage (block level on a VAE whose decode()
//! no group hook reaches).
GroupResident group_resident(const Component& c, const GroupSetting& s);

}  // namespace vramplan::diffusion
