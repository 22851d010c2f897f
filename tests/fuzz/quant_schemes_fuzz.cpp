// data/quant_schemes.json against the real format catalogue (quant/scheme.cpp SchemeTable::load),
// every rule set parsed.
#include "fuzz_support.hpp"
#include "vramplan/quant/scheme.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  const auto path = fuzz::write_input(data, size, "quant_schemes.json");
  return fuzz::refuse_cleanly([&] {
    const auto table = SchemeTable::load(path, fuzz::quant_formats());
    for (const auto& name : table.rule_set_names()) table.rules(name);
  });
}
