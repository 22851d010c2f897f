// Trace files: JSONL and CSV records become requests in file order; every fault is one
// Error(InputFile) "FILE:LINE: field: message".
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <thread>

#include "support/test_support.hpp"
#include "vramplan/sim/trace_reader.hpp"
#include "vramplan/sim/workload_spec.hpp"

namespace vramplan::sim {
namespace {

std::vector<Request> read_all(const std::filesystem::path& path) {
  std::vector<Request> out;
  auto source = open_trace(path);
  while (auto r = source->next()) out.push_back(*r);
  return out;
}

// The message of the InputFile error that reading `name` (written with `text`) throws, with the
// scratch folder stripped so the expectations read as "t.jsonl:3: ...".
std::string fault(const std::string& name, const std::string& text) {
  test::ScratchDir dir;
  const auto path = dir.write(name, text);
  const std::string message = test::error_message([&] { read_all(path); }, ErrorKind::InputFile);
  const std::string prefix = dir.path().string() + "/";
  return message.starts_with(prefix) ? message.substr(prefix.size()) : message;
}

TEST(WorkloadTrace, JsonlRecords) {
  test::ScratchDir dir;
  const auto path = dir.write("t.jsonl",
                              "{\"arrival_s\": 0, \"input_tokens\": 100, \"output_tokens\": 20}\n"
                              "\n"
                              "{\"arrival_s\": 0.5, \"input_tokens\": 300, \"output_tokens\": 1, \"prefix_id\": 7, "
                              "\"prefix_tokens\": 256, \"request_id\": \"ignored\"}\r\n"
                              "{ \"arrival_s\" : 0.5 , \"input_tokens\": 512.0 , \"output_tokens\": 5 , \"prefix_id\": null }");
  const auto rs = read_all(path);
  ASSERT_EQ(rs.size(), 3u);
  EXPECT_EQ(rs[0].id, 0u);
  EXPECT_EQ(rs[0].input_tokens, 100u);
  EXPECT_EQ(rs[0].output_tokens, 20u);
  EXPECT_EQ(rs[0].prefix_id, 0u);
  EXPECT_EQ(rs[1].id, 1u);
  EXPECT_EQ(rs[1].arrival_s, 0.5);
  EXPECT_EQ(rs[1].prefix_id, 7u);
  EXPECT_EQ(rs[1].prefix_tokens, 256u);
  EXPECT_EQ(rs[2].input_tokens, 512u);  // an integral float is a whole number
}

TEST(WorkloadTrace, CsvRecordsByHeaderName) {
  test::ScratchDir dir;
  const auto path = dir.write("t.csv",
                              "# exported from the gateway log\n"
                              "output_tokens, arrival_s, input_tokens, prefix_id, prefix_tokens\n"
                              "20, 0, 100, ,\n"
                              "1, 2.25, 300, 9, 64\n");
  const auto rs = read_all(path);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].input_tokens, 100u);
  EXPECT_EQ(rs[0].output_tokens, 20u);
  EXPECT_EQ(rs[0].prefix_id, 0u);
  EXPECT_EQ(rs[1].arrival_s, 2.25);
  EXPECT_EQ(rs[1].prefix_id, 9u);
  EXPECT_EQ(rs[1].prefix_tokens, 64u);
}

TEST(WorkloadTrace, FormatFromFirstCharacterWhenTheNameSaysNothing) {
  test::ScratchDir dir;
  EXPECT_EQ(read_all(dir.write("a.log", "  {\"arrival_s\": 1, \"input_tokens\": 3, \"output_tokens\": 4}\n")).size(), 1u);
  EXPECT_EQ(read_all(dir.write("b.txt", "arrival_s,input_tokens,output_tokens\n1,3,4\n2,3,4\n")).size(), 2u);
  // A spreadsheet's byte-order mark is not part of the first column's name.
  EXPECT_EQ(read_all(dir.write("c.csv", "\xEF\xBB\xBF" "arrival_s,input_tokens,output_tokens\n1,3,4\n")).size(), 1u);
  EXPECT_EQ(read_all(dir.write("d.trace", "\xEF\xBB\xBF{\"arrival_s\": 1, \"input_tokens\": 3, \"output_tokens\": 4}\n")).size(), 1u);
}

TEST(WorkloadTrace, JsonlFaults) {
  const std::string ok = "{\"arrival_s\": 1, \"input_tokens\": 10, \"output_tokens\": 5}\n";
  EXPECT_EQ(fault("t.jsonl", ok + "{\"arrival_s\": 0.5, \"input_tokens\": 10, \"output_tokens\": 5}\n"),
            "t.jsonl:2: arrival_s: 0.5 is earlier than the previous request's; a trace must be in arrival order");
  EXPECT_EQ(fault("t.jsonl", ok + "{\"arrival_s\": 2, \"input_tokens\": -3, \"output_tokens\": 5}\n"),
            "t.jsonl:2: input_tokens: must be at least 1, got -3");
  EXPECT_EQ(fault("t.jsonl", "{\"arrival_s\": 2, \"input_tokens\": 10, \"output_tokens\": 0}\n"),
            "t.jsonl:1: output_tokens: must be at least 1, got 0");
  EXPECT_EQ(fault("t.jsonl", "{\"arrival_s\": 2, \"input_tokens\": 10.5, \"output_tokens\": 3}\n"),
            "t.jsonl:1: input_tokens: not a whole number of tokens: 10.5");
  EXPECT_EQ(fault("t.jsonl", "\n\n{\"arrival_s\": 2, \"input_tokens\": 10}\n"),
            "t.jsonl:3: output_tokens: missing");
  EXPECT_EQ(fault("t.jsonl", "{\"arrival_s\": 2, \"input_tokens\": \"10\", \"output_tokens\": 3}\n"),
            "t.jsonl:1: input_tokens: expected a number, got string");
  EXPECT_EQ(fault("t.jsonl", "{\"arrival_s\": 2, \"input_tokens\": 10, \"output_tokens\": 3, \"prefix_id\": 1, "
                             "\"prefix_tokens\": 11}\n"),
            "t.jsonl:1: prefix_tokens: 11 is more than input_tokens 10");
  EXPECT_EQ(fault("t.jsonl", "{\"arrival_s\": 2, \"input_tokens\": 10, \"output_tokens\": 3, \"prefix_id\": 1}\n"),
            "t.jsonl:1: prefix_tokens: missing");
  EXPECT_EQ(fault("t.jsonl", "{\"arrival_s\": 2, \"input_tokens\": 10, \"output_tokens\": 3, \"prefix_tokens\": 4}\n"),
            "t.jsonl:1: prefix_id: missing (prefix_tokens is given; requests share a prefix through its id)");
  EXPECT_EQ(fault("t.jsonl", "{\"arrival_s\": -1, \"input_tokens\": 10, \"output_tokens\": 3}\n"),
            "t.jsonl:1: arrival_s: must be >= 0, got -1");
  EXPECT_EQ(fault("t.jsonl", "{\"arrival_s\": 1, \"input_tokens\": 4294967296, \"output_tokens\": 3}\n"),
            "t.jsonl:1: input_tokens: must be at most 2147483648, got 4294967296");
  EXPECT_EQ(fault("t.jsonl", ok + "garbage\n"), "t.jsonl:2: expected one JSON object per line, got 'garbage'");
  EXPECT_EQ(fault("t.jsonl", "[1, 2, 3]\n"), "t.jsonl:1: expected one JSON object per line, got '[1, 2, 3]'");
  EXPECT_EQ(fault("t.jsonl", "{\"arrival_s\": 1, \"input_tokens\": 10, \"output_tokens\": 3\n"),
            "t.jsonl:1: expected one JSON object per line, got '{\"arrival_s\": 1, \"input_tokens\": 10, \"ou...'");
  EXPECT_EQ(fault("t.jsonl", "{\"arrival_s\": 1, \"input_tokens\": true, \"output_tokens\": 3}\n"),
            "t.jsonl:1: input_tokens: expected a number, got boolean");
  EXPECT_EQ(fault("t.jsonl", "{\"arrival_s\": 1x, \"input_tokens\": 2, \"output_tokens\": 3}\n"),
            "t.jsonl:1: arrival_s: expected seconds as a finite number, got '1x'");
}

TEST(WorkloadTrace, CsvFaults) {
  const std::string header = "arrival_s,input_tokens,output_tokens\n";
  EXPECT_EQ(fault("t.csv", "arrival_s,input_tokens\n1,2\n"),
            "t.csv:1: output_tokens: missing column in the header row (CSV traces start with a header naming "
            "arrival_s, input_tokens, output_tokens)");
  EXPECT_EQ(fault("t.csv", header + "1,2\n"), "t.csv:2: 2 cells, the header has 3");
  EXPECT_EQ(fault("t.csv", header + "1,2,3\n0.5,2,3\n"),
            "t.csv:3: arrival_s: 0.5 is earlier than the previous request's; a trace must be in arrival order");
  EXPECT_EQ(fault("t.csv", header + "1,,3\n"), "t.csv:2: input_tokens: missing");
  EXPECT_EQ(fault("t.csv", header + "1,2,-4\n"), "t.csv:2: output_tokens: must be at least 1, got -4");
  EXPECT_EQ(fault("t.csv", header + "1,2.5,4\n"), "t.csv:2: input_tokens: not a whole number of tokens: 2.5");
  EXPECT_EQ(fault("t.csv", header + "soon,2,4\n"),
            "t.csv:2: arrival_s: expected seconds as a finite number, got 'soon'");
  EXPECT_EQ(fault("t.csv", header + "1,lots,4\n"),
            "t.csv:2: input_tokens: expected a whole number of tokens, got 'lots'");
  EXPECT_EQ(fault("t.csv", header + "nan,2,4\n"),
            "t.csv:2: arrival_s: expected seconds as a finite number, got 'nan'");
  EXPECT_EQ(fault("t.csv", ""), "t.csv: empty trace: no CSV header row");
}

TEST(WorkloadTrace, AnEmptyTraceIsRefusedInEitherFormat) {
  EXPECT_EQ(fault("t.jsonl", ""), "t.jsonl: empty trace: no requests");
  EXPECT_EQ(fault("t.jsonl", "\n  \n"), "t.jsonl: empty trace: no requests");
  EXPECT_EQ(fault("t.csv", "arrival_s,input_tokens,output_tokens\n# nothing yet\n"), "t.csv: empty trace: no requests");
  EXPECT_EQ(fault("t.txt", "\n"), "t.txt: empty trace: no requests");
}

TEST(WorkloadTrace, AnyOtherNameIsReadByItsFirstLineWithoutRewinding) {
  // A byte-order mark and blank lines before the first record; the line numbers of errors stay
  // the file's own.
  test::ScratchDir dir;
  const auto json = dir.write("t.txt", "\xEF\xBB\xBF\n\n{\"arrival_s\": 0, \"input_tokens\": 3, \"output_tokens\": 2}\n");
  ASSERT_EQ(read_all(json).size(), 1u);
  EXPECT_EQ(read_all(json)[0].input_tokens, 3u);
  const auto csv = dir.write("t.log", "\xEF\xBB\xBF" "arrival_s,input_tokens,output_tokens\n0,7,1\n");
  ASSERT_EQ(read_all(csv).size(), 1u);
  EXPECT_EQ(read_all(csv)[0].input_tokens, 7u);
  EXPECT_EQ(fault("t.txt", "\n{\"arrival_s\": 0, \"input_tokens\": 0, \"output_tokens\": 2}\n"),
            "t.txt:2: input_tokens: must be at least 1, got 0");
}

TEST(WorkloadTrace, APipeIsReadAsAFile) {
  // --trace <(zcat trace.jsonl.gz): a FIFO can be read once, front to back.
  test::ScratchDir dir;
  const auto path = dir.path() / "t.jsonl";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::thread writer([&] {
    std::ofstream out(path);
    out << "{\"arrival_s\": 0, \"input_tokens\": 10, \"output_tokens\": 5}\n"
           "{\"arrival_s\": 1, \"input_tokens\": 20, \"output_tokens\": 6}\n";
  });
  const auto rs = read_all(path);
  writer.join();
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].input_tokens, 10u);
  EXPECT_EQ(rs[1].output_tokens, 6u);
}

TEST(WorkloadTrace, PrefixIdZeroIsNoPrefix) {
  EXPECT_EQ(fault("t.jsonl",
                  "{\"arrival_s\": 0, \"input_tokens\": 2000, \"output_tokens\": 5, \"prefix_id\": 0, \"prefix_tokens\": 1500}\n"),
            "t.jsonl:1: prefix_id: 0 means no shared prefix, yet prefix_tokens is 1500: give the prefix an id >= 1");
}

TEST(WorkloadTrace, ADirectoryIsAnIoError) {
  test::ScratchDir dir;
  std::filesystem::create_directory(dir.path() / "d");
  EXPECT_EQ(test::error_message([&] { open_trace(dir.path() / "d"); }, ErrorKind::Io),
            "trace " + (dir.path() / "d").string() + ": is a directory, expected a file");
}

TEST(WorkloadTrace, OverlongLineIsRefused) {
  const std::string line(kMaxTraceLineBytes + 1, ' ');
  EXPECT_EQ(fault("t.jsonl", line + "\n"), "t.jsonl:1: line longer than 1048576 bytes");
}

TEST(WorkloadTrace, MissingFileIsAnIoError) {
  test::ScratchDir dir;
  test::error_message([&] { open_trace(dir.path() / "none.jsonl"); }, ErrorKind::Io);
}

TEST(WorkloadTrace, RequestsAndDurationCutATrace) {
  test::ScratchDir dir;
  WorkloadSpec spec;
  spec.trace = dir.write("t.csv", "arrival_s,input_tokens,output_tokens\n0,1,1\n1,1,1\n2,1,1\n3,1,1\n");
  spec.requests = 3;
  spec.duration_s = 2;  // arrivals before t = 2: the first two
  auto source = make_request_source(spec);
  int n = 0;
  while (source->next()) ++n;
  EXPECT_EQ(n, 2);
  spec.requests.reset();
  spec.duration_s.reset();  // a trace is bounded by its own end
  source = make_request_source(spec);
  n = 0;
  while (source->next()) ++n;
  EXPECT_EQ(n, 4);
}

}  // namespace
}  // namespace vramplan::sim
