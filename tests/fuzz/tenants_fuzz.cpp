// A co-tenancy tenants file (plan/cotenancy.cpp load_tenants_file).
#include "fuzz_support.hpp"
#include "vramplan/plan/cotenancy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  const auto path = fuzz::write_input(data, size, "tenants.json");
  return fuzz::refuse_cleanly([&] { plan::load_tenants_file(path); });
}
