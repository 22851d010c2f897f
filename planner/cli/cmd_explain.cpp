// `vramplan explain` — every number of a check with its formula and inputs: the engine's
// components (each carries its explain string), the KV per token and per sequence, and the fit
// arithmetic (needed, held, spare, the verdict), expected and upper bound.
#include <set>

#include "cli_common.hpp"
#include "commands.hpp"
#include "decision_options.hpp"
#include "exit_codes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/plan/check.hpp"
#include "vramplan/plan/explain.hpp"

namespace vramplan::cli {

int run_explain(const std::vector<std::string>& args) {
  const std::string spec = engine_spec_of(args);
  auto engine = memory::make_engine(spec, data_root().data());
  po::options_description desc("Options");
  std::set<std::string> declared;
  add_check_options(desc, declared);
  add_engine_options(desc, *engine, declared);
  add_common_options(desc, true);
  po::variables_map vm;
  if (!parse_args("explain", "--model M --gpu G [--engine E] [engine flags] [--json]", desc, args, vm)) return kExitOk;
  const auto opts = read_common_options(vm);
  const plan::CheckRequest req = read_check_request(vm, spec, *engine);
  const auto outcome = plan::run_check(req, data_root(), std::move(engine));
  // An unsupported configuration sizes nothing (plan/check.hpp): no table to explain, and the
  // exit code is check's for it (1).
  if (outcome.compat.support == compat::Support::Unsupported)
    throw Error(ErrorKind::DoesNotFit, "explain: no memory is sized for an unsupported configuration: " + outcome.line);
  const auto lines = plan::explain_lines(outcome);
  emit(opts, plan::explain_json(outcome, lines), plan::explain_text(lines, opts.format == OutputFormat::Markdown));
  return kExitOk;
}

}  // namespace vramplan::cli
