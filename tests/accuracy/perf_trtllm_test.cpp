// The performance model against published TensorRT-LLM measurements
// (tests/accuracy/data/perf_trtllm_published.json), and the generator of docs/accuracy-perf.md.
//
// The test recomputes the report and compares it with the checked-in file, so the document can
// never drift from the model; `tools/perf_accuracy.sh` (VRAMPLAN_WRITE_ACCURACY_DOCS=1) rewrites it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Dense>

#include "accuracy/perf_llama_inventory.hpp"
#include "support/sanitizer.hpp"
#include "support/test_support.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/hardware/gpu_catalog.hpp"
#include "vramplan/io/json_file.hpp"
#include "vramplan/perf/hardware_rates.hpp"
#include "vramplan/perf/model_shape.hpp"
#include "vramplan/perf/perf_model.hpp"
#include "vramplan/core/table.hpp"

namespace vramplan::perf {
namespace {

std::string percent(double v) { return (v >= 0 ? "+" : "") + fixed(100 * v, 1) + " %"; }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Precision {
  double linear_bytes = 2, edge_bytes = 2, kv_bytes = 2;
  std::string compute;
};

struct Inputs {
  nlohmann::json doc;
  std::string file;
  GpuCatalog gpus;
  PerfDefaults defaults;
};

// The published points with the shipped GPU catalogue and perf defaults.
Inputs shipped_inputs() {
  const auto data = test::source_dir() / "tests" / "accuracy" / "data" / "perf_trtllm_published.json";
  return {read_json_file(data), data.string(), GpuCatalog::load(test::source_dir() / "data" / "gpus.json"),
          load_perf_defaults(test::source_dir() / "data" / "perf_defaults.json")};
}

class Evaluator {
 public:
  explicit Evaluator(const Inputs& in) : in_(in), root_(in.doc, in.file) {}

  // Shape and hardware of one row.
  std::pair<PerfModelShape, PerfHardware> setup(const JsonView& row) const {
    const std::string model = row.req_string("model");
    const JsonView m = root_.at("models").at(model);
    const JsonView p = root_.at("precisions").at(row.req_string("precision"));
    const test::LlamaConfig cfg{m.req_u64("hidden"), m.req_u64("layers"), m.req_u64("heads"),
                                m.req_u64("kv_heads"), m.req_u64("intermediate"), m.req_u64("vocab"),
                                false, 0, 0};
    const auto inv = test::llama_inventory(model, cfg, p.req_number("linear_bytes"),
                                           p.req_number("edge_bytes"));
    ShapeOptions opt;
    opt.tp = static_cast<std::uint32_t>(row.req_u64("tp"));
    opt.kv_element_bytes = p.req_number("kv_bytes");
    // The engine version's decode attention kernel (per source, docs/performance.md §1).
    const std::string attention = root_.at("sources").at(row.req_string("source")).req_string("decode_attention");
    if (attention != "per_query_head" && attention != "per_kv_head")
      root_.at("sources").at(row.req_string("source")).fail_at("decode_attention", "expected per_query_head or per_kv_head");
    opt.decode_kv_read_per_query_head = attention == "per_query_head";
    const PerfModelShape shape = shape_from_model(inv.spec, inv.bytes, opt);
    const PerfHardware hw = perf_hardware_from(in_.gpus.find(row.req_string("gpu")), nullptr,
                                               p.req_string("compute"), in_.defaults, engine(row));
    return {shape, hw};
  }

  const JsonView& root() const { return root_; }
  //! The engine that produced a row (its source's "engine"): selects the step overhead.
  std::string engine(const JsonView& row) const {
    return root_.at("sources").at(row.req_string("source")).req_string("engine");
  }

 private:
  const Inputs& in_;
  JsonView root_;
};

// One compared point: which table, which source, signed error, measured inside the model's range.
struct Point {
  std::string metric, source, engine;
  double error = 0;
  bool inside = false;
};

struct Report {
  std::string markdown;
  std::vector<Point> points;
};

// Median |error| and in-range count of the points of one metric (and one source; "" = all).
struct GroupStats {
  std::size_t points = 0, in_range = 0;
  double median_abs = 0;
};

GroupStats stats(const std::vector<Point>& pts, const std::string& metric, const std::string& source) {
  GroupStats g;
  std::vector<double> abs;
  for (const Point& p : pts) {
    if (p.metric != metric || (!source.empty() && p.source != source)) continue;
    abs.push_back(std::fabs(p.error));
    g.in_range += p.inside;
  }
  g.points = abs.size();
  if (!abs.empty()) g.median_abs = median(abs);
  return g;
}

// Metric names, in the order of the document's tables.
constexpr const char* kStatic = "output throughput, static batch";
constexpr const char* kClosedLoop = "output throughput, fixed concurrency (closed loop)";
constexpr const char* kLatency = "end-to-end latency, fixed batch";
constexpr const char* kTtft = "time to first token, batch 1";
constexpr const char* kTpot = "time per output token, fixed concurrency (closed loop)";

std::string in_out(std::uint64_t input, std::uint64_t output) {
  return std::to_string(input) + "/" + std::to_string(output);
}

// Every results table: the record (source, GPU, model, precision, TP), its workload columns, then
// the measured figure, the prediction with its slow-fast range, the error and whether the
// measurement lies inside the range. `unit` follows the predicted and range headers (" ms").
Table results_table(const std::vector<std::string>& workload, const std::string& measured, const std::string& unit) {
  std::vector<Table::Column> cols = {{"source", Align::Left}, {"GPU", Align::Left}, {"model", Align::Left},
                                     {"prec", Align::Left}, {"TP", Align::Right}};
  for (const std::string& w : workload) cols.push_back({w, Align::Right});
  for (const std::string& h : {measured, "predicted" + unit, "range" + unit, std::string("error")})
    cols.push_back({h, Align::Right});
  cols.push_back({"in range", Align::Left});
  return Table(std::move(cols));
}

// A row of results_table: figures x `scale` (1e3: seconds shown in ms) with `digits` decimals;
// `verdict` is the error and in-range cells.
std::vector<std::string> result_cells(const JsonView& row, std::uint32_t tp, const std::vector<std::string>& workload,
                                      double measured, const Range& pred, double scale, int digits,
                                      const std::pair<std::string, std::string>& verdict) {
  std::vector<std::string> cells = {row.req_string("source"), row.req_string("gpu"), row.req_string("model"),
                                    row.req_string("precision"), std::to_string(tp)};
  cells.insert(cells.end(), workload.begin(), workload.end());
  const auto shown = [&](double v) { return fixed(v * scale, digits); };
  cells.insert(cells.end(), {shown(measured), shown(pred.expected), shown(pred.low) + "-" + shown(pred.high),
                             verdict.first, verdict.second});
  return cells;
}

Report build_report(const Inputs& in) {
  const Evaluator ev(in);
  Report rep;
  auto record = [&](const char* metric, const JsonView& row, double predicted, const Range& r,
                    double measured) {
    const double err = (predicted - measured) / measured;
    const bool inside = measured >= r.low && measured <= r.high;
    rep.points.push_back({metric, row.req_string("source"), ev.engine(row), err, inside});
    return std::pair<std::string, std::string>{percent(err), inside ? "yes" : "no"};
  };

  // --- static-batch throughput ---
  Table t = results_table({"batch", "in/out"}, "measured tok/s/GPU", "");
  for (const JsonView& row : ev.root().at("throughput").items()) {
    const auto [shape, hw] = ev.setup(row);
    const std::uint64_t batch = row.req_u64("batch"), input = row.req_u64("input"),
                        output = row.req_u64("output");
    const GenerationResult g = estimate_generation(shape, hw, batch, input, output, 0);
    const double gpus = row.req_bool("per_gpu") ? static_cast<double>(shape.tp * shape.pp) : 1.0;
    const Range pred{g.output_tokens_per_s.low / gpus, g.output_tokens_per_s.expected / gpus,
                     g.output_tokens_per_s.high / gpus};
    const double measured = row.req_positive("value");
    t.add_row(result_cells(row, shape.tp, {std::to_string(batch), in_out(input, output)}, measured, pred, 1, 0,
                           record(kStatic, row, pred.expected, pred, measured)));
  }

  // --- closed-loop fixed concurrency: C clients each send the next request when the last ends.
  // Per completed cycle the engine runs C prefills and output-1 decode steps of C sequences,
  // the same work as a static batch of C (the requests are staggered, not synchronised, which
  // changes when the work runs, not how much there is); so the static model applies while the
  // engine admits all C requests (TTFT stays near one prefill).
  Table c = results_table({"concurrency", "in/out"}, "measured tok/s", "");
  for (const JsonView& row : ev.root().at("concurrency").items()) {
    const auto [shape, hw] = ev.setup(row);
    const std::uint64_t conc = row.req_u64("concurrency"), input = row.req_u64("input"),
                        output = row.req_u64("output");
    const GenerationResult g = estimate_generation(shape, hw, conc, input, output, 0);
    const double gpus = row.req_bool("per_gpu") ? static_cast<double>(shape.tp * shape.pp) : 1.0;
    const Range pred{g.output_tokens_per_s.low / gpus, g.output_tokens_per_s.expected / gpus,
                     g.output_tokens_per_s.high / gpus};
    const double measured = row.req_positive("value");
    c.add_row(result_cells(row, shape.tp, {std::to_string(conc), in_out(input, output)}, measured, pred, 1, 1,
                           record(kClosedLoop, row, pred.expected, pred, measured)));
  }

  // --- end-to-end latency of a fixed batch ---
  Table l = results_table({"batch", "in/out"}, "measured ms", " ms");
  for (const JsonView& row : ev.root().at("latency_ms").items()) {
    const auto [shape, hw] = ev.setup(row);
    const std::uint64_t batch = row.req_u64("batch"), input = row.req_u64("input"),
                        output = row.req_u64("output");
    const Range r = estimate_generation(shape, hw, batch, input, output, 0).total_s;
    const double measured = row.req_positive("value") / 1e3;
    l.add_row(result_cells(row, shape.tp, {std::to_string(batch), in_out(input, output)}, measured, r, 1e3, 0,
                           record(kLatency, row, r.expected, r, measured)));
  }

  // --- time per output token at a fixed concurrency: C clients, each decoding while the others
  // do, is a decode step of C sequences (estimate_decode). The other clients' prefills that land
  // inside a request's decode are not modelled (they lengthen a few of its steps).
  Table o = results_table({"concurrency", "context"}, "measured ms", " ms");
  for (const JsonView& row : ev.root().at("tpot_ms").items()) {
    const auto [shape, hw] = ev.setup(row);
    const std::uint64_t conc = row.req_u64("concurrency"), context = row.req_u64("context");
    const Range r = estimate_decode(shape, hw, DecodeBatch{conc, context}).step_s;
    const double measured = row.req_positive("value") / 1e3;
    o.add_row(result_cells(row, shape.tp, {std::to_string(conc), std::to_string(context)}, measured, r, 1e3, 2,
                           record(kTpot, row, r.expected, r, measured)));
  }

  // --- time to first token ---
  Table f = results_table({"prompt"}, "measured ms", " ms");
  for (const JsonView& row : ev.root().at("ttft_ms").items()) {
    const auto [shape, hw] = ev.setup(row);
    const Range r = estimate_ttft(shape, hw, row.req_u64("input"), 0);
    const double measured = row.req_positive("value") / 1e3;
    f.add_row(result_cells(row, shape.tp, {std::to_string(row.req_u64("input"))}, measured, r, 1e3, 1,
                           record(kTtft, row, r.expected, r, measured)));
  }

  std::ostringstream md;
  md << "# Performance model accuracy (generated)\n\n"
     << "Generated by `tests/accuracy/perf_trtllm_test.cpp` from "
        "`tests/accuracy/data/perf_trtllm_published.json`; regenerate with `tools/perf_accuracy.sh`. "
        "Do not edit by hand.\n\n"
     << "Every row is a published measurement whose batch is known: a static batch (B prompts "
        "prefilled together, then output - 1 decode steps), a fixed batch, a batch-1 first token, "
        "or a closed-loop benchmark at a fixed concurrency with fixed input/output lengths. The "
        "model predicts it from the GPU catalogue (`data/gpus.json`) and the default efficiencies "
        "(`data/perf_defaults.json`) — **no calibration** was available for these GPUs, so the "
        "predictions are datasheet x default efficiency, and the range column is the model's "
        "slow-fast range. Error = (predicted expected - measured) / measured. Published figures "
        "whose batch the model cannot be given are listed under *Not comparable* with the reason, "
        "not forced into a number.\n\n"
     << "TensorRT-LLM v0.5 / v0.6 decode attention (masked MHA, one thread block per query head) "
        "reads each cached K/V head once per query head; the XQA kernel that shares the read within "
        "a GQA group arrived in v0.8 (docs/source/blogs/XQA-kernel.md: 2.4x Llama-70B throughput on "
        "H200). Rows of those versions are predicted with that mechanism "
        "(`decode_attention: per_query_head`); it changes only GQA models (Llama-2-70B, 8 query "
        "heads per KV head). v0.9.0 ran Llama2-70b with `TRTLLM_ENABLE_XQA=1` (`per_kv_head`).\n\n"
     << "The fixed cost per forward step is the engine's (`step_overhead` in `data/perf_defaults.json`: "
        "per step + decoder layers x per layer), chosen by each source's `engine`. It is FITTED on "
        "these rows: `trtllm-gptsession` on the TensorRT-LLM 0.5-0.9 throughputs and TTFTs (jointly "
        "with the memory/math overlap), `trtllm` on the NIM closed-loop rows (the NIM TTFTs are held "
        "out), `vllm-sync` (vLLM before 0.14: serial scheduling) on the two vLLM nightly latencies "
        "(two points, two unknowns: their 0 % says nothing about accuracy), `vllm` (0.14 and later: "
        "asynchronous scheduling hides the per-step host work, so the step term is 0) on the "
        "InferenceBench vLLM 0.21 TPOTs (one layer count: the per-layer term only; the vLLM 0.23 "
        "A100 TPOT is held out). `PerfAccuracy.StepOverheadIsTheFittedValuePerEngine` re-runs the "
        "fits.\n\n"
     << "## Summary\n\n"
     << "| metric | points | median abs error | measured inside the model's range |\n"
     << "|---|---:|---:|---:|\n";
  const char* metrics[] = {kStatic, kClosedLoop, kLatency, kTpot, kTtft};
  for (const char* m : metrics) {
    const GroupStats g = stats(rep.points, m, "");
    md << "| " << m << " | " << g.points << " | " << fixed(100 * g.median_abs, 1) << " % | "
       << g.in_range << " of " << g.points << " |\n";
  }
  md << "\nPer source:\n\n"
     << "| metric | source | points | median abs error | inside range |\n"
     << "|---|---|---:|---:|---:|\n";
  for (const char* m : metrics) {
    std::vector<std::string> sources;
    for (const Point& p : rep.points)
      if (p.metric == m && std::find(sources.begin(), sources.end(), p.source) == sources.end())
        sources.push_back(p.source);
    for (const std::string& src : sources) {
      const GroupStats g = stats(rep.points, m, src);
      md << "| " << m << " | " << src << " | " << g.points << " | " << fixed(100 * g.median_abs, 1)
         << " % | " << g.in_range << " of " << g.points << " |\n";
    }
  }
  md << "\nThe 15 % target applies where a calibration measured bandwidth and TFLOPS on the card; "
        "none exists for these GPUs, so these figures are the uncalibrated accuracy.\n\n"
     << "## Output throughput, static batch\n\n" << t.render_markdown() << "\n"
     << "## Output throughput at a fixed concurrency (closed loop)\n\n"
     << "C clients each send their next request when the previous one finishes. Per cycle the "
        "engine runs C prefills and output - 1 decode steps of C sequences: the work of a static "
        "batch of C, so it is predicted as one (`estimate_generation(C, in, out)`), valid while the "
        "engine admits all C requests (TTFT near one prefill). Throughput is of the whole "
        "deployment (all its GPUs).\n\n"
     << c.render_markdown() << "\n"
     << "## End-to-end latency of a fixed batch\n\n" << l.render_markdown() << "\n"
     << "## Time per output token at a fixed concurrency (closed loop)\n\n"
     << "C clients each send their next request when the previous one finishes; the published "
        "TPOT is predicted as one decode step of C sequences at the stated context "
        "(`estimate_decode`). The other clients' prefills inside a request's decode are not "
        "modelled.\n\n"
     << o.render_markdown() << "\n"
     << "## Time to first token\n\n" << f.render_markdown() << "\n"
     << "## Not comparable\n\n"
     << "Published figures the model is not compared with, because the batch the engine ran is "
        "not published (decided from each source's wording, before comparing):\n\n";
  for (const JsonView& x : ev.root().at("not_comparable").items())
    md << "- " << x.req_string("source") << ", " << x.req_string("rows") << ": "
       << x.req_string("reason") << "\n";
  md << "\n## Sources\n\n";
  for (const auto& [key, src] : ev.root().at("sources").members())
    md << "- `" << key << "`: " << src.req_string("setting") << "; engine " << src.req_string("engine")
       << "; decode attention "
       << src.req_string("decode_attention") << " — " << src.req_string("url") << "\n";
  md << "\nModel dimensions:\n\n";
  for (const auto& [key, m] : ev.root().at("models").members())
    md << "- `" << key << "`: " << m.req_string("source") << "\n";
  md << "\nPrecisions:\n\n";
  for (const auto& [key, p] : ev.root().at("precisions").members())
    md << "- `" << key << "`: " << p.req_string("note") << "\n";
  md << "\nRows left out (decided before comparing, from the tables' wording):\n\n";
  for (const JsonView& x : ev.root().at("excluded").items())
    md << "- " << x.req_string("source") << ", " << x.req_string("rows") << ": "
       << x.req_string("reason") << "\n";
  rep.markdown = md.str();
  return rep;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(PerfAccuracy, TensorRtLlmPublishedFiguresAndDocIsCurrent) {
  Inputs in = shipped_inputs();
  const Report rep = build_report(in);
  for (const char* m : {kStatic, kClosedLoop, kLatency, kTpot, kTtft}) {
    const GroupStats g = stats(rep.points, m, "");
    ASSERT_GT(g.points, 0u) << m;
    RecordProperty(std::string(m) + " median_abs_error", fixed(g.median_abs, 4));
  }

  const auto doc = test::source_dir() / "docs" / "accuracy-perf.md";
  const char* write = std::getenv("VRAMPLAN_WRITE_ACCURACY_DOCS");
  if (write && std::string(write) == "1") {
    std::ofstream(doc, std::ios::binary) << rep.markdown;
  } else {
    EXPECT_EQ(read_text(doc), rep.markdown)
        << "docs/accuracy-perf.md is stale: run tools/perf_accuracy.sh";
  }
}

// --- the engine step overhead, t = step + layers x layer (docs/performance.md §1) ---------------

// The points data/perf_defaults.json says each engine's step overhead was fitted on: the engine's
// sources whose key starts with the prefix, of one metric where `metric` is set (the others are
// held out). `layer_only`: every point has the same layer count, so the two terms cannot be told
// apart and the step term stays 0 (as fitted for the other TensorRT-LLM runtime).
struct OverheadFitSet {
  const char* engine;
  const char* source_prefix;
  const char* metric;
  bool layer_only;
};
constexpr OverheadFitSet kOverheadFits[] = {
    {"trtllm-gptsession", "trtllm-", nullptr, false},
    {"trtllm", "nim-", kClosedLoop, true},  // NIM's TTFTs held out
    {"vllm-sync", "vllm-ci-", nullptr, false},
    {"vllm", "inferencebench-", kTpot, true},  // the vLLM 0.23 A100 TPOT held out
};
static_assert(std::string_view(kOverheadFits[0].engine) == "trtllm-gptsession",
              "the overlap fit refits this one");

bool in_fit(const Point& p, const OverheadFitSet& set) {
  return p.engine == set.engine && p.source.rfind(set.source_prefix, 0) == 0 &&
         (!set.metric || p.metric == set.metric);
}

// Predicted / measured TIME of a point (a throughput error e is a time ratio 1 / (1 + e)).
double time_ratio(const Point& p) {
  const bool throughput = p.metric == std::string(kStatic) || p.metric == std::string(kClosedLoop);
  return throughput ? 1 / (1 + p.error) : 1 + p.error;
}

struct OverheadFit {
  double step_ms = 0, layer_us = 0;
  double sse = 0;  //!< sum of squared relative time errors at the fitted values
  std::size_t points = 0;
  double unconstrained_step_ms = 0;  //!< the two-term optimum's step before the bound 0 (both terms fitted)
};

// The overhead adds exactly n_steps x (step + layers x layer) to every predicted time, so the time
// ratio is linear in (step, layer): r = r0 + a step_ms + b layer_us. Least squares on the relative
// time errors r - 1 (Eigen); a negative coefficient is pinned at 0 (a cost cannot be negative).
OverheadFit fit_overhead(Inputs in, const OverheadFitSet& set) {
  StepOverheadDefaults& o = in.defaults.step_overhead.at(set.engine);
  auto ratios = [&](double step_ms, double layer_us) {
    o.per_step_s.expected = step_ms * 1e-3;
    o.per_layer_s.expected = layer_us * 1e-6;
    std::vector<double> r;
    for (const Point& p : build_report(in).points)
      if (in_fit(p, set)) r.push_back(time_ratio(p));
    return r;
  };
  const std::vector<double> r0 = ratios(0, 0), r1 = ratios(1, 0), r2 = ratios(0, 1);
  const auto n = static_cast<Eigen::Index>(r0.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    a(i, 0) = r1[k] - r0[k];
    a(i, 1) = r2[k] - r0[k];
    y(i) = 1 - r0[k];
  }
  Eigen::Vector2d x{0, std::max(0.0, a.col(1).dot(y) / a.col(1).squaredNorm())};
  if (!set.layer_only) x = a.colPivHouseholderQr().solve(y);
  const double unconstrained_step = x(0);
  for (int c = 0; c < 2; ++c) {
    if (x(c) >= 0) continue;
    const int other = 1 - c;
    x(c) = 0;
    x(other) = std::max(0.0, a.col(other).dot(y) / a.col(other).squaredNorm());
  }
  return {x(0), x(1), (a * x - y).squaredNorm(), r0.size(), set.layer_only ? 0.0 : unconstrained_step};
}

// Sum of squared log errors over the points data/perf_defaults.json says memory_compute_overlap
// was fitted on: TensorRT-LLM static-batch throughputs and batch-1 first-token latencies (the
// trtllm-gptsession step overhead's points too, so the two are fitted jointly).
double fit_objective(const Inputs& in) {
  double sse = 0;
  for (const Point& p : build_report(in).points)
    if ((p.metric == std::string(kStatic) || p.metric == std::string(kTtft)) &&
        p.source.rfind("trtllm-", 0) == 0)
      sse += std::pow(std::log1p(p.error), 2);
  return sse;
}

TEST(PerfAccuracy, MemoryComputeOverlapIsTheFittedValue) {
  VRAMPLAN_SKIP_REFIT_UNDER_ASAN();
  Inputs in = shipped_inputs();
  const double shipped = in.defaults.memory_compute_overlap.expected;
  // The grid of the fit recorded in data/perf_defaults.json: 0, 0.05, ..., 1, jointly with the
  // trtllm-gptsession step overhead (same points): at every overlap the overhead is refitted first.
  double best = -1, best_sse = 0;
  for (int k = 0; k <= 20; ++k) {
    in.defaults.memory_compute_overlap.expected = k / 20.0;
    const OverheadFit overhead = fit_overhead(in, kOverheadFits[0]);
    StepOverheadDefaults& session = in.defaults.step_overhead.at(kOverheadFits[0].engine);
    session.per_step_s.expected = overhead.step_ms * 1e-3;
    session.per_layer_s.expected = overhead.layer_us * 1e-6;
    const double sse = fit_objective(in);
    if (best < 0 || sse < best_sse) {
      best = k / 20.0;
      best_sse = sse;
    }
  }
  RecordProperty("fitted_overlap", fixed(best, 2));
  RecordProperty("fitted_sse", fixed(best_sse, 3));
  EXPECT_NEAR(shipped, best, 1e-9) << "data/perf_defaults.json memory_compute_overlap is not the "
                                      "least-squares value on its stated data";
}

TEST(PerfAccuracy, StepOverheadIsTheFittedValuePerEngine) {
  VRAMPLAN_SKIP_REFIT_UNDER_ASAN();
  const Inputs in = shipped_inputs();
  for (const OverheadFitSet& set : kOverheadFits) {
    const OverheadFit fit = fit_overhead(in, set);
    const StepOverheadDefaults& shipped = in.defaults.step_overhead.at(set.engine);
    const std::string e = set.engine;
    RecordProperty(e + "_fitted_step_ms", fixed(fit.step_ms, 4));
    RecordProperty(e + "_fitted_layer_us", fixed(fit.layer_us, 3));
    RecordProperty(e + "_fit_points", std::to_string(fit.points));
    RecordProperty(e + "_fit_sse", fixed(fit.sse, 4));
    RecordProperty(e + "_unconstrained_step_ms", fixed(fit.unconstrained_step_ms, 3));
    EXPECT_TRUE(shipped.fitted) << e;
    // The file stores step_ms to 0.01 ms and layer_us to 0.1 us.
    EXPECT_NEAR(shipped.per_step_s.expected * 1e3, fit.step_ms, 0.005 + 1e-9)
        << e << ": data/perf_defaults.json step_ms is not the least-squares value on its stated data";
    EXPECT_NEAR(shipped.per_layer_s.expected * 1e6, fit.layer_us, 0.05 + 1e-9)
        << e << ": data/perf_defaults.json layer_us is not the least-squares value on its stated data";
  }
}

// The trtllm-gptsession range, as data/perf_defaults.json derives it: the smallest and largest
// per-layer fits of one TensorRT-LLM source alone (layers x layer_us, step 0), the newer runtime's
// fit (trtllm, NIM) as the fast end.
TEST(PerfAccuracy, SessionOverheadRangeIsThePerSourceSpread) {
  VRAMPLAN_SKIP_REFIT_UNDER_ASAN();
  const Inputs in = shipped_inputs();
  double low = fit_overhead(in, kOverheadFits[1]).layer_us, high = low;
  for (const char* source : {"trtllm-0.5.0", "trtllm-0.6.1", "trtllm-0.9.0", "trtllm-h200-launch"}) {
    const double layer_us = fit_overhead(in, {"trtllm-gptsession", source, nullptr, true}).layer_us;
    RecordProperty(std::string(source) + "_layer_us", fixed(layer_us, 2));
    low = std::min(low, layer_us);
    high = std::max(high, layer_us);
  }
  const StepOverheadDefaults& shipped = in.defaults.step_overhead.at("trtllm-gptsession");
  EXPECT_NEAR(shipped.per_layer_s.min * 1e6, low, 0.05 + 1e-9);
  EXPECT_NEAR(shipped.per_layer_s.max * 1e6, high, 0.05 + 1e-9);
}

}  // namespace
}  // namespace vramplan::perf
