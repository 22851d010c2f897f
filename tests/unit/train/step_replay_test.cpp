// Variable-length steps replayed through the caching allocator (train/step_replay.hpp). The
// replay's figures come from memory/torch_allocator.hpp, whose rules are tested on their own
// (tests/unit/memory); these tests pin what the replay adds: determinism, a fixed-length run
// fragmenting less than a variable-length one, and the setups it refuses.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/data_root.hpp"
#include "vramplan/model/catalogue.hpp"
#include "vramplan/train/step_replay.hpp"
#include "vramplan/train/train_plan.hpp"

namespace vramplan::train {
namespace {

ReplayInput llama2_7b_qv(double sigma) {
  static const ModelSpec spec = load_catalogue_model(test::source_root(), "llama-2-7b");
  ReplayInput in;
  in.arch = spec.arch;
  in.micro_batch = 2;
  in.max_len = 512;
  in.lengths = {110, sigma, 60};
  in.lora_q = in.lora_v = true;
  return in;
}

TEST(TrainStepReplay, SameSeedsSameFigures) {
  const auto a = replay_variable_length_steps(llama2_7b_qv(0.579));
  const auto b = replay_variable_length_steps(llama2_7b_qv(0.579));
  EXPECT_EQ(a.fragmentation, b.fragmentation);
  EXPECT_EQ(a.peak_reserved, b.peak_reserved);
  EXPECT_GE(a.peak_reserved, a.peak_allocated);
}

TEST(TrainStepReplay, FixedLengthFragmentsLessThanVariable) {
  // sigma 0: every sample is 110 tokens, every seed replays the same steps (range min = max).
  const auto fixed = replay_variable_length_steps(llama2_7b_qv(0.0));
  EXPECT_NE(fixed.explain.find("reserved - allocated " + memory::grouped(fixed.fragmentation) + " .. " +
                               memory::grouped(fixed.fragmentation) + " B"),
            std::string::npos)
      << fixed.explain;
  const auto variable = replay_variable_length_steps(llama2_7b_qv(0.579));
  EXPECT_GT(variable.fragmentation, fixed.fragmentation);
  // Frozen bf16 weights of Llama-2-7B alone are 6,738,415,616 x 2 B: the allocated peak is above.
  EXPECT_GT(fixed.peak_allocated, 6'738'415'616ull * 2);
}

TEST(TrainStepReplay, RefusesSetupsOutsideTheProgram) {
  TrainRequest q;
  q.model = "llama-2-7b";
  q.gpu = "a100-sxm-80";
  q.method = Method::Qlora;
  q.adapter.base_format = "nf4-dq";
  q.recompute = Recompute::Full;
  q.lengths = LengthSchedule{110, 0.5, 10};
  EXPECT_THROW(plan_training(q, DataRoot{test::source_root()}), Error);
  q.method = Method::Lora;
  q.adapter.base_format = "bf16";
  q.recompute = Recompute::None;
  EXPECT_THROW(plan_training(q, DataRoot{test::source_root()}), Error);
}

}  // namespace
}  // namespace vramplan::train
