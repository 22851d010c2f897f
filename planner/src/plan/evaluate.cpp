#include "vramplan/plan/evaluate.hpp"

#include "vramplan/core/error.hpp"
#include "vramplan/core/limits.hpp"

namespace vramplan::plan {

std::uint64_t batch_per_replica(const Scenario& s) {
  if (s.replicas == 0) throw_usage("--replicas must be >= 1");
  if (s.batch && *s.batch == 0) throw_usage("--batch must be >= 1");
  if (s.context && *s.context == 0) throw_usage("--context must be >= 1 (tokens per sequence)");
  return s.batch ? ceil_div(*s.batch, s.replicas) : 1;
}

Evaluation evaluate(const PlanSession& session, const Scenario& s, const FitPolicy& policy,
                    const ErrorBounds& bounds) {
  Evaluation e;
  e.replicas = s.replicas;
  e.parallel = session.parallel_of(s.args);
  // Without --batch, the engine's default batch (sentence-transformers' 32 under hf), as plan uses it.
  const std::uint64_t per_replica = batch_per_replica(s);
  const std::uint64_t batch = s.batch ? per_replica : session.default_batch(s.args);
  const memory::Workload config_only{std::nullopt, s.context};
  // Without a length flag or --context, the engine's own default length (HF transformers
  // generate()'s data/engines/hf.json default_context, an encoder's input length): as plan uses it.
  const std::uint64_t engine_length = session.planned_context(s.args, config_only);
  // The engine's flag of 0 (or a model without max_position_embeddings): name the flag, not the
  // --context the length is passed on as.
  const std::string flag = session.context_flag();
  const bool flag_given = !flag.empty() && s.args.count(flag);
  if (engine_length == 0)
    throw_usage(flag_given ? "--" + flag + " must be >= 1"
                           : session.model().id + " gives no max_position_embeddings: give " +
                                 (flag.empty() ? std::string("--context") : "--" + flag + " (or --context)"));
  if (engine_length > kMaxContextTokens)  // named by the flag that set it, not the --context it is passed on as
    throw_usage((flag_given ? "--" + flag : std::string("--context")) + ": must be in 1.." +
                std::to_string(kMaxContextTokens) + ", got " + std::to_string(engine_length));
  std::uint64_t context = s.context.value_or(engine_length);
  if (context > engine_length)
    throw_usage("--context " + std::to_string(context) + " exceeds the engine's maximum length " +
                std::to_string(engine_length) + " (--" + session.context_flag() + ")");
  e.plan = session.plan(s.gpu, s.args, s.weights, memory::Workload{batch, context});
  // An engine that caps requests at its pool (SGLang's max_req_len) starts with a pool shorter
  // than its context length: without --context, the longest request it runs is the workload.
  if (!s.context)
    if (const auto it = e.plan.engine_view.find("max_req_len");
        it != e.plan.engine_view.end() && it->is_number_unsigned() && it->get<std::uint64_t>() > 0 &&
        it->get<std::uint64_t>() < context) {
      context = it->get<std::uint64_t>();
      e.capped_context = "without --context, one request of " + std::to_string(context) +
                         " tokens: the engine caps requests at its pool (max_req_len)";
    }
  std::string slot_refusal;
  // llama.cpp splits its context over the sequences (-np): a slot holds n_ctx_seq = n_ctx / n_seq_max
  // cells (llama-context.cpp, unless --kv-unified), the longest request a sequence can run.
  if (const auto it = e.plan.engine_view.find("n_ctx_seq");
      it != e.plan.engine_view.end() && it->is_number_unsigned() && it->get<std::uint64_t>() > 0 &&
      it->get<std::uint64_t>() < context) {
    const std::uint64_t per_seq = it->get<std::uint64_t>();
    if (s.context) {  // the server fails a request that outgrows its slot: this batch does not run
      slot_refusal = "sequences of " + std::to_string(context) + " tokens exceed the " + std::to_string(per_seq) +
                     " one llama.cpp slot holds (--ctx-size " + std::to_string(engine_length) + " split over " +
                     e.plan.engine_view.value("n_seq_max", nlohmann::json(0)).dump() + " sequences, -np)";
    } else {
      context = per_seq;
      e.capped_context = "without --context, sequences of " + std::to_string(context) +
                         " tokens: llama.cpp splits --ctx-size over its -np sequences";
    }
  }
  // The configuration alone is planned only when the workload does not fit: a batch only adds
  // checks to the engine's (pool, one max-length request), so an accepted workload implies an
  // accepted configuration — and this halves the plans of a fitting `check`.
  std::string refusal = slot_refusal;
  if (refusal.empty() && !e.plan.fits)
    if (const memory::MemoryPlan config = session.plan(s.gpu, s.args, s.weights, config_only); !config.fits)
      refusal = config.reason;
  // Sequences shorter than the engine's maximum: their KV comes from a plan at their length.
  std::optional<memory::MemoryPlan> kv_plan;
  if (context != engine_length)
    kv_plan = session.plan(s.gpu, session.without_context(s.args), s.weights, memory::Workload{batch, context});
  e.fit = assess_fit(e.plan, refusal, batch, context, policy, bounds,
                     kv_plan ? &*kv_plan : nullptr);
  return e;
}

}  // namespace vramplan::plan
