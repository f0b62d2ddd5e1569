#include "core/symbols/callsite_folder.h"

#include <array>
#include <utility>
#include <vector>

#include "core/symbols/symbol_name.h"

namespace hucprof {
namespace {

constexpr std::string_view kTruncated = "[truncated]";
constexpr std::string_view kNoSyscall = "none";

// SYSCALL_DEFINE stubs: their suffix is exactly the syscall's name, so they win when present.
// x86_64 and arm64 (__arm64_sys_X; AArch32 tasks enter through __arm64_compat_sys_X).
constexpr std::array<std::string_view, 10> kEntryStubPrefixes = {
    "__x64_sys_",       "__ia32_sys_",       "__arm64_sys_",       "__do_sys_",
    "__se_sys_",        "__x64_compat_sys_", "__ia32_compat_sys_", "__arm64_compat_sys_",
    "__do_compat_sys_", "__se_compat_sys_",
};
// Shared implementations behind the stubs (__sys_recvfrom serves recvfrom and recv): only a
// hint, used when the stub was inlined away or the stack was cut.
constexpr std::array<std::string_view, 3> kImplementationPrefixes = {"__sys_", "ksys_", "do_sys_"};

template <size_t N>
std::string_view syscall_suffix(std::string_view name,
                                const std::array<std::string_view, N>& prefixes) {
  for (std::string_view prefix : prefixes) {
    if (name.size() > prefix.size() && name.starts_with(prefix)) {
      return name.substr(prefix.size());
    }
  }
  return {};
}

// Outermost match wins: an inner __sys_X may serve a different outer syscall (socketcall).
template <size_t N>
std::string_view outermost_syscall(std::span<const std::string_view> frames,
                                   const std::array<std::string_view, N>& prefixes) {
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    std::string_view name = syscall_suffix(*it, prefixes);
    if (!name.empty()) return name;
  }
  return {};
}

}  // namespace

CallsiteFolder::CallsiteFolder(FoldingRules rules) : rules_(std::move(rules)) {}

FoldedCallsite CallsiteFolder::fold(std::span<const std::string> frames_leaf_first) const {
  std::vector<std::string_view> frames;
  frames.reserve(frames_leaf_first.size());
  for (const std::string& f : frames_leaf_first) frames.push_back(normalize_symbol(f));

  FoldedCallsite folded;

  // Everything up to the outermost check frame is the check's own cost, whatever it calls
  // (spinlocks, rb-tree walks); the innermost check frame says which part of it ran.
  size_t first_above_checks = 0;
  bool check_seen = false;
  for (size_t i = 0; i < frames.size(); ++i) {
    auto kind = rules_.check_functions.find(frames[i]);
    if (kind == rules_.check_functions.end()) continue;
    if (!check_seen) folded.step = kind->second;
    check_seen = true;
    first_above_checks = i + 1;
  }

  size_t site = first_above_checks;
  while (site < frames.size() && rules_.copy_helpers.contains(frames[site])) ++site;
  if (site < frames.size()) {
    folded.callsite = frames[site];
  } else {
    folded.callsite = kTruncated;
    folded.truncated = true;
  }

  std::string_view syscall = outermost_syscall(frames, kEntryStubPrefixes);
  if (syscall.empty()) syscall = outermost_syscall(frames, kImplementationPrefixes);
  folded.syscall = syscall.empty() ? kNoSyscall : syscall;
  return folded;
}

}  // namespace hucprof
