// An offline embedding job on one pooling plan: duration from the compute-bound inputs/s, then
// the capacity code's rental period and price (plan/prices.cpp cover_hours). Formulas:
// plan/embedding_job.hpp, docs/encoders.md "Offline embedding job".
#include "vramplan/plan/embedding_job.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>

#include "vramplan/core/error.hpp"
#include "vramplan/core/limits.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/memory/encoder_memory.hpp"
#include "vramplan/sim/workload.hpp"

namespace vramplan::plan {
namespace {

// The lengths the simulator's generator draws (same distribution, seed and stream), truncated to
// `max_tokens`, as a histogram: one FLOPs evaluation per distinct length.
std::map<std::uint64_t, std::uint64_t> drawn_lengths(const EmbeddingJobRequest& r, std::uint64_t samples,
                                                     std::uint64_t max_tokens, std::uint64_t& truncated) {
  sim::WorkloadSpec spec;
  spec.requests = samples;
  spec.input = r.input;
  spec.output.kind = sim::LengthSpec::Kind::Fixed;
  spec.output.fixed = 1;
  spec.seed = r.seed;
  std::map<std::uint64_t, std::uint64_t> counts;
  truncated = 0;
  const auto source = sim::make_request_source(spec);
  while (const auto req = source->next()) {
    const std::uint64_t s = req->input_tokens;
    if (s > max_tokens) ++truncated;
    ++counts[std::min(s, max_tokens)];
  }
  return counts;
}

double view_number(const nlohmann::json& v, const char* key) {
  return v.contains(key) && v.at(key).is_number() ? v.at(key).get<double>() : 0.0;
}

}  // namespace

std::uint64_t checked_documents(std::uint64_t documents) {
  if (documents == 0) throw_usage("--documents must be >= 1");
  // No job has 2^63 documents: above that, count_text's wrapped-around negative count.
  if (documents > static_cast<std::uint64_t>(INT64_MAX)) throw_usage("--documents must be >= 1, got " + count_text(documents));
  return documents;
}

EmbeddingJob embedding_job(const sim::ServingPlan& plan, const EmbeddingJobRequest& r, const PriceBook& prices) {
  const auto& view = plan.plan.engine_view;
  if (!view.contains("inputs_per_s"))
    throw_usage("--documents: " + plan.model.id + " under " + plan.plan.engine +
                " is not a pooling plan (an offline embedding job needs an encoder, a pooling model or --engine tei; "
                "generation jobs are `vramplan simulate --requests N --workers K`)");
  checked_documents(r.documents);
  if (!(r.margin_hours >= 0)) throw_usage("--margin: must not be negative");
  const auto& ips = view.at("inputs_per_s");
  // inputs_per_s = tensor rate / FLOPs per input of `input_tokens`: the rates behind it.
  const double plan_flops = view_number(ips, "flops_per_input");
  const double rate = view_number(ips, "expected") * plan_flops, rate_low = view_number(ips, "low") * plan_flops,
               rate_high = view_number(ips, "high") * plan_flops;
  if (!(rate > 0)) throw_usage("--documents: the plan has no throughput figure (see its notes)");

  EmbeddingJob j;
  j.documents = r.documents;
  j.input_len = r.input.source;
  // The input length the engine runs at most: the plan's padded / longest input.
  j.max_input_tokens = view_number(ips, "input_tokens") > 0 ? static_cast<std::uint64_t>(view_number(ips, "input_tokens"))
                                                           : plan.model.arch.max_position_embeddings;
  j.samples = std::min(r.documents, kEmbeddingJobSamples);
  std::uint64_t truncated = 0;
  double tokens = 0, flops = 0;
  for (const auto& [len, count] : drawn_lengths(r, j.samples, j.max_input_tokens, truncated)) {
    tokens += static_cast<double>(len) * static_cast<double>(count);
    flops += memory::encoder_flops_per_input(plan.model, len) * static_cast<double>(count);
  }
  const double n = static_cast<double>(j.samples);
  j.mean_tokens = tokens / n;
  j.truncated_share = static_cast<double>(truncated) / n;
  j.flops_per_input = flops / n;
  j.inputs_per_s = rate / j.flops_per_input;
  j.inputs_per_s_low = rate_low / j.flops_per_input;
  j.inputs_per_s_high = rate_high / j.flops_per_input;
  const double docs = static_cast<double>(r.documents);
  j.duration_s = docs / j.inputs_per_s;
  j.duration_s_slow = j.inputs_per_s_low > 0 ? docs / j.inputs_per_s_low : j.duration_s;
  j.duration_s_fast = j.inputs_per_s_high > 0 ? docs / j.inputs_per_s_high : j.duration_s;
  j.gpus = std::max<std::uint64_t>(1, plan.gpu.count);
  j.gpu_hours = static_cast<double>(j.gpus) * j.duration_s / 3600;
  j.margin_hours = r.margin_hours;
  const RentalCover cover = cover_hours(plan.gpu.id, j.gpus, j.duration_s / 3600 + r.margin_hours, prices, r.periods);
  j.period = cover.period;
  j.period_usd = cover.usd;
  j.price_basis = cover.price_basis;
  if (const auto price = prices.price(plan.gpu.id)) j.usd_gpu_hours = j.gpu_hours * price->usd_per_gpu_hour;
  return j;
}

nlohmann::json embedding_job_json(const EmbeddingJob& j) {
  nlohmann::json out = {{"documents", j.documents},
                        {"input_len", j.input_len},
                        {"max_input_tokens", j.max_input_tokens},
                        {"samples", j.samples},
                        {"mean_tokens", j.mean_tokens},
                        {"truncated_share", j.truncated_share},
                        {"flops_per_input", j.flops_per_input},
                        {"inputs_per_s", {{"low", j.inputs_per_s_low}, {"expected", j.inputs_per_s}, {"high", j.inputs_per_s_high}}},
                        {"duration_s", {{"fast", j.duration_s_fast}, {"expected", j.duration_s}, {"slow", j.duration_s_slow}}},
                        {"gpus", j.gpus},
                        {"gpu_hours", j.gpu_hours},
                        {"margin_hours", j.margin_hours},
                        {"rental_period", j.period.empty() ? nlohmann::json(nullptr) : nlohmann::json(j.period)},
                        {"rental_usd", j.period_usd ? nlohmann::json(*j.period_usd) : nlohmann::json(nullptr)},
                        {"gpu_hours_usd", j.usd_gpu_hours ? nlohmann::json(*j.usd_gpu_hours) : nlohmann::json(nullptr)},
                        {"price_basis", j.price_basis}};
  return out;
}

std::string embedding_job_text(const EmbeddingJob& j) {
  const char* f = j.inputs_per_s_low >= 10 ? "%.0f" : "%.3g";  // as the plan's throughput note
  char buf[600];
  std::snprintf(buf, sizeof buf,
                "\nOffline embedding job: %llu documents, lengths %s (mean %.1f tokens over %llu drawn, %.1f %% truncated to %llu)\n"
                "  %s [%s-%s] inputs/s -> %.2f h [%.2f-%.2f], %.2f GPU-hours on %llu GPU(s)\n",
                static_cast<unsigned long long>(j.documents), j.input_len.c_str(), j.mean_tokens,
                static_cast<unsigned long long>(j.samples), 100 * j.truncated_share,
                static_cast<unsigned long long>(j.max_input_tokens), format_number(f, j.inputs_per_s).c_str(),
                format_number(f, j.inputs_per_s_low).c_str(), format_number(f, j.inputs_per_s_high).c_str(),
                j.duration_s / 3600, j.duration_s_fast / 3600, j.duration_s_slow / 3600, j.gpu_hours,
                static_cast<unsigned long long>(j.gpus));
  std::string out = buf;
  out += "  rental: " + (j.period.empty() ? std::string("longer than every period given") : "the " + j.period + " period") +
         " covers it with a " + format_number("%.0f", j.margin_hours) + " h margin";
  if (j.period_usd) out += ", " + format_number("%.0f", *j.period_usd) + " USD";
  if (j.usd_gpu_hours) out += "; the GPU-hours alone " + format_number("%.2f", *j.usd_gpu_hours) + " USD (" + j.price_basis + ")";
  out += "\n";
  return out;
}

}  // namespace vramplan::plan
