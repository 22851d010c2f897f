#include "vramplan/memory/inert_flags.hpp"

namespace vramplan::memory {
namespace {

// vllm/entrypoints/openai/cli_args.py (the server's own flags), vllm/engine/arg_utils.py
// (EngineArgs: model loading and logging, data-parallel addressing); read in vllm 0.19.1.
constexpr InertFlag kVllm[] = {
    {"host", true, "server address"},
    {"port", true, "server port"},
    {"api-key", true, "API key"},
    {"served-model-name", true, "the name the API answers to"},
    {"uvicorn-log-level", true, "HTTP server logging"},
    {"disable-uvicorn-access-log", false, "HTTP server logging"},
    {"disable-log-requests", false, "request logging"},  // up to 0.11
    {"enable-log-requests", false, "request logging"},   // from 0.10
    {"disable-log-stats", false, "statistics logging"},
    {"chat-template", true, "chat template"},
    {"response-role", true, "chat response role"},
    {"enable-auto-tool-choice", false, "tool-call parsing"},
    {"tool-call-parser", true, "tool-call parsing"},
    {"reasoning-parser", true, "reasoning-output parsing"},
    {"trust-remote-code", false, "loading the checkpoint's own code"},
    {"download-dir", true, "where the weights are downloaded"},
    {"tokenizer", true, "tokenizer path"},
    {"headless", false, "a data-parallel node without an API server"},
    {"data-parallel-address", true, "data-parallel rendezvous address"},
    {"data-parallel-rpc-port", true, "data-parallel rendezvous port"},
    {"data-parallel-start-rank", true, "this node's first data-parallel rank"},
    {"seed", true, "sampling seed"},  // EngineArgs.seed (arg_utils.py --seed): the sampler's RNG only
};

// python/sglang/srt/server_args.py ServerArgs; read in sglang 0.5.9.
constexpr InertFlag kSglang[] = {
    {"host", true, "server address"},
    {"port", true, "server port"},
    {"api-key", true, "API key"},
    {"served-model-name", true, "the name the API answers to"},
    {"tokenizer-path", true, "tokenizer path"},
    {"trust-remote-code", false, "loading the checkpoint's own code"},
    {"download-dir", true, "where the weights are downloaded"},
    {"chat-template", true, "chat template"},
    {"tool-call-parser", true, "tool-call parsing"},
    {"reasoning-parser", true, "reasoning-output parsing"},
    {"log-level", true, "logging"},
    {"log-requests", false, "request logging"},
    {"enable-metrics", false, "Prometheus metrics"},
    {"random-seed", true, "sampling seed"},
    {"skip-server-warmup", false, "the warm-up request at start"},
    {"allow-auto-truncate", false, "truncating over-long prompts instead of refusing them"},
    {"watchdog-timeout", true, "the hang watchdog"},
    {"node-rank", true, "this node's rank"},
    {"dist-init-addr", true, "multi-node rendezvous address"},
    {"nccl-init-addr", true, "multi-node rendezvous address"},
};

// tensorrt_llm/commands/serve.py (trtllm-serve), written with dashes as vramplan takes its flags.
constexpr InertFlag kTrtllm[] = {
    {"host", true, "server address"},
    {"port", true, "server port"},
    {"log-level", true, "logging"},
    {"trust-remote-code", false, "loading the checkpoint's own code"},
    {"tokenizer", true, "tokenizer path"},
};

// common/arg.cpp, the options llama-server takes.
constexpr InertFlag kLlamacpp[] = {
    {"host", true, "server address"},
    {"port", true, "server port"},
    {"api-key", true, "API key"},
    {"alias", true, "the name the API answers to"},
    {"jinja", false, "the chat template engine"},
    {"chat-template", true, "chat template"},
    {"metrics", false, "Prometheus metrics"},
    {"no-webui", false, "the built-in web UI"},
    {"log-disable", false, "logging"},
};

}  // namespace

std::span<const InertFlag> inert_flags(std::string_view engine) {
  if (engine == "vllm") return kVllm;
  if (engine == "sglang") return kSglang;
  if (engine == "trtllm") return kTrtllm;
  if (engine == "llamacpp") return kLlamacpp;
  return {};
}

}  // namespace vramplan::memory
