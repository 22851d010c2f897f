# Project-wide warning and sanitizer flags, applied through one interface target.
add_library(vramplan_flags INTERFACE)
target_compile_options(vramplan_flags INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
  -Wno-sign-conversion)
if(VRAMPLAN_SANITIZE)
  target_compile_options(vramplan_flags INTERFACE -fsanitize=address,undefined
    -fno-sanitize-recover=all -fno-omit-frame-pointer -O1 -g)
  target_link_options(vramplan_flags INTERFACE -fsanitize=address,undefined)
endif()
