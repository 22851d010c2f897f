// Every subcommand's --help fits one screen, names only options the command has, and ends with two
// examples that run as written (exit 0) from the source tree. One screen: 24 lines (the VT100's and
// the default of xterm, GNOME Terminal and macOS Terminal) of at most 100 columns (the help width,
// planner/cli/cli_common.cpp kHelpWidth); --help-all, which lists every option, may be longer.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "support/cli_env.hpp"
#include "support/test_support.hpp"

namespace vramplan::test {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> words_of(std::string_view command_line) {
  std::vector<std::string> words{};
  std::istringstream in{std::string(command_line)};
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The help text with wrapped command lines joined again: " \\" + newline + indent -> " ".
std::string unwrapped(const std::string& text) {
  std::string out;
  for (std::size_t k = 0; k < text.size(); ++k) {
    if (text.compare(k, 3, " \\\n") == 0) {
      k += 3;
      while (k < text.size() && text[k] == ' ') ++k;
      --k;
      out += ' ';
    } else {
      out += text[k];
    }
  }
  return out;
}

TEST(Help, EveryCommandFitsOneScreenAndEndsWithTwoExamples) {
  for (const auto& c : cli::commands()) {
    const std::string name(c.name);
    const auto r = run_cli({name, "--help"});
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    const auto lines = lines_of(r.out);
    EXPECT_LE(lines.size(), 24u) << name << " --help:\n" << r.out;
    for (const auto& line : lines) EXPECT_LE(line.size(), 100u) << name << ": " << line;
    ASSERT_EQ(c.examples.size(), 2u) << name;
    const std::string ending = "\nexamples:\n  vramplan " + std::string(c.examples[0]) + "\n  vramplan " +
                               std::string(c.examples[1]) + "\n";
    const std::string joined = unwrapped(r.out);
    ASSERT_GE(joined.size(), ending.size()) << name;
    EXPECT_EQ(joined.substr(joined.size() - ending.size()), ending) << name << " --help:\n" << r.out;
    // The table names options the command really has: each shows up in --help.
    for (const auto option : c.main_options)
      EXPECT_NE(r.out.find("--" + std::string(option) + " "), std::string::npos) << name << ": --" << option;
  }
}

TEST(Help, HelpAllListsEveryOptionAndHelpPointsToIt) {
  const auto brief = run_cli({"plan", "--help"});
  const auto all = run_cli({"plan", "--help-all"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  // Engine flags are in --help-all only; --help says how many more there are and where.
  EXPECT_NE(all.out.find("--max-num-batched-tokens"), std::string::npos);
  EXPECT_EQ(brief.out.find("--max-num-batched-tokens"), std::string::npos);
  EXPECT_NE(brief.out.find("more options (engine flags, output, tuning): vramplan plan --help-all"), std::string::npos);
  EXPECT_NE(all.out.find("examples:\n  vramplan plan --model"), std::string::npos);
  for (const auto& line : lines_of(brief.out)) EXPECT_LE(line.size(), 100u) << line;
}

TEST(Help, EveryExampleRunsAsWritten) {
  for (const auto& c : cli::commands()) {
    for (const auto example : c.examples) {
      // Examples are plain words: nothing a shell would treat specially, so they paste as they are.
      EXPECT_EQ(example.find_first_of("\"'<>|&;$*"), std::string_view::npos) << example;
      // From the source tree: `reconcile` examples name a log under tests/fixtures.
      const auto r = run_cli(words_of(example), CliEnv{source_dir(), {}});
      EXPECT_EQ(r.exit_code, 0) << "vramplan " << example << "\n" << r.err;
    }
  }
}

}  // namespace
}  // namespace vramplan::test
