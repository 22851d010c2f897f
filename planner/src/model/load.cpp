#include "vramplan/model/load.hpp"

#include "vramplan/core/error.hpp"
#include "vramplan/io/gguf.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/model/checkpoint.hpp"
#include "vramplan/quant/format.hpp"

namespace vramplan {
namespace {

QuantCatalog quant_formats(const DataRoot& root) {
  return QuantCatalog::load(root.data_file("quant_formats.json"));
}

bool looks_like_path(std::string_view what) {
  const std::filesystem::path p(what);
  return what.find('/') != std::string_view::npos || p.extension() == ".json" ||
         p.extension() == ".gguf" || what.starts_with(".");
}

}  // namespace

namespace {

// `quant` is called only for the inputs that need the catalogue (GGUF, safetensors checkpoints).
template <class QuantFn>
ModelSpec load_with(std::string_view what, const DataRoot& root, const LoadOptions& options, QuantFn&& quant) {
  const std::filesystem::path path(what);
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    if (std::filesystem::is_directory(path)) {
      if (!std::filesystem::is_regular_file(path / "config.json"))
        throw Error(ErrorKind::InputFile,
                    path.string() + ": directory has no config.json (a model needs one)");
      return model_from_checkpoint_dir(path, quant(), options.hf);
    }
    if (path.extension() == ".gguf") return model_from_gguf_file(path, quant());
    if (path.filename() == "config.json" && has_safetensors(path.parent_path()))
      return model_from_checkpoint_dir(path.parent_path(), quant(), options.hf);
    return model_from_hf_config_file(path, options.hf);
  }
  if (looks_like_path(what))
    throw Error(ErrorKind::Io, std::string(what) + ": no such file or directory");
  return load_catalogue_model(root, what, options.hf);
}

}  // namespace

ModelSpec load_model(std::string_view what, const DataRoot& root, const LoadOptions& options) {
  return load_with(what, root, options, [&] { return quant_formats(root); });
}

ModelSpec load_model(std::string_view what, const DataRoot& root, const QuantCatalog& quant,
                     const LoadOptions& options) {
  return load_with(what, root, options, [&]() -> const QuantCatalog& { return quant; });
}

}  // namespace vramplan
