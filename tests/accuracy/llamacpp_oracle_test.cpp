// vramplan's llama.cpp buffers against llama.cpp itself, for architectures the ground truth has no
// load of: tests/accuracy/data/llamacpp_oracle_loads.jsonl, CPU loads by llama.cpp 0c1e5709
// (2026-10-01, the tree llama-cpp-python 0.3.36 vendors) of synthetic F16 GGUFs written from
// published configs (tools/llamacpp-oracle/: gen_gguf.py, lcprobe.cpp, collect.py; the catalogue
// model, cut to `layers` layers where the record says so). Every printed buffer (CPU_Mapped model,
// KV, output, compute; MiB with two decimals) must come out the same through the user's path:
// `vramplan plan --engine llamacpp --gpu cpu --model <config dir> --weights gguf:F16 ...` (a record's
// own `config` where it has no catalogue model), or, for the OLMo-2 records (no HF family), the same
// GGUF written by the test and given as --model.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/gguf_writer.hpp"
#include "support/test_support.hpp"

namespace vramplan {
namespace {

using nlohmann::json;

std::vector<json> oracle_records(const std::string& file) {
  std::ifstream in(test::source_dir() / "tests" / "accuracy" / "data" / file);
  std::vector<json> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

std::string printed_mib(double mib) {  // llama.cpp: "%.2f MiB"
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", mib);
  return buf;
}

// The catalogue entry's config.json with the record's layer cut, as gen_gguf.py was given it.
std::string cut_config(const json& r) {
  json c = json::parse(test::read_text(test::source_dir() / "models" / (r["catalogue_model"].get<std::string>() + ".json")));
  for (auto it = c.begin(); it != c.end();) it = it.key().rfind('_', 0) == 0 ? c.erase(it) : std::next(it);
  if (!r["layers"].is_null()) {
    json& text = c.contains("text_config") ? c["text_config"] : c;
    text["num_hidden_layers"] = r["layers"];
    if (text.contains("layer_types")) {  // gpt-oss: the per-layer attention kinds of the layers kept
      json& types = text["layer_types"];
      types.erase(types.begin() + r["layers"].get<std::ptrdiff_t>(), types.end());
    }
    if (text.contains("hybrid_override_pattern"))  // Nemotron-H: the block kinds of the layers kept
      text["hybrid_override_pattern"] =
          text["hybrid_override_pattern"].get<std::string>().substr(0, r["layers"].get<std::size_t>());
  }
  return c.dump();
}

// gen_gguf.py's olmo2 file: F16 matrices, F32 norms, in its order (32-byte alignment).
std::string olmo2_gguf(const json& c) {
  using namespace test::ggml_type;
  const std::int64_t h = c["hidden_size"], nh = c["num_attention_heads"], nkv = c["num_key_value_heads"];
  const std::int64_t ff = c["intermediate_size"], V = c["vocab_size"], L = c["num_hidden_layers"];
  const std::int64_t hd = h / nh;
  test::GgufDesc d;
  d.kvs = {test::kv_str("general.architecture", "olmo2"), test::kv_u32("olmo2.block_count", static_cast<std::uint32_t>(L)),
           test::kv_u32("olmo2.context_length", c["max_position_embeddings"].get<std::uint32_t>()),
           test::kv_u32("olmo2.embedding_length", static_cast<std::uint32_t>(h)),
           test::kv_u32("olmo2.feed_forward_length", static_cast<std::uint32_t>(ff)),
           test::kv_u32("olmo2.attention.head_count", static_cast<std::uint32_t>(nh)),
           test::kv_u32("olmo2.attention.head_count_kv", static_cast<std::uint32_t>(nkv)),
           test::kv_u32("general.file_type", 1)};
  if (c.contains("sliding_window")) d.kvs.push_back(test::kv_u32("olmo2.attention.sliding_window", c["sliding_window"].get<std::uint32_t>()));
  const auto f16 = [&](std::string name, std::int64_t a, std::int64_t b) {
    d.tensors.emplace_back(std::move(name), std::vector<std::int64_t>{a, b}, F16, static_cast<std::uint64_t>(a * b * 2));
  };
  const auto f32 = [&](std::string name, std::int64_t a) {
    d.tensors.emplace_back(std::move(name), std::vector<std::int64_t>{a}, F32, static_cast<std::uint64_t>(a * 4));
  };
  f16("token_embd.weight", h, V);
  f32("output_norm.weight", h);
  f16("output.weight", h, V);
  for (std::int64_t l = 0; l < L; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    f16(b + "attn_q.weight", h, hd * nh);
    f16(b + "attn_k.weight", h, hd * nkv);
    f16(b + "attn_v.weight", h, hd * nkv);
    f16(b + "attn_output.weight", hd * nh, h);
    f32(b + "attn_q_norm.weight", hd * nh);
    f32(b + "attn_k_norm.weight", hd * nkv);
    f32(b + "post_attention_norm.weight", h);
    f32(b + "post_ffw_norm.weight", h);
    f16(b + "ffn_gate.weight", h, ff);
    f16(b + "ffn_up.weight", h, ff);
    f16(b + "ffn_down.weight", ff, h);
  }
  return test::build_gguf(d).bytes;
}

TEST(LlamacppOracle, EveryPrintedBufferMatches) {
  const auto loads = oracle_records("llamacpp_oracle_loads.jsonl");
  // 13 catalogue models x 7 settings, 2 OLMo-2 configs x 5, 15 x 3 quantized caches (q8_0 / q4_0
  // with FA, q8_0 K without; Phi-2's two with FA are refused, head size 80), and 5 x 6 of --swa-full,
  // -kvu with -np 4 and micro-batches of 1024 / 2048 (collect_more.py); three small DeepSeek configs
  // (V3 routing with 8 groups, V2's softmax routing with groups and a 16x scale, Kimi-K2's single
  // group) and two GLM-4.5 MoE (GLM-4.5-Air cut to 2 layers; a small config with Q / K norms) x
  // (7 settings + 3 quantized caches); two small Llama-4 configs (Scout-like, Maverick-like) x (7 + 3),
  // the Scout-like one x the 6 of collect_more.py, Mistral-Small-3.1 (mistral3) cut to 2 layers x 7,
  // Qwen3-VL-8B / 4B cut to 4 layers (3 deepstack layers) x (7 + 3), and a small MiniMax-M2 config and
  // ERNIE-4.5-21B-A3B cut to 2 layers x (7 + 3), and GPT-NeoX (StableLM-alpha-3B cut to 2 layers, the same
  // with a sequential residual) and Falcon-7B / 40B cut to 2 layers x (7 + 3), and a small Ministral-3
  // config (attention temperature tuning) x (7 + 3), and Nemotron-H-8B cut to 9 layers (Mamba-2, MLP
  // and attention blocks; a recurrent state cache beside the KV cache) x (7 + 3), and Llama-3.2-1B and
  // that Nemotron-H at -np 3 and 5, which do not divide -ub 512: the reserve rounds the micro-batch up
  // to 513 / 515 tokens and keeps 512 output rows (collect_np.py), and Nemotron-3-Nano-30B-A3B cut to 6
  // layers (Mamba-2, MoE and attention: MEMEM*) x (7 + 3 + 2), and Granite-4.0-H-Tiny cut to 6 layers (five
  // Mamba-2 and one attention layer, each with its MoE FFN) x (7 + 3 + 2), and two small Qwen3.5 configs
  // (gated-DeltaNet layers, every fourth gated attention; dense and MoE with a shared expert) and a small
  // Qwen3-Next config (its joint beta / alpha projection, q / k repeated to the value heads) x (7 + 3 + 2),
  // and Falcon-H1-0.5B cut to 4 layers and Falcon-H1-7B cut to 2 (attention and Mamba-2 in every layer;
  // the 7B's mixers have their grouped norm) x (7 + 3 + 2), and a small Jamba config (Mamba-1 layers,
  // attention at layer 4, experts every other layer) x (7 + 3 + 2), and small DeepSeek-V3.2, GLM-5 and
  // GLM-5.2 configs (DeepSeek sparse attention's lightning indexer; GLM-5.2's shared indexer layers)
  // x (7 + 3 + 2), and a small Nemotron-3-Super config (latent MoE: 32 experts on a 256-wide projection
  // of the 1024-wide hidden state, MEMEM*EME) x (7 + 3 + 2), and Qwen3-VL-30B-A3B cut to 2 layers (128
  // experts, 3 deepstack levels) x (7 + 3) (at -np 3 this llama.cpp asserts in its qwen3vlmoe graph), and
  // two small Gemma 4 configs (a 26B-A4B-like MoE, SSSSSF, and a 31B-like dense one, SSSSSFSF: head_dim !=
  // global_head_dim, K=V full layers with fewer KV heads, experts beside the MLP) x (7 + 3 + 2).
  ASSERT_EQ(loads.size(), 541u);
  std::size_t checked = 0;
  for (const json& r : loads) {
    test::ScratchDir dir;
    std::string model;
    std::vector<std::string> args = {"plan", "--engine", "llamacpp", "--gpu", "cpu"};
    if (r.contains("catalogue_model") || r["config"]["model_type"] != "olmo2") {
      dir.write("config.json", r.contains("catalogue_model") ? cut_config(r) : r["config"].dump());
      args.insert(args.end(), {"--model", dir.path().string(), "--weights", "gguf:F16"});
    } else {
      args.insert(args.end(), {"--model", dir.write("m.gguf", olmo2_gguf(r["config"])).string()});
    }
    args.insert(args.end(), {"-c", std::to_string(r["n_ctx"].get<int>()), "-ub", std::to_string(r["n_ubatch"].get<int>()),
                             "-np", std::to_string(r["n_seq_max"].get<int>()), "-fa", r["flash_attn"].get<std::string>(),
                             "-ctk", r.value("type_k", "f16"), "-ctv", r.value("type_v", "f16")});
    if (r.value("swa_full", false)) args.push_back("--swa-full");
    if (r.value("kv_unified", false)) args.push_back("-kvu");
    if (r.contains("refusal")) {  // llama.cpp creates no context: the plan does not fit, with its line
      const json j = test::run_cli_json(args);
      EXPECT_FALSE(j["fits"].get<bool>()) << r["id"];
      EXPECT_EQ(j["reason"], "llama_init_from_model: " + r["refusal"].get<std::string>()) << r["id"];
      ++checked;
      continue;
    }
    const json j = test::run_cli_json(args);
    ASSERT_TRUE(j.contains("engine_view")) << r["id"] << "\n" << j.dump();
    const json& cpu = j["engine_view"]["devices"]["CPU"];
    const std::string id = r["id"];
    EXPECT_EQ(printed_mib(cpu["model_buffer_mib"]), printed_mib(r["model_buffer_mib"])) << id;
    // The record sums the "KV buffer size" lines llama.cpp prints, one per cache, each rounded to
    // 0.01 MiB (0.77 + 2.30 = 3.07 where the exact total is 3.0625), so the plan's caches are
    // rounded the same way before they are added.
    double kv_printed = 0;
    for (const json& cache : j["engine_view"]["kv_caches"])
      kv_printed += std::stod(printed_mib(cache["k_mib"].get<double>() + cache["v_mib"].get<double>()));
    EXPECT_EQ(printed_mib(kv_printed), printed_mib(r["kv_buffer_mib"])) << id;
    EXPECT_EQ(printed_mib(cpu["output_buffer_mib"]), printed_mib(r["output_buffer_mib"])) << id;
    EXPECT_EQ(printed_mib(cpu["compute_buffer_mib"]), printed_mib(r["compute_buffer_mib"])) << id;
    // Hybrid models: llama_memory_recurrent's "RS buffer size" (the conv and SSM states).
    EXPECT_EQ(cpu.contains("rs_buffer_mib"), r.contains("rs_buffer_mib")) << id;
    if (r.contains("rs_buffer_mib")) {
      EXPECT_EQ(printed_mib(cpu["rs_buffer_mib"]), printed_mib(r["rs_buffer_mib"])) << id;
    }
    ++checked;
  }
  EXPECT_EQ(checked, loads.size());
}

// The same F16 files quantized by the tree's llama-quantize to 7 file types and loaded again
// (llamacpp_oracle_quantized.jsonl): llama-quantize's mixture (quant/gguf_mixture.cpp) and the
// CPU_Mapped span / CPU_REPACK copies it leaves must come out to the printed MiB from the config and
// `--weights gguf:<TYPE>`. Before 2026-12-05 Phi-3's fused gate_up was named ffn_gate_up (llama.cpp:
// ffn_up), moving the mapped span's end (399.30 against 372.30 MiB at Q4_K_M), and a multimodal
// config failed at Q8_0 / Q4_0 on its vision tower's 14-wide rows, which belong to the mmproj file.
TEST(LlamacppOracle, QuantizedModelBuffersMatch) {
  const auto loads = oracle_records("llamacpp_oracle_quantized.jsonl");
  // 12 catalogue models x Q4_K_M, Q8_0, Q4_0, Q6_K, Q3_K_M, Q5_K_S, Q2_K; gpt-oss-20b x MXFP4_MOE,
  // Q4_K_M, Q8_0, Q4_0; GLM-4.5-Air x Q8_0 (its repacked types leave a CPU_Mapped span that depends
  // on the order of the tensors in the file, which gen_gguf.py does not write as convert does);
  // Qwen3-VL-8B, ERNIE-4.5-21B-A3B and StableLM-alpha-3B (GPT-NeoX) x Q8_0, Q4_K_M, Q4_0; Nemotron-H-8B
  // cut to 9 layers x the 7 (its Mamba-2 conv kernels stay F32); Nemotron-3-Nano cut to 6 layers x
  // Q4_K_M, Q8_0, Q2_K; Granite-4.0-H-Tiny cut to 6 layers x the 7 (its fused gate + up projections
  // split and the shared MLP named *_shexp as convert writes them: llama-quantize orders a block's
  // tensors by name, and at Q4_K_M and Q4_0, where repacked tensors end the file, the CPU_Mapped span
  // had been 26.15 MiB off with the fused names; Q4_K_M and Q4_0 joined on 2026-12-06),
  // the two Falcon-H1 cuts x the 7 (their FFN norm named blk.N.ffn_norm, without .weight, as convert
  // writes it), the small Jamba config x the 7 (its 16-wide dt rows stay F16 at Q8_0 / Q4_0), the small
  // DeepSeek-V3.2, GLM-5 and GLM-5.2 configs x Q4_K_M, Q8_0, Q4_0, and the two small Qwen3.5 configs (dense, MoE) and the small Qwen3-Next one x the 7 (Qwen3-Next's
  // in_proj_qkvz split into attn_qkv and attn_gate as convert does; the family's post-attention norm is
  // named post_attention_norm, which puts it, not a repacked ffn_up, at the end of the last block: the
  // mapped span was 1.68 / 2.39 MiB short at Q4_K_M and Q4_0 with ffn_norm), and the small
  // Nemotron-3-Super config x Q4_K_M, Q8_0, Q2_K (its ffn_latent_down / _up take the file type's
  // default: no llama-quantize category matches them), and Qwen3-VL-30B-A3B cut to 2 layers x Q4_K_M,
  // Q8_0, and the two small Gemma 4 configs x the 7 (gate_up_proj kept fused as ffn_gate_up_exps, the router's
  // scale and per-expert scale as ffn_gate_inp.scale / ffn_down_exps.scale, layer_scalar as layer_output_scale,
  // rope_freqs for the full layers, as conversion/gemma.py writes them) (collect_quant.py).
  ASSERT_EQ(loads.size(), 185u);
  for (const json& r : loads) {
    test::ScratchDir dir;
    dir.write("config.json", r.contains("catalogue_model") ? cut_config(r) : r["config"].dump());
    const json j = test::run_cli_json({"plan", "--engine", "llamacpp", "--gpu", "cpu", "--model", dir.path().string(),
                                       "--weights", "gguf:" + r["file_type"].get<std::string>(), "-c", "4096"});
    ASSERT_TRUE(j.contains("engine_view")) << r["id"] << "\n" << j.dump();
    const json& planned = j["engine_view"]["model_buffers_mib"];
    const json& measured = r["model_buffers_mib"];
    EXPECT_EQ(planned.size(), measured.size()) << r["id"] << " " << planned.dump();
    for (const auto& [buffer, mib] : measured.items())
      EXPECT_EQ(planned.contains(buffer) ? printed_mib(planned[buffer]) : "absent", printed_mib(mib)) << r["id"] << " " << buffer;
  }
}

}  // namespace
}  // namespace vramplan
