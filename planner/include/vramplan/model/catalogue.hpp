// vramplan/model/catalogue.hpp — the built-in model catalogue (models/<id>.json).
//
// Each entry is a Hugging Face config.json, key for key, plus metadata keys starting with '_':
// `_id` (must equal the file name), `_source` (URL of the pinned copy the values came from),
// `_published_params` (the publisher's stated parameter count) and `_published_params_source`.
// An entry is loaded through model_from_hf_config, so adding a model is adding a file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vramplan/io/data_root.hpp"
#include "vramplan/model/hf_config.hpp"
#include "vramplan/model/spec.hpp"

namespace vramplan {

//! Ids of every models/*.json entry, sorted.
std::vector<std::string> catalogue_ids(const DataRoot& root);

//! Loads catalogue entry `id`. Throws Error(UnknownName) listing close matches when there is no
//! such entry, Error(InputFile) when the entry is malformed (bad metadata or config).
ModelSpec load_catalogue_model(const DataRoot& root, std::string_view id,
                               const HfLoadOptions& options = {});

//! Up to `max` catalogue ids closest to `what` (edit distance / substring), best first.
std::vector<std::string> closest_ids(std::string_view what, const std::vector<std::string>& ids,
                                     std::size_t max = 5);

}  // namespace vramplan

namespace vramplan {

//! Feature tags of a model for listing and filtering: "moe", "mla", "swa" (sliding-window
//! layers), "chunked" (chunked local attention), "tied", "multimodal", "mtp", "quantized"
//! (the checkpoint carries a quantization_config).
std::vector<std::string> model_features(const ModelSpec& spec);

}  // namespace vramplan
