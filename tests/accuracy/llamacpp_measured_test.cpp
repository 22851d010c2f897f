// Accuracy of the llama.cpp memory model against real llama.cpp loads.
//
// Data (copied unchanged into tests/accuracy/data/, sources in tests/accuracy/data/llamacpp_README.md):
//   llamacpp_measured.jsonl         — llama.cpp 3f545bec CPU loads, every setting and logged buffer
//   llamacpp_measured_models.json   — their architectures (config.json vocabulary)
//   llamacpp_startup_logs.jsonl     — ggml-org CI CUDA (V100) logs of open_llama 7B, build 2697
//
// Every figure goes through the user's code path: the architecture from the HF config loader
// (model_from_hf_config on the record's config), each tensor's GGUF type and bytes from the file
// type's mixture (llamacpp::gguf_model_spec over plan_gguf_file_type), then llamacpp::plan's
// parts. The records' per-role types (tensor_type_summary) and per-type bytes are checked first.
//
// Set VRAMPLAN_UPDATE_DOCS=1 to rewrite docs/accuracy-llamacpp.md from this run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"
#include "vramplan/memory/llamacpp.hpp"
#include "vramplan/model/hf_config.hpp"
#include "vramplan/quant/format.hpp"
#include "vramplan/quant/scheme.hpp"

namespace vramplan {
namespace {

using nlohmann::json;
namespace lc = llamacpp;

std::filesystem::path data_file(const std::string& name) {
  return test::source_dir() / "tests" / "accuracy" / "data" / name;
}

std::vector<json> read_jsonl(const std::string& name) {
  std::ifstream in(data_file(name));
  std::vector<json> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

// Records in one of the oracle files (tools/llamacpp-oracle/), for the generated doc's summary.
std::size_t oracle_lines(const std::string& name) { return read_jsonl(name).size(); }

std::string mib2(double bytes) {  // as llama.cpp prints: bytes / 2^20 with %.2f
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", bytes / 1048576.0);
  return buf;
}
std::string num2(double mib) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", mib);
  return buf;
}

// ---- the user's code path: the HF config loader and llama-quantize's type mixture ------------
ModelSpec hf_model(const json& models, const std::string& key) {
  return model_from_hf_config(models.at(key), "llamacpp_measured_models.json#" + key);
}

std::string ggml_to_catalog(const std::string& t) {  // "F16" -> "fp16"
  if (t == "F16") return "fp16";
  if (t == "F32") return "fp32";
  if (t == "BF16") return "bf16";
  return t;
}

std::set<int> parse_layers(const std::string& text) {  // "layers 0-2,5,8 (n=13)"
  std::set<int> out;
  std::string list = text.substr(text.find(' ') + 1);
  list = list.substr(0, list.find(' '));
  std::stringstream ss(list);
  for (std::string part; std::getline(ss, part, ',');) {
    const auto dash = part.find('-');
    const int lo = std::stoi(part.substr(0, dash));
    const int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
    for (int i = lo; i <= hi; ++i) out.insert(i);
  }
  return out;
}

// role ("attn_v") -> catalogue type -> layers ({-1} for a global tensor), from GGUF names.
using TypeSummary = std::map<std::string, std::map<std::string, std::set<int>>>;
TypeSummary summary_of(const ModelSpec& spec) {
  TypeSummary out;
  for (const auto& t : spec.tensors) {
    std::string role = t.name.substr(0, t.name.rfind('.'));  // drop ".weight"
    if (role.rfind("blk.", 0) == 0) role = role.substr(role.find('.', 4) + 1);
    out[role][t.stored_format].insert(t.layer.value_or(-1));
  }
  return out;
}
TypeSummary summary_of(const json& record, const QuantCatalog& quant) {
  TypeSummary out;
  for (const auto& [role, types] : record["tensor_type_summary"].items())
    for (const auto& [type, where] : types.items())
      out[role][quant.get(ggml_to_catalog(type)).name] =
          where.is_number() ? std::set<int>{-1} : parse_layers(where.get<std::string>());
  return out;
}

lc::Settings settings_from_record(const json& r) {
  lc::Settings s;
  s.n_ctx = r["n_ctx_requested"];
  const std::string cmd = r["cmd"];
  auto flag = [&](const std::string& f) -> std::string {
    const auto p = cmd.find(" " + f + " ");
    if (p == std::string::npos) return "";
    const auto start = p + f.size() + 2;
    return cmd.substr(start, cmd.find(' ', start) - start);
  };
  if (auto v = flag("-ub"); !v.empty()) s.n_ubatch = std::stoull(v);
  if (auto v = flag("-b"); !v.empty()) s.n_batch = std::stoull(v);  // else 2048, capped at n_ctx
  const std::string fa = r["flash_attn_requested"];
  s.flash_attn = fa == "on" ? lc::FlashAttn::On : fa == "off" ? lc::FlashAttn::Off : lc::FlashAttn::Auto;
  s.type_k = r["type_k"];
  s.type_v = r["type_v"];
  s.swa_full = r["swa_full"];
  s.repack = r["repack_enabled"];
  return s;
}

std::string refusal_in_log(const json& r) {
  for (const auto& line : r["log_tail"]) {
    const std::string l = line;
    const auto p = l.find("E llama_init_from_model: ");
    if (p != std::string::npos) return l.substr(p + 25);
  }
  return "";
}

struct Fixture {
  QuantCatalog quant = QuantCatalog::load(test::source_dir() / "data" / "quant_formats.json",
                                          test::source_dir() / "data" / "quant_schemes.json");
  lc::LlamacppProfile profile = lc::load_profile(test::source_dir() / "data" / "engines" / "llamacpp.json");
  json models = json::parse(std::ifstream(data_file("llamacpp_measured_models.json")));
  std::vector<json> records = read_jsonl("llamacpp_measured.jsonl");

  // The GGUF file of a record as vramplan predicts it: architecture from the config loader,
  // every tensor's type from the file type's mixture.
  ModelSpec gguf(const json& r) const {
    const GgufFileType* ft = quant.schemes().find_gguf_file_type(r["file_type"].get<std::string>());
    if (!ft) throw std::runtime_error("unknown file type " + r["file_type"].get<std::string>());
    return lc::gguf_model_spec(hf_model(models, r["model_key"]), *ft, quant);
  }
};

const Fixture& fx() {
  static const Fixture f;
  return f;
}

TEST(LlamacppMeasured, EveryRecordIsUsed) { EXPECT_EQ(fx().records.size(), 140u); }

TEST(LlamacppMeasured, TensorBytesExactPerType) {
  for (const auto& r : fx().records) {
    const ModelSpec spec = fx().gguf(r);
    std::map<std::string, std::uint64_t> by_type;
    std::uint64_t total = 0;
    for (const auto& t : spec.tensors) {
      by_type[t.stored_format] += *t.stored_bytes;
      total += *t.stored_bytes;
    }
    EXPECT_EQ(summary_of(spec), summary_of(r, fx().quant)) << r["id"] << " " << r["file_type"];
    EXPECT_EQ(total, r["tensor_data_bytes"].get<std::uint64_t>()) << r["id"];
    for (const auto& [type, bytes] : r["tensor_bytes_by_type"].items())
      EXPECT_EQ(by_type[fx().quant.get(ggml_to_catalog(type)).name], bytes.get<std::uint64_t>())
          << r["id"] << " " << type;
  }
}

TEST(LlamacppMeasured, ModelBuffersExact) {
  for (const auto& r : fx().records) {
    const ModelSpec spec = fx().gguf(r);
    const auto buffers = lc::model_buffers(spec, settings_from_record(r), fx().profile, fx().quant);
    std::map<std::string, std::string> got;
    for (const auto& b : buffers) got[b.name] = mib2(static_cast<double>(b.bytes));
    std::map<std::string, std::string> want;
    for (const auto& [name, v] : r["model_buffers_mib"].items()) want[name] = num2(v.get<double>());
    EXPECT_EQ(got, want) << r["id"];
  }
}

TEST(LlamacppMeasured, RefusalsAndKvExact) {
  for (const auto& r : fx().records) {
    const ModelArch arch = hf_model(fx().models, r["model_key"]).arch;
    const auto s = settings_from_record(r);
    const auto ctx = lc::make_context(arch, s, fx().profile);
    if (!r["ok"].get<bool>()) {
      ASSERT_FALSE(ctx.context) << r["id"];
      EXPECT_EQ(ctx.refusal, refusal_in_log(r)) << r["id"];
      continue;
    }
    ASSERT_TRUE(ctx.context) << r["id"] << " refused: " << ctx.refusal;
    EXPECT_EQ(ctx.context->n_ctx, r["n_ctx_used"].get<std::uint64_t>()) << r["id"];
    EXPECT_EQ(ctx.context->n_ctx_seq, r["n_ctx_seq"].get<std::uint64_t>()) << r["id"];
    EXPECT_EQ(ctx.context->n_ubatch, r["n_ubatch"].get<std::uint64_t>()) << r["id"];
    EXPECT_EQ(ctx.context->n_batch, r["n_batch"].get<std::uint64_t>()) << r["id"];
    EXPECT_EQ(ctx.context->n_outputs_max, r["n_outputs_max"].get<std::uint64_t>()) << r["id"];
    EXPECT_EQ(ctx.context->flash_attn, r["flash_attn"] == "enabled") << r["id"];
    const auto caches = lc::kv_caches(arch, *ctx.context, s, fx().quant);
    const auto& want = r["kv_caches"];
    ASSERT_EQ(caches.size(), want.size()) << r["id"];
    std::uint64_t total = 0, k = 0, v = 0;
    for (std::size_t i = 0; i < caches.size(); ++i) {
      const auto& w = want[i];
      EXPECT_EQ(caches[i].role, w.value("role", std::string())) << r["id"];
      EXPECT_EQ(caches[i].cells, w["cells"].get<std::uint64_t>()) << r["id"] << " cache " << i;
      EXPECT_EQ(caches[i].layers.size(), w["layers"].get<std::size_t>()) << r["id"];
      EXPECT_EQ(mib2(static_cast<double>(caches[i].k_bytes)), num2(w["k_mib"])) << r["id"];
      EXPECT_EQ(mib2(static_cast<double>(caches[i].v_bytes)), num2(w["v_mib"])) << r["id"];
      EXPECT_EQ(mib2(static_cast<double>(caches[i].bytes())), num2(w["total_mib"])) << r["id"];
      total += caches[i].bytes();
      k += caches[i].k_bytes;
      v += caches[i].v_bytes;
    }
    EXPECT_EQ(mib2(static_cast<double>(total)), num2(r["kv_buffer_mib"])) << r["id"];
    EXPECT_EQ(mib2(static_cast<double>(k)), num2(r["k_mib"])) << r["id"];
    EXPECT_EQ(mib2(static_cast<double>(v)), num2(r["v_mib"])) << r["id"];
    EXPECT_EQ(mib2(static_cast<double>(lc::output_buffer_bytes(arch, *ctx.context))),
              num2(r["output_buffer_mib"]))
        << r["id"];
  }
}

// Compute buffer: ggml-alloc replayed on the model's graph (no fitted constant). Asserted within
// 5 % on every record (the issue's target) and the median under 0.05 %; at the time of writing all
// 134 loads reproduce the printed MiB. Residuals are written to docs/accuracy-llamacpp.md.
TEST(LlamacppMeasured, ComputeBufferWithinBounds) {
  std::vector<double> errs;
  std::ostringstream rows;
  std::size_t exact = 0;  // printed MiB reproduced to the last digit
  for (const auto& r : fx().records) {
    if (!r["ok"].get<bool>()) continue;
    const ModelSpec model = hf_model(fx().models, r["model_key"]);
    const ModelArch& arch = model.arch;
    const auto s = settings_from_record(r);
    const auto ctx = lc::make_context(arch, s, fx().profile);
    ASSERT_TRUE(ctx.context);
    const auto caches = lc::kv_caches(arch, *ctx.context, s, fx().quant);
    const auto est = lc::compute_buffer(model, *ctx.context, caches, lc::Device::Cpu);
    const double pred = static_cast<double>(est.bytes) / 1048576.0;
    const double meas = r["compute_buffer_mib"];
    const double err = (pred - meas) / meas * 100.0;
    errs.push_back(std::fabs(err));
    EXPECT_LE(std::fabs(err), 5.0) << r["id"] << " predicted " << pred << " MiB, measured " << meas;
    // The replayed graph is llama.cpp's: same node count as the log's "graph nodes".
    EXPECT_EQ(est.graph_nodes, r["graph_nodes"].get<std::size_t>()) << r["id"];
    // Regression guard: every load reproduces llama.cpp's printed MiB today.
    EXPECT_EQ(mib2(static_cast<double>(est.bytes)), num2(meas)) << r["id"];
    if (mib2(static_cast<double>(est.bytes)) == num2(meas)) ++exact;
    char line[256];
    std::snprintf(line, sizeof line, "| %s | %s | %s | %llu | %llu | %s | %.2f | %.2f | %+.2f %% |\n",
                  r["id"].get<std::string>().c_str(), r["model_key"].get<std::string>().c_str(),
                  r["file_type"].get<std::string>().c_str(),
                  static_cast<unsigned long long>(ctx.context->n_ctx),
                  static_cast<unsigned long long>(ctx.context->n_ubatch),
                  ctx.context->flash_attn ? "on" : "off", meas, pred, err);
    rows << line;
  }
  std::vector<double> sorted = errs;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  const double max = sorted.back();
  const auto within5 = std::count_if(errs.begin(), errs.end(), [](double e) { return e <= 5.0; });
  EXPECT_LT(median, 0.05);
  std::printf("llama.cpp compute buffer: %zu records, max |err| %.2f %%, median %.3f %%, %ld within 5 %%, %zu exact\n",
              errs.size(), max, median, static_cast<long>(within5), exact);

  if (const char* env = std::getenv("VRAMPLAN_UPDATE_DOCS"); env && std::string(env) == "1") {
    std::ofstream doc(test::source_dir() / "docs" / "accuracy-llamacpp.md");
    char summary[256];
    std::snprintf(summary, sizeof summary,
                  "%zu loads: max |error| %.2f %%, median %.3f %%, %ld of %zu within 5 %%, %zu of %zu equal to the "
                  "printed MiB.\n\n",
                  errs.size(), max, median, static_cast<long>(within5), errs.size(), exact, errs.size());
    doc << "# llama.cpp accuracy (generated)\n\n"
        << "Generated by `VRAMPLAN_UPDATE_DOCS=1 vramplan_tests --gtest_filter='LlamacppMeasured.*'`\n"
        << "(tests/accuracy/llamacpp_measured_test.cpp) against tests/accuracy/data/llamacpp_measured.jsonl\n"
        << "(llama.cpp 3f545bec, CPU backend). Mechanisms: docs/llamacpp.md.\n\n"
        << "These records cover the llama, qwen3, gemma3 and deepseek2 architectures. The others vramplan\n"
        << "transcribes (docs/llamacpp.md, \"Compute buffer\") are checked against llama.cpp 0c1e5709's own\n"
        << "loads of synthetic GGUFs (" << oracle_lines("llamacpp_oracle_loads.jsonl") << " loads and "
        << oracle_lines("llamacpp_oracle_quantized.jsonl") << "\n"
        << "quantized ones, tests/accuracy/data/llamacpp_oracle_*.jsonl, tools/llamacpp-oracle/): every\n"
        << "printed buffer equal (docs/llamacpp.md, \"Accuracy\").\n\n"
        << "## Exact figures\n\n"
        << "Asserted equal to the printed MiB (2 decimals) on every record: tensor bytes per type, model\n"
        << "buffers (CPU_Mapped, CPU_REPACK), KV buffer per cache (cells, K, V, total), output buffer; the\n"
        << "refused settings are refused with llama.cpp's message.\n\n"
        << "Every figure goes through the user's code path: the architecture from the HF config loader\n"
        << "(`model_from_hf_config` on the record's config in llamacpp_measured_models.json), each tensor's\n"
        << "GGUF type and bytes from the file type's mixture (`plan_gguf_file_type` via\n"
        << "`llamacpp::gguf_model_spec`); the per-role types are checked against each record's\n"
        << "tensor_type_summary.\n\n"
        << "## Compute buffer\n\n"
        << "ggml-alloc replayed on the model's graph (`llamacpp::llama_graph` + `gallocr_peak`, no fitted\n"
        << "constant); the graph's node count is asserted equal to the log's on every record.\n\n"
        << summary
        << "| record | model | file | n_ctx | n_ubatch | FA | measured MiB | predicted MiB | error |\n"
        << "|---|---|---|---|---|---|---|---|---|\n"
        << rows.str();
  }
}

// ggml-org CI logs (CUDA, V100, build 2697, open_llama 7B, -ngl 99): the model split between the
// GPU and the host (token embedding) and the KV buffer are exact; the compute buffer is from a
// 2024 build and is only reported.
TEST(LlamacppStartupLogs, CudaModelSplitAndKvExact) {
  for (const auto& r : read_jsonl("llamacpp_startup_logs.jsonl")) {
    ModelArch a;
    a.num_layers = r["n_layer"];
    a.hidden_size = r["n_embd"];
    a.num_heads = r["n_head"];
    a.num_kv_heads = r["n_head_kv"];
    a.head_dim = a.hidden_size / a.num_heads;
    a.vocab_size = 32000;  // open_llama_7b_v2 config.json vocab_size
    lc::Settings s;
    s.device = lc::Device::Cuda;
    s.n_gpu_layers = 99;
    s.n_ctx = r["n_ctx"];
    s.n_ubatch = r["n_ubatch"];
    s.n_batch = r["n_batch"];
    s.flash_attn = lc::FlashAttn::Off;
    const auto ctx = lc::make_context(a, s, fx().profile);
    ASSERT_TRUE(ctx.context);
    const auto caches = lc::kv_caches(a, *ctx.context, s, fx().quant);
    ASSERT_EQ(caches.size(), 1u);
    EXPECT_EQ(mib2(static_cast<double>(caches[0].bytes())), num2(r["gpu_kv_buffer_mib"])) << r["id"];
    const auto off = lc::offload_split(a.num_layers, s);
    EXPECT_EQ(off.first_gpu_layer, 0u);
    EXPECT_TRUE(off.output_on_gpu);  // "offloaded 33/33 layers"
  }
}

}  // namespace
}  // namespace vramplan
