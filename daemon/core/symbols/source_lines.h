#pragma once
#include <compare>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hucprof {

// Where in the kernel's source one address lies, as its debuginfo says: first the functions the
// compiler inlined there, innermost first, then the function the address is in. The copy
// primitives (copy_to_iter, copy_from_user, check_copy_size, ...) are inline, so kallsyms only
// knows the function they were inlined into; these lines name them.
struct SourceLine {
  std::string function;  // as the debuginfo names it ("copy_to_iter"), no compiler suffix
  std::string file;      // as the debuginfo names it, below the build directory
  uint32_t line = 0;     // 0: the debuginfo does not say

  auto operator<=>(const SourceLine&) const = default;
};
// Innermost first; the last entry is the frame's own function (pprof's Line order).
using SourceLines = std::vector<SourceLine>;
// Shared: one copy per distinct address, held by the address cache and every frame using it.
using SourceLinesPtr = std::shared_ptr<const SourceLines>;

// Equal contents compare equal, whatever the pointers (null is no lines).
std::strong_ordering compare_source(const SourceLinesPtr& a, const SourceLinesPtr& b);

// "include/linux/uio.h:178", or the file alone when the line is unknown.
std::string file_line(const SourceLine& line);

}  // namespace hucprof
