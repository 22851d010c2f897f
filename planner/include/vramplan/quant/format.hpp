// vramplan/quant/format.hpp — the format table (io/format_table.hpp) with the weight schemes and
// precision rules of data/quant_schemes.json on top: what --weights and the engines' precision
// plans look formats up in. The table itself lives in io so that io/ and model/ need no quant/.
#pragma once

#include <filesystem>
#include <memory>

#include "vramplan/io/format_table.hpp"

namespace vramplan {

class SchemeTable;  // quant/scheme.hpp: --weights schemes and precision rules

class QuantCatalog : public FormatTable {
 public:
  //! The formats alone (FormatTable::load); schemes() then throws.
  static QuantCatalog load(const std::filesystem::path& file);
  //! Formats plus data/quant_schemes.json (needed by parse_weight_scheme / plan_precision).
  static QuantCatalog load(const std::filesystem::path& formats_file, const std::filesystem::path& schemes_file);
  //! Throws Error(Internal) when the catalogue was loaded without a schemes file.
  const SchemeTable& schemes() const;

 private:
  std::shared_ptr<const SchemeTable> schemes_;
};

}  // namespace vramplan
