#include "vramplan/memory/vllm_activation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <Eigen/Dense>

#include "vramplan/core/error.hpp"
#include "vramplan/core/version.hpp"
#include "vramplan/memory/vllm_encoder_profile.hpp"

namespace vramplan::memory {

namespace {

bool has_dense_layers(const ModelArch& a) {
  if (a.num_experts == 0) return true;
  return std::any_of(a.layer_is_moe.begin(), a.layer_is_moe.end(), [](bool m) { return !m; });
}

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f GiB", bytes / static_cast<double>(kGiB));
  return buf;
}

double sampler_term(const VllmActivationFeatures& f, const VllmActivationCoefficients& c) {
  return c.sampler_fp32_copies * f.sampler_fp32 + c.sampler_model_copies * f.sampler_model;
}

}  // namespace

std::uint64_t vllm_fused_moe_chunk_tokens(std::string_view release) {
  const std::vector<std::uint64_t> v = release_numbers(release);
  if (!released_before(v, {0, 18, 0})) return 0;
  return v < std::vector<std::uint64_t>{0, 12, 0} ? 32768 : 16384;
}

VllmActivationFeatures vllm_activation_features(const ModelArch& a, const VllmStageShape& s) {
  if (s.tp == 0 || s.max_num_batched_tokens == 0) throw_internal("vllm activation: empty shape");
  VllmActivationFeatures f;
  const double T = static_cast<double>(s.max_num_batched_tokens);
  const double S = static_cast<double>(std::min(s.max_num_seqs, s.max_num_batched_tokens));
  const double h = static_cast<double>(a.hidden_size);
  const double V = static_cast<double>(a.vocab_size);
  const double ab = static_cast<double>(s.compute_bytes);
  const double tp = static_cast<double>(s.tp);
  if (s.last_stage) {
    f.sampler_fp32 = S * V * 4;
    f.sampler_model = S * V * ab;
  }
  f.hidden = T * h * ab;
  if (has_dense_layers(a)) f.forward = T * ab * (3 * h + 3 * static_cast<double>(a.intermediate_size) / tp);
  if (a.num_experts > 0) {
    // fused_moe's workspaces are sized by the experts' own input width: a latent MoE's
    // (moe_latent_size) rather than the hidden size.
    const bool dp = s.dp > 1;
    const std::uint64_t split_n = s.moe_split ? s.moe_split : s.tp;
    const double split = static_cast<double>(split_n);
    const double n = 2 * static_cast<double>(a.moe_intermediate_size) / split;
    const double he = static_cast<double>(a.moe_hidden_size());
    const double d = static_cast<double>(s.dp);
    const double tokens = d * T;  // the MoE's tokens: every engine's under data parallelism
    const bool capped = s.moe_chunk_tokens > 0 && tokens > static_cast<double>(s.moe_chunk_tokens);
    const double m = capped ? static_cast<double>(s.moe_chunk_tokens) : tokens;
    f.moe_workspace = m * static_cast<double>(a.experts_per_token) * (std::max(n, he) + n / 2) * ab;
    if (dp) f.dp_gather = (d - 1) * T * (2 * h + static_cast<double>(a.num_experts)) * ab;
    const std::string split_text = split_n == 1 ? std::string("1 (whole experts)") : std::to_string(split_n);
    f.moe_explain = "fused-MoE workspace " +
                    (capped ? "min(" + std::string(dp ? "D·T" : "T") + ", " + std::to_string(s.moe_chunk_tokens) + ")"
                            : std::string(dp ? "D·T" : "T")) +
                    "·top_k·(max(2·I_e/s, h) + I_e/s)·a, s = " + split_text +
                    (dp ? ", D = " + std::to_string(s.dp) + " engines' tokens gathered" : std::string());
  }
  if (!s.first_stage) f.pp_buffers = 2 * T * h * ab;
  // profile_run has no PP-rank check around the encoder profiling: every stage holds it.
  const auto mm = vllm_encoder_profile(a, s.max_num_batched_tokens, s.max_num_seqs, s.max_model_len, s.compute_bytes);
  f.mm_encoder = mm.held_bytes;
  f.mm_explain = mm.explain;
  f.explain = "T=" + std::to_string(s.max_num_batched_tokens) + " tokens, S=" +
              std::to_string(std::min(s.max_num_seqs, s.max_num_batched_tokens)) + " seqs, V=" +
              std::to_string(a.vocab_size) + ", h=" + std::to_string(a.hidden_size) + ", a=" +
              std::to_string(s.compute_bytes) + " B" +
              (s.last_stage ? "" : " (no sampler: not the last PP stage)");
  return f;
}

bool forward_dominates(const VllmActivationFeatures& f, const VllmActivationCoefficients& c) {
  return f.forward > sampler_term(f, c);
}

std::vector<Component> vllm_activation(const VllmActivationFeatures& f,
                                       const VllmActivationCoefficients& c) {
  auto bytes = [](double v) { return Bytes(static_cast<std::uint64_t>(std::llround(std::max(0.0, v)))); };
  std::vector<Component> parts;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.3f x T·h·a + %s constant (fitted)", c.hidden_buffers,
                gib(c.constant_bytes).c_str());
  parts.push_back({"activation.framework", bytes(c.hidden_buffers * f.hidden + c.constant_bytes),
                   std::string(buf) + "; " + f.explain});
  if (f.pp_buffers > 0)
    parts.push_back({"activation.pp_buffers", bytes(f.pp_buffers),
                     "PP intermediate tensors: 2 x T·h·a = " + gib(f.pp_buffers)});
  if (f.moe_workspace > 0)
    parts.push_back({"activation.moe_workspace", bytes(f.moe_workspace),
                     f.moe_explain + " = " + gib(f.moe_workspace)});
  if (f.dp_gather > 0)
    parts.push_back({"activation.dp_gather", bytes(f.dp_gather),
                     "data parallelism: the other engines' tokens the MoE gathers, (D - 1)·T·(2h + E)·a = " +
                         gib(f.dp_gather)});
  if (f.mm_encoder > 0) parts.push_back({"activation.mm_encoder_profile", bytes(f.mm_encoder), f.mm_explain});
  const double sampler = sampler_term(f, c);
  if (forward_dominates(f, c)) {
    parts.push_back({"activation.forward", bytes(f.forward),
                     "dense forward T·a·(3h + 3·I/TP) = " + gib(f.forward) + " (> sampler " + gib(sampler) + ")"});
  } else {
    std::snprintf(buf, sizeof buf, "sampler %.3f x S·V·4 (fp32 copies, fitted) + 1 x S·V·a = ",
                  c.sampler_fp32_copies);
    parts.push_back({"activation.sampler", bytes(sampler),
                     std::string(buf) + gib(sampler) + " (>= forward " + gib(f.forward) + ")"});
  }
  return parts;
}

VllmActivationFit fit_vllm_activation(const std::vector<VllmActivationPoint>& points,
                                      const VllmActivationCoefficients* fixed) {
  if (points.empty()) throw_usage("fit_vllm_activation: no points");
  // Work in GiB so the columns are of similar size.
  const double g = static_cast<double>(kGiB);
  VllmActivationCoefficients c;
  c.sampler_fp32_copies = 3;
  if (fixed) {
    c.hidden_buffers = fixed->hidden_buffers;
    c.constant_bytes = fixed->constant_bytes;
  }
  const int cols = fixed ? 1 : 3;
  std::vector<bool> branch(points.size(), false), previous;
  for (int iteration = 0; iteration < 20 && branch != previous; ++iteration) {
    previous = branch;
    for (std::size_t i = 0; i < points.size(); ++i) branch[i] = forward_dominates(points[i].features, c);
    Eigen::MatrixXd X(static_cast<Eigen::Index>(points.size()), cols);
    Eigen::VectorXd y(static_cast<Eigen::Index>(points.size()));
    for (std::size_t i = 0; i < points.size(); ++i) {
      const auto& f = points[i].features;
      const auto r = static_cast<Eigen::Index>(i);
      double known = f.pp_buffers + f.moe_workspace + f.dp_gather + f.mm_encoder;
      double k32 = 0;
      if (branch[i]) known += f.forward;
      else { known += c.sampler_model_copies * f.sampler_model; k32 = f.sampler_fp32; }
      if (fixed) {
        known += c.hidden_buffers * f.hidden + c.constant_bytes;
        X(r, 0) = k32 / g;
      } else {
        X(r, 0) = k32 / g;
        X(r, 1) = f.hidden / g;
        X(r, 2) = 1.0;
      }
      y(r) = (points[i].observed_bytes - known) / g;
    }
    const Eigen::VectorXd p = X.colPivHouseholderQr().solve(y);
    c.sampler_fp32_copies = p(0);
    if (!fixed) {
      c.hidden_buffers = p(1);
      c.constant_bytes = p(2) * g;
    }
  }
  VllmActivationFit out;
  out.coefficients = c;
  for (const auto& pt : points) {
    const double predicted = static_cast<double>(sum_bytes(vllm_activation(pt.features, c)).count());
    out.residual_bytes.push_back(predicted - pt.observed_bytes);
  }
  return out;
}

}  // namespace vramplan::memory
