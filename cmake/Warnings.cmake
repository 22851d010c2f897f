# Project-wide warning and sanitizer flags, applied through one interface target.
add_library(vramplan_flags INTERFACE)
# -Wno-restrict, -Wno-array-bounds, -Wno-stringop-overflow, -Wno-stringop-overread: GCC 12 reports
# impossible overlaps and sizes inside libstdc++'s std::string (operator+, insert) once it is
# inlined at -O2 (GCC bugs 105329 and 105651: false positives located in the standard headers).
target_compile_options(vramplan_flags INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
  -Wno-sign-conversion -Wno-restrict -Wno-array-bounds -Wno-stringop-overflow
  -Wno-stringop-overread)
if(VRAMPLAN_SANITIZE)
  # -Wno-maybe-uninitialized: at -O1 GCC 12 warns inside libstdc++'s <regex> automaton (a false
  # positive in the standard headers, not in our code).
  target_compile_options(vramplan_flags INTERFACE -fsanitize=address,undefined
    -fno-sanitize-recover=all -fno-omit-frame-pointer -O1 -g -Wno-maybe-uninitialized)
  target_link_options(vramplan_flags INTERFACE -fsanitize=address,undefined)
endif()

if(VRAMPLAN_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "vramplan: VRAMPLAN_FUZZ needs clang (libFuzzer): -DCMAKE_CXX_COMPILER=clang++")
  endif()
  # Coverage for libFuzzer in every object; the fuzz executables add -fsanitize=fuzzer (main).
  # -Wno-unknown-warning-option: the GCC-only -Wno-* above.
  target_compile_options(vramplan_flags INTERFACE -fsanitize=fuzzer-no-link,address,undefined
    -fno-sanitize-recover=all -fno-omit-frame-pointer -O1 -g -Wno-unknown-warning-option)
  target_link_options(vramplan_flags INTERFACE -fsanitize=address,undefined)
endif()

# Precompiled headers: nlohmann/json.hpp and the standard headers almost every file includes cost
# ~0.75 s of parsing per translation unit; compiling them once keeps CI (two full builds on two
# cores) well inside its budget. VRAMPLAN_PCH=OFF turns it off.
option(VRAMPLAN_PCH "Use precompiled headers" ON)
function(vramplan_precompile target)
  if(VRAMPLAN_PCH)
    target_precompile_headers(${target} PRIVATE <nlohmann/json.hpp> <string> <string_view> <vector>
      <map> <optional> <filesystem> <algorithm> <cstdint> ${ARGN})
  endif()
endfunction()
