// dispatch(): a command line run into given streams (what the executable and the Python module share).
#include "dispatch.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "exit_codes.hpp"
#include "support/test_support.hpp"

namespace vramplan::cli {
namespace {

const OptionInfo* option_named(const std::vector<OptionInfo>& options, const std::string& name) {
  const auto it = std::find_if(options.begin(), options.end(), [&](const OptionInfo& o) { return o.name == name; });
  return it == options.end() ? nullptr : &*it;
}

TEST(Dispatch, CapturedRunIsWhatTheExecutablePrints) {
  const std::vector<std::string> args = {"check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm-80", "--max-model-len",
                                         "8192", "--json"};
  const CapturedRun captured = run_captured(args);
  const auto exe = test::run_cli(args);
  EXPECT_EQ(captured.exit_code, exe.exit_code);
  EXPECT_EQ(captured.out, exe.out);
  EXPECT_EQ(nlohmann::json::parse(captured.out).at("verdict"), "FITS");
}

TEST(Dispatch, ErrorsAreCapturedWithTheirExitCode) {
  const CapturedRun r = run_captured({"plan", "--model", "no-such-model", "--gpu", "h100-sxm-80", "--json"});
  EXPECT_EQ(r.exit_code, kExitUnknownName);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("schema"), "vramplan.error/1");
  EXPECT_EQ(j.at("error").at("kind"), "unknown-name");
  EXPECT_EQ(r.err.rfind("vramplan: error: unknown model 'no-such-model'", 0), 0u) << r.err;
}

TEST(Dispatch, NoCommandIsUsage) {
  const CapturedRun r = run_captured({});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_NE(r.err.find("usage: vramplan <command>"), std::string::npos) << r.err;
  EXPECT_EQ(run_captured({"frobnicate"}).exit_code, kExitUsage);
}

TEST(Dispatch, DeclaredOptionsFollowTheEngine) {
  const auto vllm = declared_options({"plan"});
  ASSERT_NE(option_named(vllm, "max-model-len"), nullptr);
  EXPECT_FALSE(option_named(vllm, "max-model-len")->is_switch);
  EXPECT_EQ(option_named(vllm, "ngl"), nullptr);  // llama.cpp's flag
  ASSERT_NE(option_named(vllm, "json"), nullptr);
  EXPECT_TRUE(option_named(vllm, "json")->is_switch);
  const auto llamacpp = declared_options({"plan", "--engine=llamacpp"});
  ASSERT_NE(option_named(llamacpp, "ngl"), nullptr);
  EXPECT_FALSE(option_named(llamacpp, "ngl")->repeatable);
}

TEST(Dispatch, DeclaredOptionsTellRepeatableOnes) {
  const auto models = declared_options({"models"});
  ASSERT_NE(option_named(models, "feature"), nullptr);
  EXPECT_TRUE(option_named(models, "feature")->repeatable);
  const auto check = declared_options({"check"});
  ASSERT_NE(option_named(check, "tenant"), nullptr);
  EXPECT_TRUE(option_named(check, "tenant")->repeatable);
  EXPECT_TRUE(option_named(check, "limits")->is_switch);
}

TEST(Dispatch, DeclaredOptionsOfAnUnknownEngineThrowAsTheCommandWould) {
  try {
    declared_options({"plan", "--engine=no-such-engine"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::UnknownName);
  }
  EXPECT_THROW(declared_options({"frobnicate"}), Error);
}

TEST(ExitCodes, ErrorExitsListEveryKindOnce) {
  const auto& rows = error_exits();
  ASSERT_EQ(rows.size(), 7u);  // six ErrorKinds and the unrecognised log
  for (const auto& row : rows) EXPECT_NE(row.exit_code, kExitOk) << row.kind;
  EXPECT_EQ(rows.back().kind, "unrecognised-log");
  EXPECT_EQ(rows.back().exit_code, kExitUnrecognisedLog);
}

}  // namespace
}  // namespace vramplan::cli
