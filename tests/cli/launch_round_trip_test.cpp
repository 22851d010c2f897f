// A launch line vramplan prints is a command vramplan takes: its flags fed back to `plan` give the
// same pool (SGLang's DP-attention line carries D times a rank's limits, which the plan divides
// again), and the engine's flags without effect on memory or step time (memory/inert_flags.hpp)
// are taken and named, not refused.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

// The flags of `check`'s launch argv (after the launcher and the model), fed to `plan` with the
// same model, GPU and engine: the plan's KV capacity must be the one `plan` gives for `flags`.
void expect_round_trip(const std::string& engine, const std::string& model, const std::string& gpu,
                       const std::vector<std::string>& flags) {
  std::vector<std::string> head = {"--model", model, "--gpu", gpu, "--engine", engine};
  std::vector<std::string> check = {"check"}, plan = {"plan"};
  check.insert(check.end(), head.begin(), head.end());
  check.insert(check.end(), flags.begin(), flags.end());
  plan.insert(plan.end(), head.begin(), head.end());
  std::vector<std::string> relaunch = plan;
  plan.insert(plan.end(), flags.begin(), flags.end());
  const auto argv = run_cli_json(check).at("launch").at("argv").get<std::vector<std::string>>();
  // The launcher ("vllm serve MODEL", "python -m sglang.launch_server") and a positional model.
  std::size_t i = argv.size() > 2 && argv[1] == "-m" ? 3 : 0;
  while (i < argv.size() && argv[i].rfind("-", 0) != 0) ++i;
  for (; i < argv.size(); ++i) {
    if (argv[i] == "--model-path") {  // SGLang names the model with a flag
      ++i;
      continue;
    }
    relaunch.push_back(argv[i]);
  }
  const auto again = run_cli_json(relaunch);
  EXPECT_EQ(again.at("kv").at("capacity_tokens"), run_cli_json(plan).at("kv").at("capacity_tokens")) << engine << " " << model;
}

TEST(LaunchRoundTrip, EveryServersLinePlansAgain) {
  expect_round_trip("vllm@0.19", "llama-3.1-8b", "h100-sxm-80", {"--max-model-len", "8192"});
  // Data parallelism over two nodes: the line carries --data-parallel-size-local / -address /
  // -rpc-port, taken without effect (the node size is the catalogue's, or --node-gpus).
  expect_round_trip("vllm@0.19", "qwen3-30b-a3b", "h100-sxm-80",
                    {"--max-model-len", "8192", "--data-parallel-size", "16", "--enable-expert-parallel"});
  expect_round_trip("sglang@0.5.9", "llama-3.1-70b", "h100-sxm-80", {"--tp", "4", "--pp-size", "2", "--context-length", "8192"});
  expect_round_trip("sglang@0.5.9", "deepseek-v3", "h200", {"--tp", "8", "--dp", "8", "--enable-dp-attention"});
  // trtllm-serve's own underscore spellings (--tp_size, --kv_cache_free_gpu_memory_fraction, ...).
  expect_round_trip("trtllm", "llama-3.1-8b", "h100-sxm-80", {"--max-seq-len", "8192", "--tp-size", "2"});
}

TEST(LaunchRoundTrip, InertFlagsAreTakenAndNamed) {
  // A real SGLang multi-node command: addressing, parsers, logging. The plan is the one without
  // them; stderr names them.
  const std::vector<std::string> base = {"plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine",
                                         "sglang@0.5.9", "--json"};
  std::vector<std::string> full = base;
  full.insert(full.end(), {"--host", "0.0.0.0", "--port", "30000", "--trust-remote-code", "--node-rank", "0",
                           "--dist-init-addr", "10.0.0.1:5000", "--tool-call-parser", "llama3", "--log-requests"});
  const CliResult plain = run_cli(base);
  const CliResult inert = run_cli(full);
  ASSERT_EQ(inert.exit_code, 0) << inert.err;
  EXPECT_EQ(nlohmann::json::parse(inert.out).at("kv"), nlohmann::json::parse(plain.out).at("kv"));
  EXPECT_NE(inert.err.find("accepted without effect on memory or step time: --host (server address), --port (server port), "
                           "--trust-remote-code"),
            std::string::npos)
      << inert.err;
  EXPECT_NE(inert.err.find("--dist-init-addr (multi-node rendezvous address)"), std::string::npos);
  EXPECT_TRUE(plain.err.empty()) << plain.err;
  // A flag no engine takes stays an error.
  EXPECT_EQ(run_cli({"plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--engine", "sglang@0.5.9", "--frobnicate"})
                .exit_code,
            2);
}

TEST(LaunchRoundTrip, MultiNodeFlagsStateTheNodeSize) {
  // SGLang --nnodes 2 at --tp 8: each node runs 4 GPUs (entrypoints/engine.py), so the replica
  // spans two hosts, as --node-gpus 4 says; vLLM --data-parallel-size-local 4 at TP 2: 8 a node.
  const auto hosts = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"check", "--model", "llama-3.1-70b", "--gpu", "h100-sxm-80", "--context-length", "8192",
                                     "--engine", "sglang@0.5.9", "--tp", "8"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli_json(args).at("layout").at("hosts_per_replica").get<int>();
  };
  EXPECT_EQ(hosts({}), 1);
  EXPECT_EQ(hosts({"--nnodes", "2"}), 2);
  EXPECT_EQ(hosts({"--nnodes", "2", "--node-gpus", "4"}), 2);
  // Both given and at odds, or a count that does not divide the GPUs: usage errors.
  const std::vector<std::string> base = {"plan", "--model", "llama-3.1-70b", "--gpu", "h100-sxm-80", "--engine",
                                         "sglang@0.5.9", "--tp", "8", "--context-length", "8192"};
  std::vector<std::string> odd = base, three = base;
  odd.insert(odd.end(), {"--nnodes", "2", "--node-gpus", "8"});
  three.insert(three.end(), {"--nnodes", "3"});
  EXPECT_EQ(run_cli(odd).exit_code, 2);
  const CliResult r = run_cli(three);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--nnodes 3 must divide the server's 8 GPUs"), std::string::npos) << r.err;
  const auto vllm = run_cli_json({"check", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm-80", "--engine", "vllm@0.19",
                                  "--max-model-len", "8192", "--tensor-parallel-size", "2", "--data-parallel-size", "8",
                                  "--data-parallel-size-local", "2", "--enable-expert-parallel"});
  EXPECT_EQ(vllm.at("layout").at("hosts_per_replica"), 4);  // 16 GPUs in nodes of 2 x 2
}

}  // namespace
}  // namespace vramplan::test
