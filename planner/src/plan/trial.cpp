#include "vramplan/core/text.hpp"
#include "vramplan/plan/trial.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <numeric>

#include "vramplan/core/error.hpp"
#include "vramplan/io/input_file.hpp"
#include "vramplan/model/encoder.hpp"
#include "vramplan/plan/session.hpp"
#include "vramplan/sim/simulate.hpp"

namespace vramplan::plan {
namespace {

constexpr double kGiBd = 1073741824.0;

double round4(double v) { return rounded(v, 4); }

// Exactly `n` requests of one shape, all submitted at t = 0.
class BatchSource : public sim::RequestSource {
 public:
  BatchSource(std::uint64_t n, std::uint64_t input, std::uint64_t output) : n_(n), in_(input), out_(output) {}
  std::optional<sim::Request> next() override {
    if (i_ == n_) return std::nullopt;
    return sim::Request{i_++, 0.0, static_cast<std::uint32_t>(in_), static_cast<std::uint32_t>(out_), 0, 0};
  }

 private:
  std::uint64_t n_, in_, out_, i_ = 0;
};

struct Group {
  std::string name;
  std::uint64_t input = 0;
};

std::vector<Group> resolve_groups(const TrialRequest& r, std::uint64_t max_len) {
  std::vector<Group> out;
  for (const std::string& g : r.groups) {
    if (g == "typical") out.push_back({g, r.typical_input});
    else if (g == "short") out.push_back({g, std::max<std::uint64_t>(1, r.typical_input / 4)});
    else if (g == "limit") {
      if (max_len <= r.output_tokens) throw_usage("trial: the engine's max length " + std::to_string(max_len) +
                                                  " leaves no room for a prompt before " + std::to_string(r.output_tokens) +
                                                  " output tokens");
      out.push_back({g, max_len - r.output_tokens});
    } else {
      std::uint64_t v = 0;
      const auto [end, ec] = std::from_chars(g.data(), g.data() + g.size(), v);
      if (ec != std::errc() || end != g.data() + g.size() || v == 0)
        throw_usage("--lengths: '" + g + "' is not short, typical, limit or a positive number of tokens");
      out.push_back({g, v});
    }
  }
  return out;
}

// Each limit's share of the batch's time and the longest ("most": null when nothing held).
nlohmann::json queued_json(const sim::HeldShares& h) {
  nlohmann::json j = nlohmann::json::object();
  for (int i = 0; i < sim::kHeldLimits; ++i) j[sim::kHeldLimitKeys[i]] = round4(h.share[i]);
  j["most"] = sim::held_limit_json(h.most);
  return j;
}

// The limits that held part of the batch for at least 0.5 % of its time, longest first:
// "step token budget 57 %, KV pool 31 %"; "-" when none did.
std::string queued_text(const sim::HeldShares& h) {
  std::array<int, sim::kHeldLimits> order{};
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return h.share[a] > h.share[b]; });
  std::string s;
  for (const int i : order) {
    if (h.share[i] < 0.005) break;
    s += std::string(s.empty() ? "" : ", ") + sim::kHeldLimitWords[i] + " " + format_number("%.0f", h.share[i] * 100) + " %";
  }
  return s.empty() ? "-" : s;
}

// Engines that hold a KV pool queue what does not fit in it; the others run out of memory.
bool queues_beyond_pool(const std::string& engine) { return engine == "vllm" || engine == "sglang" || engine == "trtllm"; }

}  // namespace

TrialResult run_trial(const TrialRequest& r, const DataRoot& root) {
  if (r.batches.empty()) throw_usage("--batches: give at least one batch size");
  if (r.output_tokens == 0) throw_usage("--output-len: at least one output token");
  TrialResult out;
  // The engine's longest sequence, as it plans it with the user's flags.
  const memory::PlanOutcome probe = memory::run_plan(r.plan, root);
  // Every cell plans the same model: load it once.
  const auto loaded = std::make_shared<const ModelSpec>(probe.model);
  out.model = probe.model.id;
  out.gpu = probe.gpu.id;
  out.engine = probe.plan.engine;
  // The ladder times generation (prefill, decode): a pooling model has none. Said here, before
  // the simulator's own refusal would name `simulate` for a command the user did not run.
  if (is_pooling_model(probe.model))
    throw_usage("trial: " + probe.model.id + " is a pooling model (" + probe.model.arch.architecture +
                "): decode / TTFT do not apply; its throughput in inputs/s is in vramplan plan, an offline job's in "
                "vramplan plan --documents N");
  const PlanSession session(root, r.plan.model, r.plan.engine);
  std::uint64_t max_len = session.planned_context(r.plan.args, r.plan.workload);
  // The longest request the engine serves may be shorter than its length flag: SGLang takes
  // prompt + output below context_length (sim engine rules, max_model_len = context_length - 1).
  if (probe.plan.fits) {
    const std::uint64_t served = sim::prepare_engine(r.plan, root).rules.max_model_len;
    if (served > 0) max_len = std::min(max_len, served);
  }
  for (const Group& g : resolve_groups(r, max_len)) {
    for (const std::uint64_t b : r.batches) {
      TrialCell c;
      c.group = g.name;
      c.input_tokens = g.input;
      c.output_tokens = r.output_tokens;
      c.batch = b;
      memory::PlanRequest pr = r.plan;
      pr.loaded_model = loaded;
      pr.workload.batch = b;
      pr.workload.context = g.input + r.output_tokens;
      const memory::PlanOutcome plan = memory::run_plan(pr, root);
      c.held_gib = static_cast<double>(plan.plan.total_bytes().count()) / kGiBd;
      if (!plan.plan.fits && !(queues_beyond_pool(out.engine) && probe.plan.fits)) {
        c.error = "out of memory: " + plan.plan.reason;
        out.cells.push_back(c);
        break;
      }
      try {
        memory::PlanRequest start = pr;
        if (queues_beyond_pool(out.engine)) start.workload = r.plan.workload;  // the pool engine starts as configured
        const sim::PreparedEngine engine = sim::prepare_engine(start, root);
        BatchSource src(b, g.input, r.output_tokens);
        sim::SimOptions o;
        o.concurrency = b;
        const sim::SimResult res = sim::simulate_on(engine, engine.clock(), src, o);
        c.completed = res.completed;
        c.total_s = res.end_s;
        c.in_use_gib = res.memory_peak_bytes / kGiBd;
        c.max_running = static_cast<std::uint64_t>(std::llround(res.running.max));
        c.queued = sim::held_shares(res, engine.rules.dp_ranks);
        if (!queues_beyond_pool(out.engine)) c.in_use_gib = c.held_gib;
        if (res.rejected) c.error = "refused: " + res.rejections.front().reason;
        else if (r.max_latency_s && res.e2e.max > *r.max_latency_s)
          c.error = "over the latency target: the slowest input took " + format_number("%.2f", res.e2e.max) + " s, target " +
                    format_number("%.4g", *r.max_latency_s) + " s";
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::DoesNotFit && e.kind() != ErrorKind::Usage) throw;
        c.error = std::string(e.kind() == ErrorKind::DoesNotFit ? "out of memory: " : "cannot simulate: ") + e.what();
      }
      out.cells.push_back(c);
      if (!c.error.empty()) break;  // the first limit ends the group
    }
  }
  return out;
}

nlohmann::json trial_json(const TrialResult& t) {
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : t.cells)
    cells.push_back({{"group", c.group}, {"input_tokens", c.input_tokens}, {"output_tokens", c.output_tokens},
                     {"batch", c.batch}, {"completed", c.completed}, {"total_s", round4(c.total_s)},
                     {"held_gib", round4(c.held_gib)}, {"in_use_gib", round4(c.in_use_gib)},
                     {"max_running", c.max_running},
                     {"queued_by", queued_json(c.queued)},
                     {"error", c.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.error)}});
  return {{"schema", "vramplan.trial/1"}, {"model", t.model}, {"gpu", t.gpu}, {"engine", t.engine}, {"cells", cells}};
}

std::string trial_text(const TrialResult& t) {
  std::string s = "trial ladder: " + t.model + " on " + t.gpu + ", " + t.engine +
                  " (predicted; each group stops at its first limit)\n";
  s += "  group        input  output  batch  completed   total s   held GiB  in use GiB  at once  queued by (share of the time)           error\n";
  for (const auto& c : t.cells) {
    char b[256];
    std::snprintf(b, sizeof b, "  %-10s %7llu %7llu %6llu %10llu %9.2f %10.2f %11.2f %8llu  %-37s  ", c.group.c_str(),
                  static_cast<unsigned long long>(c.input_tokens), static_cast<unsigned long long>(c.output_tokens),
                  static_cast<unsigned long long>(c.batch), static_cast<unsigned long long>(c.completed), c.total_s,
                  c.held_gib, c.in_use_gib, static_cast<unsigned long long>(c.max_running), queued_text(c.queued).c_str());
    s += b + (c.error.empty() ? std::string("-") : c.error) + "\n";
  }
  s += "held: what the engine allocates per GPU (nvidia-smi); in use: non-KV memory + the batch's KV at its peak\n"
       "at once: most inputs running together; queued by: the limits that kept part of the batch waiting, "
       "each with its share of the batch's time (docs/simulator.md#held-back)\n";
  return s;
}

namespace {
constexpr const char* kCsvHeader =
    "group,input_tokens,output_tokens,batch,completed,total_s,held_gib,in_use_gib,error,"
    "measured_completed,measured_total_s,measured_peak_gib,measured_error";

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

// Splits one CSV line (fields may be quoted, "" inside quotes).
std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else if (ch == '"') quoted = false;
      else out.back() += ch;
    } else if (ch == '"') quoted = true;
    else if (ch == ',') out.emplace_back();
    else out.back() += ch;
  }
  return out;
}
}  // namespace

std::string trial_csv(const TrialResult& t) {
  std::string s = std::string(kCsvHeader) + "\n";
  for (const auto& c : t.cells)
    s += csv_field(c.group) + "," + std::to_string(c.input_tokens) + "," + std::to_string(c.output_tokens) + "," +
         std::to_string(c.batch) + "," + std::to_string(c.completed) + "," + format_number("%.4f", c.total_s) + "," +
         format_number("%.4f", c.held_gib) + "," + format_number("%.4f", c.in_use_gib) + "," + csv_field(c.error) + ",,,,\n";
  return s;
}

std::vector<TrialComparisonRow> read_trial_csv(const std::filesystem::path& file) {
  require_regular_file(file, "trial --compare " + file.string());
  std::ifstream in(file);
  if (!in) throw Error(ErrorKind::Io, "trial --compare: cannot read " + file.string());
  const std::string name = file.string();
  std::string line;
  // CRLF line ends, as spreadsheets and Python's csv module write them, read as LF ones.
  const auto read_line = [&](std::string& l) {
    if (!std::getline(in, l)) return false;
    if (!l.empty() && l.back() == '\r') l.pop_back();
    return true;
  };
  if (!read_line(line) || line != kCsvHeader)
    throw_input(name, "line 1", std::string("expected the header written by vramplan trial --format csv: ") + kCsvHeader);
  std::vector<TrialComparisonRow> rows;
  std::uint64_t n = 1;
  // Every figure of a trial is far below 1e15 (tokens, seconds, GiB): a larger one is a damaged
  // file, and would print as hundreds of digits.
  constexpr double kLargest = 1e15;
  auto num = [&](const std::string& v, const char* column) -> double {
    double x = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc() || end != v.data() + v.size() || !(x >= 0) || !(x <= kLargest))
      throw_input(name, "line " + std::to_string(n) + ": " + column, "'" + v + "' is not a number from 0 to 1e15");
    return x;
  };
  // A count column is a whole number (1.5 requests was read as 1).
  auto count = [&](const std::string& v, const char* column) -> std::uint64_t {
    const double x = num(v, column);
    if (x != std::floor(x)) throw_input(name, "line " + std::to_string(n) + ": " + column, "'" + v + "' is not a whole number");
    return static_cast<std::uint64_t>(x);
  };
  while (read_line(line)) {
    ++n;
    if (line.empty()) continue;
    if (n > 100000) throw_input(name, "", "more than 100000 rows");
    const auto f = csv_split(line);
    if (f.size() != 13) throw_input(name, "line " + std::to_string(n), "expected 13 columns, found " + std::to_string(f.size()));
    TrialComparisonRow r;
    TrialCell& p = r.predicted;  // the CSV's columns (not the at-once and queued-by figures)
    p.group = escape_control(f[0]);
    p.input_tokens = count(f[1], "input_tokens");
    p.output_tokens = count(f[2], "output_tokens");
    p.batch = count(f[3], "batch");
    p.completed = count(f[4], "completed");
    p.total_s = num(f[5], "total_s");
    p.held_gib = num(f[6], "held_gib");
    p.in_use_gib = num(f[7], "in_use_gib");
    p.error = escape_control(f[8]);
    if (!f[9].empty()) r.completed = count(f[9], "measured_completed");
    if (!f[10].empty()) r.total_s = num(f[10], "measured_total_s");
    if (!f[11].empty()) r.peak_gib = num(f[11], "measured_peak_gib");
    // The file's own text reaches the terminal: control bytes are shown as \xHH, not sent.
    r.error = escape_control(f[12]);
    rows.push_back(std::move(r));
  }
  return rows;
}

namespace {
std::string pct(double predicted, const std::optional<double>& measured) {
  if (!measured || !(*measured > 0)) return "-";
  return format_number("%+.1f %%", (predicted - *measured) / *measured * 100);
}
}  // namespace

std::string trial_comparison_text(const std::vector<TrialComparisonRow>& rows) {
  std::string s = "  group        input  batch  completed pred/meas   total s pred/meas (err)        peak GiB pred/meas (err)   error pred / meas\n";
  for (const auto& r : rows) {
    const auto& p = r.predicted;
    char b[240];
    std::snprintf(b, sizeof b, "  %-10s %7llu %6llu %10llu/%-9s %9.2f/%-9s (%s) %9.2f/%-8s (%s)   ", p.group.c_str(),
                  static_cast<unsigned long long>(p.input_tokens), static_cast<unsigned long long>(p.batch),
                  static_cast<unsigned long long>(p.completed), r.completed ? std::to_string(*r.completed).c_str() : "-",
                  p.total_s, r.total_s ? format_number("%.2f", *r.total_s).c_str() : "-", pct(p.total_s, r.total_s).c_str(),
                  p.held_gib, r.peak_gib ? format_number("%.2f", *r.peak_gib).c_str() : "-", pct(p.held_gib, r.peak_gib).c_str());
    s += b + (p.error.empty() ? std::string("-") : p.error) + " / " + (r.error.empty() ? "-" : r.error) + "\n";
  }
  return s;
}

nlohmann::json trial_comparison_json(const std::vector<TrialComparisonRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  for (const auto& r : rows) {
    const auto& p = r.predicted;
    out.push_back({{"group", p.group}, {"input_tokens", p.input_tokens}, {"batch", p.batch},
                   {"predicted", {{"completed", p.completed}, {"total_s", p.total_s}, {"held_gib", p.held_gib},
                                  {"error", p.error}}},
                   {"measured", {{"completed", opt(r.completed)}, {"total_s", opt(r.total_s)}, {"peak_gib", opt(r.peak_gib)},
                                 {"error", r.error}}}});
  }
  return {{"schema", "vramplan.trial-compare/1"}, {"rows", out}};
}

}  // namespace vramplan::plan
