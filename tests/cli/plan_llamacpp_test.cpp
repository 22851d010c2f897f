// `vramplan plan --engine llamacpp` through the real executable: llama.cpp's flag spellings, a
// .gguf model (types and bytes from the file), a CPU-only run, a catalogue model with a GGUF file
// type, and llama.cpp's refusals.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/gguf_writer.hpp"
#include "support/test_support.hpp"

namespace vramplan {
namespace {

// tests/support/gguf_writer.cpp llama_like_gguf(): 2 layers, hidden 256, 4 heads, 2 KV heads
// (head_dim 64); tensor bytes there. Every size is a multiple of 32 (no alignment padding).
constexpr double kBytesPerMiB = 1048576.0;
constexpr std::uint64_t kFileTensorBytes = 964224;  // 23,680 global + 2 x 470,272
constexpr std::uint64_t kTokenEmbd = 9216;          // Q4_K {256, 64}: 64 x 144

TEST(PlanLlamacpp, GgufOnCudaPutsTokenEmbeddingOnTheHost) {
  test::ScratchDir dir;
  const auto path = dir.write("tiny.gguf", test::build_gguf(test::llama_like_gguf()).bytes);
  const auto j = test::run_cli_json({"plan", "--engine", "llamacpp", "--model", path.string(), "--gpu", "rtx-4090",
                           "-c", "512", "-ngl", "99", "-fa", "on"});
  EXPECT_EQ(j["schema"], "vramplan.plan/1");
  EXPECT_EQ(j["engine"], "llamacpp");
  const auto& v = j["engine_view"];
  // -ngl 99 > 2 layers: every layer and the output layer on CUDA0; token_embd stays on the host.
  EXPECT_EQ(v["offloaded_layers"], "3/3");
  EXPECT_NEAR(v["model_buffers_mib"]["CUDA0"].get<double>(), (kFileTensorBytes - kTokenEmbd) / kBytesPerMiB, 1e-4);
  EXPECT_NEAR(v["model_buffers_mib"]["CPU_Mapped"].get<double>(), kTokenEmbd / kBytesPerMiB, 1e-4);
  // KV: 2 layers x 512 cells x (2 KV heads x 64) x 2 B (f16) x 2 (K, V) = 524,288 B = 0.5 MiB.
  EXPECT_DOUBLE_EQ(v["devices"]["CUDA0"]["kv_buffer_mib"].get<double>(), 0.5);
  EXPECT_EQ(j["per_gpu"]["kv_cache_bytes"], 524288u);
  EXPECT_EQ(j["per_gpu"]["weights_bytes"], kFileTensorBytes - kTokenEmbd);
  EXPECT_NEAR(v["devices"]["CPU"]["model_buffer_mib"].get<double>(), kTokenEmbd / kBytesPerMiB, 1e-4);
  EXPECT_EQ(v["devices"]["CPU"]["compute_buffer_name"], "CUDA_Host");
  EXPECT_EQ(v["tensor_placement"]["token_embd"].get<std::string>().rfind("host", 0), 0u);
  EXPECT_TRUE(j["fits"].get<bool>());
}

// llama_model::create_memory returns no memory for encoders: the same tensors under the
// nomic-bert architecture (nomic-embed-text's GGUF) keep no KV cache and run a non-causal graph,
// which is refused instead of planned as a decoder's.
TEST(PlanLlamacpp, EncoderGgufIsRefusedNotPlannedAsADecoder) {
  test::ScratchDir dir;
  auto desc = test::llama_like_gguf();
  for (auto& kv : desc.kvs) {
    if (kv.key == "general.architecture") kv = test::kv_str("general.architecture", "nomic-bert");
    else if (kv.key.rfind("llama.", 0) == 0) kv.key = "nomic-bert." + kv.key.substr(6);
  }
  const auto path = dir.write("embed.gguf", test::build_gguf(desc).bytes);
  const auto r = test::run_cli({"plan", "--engine", "llamacpp", "--model", path.string(), "--gpu", "rtx-4090"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "vramplan: error: --engine llamacpp: tiny-llama (GGUF architecture 'nomic-bert') keeps no KV cache "
                   "in llama.cpp (an encoder or diffusion model: llama_model::create_memory builds none), and its "
                   "non-causal compute graph is not modelled\n");
}

TEST(PlanLlamacpp, TiedOutputIsASecondCopyOnTheGpu) {
  // No output.weight: llama-model.cpp creates `output` from token_embd with TENSOR_DUPLICATED in
  // the output layer's context, so with -ngl > n_layer it is loaded again onto the GPU.
  test::ScratchDir dir;
  const auto path = dir.write("tied.gguf", test::build_gguf(test::llama_like_gguf(false)).bytes);
  const auto j = test::run_cli_json({"plan", "--engine", "llamacpp", "--model", path.string(), "--gpu", "rtx-4090",
                           "-c", "512", "-ngl", "99"});
  const auto& v = j["engine_view"];
  // File: 964,224 - 13,440 (no output) = 950,784 B. CUDA0: all but token_embd (941,568) + its copy
  // (9,216) = 950,784 B; the host keeps token_embd (9,216 B).
  EXPECT_NEAR(v["model_buffers_mib"]["CUDA0"].get<double>(), 950784 / kBytesPerMiB, 1e-4);
  EXPECT_NEAR(v["model_buffers_mib"]["CPU_Mapped"].get<double>(), kTokenEmbd / kBytesPerMiB, 1e-4);
  EXPECT_NE(v["tensor_placement"]["output"].get<std::string>().find("TENSOR_DUPLICATED"), std::string::npos);
  // -ngl 2 = n_layer: the output layer (and its copy) stays on the host.
  const auto j2 = test::run_cli_json({"plan", "--engine", "llamacpp", "--model", path.string(), "--gpu", "rtx-4090",
                            "-c", "512", "-ngl", "2"});
  EXPECT_EQ(j2["engine_view"]["offloaded_layers"], "2/3");
  EXPECT_NEAR(j2["engine_view"]["model_buffers_mib"]["CUDA0"].get<double>(), 2 * 470272 / kBytesPerMiB, 1e-4);
}

TEST(PlanLlamacpp, GgufOnCpuRepacksQ4KMatrices) {
  test::ScratchDir dir;
  const auto path = dir.write("tiny.gguf", test::build_gguf(test::llama_like_gguf()).bytes);
  const auto j = test::run_cli_json({"plan", "--engine", "llamacpp", "--model", path.string(), "--gpu", "cpu", "-c", "512"});
  const auto& buf = j["engine_view"]["model_buffers_mib"];
  // Repacked (Q4_K, rows % 8 == 0): attn_q 36,864 + attn_k 18,432 + ffn_gate 73,728 + ffn_up
  // 73,728 = 202,752 per layer x 2 = 405,504 B. token_embd (GET_ROWS) is not repacked.
  EXPECT_NEAR(buf["CPU_REPACK"].get<double>(), 405504 / kBytesPerMiB, 1e-4);
  // The mapped span runs from token_embd to blk.1.ffn_down (neither repacked): the whole file.
  EXPECT_NEAR(buf["CPU_Mapped"].get<double>(), kFileTensorBytes / kBytesPerMiB, 1e-4);
  EXPECT_EQ(j["engine_view"]["device"], "CPU");
  // Every buffer is host memory and counts in the plan: mapped + repacked weights, KV, output, compute.
  EXPECT_EQ(j["per_gpu"]["weights_bytes"], kFileTensorBytes + 405504u);
  EXPECT_TRUE(j["engine_view"]["devices"]["CPU"].contains("output_buffer_mib"));

  const auto nr = test::run_cli_json({"plan", "--engine", "llamacpp", "--model", path.string(), "--gpu", "cpu", "-c", "512", "-nr"});
  EXPECT_FALSE(nr["engine_view"]["model_buffers_mib"].contains("CPU_REPACK"));
}

TEST(PlanLlamacpp, CatalogueModelWithFileType) {
  // meta-llama/Llama-3.1-8B at Q4_K_M, fully offloaded. KV: 32 layers x 8192 cells x (8 x 128)
  // x 2 B x 2 = 1,073,741,824 B = 1024 MiB.
  const auto j = test::run_cli_json({"plan", "--engine", "llamacpp", "--model", "llama-3.1-8b", "--weights", "gguf:Q4_K_M",
                           "--gpu", "rtx-4090", "-c", "8192", "-ngl", "99", "-fa", "on"});
  const auto& v = j["engine_view"];
  EXPECT_DOUBLE_EQ(v["devices"]["CUDA0"]["kv_buffer_mib"].get<double>(), 1024.0);
  EXPECT_EQ(v["n_ctx"], 8192u);
  // token_embd Q4_K {128256, 4096}: 128,256 x 16 blocks x 144 B = 295,501,824 B = 281.81 MiB,
  // the CPU_Mapped figure llama.cpp logs for this file.
  EXPECT_NEAR(v["model_buffers_mib"]["CPU_Mapped"].get<double>(), 295501824 / kBytesPerMiB, 1e-4);
  EXPECT_GT(v["devices"]["CUDA0"]["compute_buffer_mib"].get<double>(), 250.5);  // logits: 128,256 x 512 x 4 B
}

TEST(PlanLlamacpp, FalconH1KeepsKvAndRecurrentStateInEveryLayer) {
  // tiiuae/Falcon-H1-0.5B: 36 layers, each attention (2 KV heads of 64) beside a Mamba-2 mixer
  // (d_inner 1536, 1 group, d_state 128, conv 4); llama.cpp's hybrid memory keeps both in every layer.
  const auto j = test::run_cli_json({"plan", "--engine", "llamacpp", "--model", "falcon-h1-0.5b", "--weights", "gguf:Q8_0",
                                     "--gpu", "h100-sxm-80", "-c", "4096"});
  const auto& gpu = j["per_gpu"]["breakdown"]["kv_cache"];
  ASSERT_EQ(gpu.size(), 2u);
  // KV: 36 layers x 4096 cells x (2 x 64) x 2 B x 2 (K, V) = 75,497,472 B = 72 MiB.
  EXPECT_EQ(gpu[0]["bytes"], 75497472u);
  // State: 36 layers x 4 B x (conv 3 x (1536 + 2 x 128) = 5,376 + SSM 128 x 1536 = 196,608 values)
  // = 36 x 807,936 = 29,085,696 B, one cell (one sequence).
  EXPECT_EQ(gpu[1]["name"], "kv_cache.recurrent_state");
  EXPECT_EQ(gpu[1]["bytes"], 29085696u);
  EXPECT_NEAR(j["engine_view"]["devices"]["CUDA0"]["rs_buffer_mib"].get<double>(), 29085696 / kBytesPerMiB, 1e-6);
}

TEST(PlanLlamacpp, JambaKeepsKvOnlyInItsAttentionLayers) {
  // ai21labs/AI21-Jamba-1.5-Mini: 32 layers, attention every 8th from layer 4 (4 layers of 8 KV heads
  // of 128), Mamba-1 mixers in the other 28 (d_inner 2 x 4096, d_state 16, conv 4).
  const auto j = test::run_cli_json({"plan", "--engine", "llamacpp", "--model", "jamba-1.5-mini", "--weights",
                                     "gguf:Q4_K_M", "--gpu", "h100-sxm-80", "-c", "4096"});
  const auto& gpu = j["per_gpu"]["breakdown"]["kv_cache"];
  ASSERT_EQ(gpu.size(), 2u);
  // KV: 4 layers x 4096 cells x (8 x 128) x 2 B x 2 (K, V) = 67,108,864 B = 64 MiB.
  EXPECT_EQ(gpu[0]["bytes"], 67108864u);
  // State: 28 layers x 4 B x (conv 3 x 8192 = 24,576 + SSM 16 x 8192 = 131,072 values)
  // = 28 x 622,592 = 17,432,576 B, one cell.
  EXPECT_EQ(gpu[1]["bytes"], 17432576u);
}

TEST(PlanLlamacpp, RefusalIsAPlanThatDoesNotFit) {
  test::ScratchDir dir;
  const auto path = dir.write("tiny.gguf", test::build_gguf(test::llama_like_gguf()).bytes);
  const auto j = test::run_cli_json({"plan", "--engine", "llamacpp", "--model", path.string(), "--gpu", "cpu",
                           "-fa", "off", "-ctv", "q8_0"});
  EXPECT_FALSE(j["fits"].get<bool>());
  EXPECT_EQ(j["reason"], "llama_init_from_model: quantized V cache requires flash_attn to be enabled");
}

TEST(PlanLlamacpp, BadInputsAreUsageErrors) {
  // A non-GGUF model needs a file type; unknown cache types and -fa values are named.
  auto r = test::run_cli({"plan", "--engine", "llamacpp", "--model", "llama-3.1-8b", "--gpu", "rtx-4090"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("gguf:<FILE_TYPE>"), std::string::npos) << r.err;
  r = test::run_cli({"plan", "--engine", "llamacpp", "--model", "llama-3.1-8b", "--weights", "gguf:Q4_K_M",
                     "--gpu", "rtx-4090", "-ctk", "q3_k"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-ctk"), std::string::npos) << r.err;
  r = test::run_cli({"plan", "--engine", "llamacpp", "--model", "llama-3.1-8b", "--weights", "gguf:Q4_K_M",
                     "--gpu", "rtx-4090", "-fa", "maybe"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--flash-attn"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace vramplan
