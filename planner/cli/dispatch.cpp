#include "dispatch.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <new>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/engine_log.hpp"

namespace vramplan::cli {
namespace {

void print_usage(std::ostream& out) {
  out << "usage: vramplan <command> [options]   (vramplan <command> --help for its options)\n\n"
         "commands:\n";
  for (const auto& c : commands()) {
    std::string name(c.name);
    name.resize(std::max<std::size_t>(name.size(), 10), ' ');
    out << "  " << name << "  " << c.summary << "\n";
  }
}

bool wants_json(const std::vector<std::string>& args) {
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (args[k] == "--json" || args[k] == "--format=json") return true;
    if (args[k] == "--format" && k + 1 < args.size() && args[k + 1] == "json") return true;
  }
  return false;
}

// `code` / `kind_name` override the kind's exit code and name (an unrecognised engine log).
int report_error(ErrorKind kind, const std::string& message, bool json, int code = -1, std::string kind_name = "") {
  if (code < 0) code = exit_code_for(kind);
  if (kind_name.empty()) kind_name = std::string(error_kind_name(kind));
  // Error's own messages are escaped already; a path from the OS or a library's text is not.
  const std::string line = escape_control(message);
  err() << "vramplan: error: " << line << "\n";
  if (json) {
    nlohmann::json j = {{"schema", "vramplan.error/1"},
                        {"error", {{"kind", kind_name}, {"message", line}}},
                        {"exit_code", code}};
    out() << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  return code;
}

const Command& command_named(const std::string& name) {
  const Command* command = find_command(name);
  if (command == nullptr) {
    std::string known;
    for (const auto& c : commands()) known += (known.empty() ? "" : ", ") + std::string(c.name);
    throw Error(ErrorKind::Usage, "unknown command '" + name + "' (known: " + known + ")");
  }
  return *command;
}

}  // namespace

int dispatch(const std::vector<std::string>& argv, std::ostream& out_stream, std::ostream& err_stream) {
  const ScopedStreams streams(out_stream, err_stream);
  const std::vector<std::string> args(argv.begin() + std::min<std::size_t>(argv.size(), 1), argv.end());
  const bool json = wants_json(args);
  try {
    // No command: one error line, as every usage error (the command list is --help's).
    if (argv.empty())
      throw Error(ErrorKind::Usage, "no command given: usage: vramplan <command> [options]; 'vramplan --help' lists the commands");
    const std::string& name = argv.front();
    if (name == "--help" || name == "-h" || name == "help") {
      print_usage(out());
      return kExitOk;
    }
    if (name == "--version") return command_named("version").run({});
    return command_named(name).run(args);
  } catch (const UnrecognisedLog& e) {
    return report_error(e.kind(), e.what(), json, kExitUnrecognisedLog, "unrecognised-log");
  } catch (const Error& e) {
    return report_error(e.kind(), e.what(), json);
  } catch (const nlohmann::json::exception& e) {
    return report_error(ErrorKind::Internal, std::string("internal error (a bug in vramplan): JSON: ") + e.what(), json);
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the OS will not let us examine (a symlink loop, no permission): an I/O error on it.
    return report_error(ErrorKind::Io, (e.path1().empty() ? std::string("file") : e.path1().string()) + ": " + e.code().message(),
                        json);
  } catch (const std::bad_alloc&) {
    return report_error(ErrorKind::Internal, "out of memory", json);
  } catch (const std::exception& e) {
    return report_error(ErrorKind::Internal, std::string("internal error (a bug in vramplan): ") + e.what(), json);
  }
}

CapturedRun run_captured(const std::vector<std::string>& argv) {
  std::ostringstream out_text;
  std::ostringstream err_text;
  CapturedRun run;
  run.exit_code = dispatch(argv, out_text, err_text);
  run.out = out_text.str();
  run.err = err_text.str();
  return run;
}

std::vector<OptionInfo> declared_options(const std::vector<std::string>& argv) {
  if (argv.empty()) throw Error(ErrorKind::Usage, "no command given");
  std::vector<OptionInfo> options;
  std::ostringstream discard;
  const ScopedStreams streams(discard, discard);
  const ScopedOptionSink sink(options);
  command_named(argv.front()).run(std::vector<std::string>(argv.begin() + 1, argv.end()));
  return options;
}

}  // namespace vramplan::cli
