// vramplan/core/sizes.hpp — memory sizes for table cells.
#pragma once

#include <string>

#include "vramplan/core/bytes.hpp"

namespace vramplan {

//! A size in GiB, the unit of every memory figure, except where GiB would print as zero at
//! `decimals` places ("0.00 GiB" hid an 8 KiB norm and a 3 MiB buffer alike): then in MiB, and
//! below what MiB shows, in exact bytes. size_cell(2 GiB) == "2.00 GiB", size_cell(3 MiB) ==
//! "3.00 MiB", size_cell(8192 B) == "8,192 B".
std::string size_cell(Bytes b, int decimals = 2);

}  // namespace vramplan
