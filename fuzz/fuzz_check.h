#pragma once
// What a fuzz target asserts beyond "no crash, no sanitizer report": a property that must hold
// for every input. A failed check aborts, so libFuzzer saves the input as a crash.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#define HUC_FUZZ_CHECK(condition, what)                                                  \
  do {                                                                                   \
    if (!(condition)) {                                                                  \
      std::fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", what, __FILE__, __LINE__); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

namespace hucprof {

// Messages promise one line (README: "exit 2 with one line naming the flag").
inline bool one_line(std::string_view text) { return text.find('\n') == std::string_view::npos; }

}  // namespace hucprof
