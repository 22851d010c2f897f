#include "support/catalogs.hpp"

#include "support/test_support.hpp"

namespace vramplan::test {

const QuantCatalog& quant_formats() {
  static const QuantCatalog formats = QuantCatalog::load(source_dir() / "data" / "quant_formats.json");
  return formats;
}

const QuantCatalog& quant_catalog() {
  static const QuantCatalog catalog = QuantCatalog::load(source_dir() / "data" / "quant_formats.json",
                                                         source_dir() / "data" / "quant_schemes.json");
  return catalog;
}

}  // namespace vramplan::test
