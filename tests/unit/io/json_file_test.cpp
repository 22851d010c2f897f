#include "vramplan/io/json_file.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan {
namespace {

TEST(JsonFile, MissingFileIsAnIoError) {
  const auto msg = test::error_message([] { read_json_file("/nonexistent/x.json"); }, ErrorKind::Io);
  EXPECT_NE(msg.find("/nonexistent/x.json"), std::string::npos);
}

TEST(JsonFile, BadJsonNamesFileLineAndColumn) {
  test::ScratchDir dir;
  const auto p = dir.write("bad.json", "{\n  \"a\": 1,\n  \"b\": }\n");
  const auto msg = test::error_message([&] { read_json_file(p); }, ErrorKind::InputFile);
  EXPECT_NE(msg.find("bad.json"), std::string::npos);
  EXPECT_NE(msg.find("line 3"), std::string::npos) << msg;
}

TEST(JsonView, FieldErrorsCarryThePointer) {
  const auto doc = nlohmann::json::parse(R"({"gpus": [{"id": "x", "mem": "lots", "n": -3}]})");
  const JsonView root(doc, "gpus.json");
  const JsonView gpu = root.at("gpus").at(0);
  EXPECT_EQ(gpu.req_string("id"), "x");
  auto msg = test::error_message([&] { gpu.req_number("mem"); }, ErrorKind::InputFile);
  EXPECT_EQ(msg, "gpus.json: /gpus/0/mem: expected a number, got string");
  msg = test::error_message([&] { gpu.req_u64("n"); }, ErrorKind::InputFile);
  EXPECT_EQ(msg, "gpus.json: /gpus/0/n: expected a non-negative integer, got -3");
  msg = test::error_message([&] { gpu.req_string("name"); }, ErrorKind::InputFile);
  EXPECT_EQ(msg, "gpus.json: /gpus/0/name: required field is missing");
  EXPECT_FALSE(gpu.opt_number("absent").has_value());
  EXPECT_THROW(gpu.opt_number("id"), Error);  // present with the wrong type is an error
}

TEST(JsonView, NumbersAndIntegers) {
  const auto doc = nlohmann::json::parse(R"({"a": 3.0, "b": 2.5, "c": 0})");
  EXPECT_EQ(JsonView(doc, "f").req_u64("a"), 3u);
  EXPECT_THROW(JsonView(doc, "f").req_u64("b"), Error);
  EXPECT_THROW(JsonView(doc, "f").req_positive("c"), Error);
  EXPECT_EQ(JsonView(doc, "f").req_count("a"), 3u);
  EXPECT_EQ(test::error_message([&] { JsonView(doc, "f").req_count("c"); }, ErrorKind::InputFile),
            "f: /c: must be greater than zero");
}

TEST(JsonFile, OutOfRangeNumberIsAnInputError) {
  test::error_message([] { parse_json_text(R"({"d": 1e400})", "x.json"); }, ErrorKind::InputFile);
}

}  // namespace
}  // namespace vramplan
