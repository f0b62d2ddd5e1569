#pragma once
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/symbols/address_ranges.h"
#include "core/symbols/kallsyms_index.h"
#include "core/symbols/stack_profile.h"

namespace hucprof {

// The kernel code an interrupt, exception or softirq enters through. On a sampled stack, what
// lies between the leaf and such a frame ran in that interrupt, whatever it interrupted: a check
// found above it is not what the CPU was doing for the check (bpf/kernel_ranges.h). Data, so
// another entry path or architecture is a line here.
struct InterruptEntries {
  // Linker markers bracketing sections of entry code, where the kernel has them: x86 puts its
  // interrupt and exception entry stubs (asm_sysvec_*, asm_common_interrupt, asm_exc_*) between
  // __irqentry_text_start and _end, and __do_softirq between the __softirqentry_text markers.
  struct Section {
    std::string_view start, end;
  };
  std::vector<Section> sections;
  // Functions by normalized name (all their parts: handle_softirqs and handle_softirqs.cold).
  std::set<std::string, std::less<>> functions;
  // Exact-name prefixes: the x86 entry stubs, for kernels without the section markers.
  std::vector<std::string_view> prefixes;

  static const InterruptEntries& defaults();

  // By name alone (normalized or exact), for stacks without addresses (a profile read from a
  // file, a flame graph): the functions and prefixes. A section is only known by address; what
  // x86's sections hold is named by the prefixes as well.
  bool names(std::string_view function) const;
};

// The entries' address ranges on this kernel, as the sampler gets them before load, and what
// they were made of, for doctor and the log.
struct InterruptRanges {
  AddressRanges ranges;
  std::vector<std::string> sections;  // "__irqentry_text" for each section found
  size_t functions = 0;               // symbols found by name or prefix
  // "2 sections (__irqentry_text, __softirqentry_text) and 42 entry functions in 8 address ranges"
  std::string summary() const;
};
InterruptRanges build_interrupt_ranges(
    const KallsymsIndex& kallsyms, const InterruptEntries& entries = InterruptEntries::defaults());

// The sampler's rule by names (leaf first): true when an interrupt entry comes before the first
// usercopy check function, so the stack's time is kernel CPU and not the check's. For profiles
// that may not have been filtered at the source (older files).
bool interrupt_before_check(const ProfileStack& stack);

}  // namespace hucprof
