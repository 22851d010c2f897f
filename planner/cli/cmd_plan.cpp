// `vramplan plan` — memory per GPU for one model on one GPU type under one engine profile:
// every component with its formula, total, capacity, headroom, KV capacity and concurrency, and
// the performance model's decode / TTFT / throughput-knee figures beside it (docs/performance.md §5).
// Exit 0 whenever the inputs are valid, also when it does not fit (fits:false says why).
#include <set>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "vramplan/calib/rehearsal.hpp"
#include "commands.hpp"
#include "diffusion_commands.hpp"
#include "decision_options.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/encoder_memory.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/model/encoder.hpp"
#include "vramplan/memory/plan_request.hpp"
#include "vramplan/plan/embedding_job.hpp"
#include "vramplan/plan/plan_output.hpp"
#include "vramplan/plan/prices.hpp"
#include "vramplan/plan/rehearsal_input.hpp"
#include "vramplan/sim/serving_plan.hpp"
#include "vramplan/sim/workload_spec.hpp"

namespace vramplan::cli {

int run_plan(const std::vector<std::string>& args) {
  // A diffusion pipeline (models/diffusion/<id>, a diffusers directory) has its own options.
  if (names_diffusion_pipeline(args, false)) return run_diffusion_plan(args);
  const std::string spec = engine_spec_of(args);
  const auto engine = memory::make_engine(spec, data_root().data());

  std::string engines;
  for (const auto& e : memory::engine_registry()) engines += "\n  " + std::string(e.name) + ": " + std::string(e.summary);
  const std::string engine_help = "engine, optionally @version (default vllm = newest profile):" + engines;
  po::options_description desc("Options");
  desc.add_options()
      ("model", po::value<std::string>(), "model: catalogue id, config.json, directory or .gguf")
      ("gpu", po::value<std::string>(), "GPU catalogue id or custom:<size> (e.g. custom:46068MiB)")
      ("gpu-memory", po::value<std::string>(), "runtime-reported total per GPU (e.g. 79.18GiB)")
      ("engine", po::value<std::string>()->default_value("vllm"), engine_help.c_str())
      ("weights", po::value<std::string>(), "linear weights: bf16, fp8, awq-4bit-g128, gguf:Q4_K_M, ...")
      ("batch", po::value<std::uint64_t>(), "concurrent sequences wanted (performance: decoding together; default 1)")
      ("context", po::value<std::uint64_t>(), "tokens per sequence (performance: the decode context; default --prompt-len)")
      ("prompt-len", po::value<std::uint64_t>(), "prompt tokens for the TTFT estimate (default 1024)")
      ("calibration", po::value<std::string>(), "calibration file (vramplan-probe) replacing documented defaults "
                                                "(default: the matching file in data/calibration, if any)")
      ("emit-rehearsal", po::value<std::string>(), "also write the plan's fit-rehearsal input (vramplan-probe --rehearse) to FILE")
      ("documents", po::value<std::uint64_t>(), "pooling models: an offline embedding job of N documents (duration, GPU-hours, rental)")
      ("input-len", po::value<std::string>(), "with --documents: tokens per document: N, uniform:A..B, lognormal:MEAN,SIGMA, "
                                              "hist:FILE (default: the plan's input length)")
      ("keep-embeddings-on-gpu", po::bool_switch(), "with --documents under hf: encode(convert_to_tensor=True) keeps all N "
                                                    "embeddings on the GPU (counted in memory)")
      ("margin", po::value<std::string>()->default_value("24h"), "with --documents: time added for installation, checks and export")
      ("periods", po::value<std::string>()->default_value("3d,7d,30d"), "with --documents: rental periods to price (h, d, w)")
      ("prices", po::value<std::string>(), "with --documents: your own GPU prices (vramplan.prices/1) instead of data/prices.json");
  std::set<std::string> declared = {"model", "gpu", "gpu-memory", "engine", "weights", "batch", "context", "prompt-len",
                                    "calibration", "emit-rehearsal", "documents", "input-len", "keep-embeddings-on-gpu",
                                    "margin", "periods", "prices"};
  add_cluster_options(desc, declared);
  add_spec_accept_option(desc, declared);
  add_engine_options(desc, *engine, declared);
  add_common_options(desc);
  po::variables_map vm;
  if (!parse_args("plan", "--model M --gpu G [--engine E] [engine flags] [--format json]", desc, args, vm)) return 0;
  const auto opts = read_common_options(vm);

  memory::PlanRequest req = read_plan_target(vm, spec, *engine);
  // TEI forms its batches by tokens (core/src/queue.rs queue_blocking_task): it takes no input count.
  if (vm.count("batch") && engine->name() == "tei")
    throw_usage("--batch: TEI forms its batches by --max-batch-tokens and --max-batch-requests");
  if (vm.count("batch")) req.workload.batch = vm["batch"].as<std::uint64_t>();
  if (vm.count("context")) req.workload.context = vm["context"].as<std::uint64_t>();
  // As check refuses it (plan/evaluate.cpp): sequences longer than the engine is configured for.
  if (const std::string flag = memory::context_flag_of(engine->options()); req.workload.context && !flag.empty())
    if (const auto limit = memory::arg_u64(req.args, flag); limit && *req.workload.context > *limit)
      throw_usage("--context " + std::to_string(*req.workload.context) + " exceeds the engine's maximum length " +
                  std::to_string(*limit) + " (--" + flag + ")");
  if (vm.count("prompt-len")) req.prompt_tokens = vm["prompt-len"].as<std::uint64_t>();
  // Checked here too: the performance model catches it only as an "unknown" line, after the plan.
  if (req.prompt_tokens && *req.prompt_tokens == 0) throw_usage("--prompt-len must be >= 1");
  // A prompt longer than the engine's maximum length is refused by the engine (vLLM: "The
  // decoder prompt (length N) is longer than the maximum model length"), as --context is above.
  if (const std::string flag = memory::context_flag_of(engine->options()); req.prompt_tokens && !flag.empty())
    if (const auto limit = memory::arg_u64(req.args, flag); limit && *req.prompt_tokens > *limit)
      throw_usage("--prompt-len " + std::to_string(*req.prompt_tokens) + " exceeds the engine's maximum length " +
                  std::to_string(*limit) + " (--" + flag + ")");
  const bool job = vm.count("documents") > 0;
  // Checked before planning: --keep-embeddings-on-gpu below sizes the kept embeddings from it.
  const std::uint64_t documents = job ? plan::checked_documents(vm["documents"].as<std::uint64_t>()) : 0;
  for (const char* flag : {"input-len", "prices"})
    if (!job && vm.count(flag)) throw_usage(std::string("--") + flag + " applies to an offline embedding job: give --documents N");
  if (!job && (!vm["margin"].defaulted() || !vm["periods"].defaulted()))
    throw_usage("--margin and --periods apply to an offline embedding job: give --documents N");
  if (vm["keep-embeddings-on-gpu"].as<bool>()) {
    if (!job) throw_usage("--keep-embeddings-on-gpu needs --documents N (the embeddings kept)");
    if (engine->name() != "hf")
      throw_usage("--keep-embeddings-on-gpu applies to --engine hf (sentence-transformers encode(convert_to_tensor=True)); " +
                  std::string(engine->name()) + " returns each request's embeddings to the client");
    req.args["kept-embeddings"] = std::to_string(documents);
  }
  if (vm.count("emit-rehearsal") && vm["emit-rehearsal"].as<std::string>().empty())
    throw_usage("--emit-rehearsal: give the file to write");
  const auto outcome = sim::run_serving_plan(req, data_root());
  // Workload flags a pooling model has no use for (docs/encoders.md): --spec-accept-length
  // anywhere, --batch under vllm for an encoder, --context under tei.
  if (is_pooling_model(outcome.model))
    memory::refuse_pooling_workload_flags(outcome.model, engine->name(),
                                          {vm.count("batch") > 0, vm.count("context") > 0, req.spec_accept_length.has_value()});
  if (vm.count("emit-rehearsal"))
    calib::write_rehearsal(plan::rehearsal_input(outcome), vm["emit-rehearsal"].as<std::string>());
  if (!job) {
    emit(opts, plan::plan_json(outcome), plan::plan_text(outcome));
    return 0;
  }
  plan::EmbeddingJobRequest jr;
  jr.documents = documents;
  const auto& ips = outcome.plan.engine_view.value("inputs_per_s", nlohmann::json::object());
  jr.input = sim::parse_length(vm.count("input-len") ? vm["input-len"].as<std::string>()
                                                     : std::to_string(ips.value("input_tokens", std::uint64_t{512})),
                               "--input-len", data_root(), sim::LengthRole::Input);
  jr.margin_hours = sim::parse_duration(vm["margin"].as<std::string>(), "--margin") / 3600;
  jr.periods = plan::parse_periods(vm["periods"].as<std::string>());
  const auto prices = plan::load_price_book(data_root(), vm.count("prices") ? std::optional<std::filesystem::path>(vm["prices"].as<std::string>())
                                                                            : std::nullopt);
  const auto j = plan::embedding_job(outcome, jr, prices);
  auto doc = plan::plan_json(outcome);
  doc["embedding_job"] = plan::embedding_job_json(j);
  emit(opts, doc, plan::plan_text(outcome) + plan::embedding_job_text(j));
  return 0;
}

}  // namespace vramplan::cli
