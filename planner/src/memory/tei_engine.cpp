// Hugging Face text-embeddings-inference: a pooling server (embeddings, reranking, classification)
// for encoders and decoder-based embedders alike. No KV cache; memory follows --max-batch-tokens
// (memory/encoder_memory.cpp plan_pooling_tei; sources in data/engines/tei.json).
#include <algorithm>

#include "vramplan/memory/encoder_memory.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/engine_data.hpp"
#include "vramplan/memory/engine_profiles.hpp"

namespace vramplan::memory {

namespace {

class TeiEngine final : public Engine {
 public:
  explicit TeiEngine(EngineProfileData d) : d_(std::move(d)) {}
  std::string_view name() const override { return "tei"; }
  std::string_view version() const override { return d_.version(); }
  std::string_view release() const override { return d_.release(); }
  std::vector<EngineOption> options() const override {
    return {{"max-batch-tokens", "tokens in one batch (default 16384): the warmup and peak batch", false, {}, OptionValue::whole},
            {"max-batch-requests", "inputs in one batch (default: unlimited)", false, {}, OptionValue::whole},
            {"max-concurrent-requests", "queued requests (default 512; host side, no GPU memory)", false, {}, OptionValue::whole},
            {"dtype", "float16 (default), bfloat16, float32", false, {}},
            {"auto-truncate", "true or false: truncate inputs to --max-batch-tokens instead of refusing to start "
                              "(default false up to 1.8, true from 1.9)", false, {}}};
  }
  MemoryPlan plan(const PlanInput& in) const override { return plan_pooling_tei(*this, d_, in); }
  // TEI has no length flag: every input may be as long as its max input length (router/src/lib.rs).
  Workload default_workload(const ModelSpec& model, const EngineArgs& args) const override {
    const std::uint64_t T = arg_u64(args, "max-batch-tokens").value_or(d_.u64("max_batch_tokens"));
    const std::uint64_t base = tei_base_input_length(model);
    return {std::nullopt, base ? std::min(base, T) : T};
  }

 private:
  EngineProfileData d_;
};

}  // namespace

std::unique_ptr<Engine> make_tei_engine(const std::filesystem::path& data_dir, std::string_view version) {
  return std::make_unique<TeiEngine>(EngineProfileData::load(data_dir, "tei", version));
}

}  // namespace vramplan::memory
