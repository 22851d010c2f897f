// The model and GPU the speculative-decoding tests plan on (sglang_speculative_test.cpp,
// mtp_draft_test.cpp): DeepSeek-R1, whose config has one MTP layer, on a 150 GB Hopper card
// (143,051 MiB: above the 61,440 MiB floor of SGLang's reserve rule), 8 of them.
#pragma once

#include "support/engine_plans.hpp"
#include "support/test_support.hpp"
#include "vramplan/model/catalogue.hpp"

namespace vramplan::test {

inline const ModelSpec& deepseek_r1_with_mtp() {
  static const ModelSpec spec = load_catalogue_model(source_root(), "deepseek-r1");
  return spec;
}

inline memory::GpuTarget mtp_test_card() { return gpu_target(Bytes(150'000'000'000ull), "test card", 8, "9.0"); }

}  // namespace vramplan::test
