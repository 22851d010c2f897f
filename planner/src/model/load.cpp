#include "vramplan/model/load.hpp"

#include "vramplan/core/error.hpp"
#include "vramplan/io/gguf.hpp"
#include "vramplan/model/gguf_model.hpp"
#include "vramplan/io/input_file.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/model/checkpoint.hpp"
#include "vramplan/io/format_table.hpp"

namespace vramplan {
namespace {

FormatTable quant_formats(const DataRoot& root) {
  return FormatTable::load(root.data_file("quant_formats.json"));
}

// A bare name is a catalogue id; a path says so with a '/', a leading '.' ("./m", "..") or a
// model file's extension. Catalogue ids hold dots ("qwen2.5-7b", "llama-3.1-8b"), so only the
// extensions of model files count. Without this rule a file or directory in the working
// directory named like a catalogue id would silently replace the catalogue model.
bool looks_like_path(std::string_view what) {
  const std::filesystem::path p(what);
  const auto ext = p.extension();
  return what.find('/') != std::string_view::npos || ext == ".json" || ext == ".gguf" ||
         ext == ".safetensors" || what.starts_with(".");
}

// Longest path Linux accepts (PATH_MAX); a longer argument is neither a path nor a catalogue id.
constexpr std::size_t kMaxModelArgument = 4096;

// A GGUF llama.cpp refuses for a missing tensor is refused as a checkpoint directory missing one is
// (HfLoadOptions::allow_missing_tensors: inspect shows it with a warning).
ModelSpec checked_gguf(ModelSpec spec, const HfLoadOptions& hf) {
  if (const std::string why = gguf_missing_tensors(spec); !why.empty()) {
    if (!hf.allow_missing_tensors) throw Error(ErrorKind::InputFile, why);
    spec.warnings.push_back(why);
  }
  return spec;
}

template <class QuantFn>
ModelSpec load_file(const std::filesystem::path& path, const HfLoadOptions& hf, QuantFn&& quant) {
  require_regular_file(path);  // a FIFO named *.gguf would block open() forever
  // The format is what the first bytes say; the extension only picks the error for an unknown one.
  switch (sniff_magic(path)) {
    case FileMagic::Gguf: return checked_gguf(model_from_gguf_file(path, quant()), hf);
    case FileMagic::Safetensors:
      throw Error(ErrorKind::InputFile, path.string() +
                                            ": is a safetensors file; pass the checkpoint directory that holds it "
                                            "and its config.json");
    case FileMagic::Other: break;
  }
  if (path.extension() == ".gguf") return checked_gguf(model_from_gguf_file(path, quant()), hf);  // reports the bad magic
  if (path.filename() == "config.json" && has_safetensors(path.parent_path()))
    return model_from_checkpoint_dir(path.parent_path(), quant(), hf);
  return model_from_hf_config_file(path, hf);
}

// `quant` is called only for the inputs that need the catalogue (GGUF, safetensors checkpoints).
template <class QuantFn>
ModelSpec load_with(std::string_view what, const DataRoot& root, const LoadOptions& options, QuantFn&& quant) {
  if (what.size() > kMaxModelArgument)
    throw_usage("--model: " + std::to_string(what.size()) + " characters, longer than any path (" +
                std::to_string(kMaxModelArgument) + ")");
  const std::filesystem::path path(what);
  std::error_code ec;
  if (!looks_like_path(what)) {
    try {
      return load_catalogue_model(root, what, options.hf);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::UnknownName || !std::filesystem::exists(path, ec)) throw;
      throw_unknown(std::string(e.what()) + "; a bare name is a catalogue id: to read '" + std::string(what) +
                    "' in the working directory, pass ./" + std::string(what));
    }
  }
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status)) {
    const auto config = path / "config.json";
    const auto config_status = std::filesystem::status(config, ec);
    if (!std::filesystem::exists(config_status))
      throw Error(ErrorKind::InputFile, path.string() + ": directory has no config.json (a model needs one)");
    require_regular_file(config);  // a directory or FIFO named config.json is named as such
    return model_from_checkpoint_dir(path, quant(), options.hf);
  }
  if (std::filesystem::exists(status)) return load_file(path, options.hf, quant);
  throw Error(ErrorKind::Io, std::string(what) + ": " + missing_file_reason(path, ec, "no such file or directory"));
}

}  // namespace

std::string model_source_text(const ModelSource& s) {
  if (s.kind == "catalogue") return "catalogue entry models/" + s.path + ".json";
  if (s.kind == "safetensors") return "checkpoint " + s.path + " (config.json + safetensors headers)";
  if (s.kind == "gguf") return "GGUF file " + s.path;
  if (s.kind == "hf-config") return "config.json " + s.path + " (no safetensors read)";
  return s.kind + " " + s.path;
}

ModelSpec load_model(std::string_view what, const DataRoot& root, const LoadOptions& options) {
  return load_with(what, root, options, [&] { return quant_formats(root); });
}

ModelSpec load_model(std::string_view what, const DataRoot& root, const FormatTable& quant,
                     const LoadOptions& options) {
  return load_with(what, root, options, [&]() -> const FormatTable& { return quant; });
}

}  // namespace vramplan
