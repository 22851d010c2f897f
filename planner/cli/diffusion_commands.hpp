// diffusion_commands.hpp — `plan`, `check`, `sweep` and `inspect` for a diffusion pipeline (a catalogue id
// under models/diffusion/ or a diffusers directory): the subcommands hand their arguments here
// when --model names one (docs/diffusion.md).
#pragma once

#include <string>
#include <vector>

namespace vramplan::cli {

//! True when the --model (or inspect's positional model) of `args` is a diffusion pipeline.
bool names_diffusion_pipeline(const std::vector<std::string>& args, bool positional_model);
//! For sweep: true when --model is a pipeline or a comma-separated list of pipelines; a list that
//! mixes pipelines and LLMs is refused (usage error).
bool names_diffusion_pipelines(const std::vector<std::string>& args);
int run_diffusion_plan(const std::vector<std::string>& args);
int run_diffusion_check(const std::vector<std::string>& args);
int run_diffusion_inspect(const std::vector<std::string>& args);
//! `sweep --model <pipeline>[,<pipeline>...]`: pipelines x GPUs x batches x memory modes ranked by
//! USD per 1000 images.
int run_diffusion_sweep(const std::vector<std::string>& args);

}  // namespace vramplan::cli
