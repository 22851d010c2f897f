// vramplan/model/checkpoint.hpp — a ModelSpec from a checkpoint directory (config.json +
// safetensors headers).
//
// The config gives the architecture and the logical tensor shapes; when safetensors files are
// present, each inventory tensor gets the exact stored bytes and format of the file's tensors
// (per-expert tensors summed into the stacked expert tensor, quantization companions such as
// weight_scale_inv / qzeros / MXFP4 scales added to their weight), and file tensors the config
// does not describe (vision tower, MTP, extra buffers) are added with roles from their names.
#pragma once

#include <filesystem>

#include "vramplan/model/hf_config.hpp"
#include "vramplan/model/spec.hpp"
#include "vramplan/io/format_table.hpp"

namespace vramplan {

ModelSpec model_from_checkpoint_dir(const std::filesystem::path& dir, const FormatTable& formats,
                                    const HfLoadOptions& options = {});

//! True when `dir` holds model.safetensors or model.safetensors.index.json.
bool has_safetensors(const std::filesystem::path& dir);

}  // namespace vramplan
