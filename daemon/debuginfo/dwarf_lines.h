#pragma once
#include <elfutils/libdw.h>

#include <cstddef>
#include <map>
#include <optional>
#include <vector>

#include "core/source_lines.h"

namespace hucprof {

// The inline chain at one address of a compilation unit, as addr2line -i prints it: the
// innermost function with the line the line table gives, then each caller with the line its
// inlined call is on (DW_AT_call_file, DW_AT_call_line), last the real function.
//
// libdw's dwarf_getscopes walks a unit's whole DIE tree from its root for every address (3 ms
// each in a big vmlinux unit); this index finds the function by its address range once per unit
// and walks only that function's nested scopes.
class UnitLines {
 public:
  // Indexed once per unit, on first use; holds nothing but DIE offsets and ranges.
  SourceLinesPtr lines(Dwarf_Die* unit, Dwarf_Addr pc);
  size_t units() const { return units_.size(); }  // indexed now
  size_t indexed() const { return indexed_; }     // indexed in all, again after a clear()
  void clear() { units_.clear(); }

 private:
  struct Range {
    Dwarf_Addr low = 0, high = 0;  // [low, high)
    Dwarf_Off function = 0;        // the DW_TAG_subprogram's DIE offset
  };
  struct Unit {
    std::vector<Range> ranges;  // by low
  };
  const Unit& unit(Dwarf_Die* die);
  std::optional<Dwarf_Off> function_at(const Unit& u, Dwarf_Addr pc) const;

  std::map<Dwarf_Off, Unit> units_;
  size_t indexed_ = 0;
};

// A source file name as hucprof shows it: the path below the build directory
// ("include/linux/uio.h"), not the build machine's absolute one.
std::string source_path(const char* file, const char* comp_dir);

}  // namespace hucprof
