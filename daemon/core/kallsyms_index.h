#pragma once
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  std::string name;    // exact symbol name
  std::string module;  // "" for vmlinux
  uint64_t offset = 0; // address - symbol start
};

// Address → symbol index over /proc/kallsyms text symbols (t/T/w/W), modules included.
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

  size_t size() const { return symbols_.size(); }
  // True when kptr_restrict hides addresses (all zero): nothing can be resolved.
  bool addresses_hidden() const { return addresses_hidden_; }

 private:
  std::vector<KernelSymbol> symbols_;  // sorted by address
  bool addresses_hidden_ = false;
};

}  // namespace hucprof
