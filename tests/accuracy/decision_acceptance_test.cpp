// Decisions against what the engines did: for every vLLM / SGLang / TensorRT-LLM / llama.cpp /
// HF transformers record in tests/accuracy/data, a `check` built from the record's own flags (the same request
// the accuracy tests plan, at check's default workload: one sequence of the engine's max length)
// never says DOES NOT FIT when the engine started and never says FITS when it refused.
//
//   vLLM     34 start-up records (shared + extra) started; the llm-d sweep's phi-2 run at
//            --max-model-len 8192 was refused (microsoft-phi-2--h100-80gb--tp1pp1dp1--8192.FAILED.log)
//   SGLang   5 start-up records, all started
//   TRT-LLM  6 start-up records, all started (planned on the planner's own budget)
//   llama.cpp 140 CPU loads of llamacpp_measured.jsonl: 134 started, 6 refused (quantized V
//            cache without flash attention). CPU runs name no host memory size: the check is
//            given 64 GiB, over every run's peak RSS (4.2 GiB), so these records test the
//            engine's own refusals, not the memory side.
//   HF       33 of the 35 generate() peaks of hf_measurements.jsonl (published: every run
//            completed, none reports an OOM), checked at each record's batch and prompt + new
//            tokens; the 2 long OctoCoder runs print no prompt length and cannot be checked.
// The counts are printed as the table of docs/decisions.md ("Decisions against the records").
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "hf_records.hpp"
#include "sglang_records.hpp"
#include "trtllm_records.hpp"
#include "vllm_records.hpp"
#include "vramplan/plan/check.hpp"

namespace vramplan::test {
namespace {

plan::CheckRequest check_of(const memory::PlanRequest& q) {
  plan::CheckRequest c;
  c.model = q.model;
  c.gpu = q.gpu;
  c.gpu_memory = q.gpu_memory;
  c.engine = q.engine;
  c.args = q.args;
  c.weights = q.weights;
  c.batch = q.workload.batch;
  c.context = q.workload.context;
  return c;
}

struct Tally {
  // [started, refused] x [FITS, MARGINAL, DOES NOT FIT]
  std::array<std::array<int, 3>, 2> n{};
  std::vector<std::string> wrong;
  void add(const std::string& id, bool started, const plan::CheckOutcome& o) {
    const auto v = o.eval.fit.verdict;
    ++n[started ? 0 : 1][static_cast<int>(v)];
    if (started && v == plan::Verdict::DoesNotFit) wrong.push_back(id + " started, check says: " + o.line);
    if (!started && v == plan::Verdict::Fits) wrong.push_back(id + " was refused, check says: " + o.line);
  }
  std::string rows(const std::string& engine) const {
    std::string s;
    for (int started = 0; started < 2; ++started) {
      const auto& r = n[started];
      if (r[0] + r[1] + r[2] == 0) continue;
      s += "| " + engine + " | " + (started == 0 ? "started" : "refused") + " | " + std::to_string(r[0]) + " | " +
           std::to_string(r[1]) + " | " + std::to_string(r[2]) + " |\n";
    }
    return s;
  }
};

plan::CheckOutcome check(const plan::CheckRequest& r) { return plan::run_check(r, DataRoot{source_dir()}); }

Tally vllm_tally() {
  Tally t;
  for (const auto& set : {load_vllm_records(), load_vllm_extra_records()})
    for (const auto& c : set.cases) {
      t.add(c.id, true, check(check_of(vllm_request(c))));
      if (c.id == "llmd-v019-phi2-2048") {  // the same model and flags at 8192: refused by vLLM
        auto q = vllm_request(c);
        q.args["max-model-len"] = "8192";
        t.add("llmd-v019-phi2-8192.FAILED", false, check(check_of(q)));
      }
    }
  return t;
}

Tally sglang_tally() {
  Tally t;
  for (const auto& r : load_sglang_records()) t.add(r.id, true, check(check_of(sglang_request(r))));
  return t;
}

Tally trtllm_tally() {
  Tally t;
  for (const auto& c : load_trtllm_records()) t.add(c.id, true, check(check_of(trtllm_request(c, Budget::Predicted))));
  return t;
}

Tally llamacpp_tally() {
  Tally t;
  const auto models = read_json_file(accuracy_data() / "llamacpp_measured_models.json");
  ScratchDir dir;
  std::ifstream in(accuracy_data() / "llamacpp_measured.jsonl");
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const auto r = nlohmann::json::parse(line);
    const std::string key = r.at("model_key");
    const auto config = dir.write(key + ".json", models.at(key).dump());
    plan::CheckRequest c;
    c.model = config.string();
    c.gpu = "cpu";
    c.gpu_memory = parse_bytes("64GiB");
    c.engine = "llamacpp";
    c.weights = "gguf:" + r.at("file_type").get<std::string>();
    // The record's own command line ("llama-completion -m ... -c 4096 -ub 512 -fa off -ctk q8_0 ..."):
    // refused runs print no context figures, so the flags come from there.
    const std::map<std::string, std::string> flag_of = {
        {"-c", "ctx-size"}, {"-ub", "ubatch-size"}, {"-b", "batch-size"}, {"-fa", "flash-attn"}, {"-ctk", "cache-type-k"}, {"-ctv", "cache-type-v"}};
    std::istringstream cmd(r.at("cmd").get<std::string>());
    for (std::string word, value; cmd >> word;)
      if (const auto it = flag_of.find(word); it != flag_of.end() && cmd >> value) c.args[it->second] = value;
    t.add(r.at("id"), r.at("ok").get<bool>(), check(c));
  }
  return t;
}

Tally hf_tally() {
  Tally t;
  for (const auto& r : load_hf_records())
    if (plannable(r)) t.add(r.id, true, check(check_of(hf_request(r))));
  return t;
}

TEST(DecisionAcceptance, NoStartedRecordIsRefusedAndNoRefusedRecordFits) {
  std::string table = "| engine | engine did | FITS | MARGINAL | DOES NOT FIT |\n|---|---|---|---|---|\n";
  for (const auto& [engine, tally] : {std::pair<std::string, Tally>{"vLLM", vllm_tally()}, {"SGLang", sglang_tally()},
                                      {"TensorRT-LLM", trtllm_tally()}, {"llama.cpp", llamacpp_tally()},
                                      {"HF transformers", hf_tally()}}) {
    table += tally.rows(engine);
    for (const auto& w : tally.wrong) ADD_FAILURE() << engine << ": " << w;
  }
  std::printf("%s", table.c_str());
}

}  // namespace
}  // namespace vramplan::test
