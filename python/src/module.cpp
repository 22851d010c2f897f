// module.cpp — vramplan._core: the `vramplan` command line as a function call, for the Python package
// (python/vramplan/__init__.py builds the argv from keyword arguments; docs/python.md). It runs the same
// dispatch() as the executable, with output captured into strings: the library never prints or exits.
// Calls hold the GIL, so they are serialised (ScopedStreams redirects one run at a time).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "cli_common.hpp"
#include "dispatch.hpp"
#include "exit_codes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/memory/flag_equivalents.hpp"

namespace py = pybind11;
using namespace vramplan;

PYBIND11_MODULE(_core, m) {
  m.doc() = "vramplan's command line as a function call (use the vramplan package, not this module)";

  // Raised by options() when a command cannot even declare its options (unknown command or
  // engine): the package then runs the command itself, which reports the error as the CLI does.
  py::register_exception<Error>(m, "OptionsError");

  m.def(
      "run",
      [](const std::vector<std::string>& argv) {
        const cli::CapturedRun r = cli::run_captured(argv);
        return py::make_tuple(r.exit_code, py::bytes(r.out), py::bytes(r.err));
      },
      py::arg("argv"), "Runs argv (command first) as `vramplan` would: (exit code, stdout bytes, stderr bytes).");

  m.def(
      "options",
      [](const std::vector<std::string>& argv) {
        py::list rows;
        for (const auto& o : cli::declared_options(argv)) rows.append(py::make_tuple(o.name, o.is_switch, o.repeatable));
        return rows;
      },
      py::arg("argv"), "The options argv's command declares: [(long name, is switch, repeatable)].");

  m.def(
      "flag_hint",
      [](const std::string& flag, const std::string& engine) {
        return memory::foreign_flag_hint(flag, engine, cli::data_root().data());
      },
      py::arg("flag"), py::arg("engine"),
      "The CLI's clause for an engine flag `engine` lacks ('; --max-num-seqs is a flag of vllm, ...'), or ''.");

  m.def(
      "error_exits",
      [] {
        py::dict rows;
        for (const auto& e : cli::error_exits()) rows[py::str(std::string(e.kind))] = e.exit_code;
        return rows;
      },
      "planner/cli/exit_codes.cpp's table: {error kind: exit code}.");

  m.def(
      "look_for_data_in", [](const std::string& folder) { cli::look_for_data_in(folder); }, py::arg("folder"),
      "Where the catalogue (data/, models/) is when VRAMPLAN_DATA is not set.");
}
