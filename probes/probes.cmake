# vramplan-probe: measures the GPU it runs on and writes one calibration JSON
# (docs/calibration.md). Included by probes/CMakeLists.txt once CUDA + cuBLASLt are found.
#
# Architectures: sm_80 (A100) and sm_90 (H100/H200) machine code, plus compute_90 PTX that the
# driver JIT-compiles on newer cards. Kept short so the 2-core CI builds stay fast; add more with
#   -DVRAMPLAN_PROBE_CUDA_ARCHITECTURES="80;89;90"
set(VRAMPLAN_PROBE_CUDA_ARCHITECTURES "80-real;90" CACHE STRING "CUDA architectures for vramplan-probe")

file(GLOB VRAMPLAN_PROBE_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cu)
add_executable(vramplan-probe ${VRAMPLAN_PROBE_SOURCES})
set_target_properties(vramplan-probe PROPERTIES
  CUDA_ARCHITECTURES "${VRAMPLAN_PROBE_CUDA_ARCHITECTURES}"
  CUDA_STANDARD 17
  CUDA_STANDARD_REQUIRED ON
  CUDA_RUNTIME_LIBRARY Static)
target_include_directories(vramplan-probe PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
# cudart is static (it loads libcuda itself, so the program starts without a driver and can say
# "no CUDA device"); libcuda and NVML are reached through cudaGetDriverEntryPointByVersion and
# dlopen for the same reason.
target_link_libraries(vramplan-probe PRIVATE vramplan_core CUDA::cublasLt CUDA::cublas
  CUDA::cudart_static ${CMAKE_DL_LIBS})
# The project's warning set, for host C++ only (nvcc takes a different flag syntax).
target_compile_options(vramplan-probe PRIVATE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall>)
target_compile_definitions(vramplan-probe PRIVATE VRAMPLAN_VERSION="${PROJECT_VERSION}")

# Kernel correctness (small GEMMs and the bandwidth kernels against CPU references) whenever a
# GPU is present; on a machine without one the probe exits 69 and ctest reports the test skipped.
if(VRAMPLAN_BUILD_TESTS)
  add_test(NAME probe_self_test COMMAND vramplan-probe --self-test)
  set_tests_properties(probe_self_test PROPERTIES SKIP_RETURN_CODE 69 TIMEOUT 120)
endif()
