#include "core/kernel/interrupt_entries.h"

#include "core/symbols/folding_rules.h"
#include "core/symbols/symbol_name.h"

namespace hucprof {

const InterruptEntries& InterruptEntries::defaults() {
  static const InterruptEntries entries{
      .sections = {{"__irqentry_text_start", "__irqentry_text_end"},
                   {"__softirqentry_text_start", "__softirqentry_text_end"}},
      .functions =
          {
              // kernel/softirq.c: softirqs run on interrupt exit (or from ksoftirqd, where no
              // check is below them); __do_softirq wraps handle_softirqs from 6.1.y/6.6 on.
              "__do_softirq",
              "handle_softirqs",
              "do_softirq_own_stack",
              "__irq_exit_rcu",
              "irq_exit_rcu",
              "irq_exit",
              // arm64, arch/arm64/kernel/entry.S and entry-common.c: an exception taken from
              // EL1 (the kernel) enters through the el1h_64_* vector and its C handler; _sync
              // are the synchronous ones (faults, BRK of a kprobe), as x86's asm_exc_*.
              "el1h_64_sync",
              "el1h_64_sync_handler",
              "el1h_64_irq",
              "el1h_64_irq_handler",
              "el1h_64_fiq",
              "el1h_64_fiq_handler",
              "el1h_64_error",
              "el1h_64_error_handler",
              "el1_interrupt",
              "call_on_irq_stack",
              // x86 with FRED (6.9+): one entry point for everything taken in the kernel.
              "asm_fred_entrypoint_kernel",
              "fred_entry_from_kernel",
          },
      .prefixes = {"asm_sysvec_", "asm_common_interrupt", "asm_spurious_interrupt", "asm_exc_"},
  };
  return entries;
}

bool InterruptEntries::names(std::string_view function) const {
  if (functions.contains(normalize_symbol(function))) return true;
  for (std::string_view prefix : prefixes) {
    if (function.starts_with(prefix)) return true;
  }
  return false;
}

std::string InterruptRanges::summary() const {
  std::string out =
      std::to_string(sections.size()) + " section" + (sections.size() == 1 ? "" : "s");
  if (!sections.empty()) {
    out += " (";
    for (size_t i = 0; i < sections.size(); ++i) out += (i ? ", " : "") + sections[i];
    out += ")";
  }
  out += " and " + std::to_string(functions) + " entry functions in " +
         std::to_string(ranges.ranges.size()) + " address ranges";
  if (ranges.overflow) out += " (" + std::to_string(ranges.overflow) + " more did not fit)";
  return out;
}

InterruptRanges build_interrupt_ranges(const KallsymsIndex& kallsyms,
                                       const InterruptEntries& entries) {
  InterruptRanges out;
  std::vector<huc_range> all;
  for (const auto& section : entries.sections) {
    auto start = kallsyms.find_exact(section.start);
    auto end = kallsyms.find_exact(section.end);
    if (!start || !end || !start->module.empty() || end->address <= start->address) continue;
    all.push_back({start->address, end->address});
    std::string name(section.start);
    out.sections.push_back(name.substr(0, name.size() - std::string_view("_start").size()));
  }
  auto add = [&](const KernelSymbol& sym) {
    if (sym.size == 0 || !sym.module.empty()) return;
    all.push_back({sym.address, sym.address + sym.size});
    ++out.functions;
  };
  for (const std::string& name : entries.functions) {
    for (const KernelSymbol& sym : kallsyms.find_normalized(name)) add(sym);
  }
  for (std::string_view prefix : entries.prefixes) {
    for (const KernelSymbol& sym : kallsyms.find_vmlinux_prefixed(prefix)) add(sym);
  }
  out.ranges = merge_address_ranges(std::move(all));
  return out;
}

bool interrupt_before_check(const ProfileStack& stack) {
  static const FoldingRules rules = FoldingRules::defaults();
  const InterruptEntries& entries = InterruptEntries::defaults();
  for (const FramePtr& frame : stack) {
    if (rules.check_functions.contains(normalize_symbol(frame->function))) return false;
    if (entries.names(frame->function)) return true;
  }
  return false;
}

}  // namespace hucprof
