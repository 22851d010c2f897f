# Every dependency comes from a Debian 12 package; a missing one stops configure and names
# the package to install (tools/setup.sh installs them all).
function(vramplan_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "vramplan: ${what} not found. Install it with: apt-get install ${package}   (or run tools/setup.sh)")
  endif()
endfunction()

find_package(nlohmann_json 3.10 QUIET)
vramplan_require(nlohmann_json_FOUND "nlohmann JSON (nlohmann_jsonConfig.cmake)" nlohmann-json3-dev)

# Static Boost (the .a ships in the same Debian package): one fewer shared object to resolve at
# start-up, which is most of what a `vramplan check` pre-flight process costs. The Python module
# links the shared one: Debian's .a is not position-independent code, which a shared module needs.
if(NOT VRAMPLAN_PYTHON)
  set(Boost_USE_STATIC_LIBS ON)
endif()
find_package(Boost 1.74 QUIET COMPONENTS program_options)
vramplan_require(Boost_PROGRAM_OPTIONS_FOUND "Boost.Program_options" libboost-program-options-dev)

find_package(Eigen3 3.3 QUIET NO_MODULE)
vramplan_require(Eigen3_FOUND "Eigen3 (Eigen3Config.cmake)" libeigen3-dev)

if(VRAMPLAN_BUILD_TESTS)
  find_package(GTest QUIET)
  vramplan_require(GTest_FOUND "GoogleTest (GTestConfig.cmake)" "googletest libgtest-dev")
endif()

if(VRAMPLAN_BUILD_BENCH)
  find_package(benchmark QUIET)
  vramplan_require(benchmark_FOUND "Google Benchmark (benchmarkConfig.cmake)" libbenchmark-dev)
endif()
