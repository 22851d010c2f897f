// The exit-code table (README.md § Exit codes) and how the CLI reaches each code.
#include "exit_codes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <set>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace vramplan::cli {
namespace {

TEST(ExitCodes, EveryKindHasADistinctCode) {
  const ErrorKind kinds[] = {ErrorKind::Usage, ErrorKind::InputFile, ErrorKind::UnknownName,
                             ErrorKind::DoesNotFit, ErrorKind::Io, ErrorKind::Internal};
  std::set<int> codes;
  for (auto k : kinds) {
    const int code = exit_code_for(k);
    EXPECT_NE(code, kExitOk);
    codes.insert(code);
  }
  EXPECT_EQ(codes.size(), std::size(kinds));
  EXPECT_EQ(exit_code_for(ErrorKind::DoesNotFit), 1);
  EXPECT_EQ(exit_code_for(ErrorKind::Usage), 2);
  EXPECT_EQ(exit_code_for(ErrorKind::InputFile), 3);
  EXPECT_EQ(exit_code_for(ErrorKind::UnknownName), 4);
  EXPECT_EQ(exit_code_for(ErrorKind::Io), 5);
  EXPECT_EQ(exit_code_for(ErrorKind::Internal), 70);
}

TEST(Cli, UnknownCommandIsUsage) {
  const auto r = test::run_cli({"frobnicate"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_NE(r.err.find("unknown command 'frobnicate'"), std::string::npos) << r.err;
}

TEST(Cli, UnknownOptionIsUsageOnOneLine) {
  const auto r = test::run_cli({"version", "--bogus"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(Cli, JsonErrorObjectOnStdout) {
  const auto r = test::run_cli({"version", "--json", "--format", "yaml"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "vramplan.error/1");
  EXPECT_EQ(j["error"]["kind"], "usage");
}

TEST(Cli, VersionJson) {
  const auto r = test::run_cli({"version", "--json"});
  EXPECT_EQ(r.exit_code, kExitOk);
  EXPECT_EQ(nlohmann::json::parse(r.out)["schema"], "vramplan.version/1");
}

}  // namespace
}  // namespace vramplan::cli
