// accuracy_doc.hpp — number formatting and writing shared by the tests that generate the
// docs/accuracy*.md files (each test renders its document; VRAMPLAN_WRITE_ACCURACY_DOC=1 writes it).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "support/test_support.hpp"

namespace vramplan::test {

//! printf-formats one number ("%.2f", "%+.2f %%").
inline std::string fmt(const char* format, double v) {
  char b[48];
  std::snprintf(b, sizeof b, format, v);
  return b;
}
inline std::string f2(double v) { return fmt("%.2f", v); }
inline std::string signed_pct(double v) { return fmt("%+.2f %%", v); }
inline std::string signed_gib(double v) { return fmt("%+.2f", v); }

//! Writes docs/<name> when VRAMPLAN_WRITE_ACCURACY_DOC=1; returns whether it did.
inline bool write_accuracy_doc_if_asked(const std::string& name, const std::string& md) {
  const char* w = std::getenv("VRAMPLAN_WRITE_ACCURACY_DOC");
  if (!w || std::string(w) != "1") return false;
  std::ofstream(source_dir() / "docs" / name) << md;
  return true;
}

}  // namespace vramplan::test
