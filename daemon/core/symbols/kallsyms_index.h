#pragma once
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/symbols/source_lines.h"

namespace hucprof {

// One text symbol of /proc/kallsyms. size is the distance to the next text symbol (kallsyms
// has no sizes; perf makes the same estimate).
struct KernelSymbol {
  uint64_t address = 0;
  uint64_t size = 0;
  std::string name;    // exact, e.g. "check_heap_object.part.0"
  std::string module;  // "" for vmlinux, else the module name without brackets
};

struct ResolvedFrame {
  std::string name;     // exact symbol name
  std::string module;   // "" for vmlinux
  uint64_t offset = 0;  // address - symbol start
  // address - _stext for vmlinux text; 0 in modules or without _stext. The same for every boot
  // of one kernel build whatever KASLR chose, so profiles may carry it.
  uint64_t text_offset = 0;
  SourceLinesPtr source = nullptr;  // inline frames and lines from the debuginfo; null without it
};

// Address → symbol index over /proc/kallsyms text symbols (t/T/w/W), modules included; of the
// data symbols only the two that give THREAD_SIZE.
// Parsing takes a stream so tests feed it fake data.
class KallsymsIndex {
 public:
  static KallsymsIndex parse(std::istream& in);

  // The symbol containing addr, or nullopt when addr is outside every known symbol.
  std::optional<ResolvedFrame> resolve(uint64_t addr) const;
  // Every symbol whose normalized name equals `normalized` (e.g. "__check_object_size" finds
  // both "__check_object_size" and "__check_object_size.cold").
  std::vector<KernelSymbol> find_normalized(std::string_view normalized) const;
  // The symbol with exactly this name, if any.
  std::optional<KernelSymbol> find_exact(std::string_view exact) const;
  // Every vmlinux symbol whose exact name starts with `prefix` (modules are left out).
  std::vector<KernelSymbol> find_vmlinux_prefixed(std::string_view prefix) const;

  size_t size() const { return symbols_.size(); }
  // THREAD_SIZE, the size of a task's stack area, from the data symbols __start_init_task and
  // __end_init_task (CONFIG_KALLSYMS_ALL); 0 when kallsyms does not have both.
  uint64_t task_stack_size() const { return task_stack_size_; }
  // True when kptr_restrict hides addresses (all zero): nothing can be resolved.
  bool addresses_hidden() const { return addresses_hidden_; }

 private:
  // Compact on purpose: ~150k symbols stay resident for the daemon's lifetime, and a vector of
  // KernelSymbol (80 bytes and a heap name each) takes over twice the memory and spent most of
  // the parse time moving and faulting in strings. Names live back to back in names_; modules
  // are interned.
  struct Entry {
    uint64_t address = 0;
    uint64_t size = 0;
    uint32_t name_offset = 0;
    uint16_t name_length = 0;  // KSYM_NAME_LEN is 512
    uint16_t module = 0;       // index into modules_; 0 is vmlinux ("")
  };
  class Builder;

  std::string_view name_of(const Entry& e) const {
    return {names_.data() + e.name_offset, e.name_length};
  }
  KernelSymbol symbol_of(const Entry& e) const;

  std::vector<Entry> symbols_;  // sorted by address; aliases: preferred name first
  std::string names_;
  std::vector<std::string> modules_{""};
  uint64_t text_start_ = 0;  // _stext, 0 when absent
  uint64_t task_stack_size_ = 0;
  bool addresses_hidden_ = false;
};

}  // namespace hucprof
