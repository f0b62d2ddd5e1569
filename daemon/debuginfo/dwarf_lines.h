#pragma once
#include <elfutils/libdw.h>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/symbols/source_lines.h"

namespace hucprof {

// What one lookup takes from a DWARF file, whoever made the file: a hostile one (a download is
// checked only by its build-id) costs bounded memory and time, and what hucprof writes from it
// stays readable by `hucprof report` (names of at most 1 024 bytes, valid UTF-8).
struct DwarfBounds {
  // A function or file name as shown, in bytes: the kernel's KSYM_NAME_LEN. Longer ones end
  // in "…"; bytes that are not printable UTF-8 are written \xNN (within the bound).
  static constexpr size_t kMaxNameBytes = 512;
  // All function and file names of one address's chain together: past this the longest are
  // cut to a common length. Real chains take under 2 KiB; the address cache holds 16 384.
  static constexpr size_t kMaxChainNameBytes = 4096;
  // Inlined calls in one chain (real kernels nest fewer than 20); deeper ones are not walked.
  static constexpr size_t kMaxInlineDepth = 32;
  // Scopes (inlined calls and lexical blocks) descended into, and DIEs looked at on the way,
  // for one address.
  static constexpr size_t kMaxScopeDepth = 64;
  static constexpr size_t kMaxDiesPerLookup = 16384;
  // A compilation unit's top-level DIEs walked, and address ranges kept, for its function
  // index (vmlinux's largest units have a few thousand functions).
  static constexpr size_t kMaxUnitDies = size_t{1} << 20;
  static constexpr size_t kMaxUnitRanges = size_t{1} << 18;
};

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
// ("include/linux/uio.h"), not the build machine's absolute one; bounded and printable like a
// function name (DwarfBounds).
std::string source_path(const char* file, const char* comp_dir);
// Cuts the longest names of a chain (functions and files alike) to one length, the largest that
// brings their sum within max_bytes; a cut name ends in "…". Shorter names stay whole.
void fit_names(SourceLines& lines, size_t max_bytes);
// A function's name from DWARF as hucprof shows it: "[unnamed]" for none, else bounded and
// printable (DwarfBounds).
std::string function_name(const char* name);

}  // namespace hucprof
