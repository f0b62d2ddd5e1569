#include <algorithm>
#include <string_view>

#include "core/symbols/callsite_folder.h"

namespace hucprof {
namespace {

struct SyscallEntry {
  int nr;
  std::string_view name;
};

// Generated from the target's UAPI header at build time (daemon/CMakeLists.txt).
constexpr SyscallEntry kSyscalls[] = {
#include "core/syscall_table.inc"
};

// The header lists syscalls in number order; binary search relies on that.
static_assert(std::is_sorted(std::begin(kSyscalls), std::end(kSyscalls),
                             [](const SyscallEntry& a, const SyscallEntry& b) {
                               return a.nr < b.nr;
                             }));

}  // namespace

std::optional<std::string> syscall_name(int nr) {
  if (nr < 0) return std::nullopt;
  // Numbers have gaps (335..423 are unused on x86_64, 294..423 on arm64), so search rather than
  // index.
  auto it = std::lower_bound(std::begin(kSyscalls), std::end(kSyscalls), nr,
                             [](const SyscallEntry& e, int n) { return e.nr < n; });
  if (it == std::end(kSyscalls) || it->nr != nr) return std::nullopt;
  return std::string(it->name);
}

}  // namespace hucprof
