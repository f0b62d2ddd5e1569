# Instrumented builds, each in a tree of its own (the main build stays plain gcc):
#   -DHUCPROF_FUZZ=ON      clang, libFuzzer coverage + ASan + UBSan on every library; builds the
#                          fuzz/ targets (fuzz/build_fuzzers.sh).
#   -DHUCPROF_SANITIZE=ON  the unit tests under ASan + UBSan (tests/sanitize/run_unit_tier.sh).
# -fno-sanitize-recover=all: undefined behaviour stops the test instead of scrolling past.
option(HUCPROF_FUZZ "build the libFuzzer targets (clang only)" OFF)
option(HUCPROF_SANITIZE "build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

set(HUC_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
if(HUCPROF_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "HUCPROF_FUZZ needs clang (libFuzzer): -DCMAKE_CXX_COMPILER=clang++")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link ${HUC_SANITIZERS})
  add_link_options(${HUC_SANITIZERS})
elseif(HUCPROF_SANITIZE)
  add_compile_options(${HUC_SANITIZERS})
  add_link_options(${HUC_SANITIZERS})
endif()
