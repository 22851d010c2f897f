// main.cpp — the `vramplan` executable: fits text output to the terminal and runs the command line
// through dispatch() (dispatch.hpp), which maps errors to exit codes. Every error leaves as one line on
// stderr ("vramplan: error: ...") and a distinct exit code; with --json the same error is also written
// to stdout as a vramplan.error/1 object.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "dispatch.hpp"
#include "vramplan/core/table.hpp"

namespace {

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
  vramplan::set_text_width(output_width());
  return vramplan::cli::dispatch(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
