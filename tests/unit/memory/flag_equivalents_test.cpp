#include <set>

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/memory/engine.hpp"
#include "vramplan/memory/flag_equivalents.hpp"

namespace vramplan::memory {
namespace {

const std::filesystem::path flag_data() { return test::source_dir() / "data"; }

// Every spelling in the table is a flag its engine declares (a renamed option would otherwise
// leave the hint naming a flag the command then refuses), and no engine appears twice in a role.
TEST(FlagEquivalents, EverySpellingIsAFlagOfItsEngine) {
  for (const auto& role : flag_roles()) {
    std::set<std::string_view> engines;
    for (const auto& s : role.spellings) {
      EXPECT_TRUE(engines.insert(s.engine).second) << role.setting << ": " << s.engine << " twice";
      const auto engine = make_engine(s.engine, flag_data());
      for (const auto f : s.flags)
        EXPECT_EQ(flag_with_alias(engine->options(), f), f) << role.setting << ": --" << f << " of " << s.engine;
    }
  }
}

// The flags simulate names for the limit that held requests back (simulate.cpp held_back_remedy).
TEST(FlagEquivalents, TheSimulatorsLimitsHaveEachEnginesFlag) {
  EXPECT_EQ(flag_for_setting(kSettingMemoryShare, "sglang"), "mem-fraction-static");
  EXPECT_EQ(flag_for_setting(kSettingMemoryShare, "trtllm"), "free-gpu-memory-fraction");
  EXPECT_EQ(flag_for_setting(kSettingRunningCap, "vllm"), "max-num-seqs");
  EXPECT_EQ(flag_for_setting(kSettingRunningCap, "llamacpp"), "parallel");
  EXPECT_EQ(flag_for_setting(kSettingStepTokens, "sglang"), "chunked-prefill-size");
  EXPECT_EQ(flag_for_setting(kSettingMemoryShare, "llamacpp"), "");  // its KV is --ctx-size cells
  EXPECT_EQ(flag_for_setting("no such setting", "vllm"), "");
}

TEST(FlagEquivalents, NamesTheOwnerAndThisEnginesSpelling) {
  EXPECT_EQ(foreign_flag_hint("--max-num-seqs", "sglang", flag_data()),
            "; --max-num-seqs is a flag of vllm, not of sglang; sglang's flag for the running-sequence cap is "
            "--max-running-requests");
  // An alias (--tp) found in three engines; llama.cpp has no tensor parallelism.
  EXPECT_EQ(foreign_flag_hint("--tp", "llamacpp", flag_data()),
            "; --tp is a flag of sglang, trtllm and vllm, not of llamacpp; llamacpp takes no flag for tensor "
            "parallelism");
  // Two flags for one setting, and a switch of the opposite sense with its value.
  EXPECT_EQ(foreign_flag_hint("--kv-cache-dtype", "llamacpp", flag_data()),
            "; --kv-cache-dtype is a flag of hf, sglang, trtllm and vllm, not of llamacpp; llamacpp's flags for the "
            "KV cache's data type are --cache-type-k and --cache-type-v");
  EXPECT_EQ(foreign_flag_hint("--disable-radix-cache", "trtllm", flag_data()),
            "; --disable-radix-cache is a flag of sglang, not of trtllm; trtllm's flag for turning prefix caching "
            "off is --enable-block-reuse false");
}

TEST(FlagEquivalents, UnderscoresAndUnknownFlags) {
  EXPECT_EQ(foreign_flag_hint("--max_batch_size", "trtllm", flag_data()),
            "; did you mean --max-batch-size? (vramplan writes engine flags with dashes)");
  // An underscored flag of another engine is named by its dashed spelling.
  EXPECT_EQ(foreign_flag_hint("--max_num_seqs", "trtllm", flag_data()),
            "; --max-num-seqs is a flag of vllm, not of trtllm; trtllm's flag for the running-sequence cap is "
            "--max-batch-size");
  EXPECT_EQ(foreign_flag_hint("--frobnicate", "vllm", flag_data()), "");
  EXPECT_EQ(foreign_flag_hint("--max-num-seqs", "nosuchengine", flag_data()), "");
}

}  // namespace
}  // namespace vramplan::memory
