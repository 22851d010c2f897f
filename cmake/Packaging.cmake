# Installing and packaging. `cmake --install build --prefix P` puts the executable in P/bin, the
# catalogue (data/, models/) in P/share/vramplan — where the executable looks for it (io/data_root.cpp:
# <exe>/../share/vramplan) — and the bash completion in P/share/bash-completion/completions.
# `cpack -G DEB` (run in the build folder) makes a .deb of the same tree under /usr.
# tests/install/install_smoke.sh checks both from an unrelated folder.
install(TARGETS vramplan RUNTIME DESTINATION bin)
install(DIRECTORY data models DESTINATION share/vramplan)
install(FILES packaging/vramplan.bash DESTINATION share/bash-completion/completions RENAME vramplan)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME vramplan)
set(CPACK_PACKAGE_VENDOR "vramplan developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GPU memory capacity planner and serving simulator for transformer / LLM workloads")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "vramplan developers")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# The executable links libstdc++ and libgcc statically (planner/CMakeLists.txt): what is left is
# the C library, which dpkg-shlibdeps (Debian's dpkg-dev) states exactly when it is installed.
find_program(VRAMPLAN_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(VRAMPLAN_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6")
endif()
include(CPack)
