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
  if (result.rows.empty() || rows == 0) return;
  // One session per model, by model id, with the model as the user gave it (the command names
  // that); the first of two --model values naming the same model wins.
  std::map<std::string, std::pair<std::string, std::unique_ptr<PlanSession>>> sessions;
  for (const auto& given : request.models) {
    auto s = std::make_unique<PlanSession>(root, given, request.engine);
    const std::string id = s->model().id;
    if (!sessions.count(id)) sessions.emplace(id, std::pair{given, std::move(s)});
  }
  for (std::size_t i = 0; i < result.rows.size() && i < rows; ++i) {
    SweepRow& row = result.rows[i];
    const auto found = sessions.find(row.model);
    if (found == sessions.end()) throw_internal("sweep: row model " + row.model + " is not among --model");
    auto& [given, session] = found->second;
    const GpuSpec gpu = session->gpus().resolve_one(row.gpu);
    memory::EngineArgs args = request.args;
    if (!session->tp_flag().empty()) args.erase(session->tp_flag());
    if (!session->pp_flag().empty()) args.erase(session->pp_flag());
    args = session->with_parallel(session->without_context(args), {row.tp, row.pp});
    const std::optional<std::string> weights =
        row.weights == "checkpoint" ? std::nullopt : std::optional<std::string>(row.weights);
    row.launch = launch_command(session->plan(gpu, args, weights, {ceil_div(row.batch, row.replicas), row.context}), gpu,
                                row.tp, row.pp, args, given);
  }
}

}  // namespace vramplan::plan
