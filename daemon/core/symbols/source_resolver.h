#pragma once
#include <compare>
#include <cstdint>
#include <functional>
#include <string>

#include "core/symbols/source_lines.h"

namespace hucprof {

// Where an address lies, as a debuginfo file can find it again: in vmlinux by its offset from
// _stext (the same on every boot of one build, whatever KASLR chose), in a module by symbol and
// offset (a module's load address changes with every load). For a return address the offset is
// already one less: its line is the call's, not the next instruction's.
struct SourceAddress {
  std::string module;        // "" for vmlinux
  std::string symbol;        // the exact kallsyms name; used for modules
  uint64_t offset = 0;       // into the symbol
  uint64_t text_offset = 0;  // from _stext; used for vmlinux

  auto operator<=>(const SourceAddress&) const = default;
};

// The kernel's debuginfo, asked one address at a time (daemon/debuginfo implements it with
// libdw). An interface so that the symbolizer is tested with fixed answers.
class SourceResolver {
 public:
  virtual ~SourceResolver() = default;
  // The inline chain and lines at `at`; null when no accepted debuginfo covers it.
  virtual SourceLinesPtr lines(const SourceAddress& at) = 0;
  // Whether it can answer yet (a download may still be on its way).
  virtual bool ready() const { return true; }
  // After a drain's lookups: what was mapped in for them may be given back.
  virtual void end_batch() {}
  // The kernel's module list changed: a module may be another build now.
  virtual void modules_changed() {}
  // True once after debuginfo arrived that was not there before (a download finished): addresses
  // that had no lines may have some now.
  virtual bool take_news() { return false; }
  // Called (from any thread) whenever take_news() has become true; null: nobody listens.
  virtual void set_news_listener(std::function<void()> listener) { (void)listener; }
  // From the first drain on, threads may start (downloads): hucprof drops its capabilities
  // before that, while it is still single-threaded.
  virtual void start_threads() {}
};

}  // namespace hucprof
