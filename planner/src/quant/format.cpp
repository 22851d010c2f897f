#include "vramplan/quant/format.hpp"

#include "vramplan/core/error.hpp"
#include "vramplan/quant/scheme.hpp"

namespace vramplan {

QuantCatalog QuantCatalog::load(const std::filesystem::path& file) {
  QuantCatalog cat;
  static_cast<FormatTable&>(cat) = FormatTable::load(file);
  return cat;
}

QuantCatalog QuantCatalog::load(const std::filesystem::path& formats_file, const std::filesystem::path& schemes_file) {
  QuantCatalog cat = load(formats_file);
  cat.schemes_ = std::make_shared<const SchemeTable>(SchemeTable::load(schemes_file, cat));
  return cat;
}

const SchemeTable& QuantCatalog::schemes() const {
  if (!schemes_) throw_internal("quant catalogue loaded without data/quant_schemes.json");
  return *schemes_;
}

}  // namespace vramplan
