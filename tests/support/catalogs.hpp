// catalogs.hpp — the quantization catalogue of the source tree's data/, loaded once per test
// binary instead of once per test file.
#pragma once

#include "vramplan/quant/format.hpp"

namespace vramplan::test {

//! data/quant_formats.json alone, without weight schemes: what the file readers and KV sizing use.
const QuantCatalog& quant_formats();

//! data/quant_formats.json with data/quant_schemes.json: what --weights and the engines use.
const QuantCatalog& quant_catalog();

}  // namespace vramplan::test
