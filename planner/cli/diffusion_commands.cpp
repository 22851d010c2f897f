// `plan` / `check` / `inspect` for diffusion pipelines: their own options (resolution, batch,
// steps, guidance, offload, VAE tiling / slicing, dtype and denoiser weights); a flag of the LLM
// commands that means nothing for an image pipeline (--max-model-len, --kv-cache-dtype, ...) is
// refused naming the flags that apply.
#include "diffusion_commands.hpp"

#include <set>

#include "cli_common.hpp"
#include "decision_options.hpp"
#include "exit_codes.hpp"
#include "sweep_common.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/diffusion/diffusion_plan.hpp"
#include "vramplan/diffusion/pipeline.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/plan/diffusion_sweep.hpp"
#include "vramplan/plan/prices.hpp"

namespace vramplan::cli {

namespace {

std::string model_argument(const std::vector<std::string>& args, bool positional_model) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if ((a == "--model" || a == "-m") && i + 1 < args.size()) return args[i + 1];
    if (a.rfind("--model=", 0) == 0) return a.substr(8);
  }
  if (positional_model)
    for (std::size_t i = 0; i < args.size(); ++i)
      if (!args[i].empty() && args[i][0] != '-' && (i == 0 || args[i - 1].rfind("--", 0) != 0 || args[i - 1].find('=') != std::string::npos))
        return args[i];
  return {};
}

//! Refuses any --flag not declared for diffusion pipelines, naming the pipeline and the flags that apply.
void refuse_other_flags(const std::vector<std::string>& args, const po::options_description& desc,
                        const std::string& model) {
  std::set<std::string> known;
  std::string applies;
  for (const auto& o : desc.options()) {
    known.insert(o->long_name());
    if (o->long_name() != "help" && o->long_name() != "help-all") applies += (applies.empty() ? "--" : ", --") + o->long_name();
  }
  for (const auto& a : args) {
    if (a.size() < 3 || a.rfind("--", 0) != 0) continue;
    const std::string name = a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
    if (known.count(name)) continue;
    std::string pipeline = model;
    try {
      pipeline += ": " + diffusion::load_pipeline(model, data_root()).class_name;
    } catch (const Error&) {
    }
    throw_usage("--" + name + " does not apply to a diffusion pipeline (" + pipeline +
                "): no KV cache, no token generation; flags that apply: " + applies);
  }
}

// The options of one pipeline call that plan, check and sweep share.
void add_call_options(po::options_description& desc) {
  desc.add_options()
      ("model,m", po::value<std::string>(), "diffusion pipeline: catalogue id (vramplan models) or diffusers directory "
       "(sweep: a comma-separated list)")
      ("engine", po::value<std::string>()->default_value("diffusers"), "diffusers (the only engine for pipelines)")
      ("resolution", po::value<std::string>(), "WIDTHxHEIGHT in pixels (default: the pipeline's, 1024x1024)")
      ("steps", po::value<std::uint64_t>(), "num_inference_steps (default: the pipeline's)")
      ("frames", po::value<std::uint64_t>(), "num_frames of a video pipeline (default: the pipeline's, CogVideoX 49, Wan 81)")
      ("guidance", po::value<double>(), "guidance_scale (default: the pipeline's); CFG doubles the batch when > 1 (Wan: a second pass)")
      ("cfg", po::value<double>(), "same as --guidance")
      ("max-sequence-length", po::value<std::uint64_t>(), "T5 tokens (SD3 / FLUX)")
      ("dtype", po::value<std::string>(), "torch_dtype: fp16, bf16 or fp32 (default: the pipeline's usual)")
      ("weights", po::value<std::string>(), "denoiser weights: fp8, int8 or nf4 (default: --dtype)")
      ("vae-tiling", po::bool_switch(), "enable_vae_tiling")
      ("vae-slicing", po::bool_switch(), "enable_vae_slicing (decode one image at a time)")
      ("attention", po::value<std::string>()->default_value("sdpa"), "sdpa (default) or eager (score matrix materialised)");
}

void add_pipeline_options(po::options_description& desc, bool check) {
  add_call_options(desc);
  desc.add_options()
      ("gpu", po::value<std::string>(), "GPU catalogue id or custom:<size>")
      ("gpu-memory", po::value<std::string>(), "runtime-reported total per GPU (e.g. 79.18GiB)")
      ("batch", po::value<std::uint64_t>()->default_value(1), "images per call (num_images_per_prompt)")
      ("offload", po::value<std::string>()->default_value("none"),
       "none | model (enable_model_cpu_offload) | sequential (enable_sequential_cpu_offload) | "
       "group:block:N | group:leaf (enable_group_offload; +stream, /<component>=<setting>)");
  if (check)
    desc.add_options()
        ("headroom", po::value<std::string>()->default_value("0%"), "share of the GPU kept spare (as LLM check)")
        ("conservative", po::bool_switch(), "MARGINAL (fits on the expected peak only) counts as DOES NOT FIT")
        ("accept-marginal", po::bool_switch(), "MARGINAL counts as FITS: exit 0 instead of 6");
}

// The call's settings (add_call_options); GPU, batch and memory mode are the caller's.
diffusion::DiffusionRequest read_call(const po::variables_map& vm) {
  diffusion::DiffusionRequest r;
  if (!vm.count("model")) throw_usage("--model is required");
  r.model = vm["model"].as<std::string>();
  const std::string engine = vm["engine"].as<std::string>();
  if (engine.starts_with("diffusers@"))
    throw_usage("--engine " + engine + ": the diffusers plan follows its source of one release, not a version; give --engine diffusers");
  if (engine != "diffusers")
    throw_usage("engine '" + engine + "' does not run diffusion pipelines; " + r.model +
                " is planned as a diffusers pipeline (--engine diffusers, the default)");
  if (vm.count("resolution")) {
    const std::string res = vm["resolution"].as<std::string>();
    const auto x = res.find_first_of("xX");
    try {
      std::size_t used = 0;
      // Digits only: std::stoull reads "-8" as 2^64 - 8.
      if (x == std::string::npos || res.find_first_not_of("0123456789xX") != std::string::npos) throw std::invalid_argument(res);
      r.width = std::stoull(res.substr(0, x), &used);
      if (used != x) throw std::invalid_argument(res);
      r.height = std::stoull(res.substr(x + 1), &used);
      if (used != res.size() - x - 1) throw std::invalid_argument(res);
    } catch (const std::exception&) {
      throw_usage("--resolution '" + res + "': expected WIDTHxHEIGHT in pixels, e.g. 1024x1024");
    }
  }
  if (vm.count("steps")) r.steps = vm["steps"].as<std::uint64_t>();
  if (vm.count("frames")) r.frames = vm["frames"].as<std::uint64_t>();
  if (vm.count("guidance") && vm.count("cfg")) throw_usage("--guidance and --cfg are the same setting: give one");
  if (vm.count("guidance")) r.guidance = vm["guidance"].as<double>();
  if (vm.count("cfg")) r.guidance = vm["cfg"].as<double>();
  if (vm.count("max-sequence-length")) r.max_sequence_length = vm["max-sequence-length"].as<std::uint64_t>();
  if (vm.count("dtype")) r.dtype = vm["dtype"].as<std::string>();
  if (vm.count("weights")) r.weights = vm["weights"].as<std::string>();
  r.vae_tiling = vm["vae-tiling"].as<bool>();
  r.vae_slicing = vm["vae-slicing"].as<bool>();
  const std::string attn = vm["attention"].as<std::string>();
  if (attn != "sdpa" && attn != "eager") throw_usage("--attention '" + attn + "': expected sdpa or eager");
  r.eager_attention = attn == "eager";
  return r;
}

diffusion::DiffusionRequest read_request(const po::variables_map& vm) {
  diffusion::DiffusionRequest r = read_call(vm);
  if (vm.count("gpu")) r.gpu = vm["gpu"].as<std::string>();
  if (vm.count("gpu-memory")) r.gpu_memory = parse_gpu_memory(vm["gpu-memory"].as<std::string>(), "--gpu-memory");
  r.batch = vm["batch"].as<std::uint64_t>();
  const auto mode = diffusion::parse_offload(vm["offload"].as<std::string>());
  r.offload = mode.kind;
  r.group = mode.group;
  if (vm.count("headroom")) r.headroom = parse_fraction(vm["headroom"].as<std::string>(), "--headroom");
  return r;
}

int run_pipeline_plan(const std::vector<std::string>& args, bool check) {
  po::options_description desc("Options (diffusion pipelines)");
  add_pipeline_options(desc, check);
  add_common_options(desc);
  refuse_other_flags(args, desc, model_argument(args, false));
  po::variables_map vm;
  if (!parse_args(check ? "check" : "plan", "--model <pipeline> --gpu G [--resolution WxH] [--batch N] [--offload model]",
                  desc, args, vm))
    return kExitOk;
  const auto opts = read_common_options(vm);
  const bool conservative = check && vm["conservative"].as<bool>(), accept = check && vm["accept-marginal"].as<bool>();
  if (conservative && accept) throw_usage("--conservative and --accept-marginal contradict each other: give one");
  const auto plan = diffusion::plan_diffusion(read_request(vm), data_root());
  // check: a verdict line first (scripts read line 1), then the plan it was decided on.
  emit(opts, diffusion::diffusion_plan_json(plan),
       (check ? diffusion::diffusion_verdict_line(plan) + "\n" : std::string()) + diffusion::diffusion_plan_text(plan));
  if (!check) return kExitOk;
  // The LLM checks' codes (exit_codes.cpp): 0 FITS, 6 MARGINAL (0 / 1 with --accept-marginal /
  // --conservative), 1 DOES NOT FIT.
  if (!plan.fits) return kExitDoesNotFit;
  if (plan.marginal) return accept ? kExitOk : conservative ? kExitDoesNotFit : kExitMarginal;
  return kExitOk;
}

}  // namespace

bool names_diffusion_pipeline(const std::vector<std::string>& args, bool positional_model) {
  const std::string model = model_argument(args, positional_model);
  return !model.empty() && diffusion::is_pipeline(model, data_root());
}

bool names_diffusion_pipelines(const std::vector<std::string>& args) {
  const std::string model = model_argument(args, false);
  if (model.find(',') == std::string::npos) return names_diffusion_pipeline(args, false);
  std::string pipelines, others;
  for (const auto& m : split_list(model))
    (diffusion::is_pipeline(m, data_root()) ? pipelines : others) += ", " + m;
  if (pipelines.empty()) return false;
  if (!others.empty())
    throw_usage("--model mixes diffusion pipelines (" + pipelines.substr(2) + ") with LLMs (" + others.substr(2) +
                "): sweep pipelines and LLMs separately");
  return true;
}

int run_diffusion_plan(const std::vector<std::string>& args) { return run_pipeline_plan(args, false); }

int run_diffusion_sweep(const std::vector<std::string>& args) {
  po::options_description desc("Options (sweep over a diffusion pipeline)");
  add_call_options(desc);
  desc.add_options()
      ("gpu", po::value<std::string>(), "GPUs, comma-separated (default: every card in the catalogue)")
      ("mig", po::bool_switch(), "without --gpu: include MIG slices")
      ("batch", po::value<std::string>()->default_value("1"), "images per call, comma-separated")
      ("offload", po::value<std::string>()->default_value("none"),
       "memory modes, comma-separated: none, model, sequential, group:block:N, group:leaf (+stream, /<component>=<setting>)")
      ("periods", po::value<std::string>()->default_value("3d,7d,30d"), "rental periods (h, d, w)")
      ("prices", po::value<std::string>(), "your own prices (vramplan.prices/1 JSON) instead of the catalogue's")
      ("top", po::value<std::size_t>()->default_value(20), "rows shown")
      ("headroom", po::value<std::string>()->default_value("0%"), "share of each GPU kept spare (as check)")
      ("conservative", po::bool_switch(), "leave out MARGINAL points (fit on the expected peak only)");
  add_common_options(desc);
  refuse_other_flags(args, desc, model_argument(args, false));
  po::variables_map vm;
  if (!parse_args("sweep", "--model <pipeline>[,<pipeline>] [--gpu G,G | --mig] [--batch 1,4] [--offload none,model] [--resolution WxH]",
                  desc, args, vm))
    return kExitOk;
  const auto opts = read_common_options(vm);
  plan::DiffusionSweepRequest req;
  req.base = read_call(vm);
  req.base.headroom = parse_fraction(vm["headroom"].as<std::string>(), "--headroom");
  req.conservative = vm["conservative"].as<bool>();
  req.models = split_list(req.base.model);  // a comma-separated list of pipelines, ranked together
  if (vm.count("gpu")) req.gpus = vm["gpu"].as<std::string>();
  req.include_mig = vm["mig"].as<bool>();
  if (!req.gpus.empty() && req.include_mig) throw_usage("--mig selects slices when --gpu is not given: name the slices in --gpu instead");
  req.batches = split_positive_list(vm["batch"].as<std::string>(), "--batch");
  req.offloads.clear();
  for (const auto& o : split_list(vm["offload"].as<std::string>())) req.offloads.push_back(diffusion::parse_offload(o));
  req.periods = plan::parse_periods(vm["periods"].as<std::string>());
  if (vm.count("prices")) req.prices_file = vm["prices"].as<std::string>();
  const std::size_t top = vm["top"].as<std::size_t>();
  const auto result = plan::run_diffusion_sweep(req, data_root());
  emit(opts, plan::diffusion_sweep_json(result, top), plan::diffusion_sweep_text(result, top));
  return kExitOk;
}
int run_diffusion_check(const std::vector<std::string>& args) { return run_pipeline_plan(args, true); }

int run_diffusion_inspect(const std::vector<std::string>& args) {
  po::options_description desc("Options (diffusion pipelines)");
  desc.add_options()("model,m", po::value<std::string>(), "diffusion pipeline: catalogue id or diffusers directory");
  add_common_options(desc);
  const std::string model = model_argument(args, true);
  refuse_other_flags(args, desc, model);
  po::positional_options_description positional;
  positional.add("model", 1);
  po::variables_map vm;
  if (!parse_args("inspect", "--model <pipeline>", desc, args, vm, &positional)) return kExitOk;
  const auto opts = read_common_options(vm);
  const auto p = diffusion::load_pipeline(vm["model"].as<std::string>(), data_root());
  emit(opts, diffusion::pipeline_inspect_json(p), diffusion::pipeline_inspect_text(p));
  return kExitOk;
}

}  // namespace vramplan::cli
