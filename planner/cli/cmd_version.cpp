#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"

namespace vramplan::cli {

int run_version(const std::vector<std::string>& args) {
  po::options_description desc("Options");
  add_common_options(desc);
  po::variables_map vm;
  if (!parse_args("version", "[--json]", desc, args, vm)) return 0;
  const auto opts = read_common_options(vm);
  nlohmann::json j = {{"schema", "vramplan.version/1"}, {"version", VRAMPLAN_VERSION}};
  emit(opts, j, std::string("vramplan ") + VRAMPLAN_VERSION + "\n");
  return 0;
}

}  // namespace vramplan::cli
