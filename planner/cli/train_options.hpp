// train_options.hpp — what `train` and `sweep --mode train` share: the options that describe a
// training setup (method, precision, optimizer, offload, parallel sizes, batch shape, adapters)
// and the length of the run (--tokens or --epochs x --dataset-tokens), read into a
// train::TrainRequest. The layout options (--gpu, --gpus, --sharding, --grad-checkpointing) are
// each command's own: one value for `train`, lists for the sweep.
#pragma once

#include <optional>
#include <string>

#include "cli_common.hpp"
#include "vramplan/train/train_plan.hpp"

namespace vramplan::cli {

//! --model, --gpu-memory, --method ... --quantize-targets-only.
void add_train_setup_options(po::options_description& desc);
//! --tokens, --epochs, --dataset-tokens, --margin, --periods, --prices.
void add_train_run_options(po::options_description& desc);
//! The request those options describe (layout fields at their defaults). Error(Usage) on bad values.
train::TrainRequest read_train_setup(const po::variables_map& vm);
//! Tokens of the run; nullopt when neither --tokens nor --epochs is given.
std::optional<double> read_run_tokens(const po::variables_map& vm);
//! --grad-checkpointing's spelling -> the request's recompute fields (selective-op included).
void set_recompute(train::TrainRequest& request, const std::string& name);

}  // namespace vramplan::cli
