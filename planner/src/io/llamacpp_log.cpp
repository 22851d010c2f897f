// llama.cpp start-up logs (llama-cli / main, llama-server, llama-perplexity): lines of the form
// "<function>: <text>" written by LLAMA_LOG_INFO from the loader and the context
// (src/llama-model-loader.cpp, llama-model.cpp load_tensors / print_info, llama-context.cpp,
// llama-kv-cache*.cpp; before 2025 llm_load_tensors / llm_load_print_meta /
// llama_new_context_with_model / llama_kv_cache_init in llama.cpp). A log may hold several
// loads (the ggml-org CI runs main, then perplexity): the first load's figures are kept.
#include <array>
#include <cctype>
#include <charconv>

#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/engine_log.hpp"

namespace vramplan {

namespace {

// The functions whose lines are llama.cpp's, old and new names.
constexpr std::array<std::string_view, 17> kLlamacppPrefixes = {
    "llama_model_loader: ", "llm_load_print_meta: ", "print_info: ",       "llm_load_tensors: ",
    "load_tensors: ",       "llama_new_context_with_model: ", "llama_context: ", "llama_kv_cache_init: ",
    "llama_kv_cache_unified: ", "llama_kv_cache: ", "llama_init_from_model: ", "ggml_cuda_init: ",
    "llm_load_vocab: ",     "load: ",               "llama_model_load_from_file_impl: ", "main: build = ", "build: "};

std::string_view llamacpp_trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "key = value" after the function prefix (print_info / llama_context settings).
std::optional<std::string_view> llamacpp_setting(std::string_view text, std::string_view key) {
  text = llamacpp_trim(text);
  if (!text.starts_with(key)) return std::nullopt;
  std::string_view rest = llamacpp_trim(text.substr(key.size()));
  if (!rest.starts_with("=")) return std::nullopt;
  return llamacpp_trim(rest.substr(1));
}

// "CUDA0 KV buffer size =   256.00 MiB" -> 256.00 MiB on `device`.
std::optional<LoggedSize> llamacpp_buffer(const EngineLog& out, std::string_view text, std::string_view what,
                                          std::size_t number) {
  text = llamacpp_trim(text);
  if (!text.starts_with("CUDA0 ") || text.find(what) == std::string_view::npos) return std::nullopt;
  const auto eq = text.find("= ");
  if (eq == std::string_view::npos) return std::nullopt;
  const std::string_view value = llamacpp_trim(text.substr(eq + 2));
  try {
    return LoggedSize{parse_bytes(value, what), number};
  } catch (const Error&) {
    throw Error(ErrorKind::InputFile, out.origin + ":" + std::to_string(number) + ": " + std::string(llamacpp_trim(what)) +
                                          ": cannot read " + excerpt(value, 40));
  }
}

// llama_ftype_name (src/llama-model-loader.cpp): "Q4_K - Medium" -> "Q4_K_M", "MOSTLY F16" -> "F16".
std::string llamacpp_scheme(std::string_view ftype) {
  if (ftype.starts_with("MOSTLY ")) ftype.remove_prefix(7);
  if (ftype.starts_with("all ")) ftype.remove_prefix(4);
  const auto dash = ftype.find(" - ");
  if (dash == std::string_view::npos) return std::string(ftype);
  return std::string(ftype.substr(0, dash)) + "_" + std::string(ftype.substr(dash + 3, 1));
}

template <class T>
void llamacpp_first(std::optional<T>& slot, std::optional<T> value, EngineLog& out) {
  if (!value) return;
  if (!slot) slot = std::move(value);
  ++out.recognised;
}

}  // namespace

bool llamacpp_claims_line(std::string_view line) {
  for (const auto p : kLlamacppPrefixes)
    if (line.starts_with(p)) return true;
  return false;
}

void llamacpp_read_line(std::string_view line, std::size_t number, EngineLog& out) {
  const auto colon = line.find(": ");
  const std::string_view fn = line.substr(0, colon), text = line.substr(colon + 2);
  auto set_arg = [&](const char* flag, std::string_view value) {
    if (out.args.emplace(flag, std::string(value)).second) ++out.recognised;
  };
  // "main: build = 2697 (9958c81b)" (llama-cli of 2024), "build: 6000 (abcdef12) with cc ..." (common/common.cpp today).
  if (fn == "main" && text.starts_with("build = ")) {
    if (out.engine_version.empty()) out.engine_version = "b" + std::string(llamacpp_trim(text.substr(8, text.find(' ', 8) - 8)));
    return;
  }
  if (fn == "build") {
    if (out.engine_version.empty()) out.engine_version = "b" + std::string(text.substr(0, text.find(' ')));
    return;
  }
  if (fn == "llm_load_print_meta" || fn == "print_info") {
    if (const auto name = llamacpp_setting(text, "general.name"); name && out.model.empty()) out.model = std::string(*name);
    if (const auto ftype = llamacpp_setting(text, "model ftype"); ftype) set_arg("weights", "gguf:" + llamacpp_scheme(*ftype));
    if (const auto ftype = llamacpp_setting(text, "file type"); ftype) set_arg("weights", "gguf:" + llamacpp_scheme(*ftype));
    // The architecture the loader states (llama-model.cpp print_info), for reconcile to compare
    // with the planned model; not a setting the plan takes. A per-layer array ("[8, 8, ...]") is
    // kept as printed and not compared.
    for (const std::string_view key : {"n_layer", "n_embd", "n_head", "n_head_kv", "n_ff", "n_vocab", "n_expert", "model params"})
      if (const auto v = llamacpp_setting(text, key); v && !v->empty() && out.architecture.emplace(std::string(key), std::string(*v)).second &&
                                                      out.architecture_line == 0)
        out.architecture_line = number;
    return;
  }
  if (fn == "llm_load_tensors" || fn == "load_tensors") {
    // "offloaded 33/33 layers to GPU": -ngl 33 (n_layer repeating layers + the output layer).
    const std::string_view key = "offloaded ";
    if (const auto t = llamacpp_trim(text); t.starts_with(key)) set_arg("n-gpu-layers", t.substr(key.size(), t.find('/') - key.size()));
    llamacpp_first(out.weights, llamacpp_buffer(out, text, " buffer size", number), out);
    return;
  }
  if (fn == "llama_new_context_with_model" || fn == "llama_context" || fn == "llama_init_from_model") {
    // n_seq_max: the sequences (-np) the context holds (ollama's --parallel).
    for (const auto& [key, flag] : std::array<std::pair<std::string_view, const char*>, 4>{
             {{"n_ctx", "ctx-size"}, {"n_batch", "batch-size"}, {"n_ubatch", "ubatch-size"}, {"n_seq_max", "parallel"}}})
      if (const auto v = llamacpp_setting(text, key)) set_arg(flag, *v);
    if (const auto fa = llamacpp_setting(text, "flash_attn"))
      set_arg("flash-attn", *fa == "1" || *fa == "enabled" || *fa == "on" ? "on" : (*fa == "auto" ? "auto" : "off"));
    // "KV self size  =  256.00 MiB, K (f16):  128.00 MiB, V (f16):  128.00 MiB"
    if (const auto k = text.find("K ("); k != std::string_view::npos) set_arg("cache-type-k", text.substr(k + 3, text.find(')', k) - k - 3));
    if (const auto v = text.find("V ("); v != std::string_view::npos) set_arg("cache-type-v", text.substr(v + 3, text.find(')', v) - v - 3));
    llamacpp_first(out.kv_cache, llamacpp_buffer(out, text, " KV buffer size", number), out);
    llamacpp_first(out.compute_buffer, llamacpp_buffer(out, text, " compute buffer size", number), out);
    return;
  }
  if (fn == "llama_kv_cache_init" || fn == "llama_kv_cache_unified" || fn == "llama_kv_cache") {
    if (fn == "llama_kv_cache_init") out.llamacpp_unified_kv = true;
    llamacpp_first(out.kv_cache, llamacpp_buffer(out, text, " KV buffer size", number), out);
    if (const auto k = text.find("K ("); k != std::string_view::npos) set_arg("cache-type-k", text.substr(k + 3, text.find(')', k) - k - 3));
    if (const auto v = text.find("V ("); v != std::string_view::npos) set_arg("cache-type-v", text.substr(v + 3, text.find(')', v) - v - 3));
    return;
  }
}

}  // namespace vramplan
