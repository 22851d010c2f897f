// data/perf_defaults.json (perf/perf_defaults.cpp load_perf_defaults), then what the step model
// asks of it: every engine's step overhead and, where kernels were counted, the entries by vendor,
// compute capability and weight format (StepOverheadDefaults::counted_layers).
#include <cstdint>

#include "fuzz_support.hpp"
#include "vramplan/perf/perf_defaults.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  const auto path = fuzz::write_input(data, size, "perf_defaults.json");
  return fuzz::refuse_cleanly([&] {
    const perf::PerfDefaults d = perf::load_perf_defaults(path);
    for (const char* engine : {"vllm", "vllm-sync", "sglang", "trtllm", "llamacpp", "hf", "default"}) {
      const perf::StepOverheadDefaults& s = d.step_overhead_for(engine);
      for (const char* arch : {"DeepseekV3ForCausalLM", "GptOssForCausalLM", "Qwen3MoeForCausalLM"})
        for (int cc : {0, 9, 10})
          for (const char* weights : {"bf16", "mxfp4 (mixed)", "fp8-block"})
            (void)s.counted_layers("nvidia", cc, arch, {}, weights);
    }
  });
}
