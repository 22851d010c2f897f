// vramplan/io/data_root.hpp — where the catalogues (data/, models/) are found at run time.
//
// Order: the VRAMPLAN_DATA environment variable (a folder holding data/ and models/, e.g. a
// source checkout), then <executable dir>/../share/vramplan, which is both the build tree layout
// (<build>/bin/vramplan + <build>/share/vramplan) and the installed one (<prefix>/bin + <prefix>/share).
// The Python module (python/, docs/python.md) names its package folder instead of an executable's.
#pragma once

#include <filesystem>

namespace vramplan {

struct DataRoot {
  std::filesystem::path root;  //!< folder holding data/ and models/

  std::filesystem::path data() const { return root / "data"; }
  std::filesystem::path models() const { return root / "models"; }
  std::filesystem::path data_file(const std::filesystem::path& name) const { return data() / name; }
};

//! Finds the data root for the running executable. Throws Error(Io) naming every place it
//! looked when none holds a data/ folder.
DataRoot find_data_root();
//! The same search, starting from an explicit executable path (for tests).
DataRoot find_data_root(const std::filesystem::path& executable);
//! VRAMPLAN_DATA, else `folder` itself (the Python module's package folder, where its wheel puts data/
//! and models/).
DataRoot find_data_root_in(const std::filesystem::path& folder);

}  // namespace vramplan
