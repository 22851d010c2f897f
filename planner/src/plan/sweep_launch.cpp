// The launch command of each sweep row shown (issue 15, item 7: "what is rented is what was
// planned"). The sweep ranks points without planning each one in full; the rows a user sees are
// planned here as `check` plans them, and launch_command.hpp turns the plan into the command.
#include <map>
#include <memory>

#include "vramplan/core/error.hpp"
#include "vramplan/plan/session.hpp"
#include "vramplan/plan/sweep.hpp"

namespace vramplan::plan {

void attach_launch_commands(SweepResult& result, const SweepRequest& request, const DataRoot& root, std::size_t rows) {
  // Sessions by model id, with the model as the user gave it (the command names that).
  std::map<std::string, std::pair<std::string, std::unique_ptr<PlanSession>>> sessions;
  const auto session_of = [&](const std::string& id) -> std::pair<std::string, std::unique_ptr<PlanSession>>& {
    if (const auto it = sessions.find(id); it != sessions.end()) return it->second;
    for (const auto& given : request.models) {
      auto s = std::make_unique<PlanSession>(root, given, request.engine);
      const std::string sid = s->model().id;
      auto& slot = sessions[sid];
      if (!slot.second) slot = {given, std::move(s)};
      if (sid == id) return slot;
    }
    throw_internal("sweep: row model " + id + " is not among --model");
  };
  for (std::size_t i = 0; i < result.rows.size() && i < rows; ++i) {
    SweepRow& row = result.rows[i];
    auto& [given, session] = session_of(row.model);
    const GpuSpec gpu = session->gpus().resolve_one(row.gpu);
    memory::EngineArgs args = request.args;
    if (!session->tp_flag().empty()) args.erase(session->tp_flag());
    if (!session->pp_flag().empty()) args.erase(session->pp_flag());
    args = session->with_parallel(session->without_context(args), {row.tp, row.pp});
    const std::optional<std::string> weights =
        row.weights == "checkpoint" ? std::nullopt : std::optional<std::string>(row.weights);
    memory::PlanOutcome o;
    o.plan = session->plan(gpu, args, weights, {ceil_div(row.batch, row.replicas), row.context});
    o.tp = row.tp;
    o.pp = row.pp;
    row.launch = launch_command(o, args, given);
  }
}

}  // namespace vramplan::plan
