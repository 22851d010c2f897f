# Writes a CTest include file with one test per GoogleTest suite of a test executable (run with
# cmake -P after the executable links; tests/CMakeLists.txt). The sanitized build registers suites
# instead of single tests: each ASan + UBSan process start costs ~0.1-0.2 s (shadow memory, a 35 MB
# instrumented binary), which over ~1050 one-test processes was a sixth of the sanitized ctest.
#   -D EXE=<test executable> -D OUT=<file to write> -D WORKDIR=<working directory>
#   -D EXCLUDE=<gtest negative filter, ':'-separated: tests registered one by one elsewhere>
execute_process(COMMAND "${EXE}" --gtest_list_tests "--gtest_filter=-${EXCLUDE}"
  OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "GtestSuites: ${EXE} --gtest_list_tests failed (${rc})")
endif()
string(REPLACE "\n" ";" lines "${listing}")
# Suites in listing order, each with its number of tests: that count is the suite's ctest COST, so
# `ctest -j` starts the large suites first (a fresh clone has no CTestCostData.txt).
set(suites "")
foreach(line IN LISTS lines)
  # A suite line starts in column 0 and ends with '.' (a typed suite adds "  # TypeParam = ...");
  # its tests follow, indented.
  if(line MATCHES "^([^ #][^ ]*)\\.")
    set(suite "${CMAKE_MATCH_1}")
    list(APPEND suites "${suite}")
    set(count_${suite} 0)
  elseif(line MATCHES "^  [^ ]" AND DEFINED suite)
    math(EXPR count_${suite} "${count_${suite}} + 1")
  endif()
endforeach()
set(body "")
foreach(suite IN LISTS suites)
  string(APPEND body "add_test([=[${suite}]=] \"${EXE}\" [=[--gtest_filter=${suite}.*:-${EXCLUDE}]=])\n"
    "set_tests_properties([=[${suite}]=] PROPERTIES WORKING_DIRECTORY \"${WORKDIR}\" "
    "ENVIRONMENT VRAMPLAN_DATA= COST ${count_${suite}})\n")
endforeach()
file(WRITE "${OUT}" "${body}")
