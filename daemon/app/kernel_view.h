#pragma once
#include <string>
#include <variant>

#include "bpf/kernel_facts.h"
#include "core/hardened_state.h"
#include "core/kallsyms_index.h"

namespace hucprof {

// Everything `run` and `doctor` learn about the kernel before deciding anything.
struct KernelView {
  KernelFacts facts;
  KallsymsIndex kallsyms;
  HardenedUsercopyState hardened;
};

// Loads /proc/kallsyms (path overridable) and probes the kernel. Returns an error in words
// when kallsyms is unreadable or its addresses are hidden: nothing can be attributed then.
std::variant<KernelView, std::string> load_kernel_view(const std::string& kallsyms_path);

// Reads a kallsyms file; empty index if unreadable.
KallsymsIndex load_kallsyms(const std::string& path, bool* readable = nullptr);

}  // namespace hucprof
