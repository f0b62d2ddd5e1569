#pragma once
#include <optional>
#include <string>

#include "core/base/result.h"
#include "core/kernel/attach_plan.h"
#include "core/kernel/hardened_state.h"
#include "core/symbols/kallsyms_index.h"
#include "kernel_edge/kernel_facts.h"

namespace hucprof {

// Everything `run` and `doctor` learn about the kernel before deciding anything.
inline constexpr const char* kModulesPath = "/proc/modules";

struct KernelView {
  KernelFacts facts;
  std::optional<std::string> modules;  // /proc/modules, read right before kallsyms
  KallsymsIndex kallsyms;
  HardenedUsercopyState hardened;
};

// Loads /proc/kallsyms (path overridable) and probes the kernel. Returns an error in words
// (exit 1) when kallsyms is unreadable or its addresses are hidden: nothing can be attributed
// then.
Result<KernelView> load_kernel_view(const std::string& kallsyms_path);

// Reads a kallsyms file; an empty index if unreadable, and why in `problem` (cleared when read).
KallsymsIndex load_kallsyms(const std::string& path, std::string* problem = nullptr);

// The one attach plan `run` carries out and `doctor` prints: tries a do-nothing fentry program
// on each symbol the plan may use and, when classifying sub-checks, reads how slab pages are
// marked and how struct page is laid out (the facts that depend on the options), then decides.
AttachPlan plan_attach(const KernelView& kernel, const AttachOptions& options);

}  // namespace hucprof
