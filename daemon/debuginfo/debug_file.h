#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "core/base/result.h"
#include "core/base/unique_fd.h"
#include "core/symbols/source_lines.h"
#include "debuginfo/dwarf_lines.h"

struct Elf;
struct Dwfl;
struct Dwfl_Module;

namespace hucprof {

// A debuginfo file is mapped, never read whole: Debian's vmlinux with DWARF is 633 MB for 6.1
// and ~1 GB for 6.12, Fedora's under 1 GB; a file larger than this is refused unopened.
inline constexpr uint64_t kMaxDebugFileBytes = uint64_t{4} << 30;
// What libdw and libdwfl inflate into memory, whole, for a file with compressed sections
// (a kernel built with CONFIG_DEBUG_INFO_COMPRESSED) or a module file compressed whole
// (Ubuntu's .ko.zst): past this the file is refused before anything inflates.
inline constexpr uint64_t kMaxInflatedDebugBytes = uint64_t{1} << 30;

// What a debuginfo file says it is, read without touching its DWARF: enough to accept or refuse
// it before anything else.
struct DebugFileFacts {
  std::string build_id;    // GNU build-id in hex, "" when it has none
  bool has_dwarf = false;  // a .debug_info section with contents
};

// vmlinux with debuginfo (Debian's 633 MB for 6.1): mapped read-only, never read into memory.
// Lookups fault in the pages they touch (with the kernel's fault-around, ~110 MB for the first
// one); end_batch() gives them back, so only the parsed units stay resident.
class VmlinuxFile {
 public:
  static Result<std::unique_ptr<VmlinuxFile>> open(const std::string& path);
  ~VmlinuxFile();
  VmlinuxFile(const VmlinuxFile&) = delete;
  VmlinuxFile& operator=(const VmlinuxFile&) = delete;

  const DebugFileFacts& facts() const { return facts_; }
  // The chain at _stext + text_offset of this file; null outside its DWARF.
  SourceLinesPtr lines(uint64_t text_offset);
  // After a drain's lookups: the file's pages leave the RSS (the page cache keeps them, so the
  // next lookup is a minor fault); past kMaxUnits parsed units, the parse goes too.
  void end_batch();
  // Compilation units parsed since the file was opened, those parsed again after end_batch()
  // dropped them included; and how many are parsed now (at most kMaxUnits after end_batch()).
  size_t parsed_units() const { return units_.indexed(); }
  size_t resident_units() const { return units_.units(); }

  static constexpr size_t kMaxUnits = 96;

 private:
  VmlinuxFile() = default;
  bool begin_dwarf();

  UniqueFd fd_;
  Elf* elf_ = nullptr;
  struct Dwarf* dwarf_ = nullptr;
  bool dwarf_failed_ = false;
  char* mapped_ = nullptr;
  size_t mapped_size_ = 0;
  uint64_t text_start_ = 0;  // the file's _stext, 0 until found
  bool text_start_read_ = false;
  DebugFileFacts facts_;
  UnitLines units_;
};

// A module's debuginfo (Debian's and Ubuntu's unstripped .ko, Fedora's .ko.debug): relocatable,
// so libdwfl lays its sections out and relocates its DWARF. Addresses are found by symbol, as
// a module's load address changes with every load.
class ModuleFile {
 public:
  static Result<std::unique_ptr<ModuleFile>> open(const std::string& path);
  ~ModuleFile();
  ModuleFile(const ModuleFile&) = delete;
  ModuleFile& operator=(const ModuleFile&) = delete;

  const DebugFileFacts& facts() const { return facts_; }
  // The chain at symbol + offset; null when the symbol is not in the file (or not once).
  SourceLinesPtr lines(const std::string& symbol, uint64_t offset);

 private:
  ModuleFile() = default;
  void index_symbols();

  Dwfl* dwfl_ = nullptr;
  Dwfl_Module* module_ = nullptr;
  DebugFileFacts facts_;
  bool symbols_indexed_ = false;
  std::unordered_map<std::string, uint64_t> symbols_;  // function symbols named once: address
  UnitLines units_;
};

}  // namespace hucprof
