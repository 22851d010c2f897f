// main.cpp — the `vramplan` executable: dispatches to a subcommand and maps errors to exit codes.
// Every error leaves as one line on stderr ("vramplan: error: ...") and a distinct exit code;
// with --json the same error is also written to stdout as a vramplan.error/1 object.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "vramplan/io/engine_log.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/report/table.hpp"

namespace {

using namespace vramplan;

void print_usage(std::ostream& out) {
  out << "usage: vramplan <command> [options]   (vramplan <command> --help for its options)\n\n"
         "commands:\n";
  for (const auto& c : cli::commands()) {
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
int report(ErrorKind kind, const std::string& message, bool json, int code = -1, std::string kind_name = "") {
  if (code < 0) code = cli::exit_code_for(kind);
  if (kind_name.empty()) kind_name = std::string(error_kind_name(kind));
  std::cerr << "vramplan: error: " << message << "\n";
  if (json) {
    nlohmann::json j = {{"schema", "vramplan.error/1"},
                        {"error", {{"kind", kind_name}, {"message", message}}},
                        {"exit_code", code}};
    std::cout << j.dump(2) << "\n";
  }
  return code;
}

// The width text output is fitted to (README.md § Output width): COLUMNS when it holds a
// number, else the terminal's width when stdout is one, else 100 (piped output: files and pagers
// read it as it prints in a terminal of that common width).
std::size_t output_width() {
  if (const char* env = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const unsigned long n = std::strtoul(env, &end, 10);
    if (end != env && *end == '\0' && n > 0) return n;
  }
  winsize ws{};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 100;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + std::min(argc, 2), argv + argc);
  const bool json = wants_json(args);
  set_text_width(output_width());
  try {
    if (argc < 2) {
      print_usage(std::cerr);
      return cli::kExitUsage;
    }
    const std::string name = argv[1];
    if (name == "--help" || name == "-h" || name == "help") {
      print_usage(std::cout);
      return cli::kExitOk;
    }
    if (name == "--version") return cli::find_command("version")->run({});
    const cli::Command* command = cli::find_command(name);
    if (command == nullptr) {
      std::string known;
      for (const auto& c : cli::commands()) known += (known.empty() ? "" : ", ") + std::string(c.name);
      throw Error(ErrorKind::Usage, "unknown command '" + name + "' (known: " + known + ")");
    }
    return command->run(args);
  } catch (const UnrecognisedLog& e) {
    return report(e.kind(), e.what(), json, cli::kExitUnrecognisedLog, "unrecognised-log");
  } catch (const Error& e) {
    return report(e.kind(), e.what(), json);
  } catch (const nlohmann::json::exception& e) {
    return report(ErrorKind::Internal, std::string("internal error (a bug in vramplan): JSON: ") + e.what(), json);
  } catch (const std::bad_alloc&) {
    return report(ErrorKind::Internal, "out of memory", json);
  } catch (const std::exception& e) {
    return report(ErrorKind::Internal, std::string("internal error (a bug in vramplan): ") + e.what(), json);
  }
}
