// Text output a person can read: lines fitted to the output width (COLUMNS, else the terminal,
// else 100 when piped), no test file names, small sizes in MiB or bytes instead of "0.00 GiB".
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "support/cli_env.hpp"
#include "support/test_support.hpp"

namespace vramplan {
namespace {

std::size_t longest_output_line(const std::string& text) {
  std::istringstream in(text);
  std::size_t longest = 0;
  for (std::string line; std::getline(in, line);) {
    std::size_t chars = 0;  // code points: the tables print ×, ·
    for (unsigned char c : line) chars += (c & 0xC0) != 0x80 ? 1 : 0;
    longest = std::max(longest, chars);
  }
  return longest;
}

const std::vector<std::vector<std::string>>& readable_commands() {
  static const std::vector<std::vector<std::string>> kCommands = {
      {"plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "8192"},
      {"plan", "--model", "deepseek-v2-lite", "--gpu", "h100-sxm-80", "--max-model-len", "8192"},
      {"explain", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len", "8192"},
      {"explain", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm-80", "--max-model-len", "8192"},
  };
  return kCommands;
}

TEST(ReadableOutput, LinesFitTheDefaultWidthWhenPiped) {
  // run_cli pipes stdout and unsets COLUMNS: the width is 100 (README.md § Output width).
  for (const auto& args : readable_commands()) {
    const auto r = test::run_cli(args);
    ASSERT_EQ(r.exit_code, 0) << args[0] << r.err;
    EXPECT_LE(longest_output_line(r.out), 100u) << args[0] << " " << args[2] << "\n" << r.out;
  }
}

TEST(ReadableOutput, ColumnsSetsTheWidth) {
  for (const auto& args : readable_commands()) {
    const auto r = test::run_cli(args, {{}, {{"COLUMNS", "80"}}});
    EXPECT_LE(longest_output_line(r.out), 80u) << args[0] << " " << args[2] << "\n" << r.out;
    const auto wide = test::run_cli(args, {{}, {{"COLUMNS", "300"}}});
    EXPECT_GT(longest_output_line(wide.out), 100u) << "a wide terminal gets the long lines back";
  }
}

TEST(ReadableOutput, NoTestFileNamesAndNoZeroGiB) {
  for (const auto& args : readable_commands()) {
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.out.find("tests/"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("_test"), std::string::npos) << r.out;
    // A size cell is right-aligned after two spaces at least (formula text may quote a zero).
    EXPECT_EQ(r.out.find("  0.00 GiB"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("  0.000 GiB"), std::string::npos) << r.out;
  }
  // The 8B's final norm: 4096 x 2 B = 8,192 B, shown as 0.01 MiB (it was "0.00 GiB").
  const auto plan = test::run_cli(readable_commands()[0]);
  EXPECT_NE(plan.out.find("weights.other                0.01 MiB"), std::string::npos) << plan.out;
}

TEST(ReadableOutput, InspectLinesFitTheWidth) {
  // deepseek-v3's own lines on main were up to 212 characters (the catalogue source URL), 112
  // (dimensions), 93 (params): inspect now wraps them as plan does, the value continuing under
  // the value column; the URL, one word longer than a line, is cut.
  const std::vector<std::string> args = {"inspect", "--model", "deepseek-v3", "--layers"};
  const auto piped = test::run_cli(args);
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_LE(longest_output_line(piped.out), 100u) << piped.out;
  const auto narrow = test::run_cli(args, {{}, {{"COLUMNS", "80"}}});
  EXPECT_LE(longest_output_line(narrow.out), 80u) << narrow.out;
  EXPECT_NE(narrow.out.find("\n              "), std::string::npos) << "continuation lines start under the values\n"
                                                                    << narrow.out;
  const auto wide = test::run_cli(args, {{}, {{"COLUMNS", "300"}}});
  EXPECT_GT(longest_output_line(wide.out), 200u) << "a wide terminal gets the long lines back";
}

}  // namespace
}  // namespace vramplan
