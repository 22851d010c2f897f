# Project-wide warning and sanitizer flags, applied through one interface target.
add_library(vramplan_flags INTERFACE)
# -Wno-restrict, -Wno-array-bounds, -Wno-stringop-overflow, -Wno-stringop-overread: GCC 12 reports
# impossible overlaps and sizes inside libstdc++'s std::string (operator+, insert) once it is
# inlined at -O2 (GCC bugs 105329 and 105651: false positives located in the standard headers).
target_compile_options(vramplan_flags INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
  -Wno-sign-conversion -Wno-restrict -Wno-array-bounds -Wno-stringop-overflow
  -Wno-stringop-overread)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  # The GCC-only -Wno-* above (clang builds: the sanitizer + fuzz build).
  target_compile_options(vramplan_flags INTERFACE -Wno-unknown-warning-option)
endif()
# Sanitizer builds keep line tables only (clang -gline-tables-only, GCC -g1): enough for file:line
# in every ASan / UBSan / libFuzzer stack trace, and a unity translation unit compiles 24-27 % faster
# than with full -g (45.7 -> 34.7 s GCC, 38.2 -> 33.5 s clang; objects 2-4x smaller), which is what
# keeps CI inside its 30 minutes.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(VRAMPLAN_SANITIZER_DEBUG_INFO -gline-tables-only)
else()
  set(VRAMPLAN_SANITIZER_DEBUG_INFO -g1)
endif()
# -O1 everywhere, the tests included: a test unity translation unit compiles 2.4x faster at -O0
# (clang + ASan + UBSan + coverage: 29 s against 70 s), but the sanitized suite then ran 3-4x longer
# (SimAccuracy.EveryRecordRunsToCompletion 80 -> 300 s, ReconcileLogs 18 -> 53 s): the test
# objects come first on the link line, so their unoptimised copies of shared templates (std::regex,
# nlohmann::json) replace the library's, and the records' length replay runs in test code.
if(VRAMPLAN_SANITIZE OR VRAMPLAN_FUZZ)
  target_compile_options(vramplan_flags INTERFACE -fsanitize=address,undefined
    -fno-sanitize-recover=all -fno-omit-frame-pointer -O1 ${VRAMPLAN_SANITIZER_DEBUG_INFO})
  target_link_options(vramplan_flags INTERFACE -fsanitize=address,undefined)
  # -Wno-maybe-uninitialized: at -O1 GCC 12 warns inside libstdc++'s <regex> automaton (a false
  # positive in the standard headers, not in our code).
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    target_compile_options(vramplan_flags INTERFACE -Wno-maybe-uninitialized)
  endif()
endif()

if(VRAMPLAN_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "vramplan: VRAMPLAN_FUZZ needs clang (libFuzzer): -DCMAKE_CXX_COMPILER=clang++")
  endif()
  # Coverage for libFuzzer in every library object (the fuzz executables add -fsanitize=fuzzer,
  # libFuzzer's main); in the test executable the ASan runtime's default coverage callbacks take
  # it, so one build serves both the sanitized test suite and the fuzzers
  # (tools/configure-sanitized.sh). The test executable's own objects (property
  # VRAMPLAN_NO_FUZZ_COVERAGE) are no fuzzer's: they skip the instrumentation, 18 % of their compile
  # time (a test unity translation unit: 70 -> 57 s).
  target_compile_options(vramplan_flags INTERFACE
    $<$<NOT:$<BOOL:$<TARGET_PROPERTY:VRAMPLAN_NO_FUZZ_COVERAGE>>>:-fsanitize=fuzzer-no-link>)
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
