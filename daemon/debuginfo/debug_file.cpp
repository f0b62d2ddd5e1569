#include "debuginfo/debug_file.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/files/compressed_size.h"
#include "core/files/file_text.h"
#include "core/symbols/build_id.h"

namespace hucprof {

namespace {

std::string hex(const void* bytes, size_t size) {
  return hex_bytes(std::string_view(static_cast<const char*>(bytes), size));
}

bool has_debug_info(Elf* elf) {
  size_t names = 0;
  if (elf_getshdrstrndx(elf, &names) != 0) return false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    const char* name = elf_strptr(elf, names, shdr.sh_name);
    if (name && std::strcmp(name, ".debug_info") == 0) {
      return shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0;
    }
  }
  return false;
}

// What libdw inflates into memory when it loads the DWARF: every compressed section, whole
// (SHF_COMPRESSED sections say their size in their header, GNU .zdebug ones after "ZLIB";
// libelf inflates into a buffer of exactly that size).
uint64_t inflated_section_bytes(Elf* elf) {
  size_t names = 0;
  if (elf_getshdrstrndx(elf, &names) != 0) return 0;
  uint64_t total = 0;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS) continue;
    if (shdr.sh_flags & SHF_COMPRESSED) {
      GElf_Chdr chdr;
      if (gelf_getchdr(scn, &chdr) != nullptr) total += chdr.ch_size;
      continue;
    }
    const char* name = elf_strptr(elf, names, shdr.sh_name);
    if (name == nullptr || std::strncmp(name, ".zdebug", 7) != 0) continue;
    Elf_Data* raw = elf_rawdata(scn, nullptr);
    if (raw == nullptr || raw->d_size < 12 || std::memcmp(raw->d_buf, "ZLIB", 4) != 0) continue;
    const auto* size = static_cast<const unsigned char*>(raw->d_buf) + 4;
    uint64_t bytes = 0;
    for (int i = 0; i < 8; ++i) bytes = bytes << 8 | size[i];  // big-endian
    total += bytes;
  }
  return total;
}

// `what` says how it inflates: "its compressed sections inflate to".
std::optional<Error> too_much_to_inflate(uint64_t bytes, const char* what) {
  if (bytes <= kMaxInflatedDebugBytes) return std::nullopt;
  return Error{std::string(what) + " " + std::to_string(bytes) + " bytes, more than the " +
               std::to_string(kMaxInflatedDebugBytes) +
               " hucprof inflates (decompress it once: objcopy --decompress-debug-sections, "
               "or zstd -d)"};
}

// A module file compressed whole, which libdwfl would inflate into memory whole, unbounded:
// zstd is let through when its blocks bound what it inflates to, the other formats (no
// distribution ships module debuginfo in them) are refused.
std::optional<Error> refuse_to_inflate(int fd, uint64_t size) {
  char head[8] = {};
  const ssize_t n = ::pread(fd, head, sizeof(head), 0);
  const std::string_view compression = compression_of(std::string_view(head, n > 0 ? n : 0));
  if (compression.empty()) return std::nullopt;
  if (compression != "zstd") {
    return Error{"compressed with " + std::string(compression) +
                 ": hucprof reads a module's debuginfo uncompressed or zstd-compressed"};
  }
  void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (mapped == MAP_FAILED) return Error{std::strerror(errno)};
  const auto bound = zstd_inflated_bound(std::string_view(static_cast<const char*>(mapped), size));
  ::munmap(mapped, size);
  if (!bound) return Error{"compressed with zstd, but its frames do not parse"};
  return too_much_to_inflate(*bound, "its zstd blocks may inflate to");
}

// A symbol's value in the file's symbol table, 0 when absent.
uint64_t symbol_value(Elf* elf, const char* wanted) {
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_SYMTAB) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || shdr.sh_entsize == 0) continue;
    const size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
      const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (name && std::strcmp(name, wanted) == 0) return sym.st_value;
    }
  }
  return 0;
}

// Only the file given: no search of debug directories, no download (what is used must have
// been verified by its build-id first).
int no_other_file(Dwfl_Module*, void**, const char*, Dwarf_Addr, const char*, const char*,
                  GElf_Word, char**) {
  return -1;
}

const Dwfl_Callbacks kOfflineCallbacks = {
    nullptr,
    no_other_file,
    dwfl_offline_section_address,
    nullptr,
};

}  // namespace

Result<std::unique_ptr<VmlinuxFile>> VmlinuxFile::open(const std::string& path) {
  elf_version(EV_CURRENT);
  std::unique_ptr<VmlinuxFile> file(new VmlinuxFile());
  Result<RegularFile> opened = open_regular_file(path, kMaxDebugFileBytes);
  if (!opened.ok()) return opened.error();
  file->fd_ = std::move(opened.value().fd);
  // Mapped read-only: nothing is copied, and pages can be dropped from the RSS at any time.
  file->elf_ = elf_begin(file->fd_.get(), ELF_C_READ_MMAP, nullptr);
  if (file->elf_ == nullptr || elf_kind(file->elf_) != ELF_K_ELF) {
    return Error{"not an ELF file"};
  }
  if (auto refused = too_much_to_inflate(inflated_section_bytes(file->elf_),
                                         "its compressed sections inflate to")) {
    return *refused;
  }
  const void* id = nullptr;
  const ssize_t id_size = dwelf_elf_gnu_build_id(file->elf_, &id);
  if (id_size > 0) file->facts_.build_id = hex(id, static_cast<size_t>(id_size));
  file->facts_.has_dwarf = has_debug_info(file->elf_);
  size_t size = 0;
  file->mapped_ = elf_rawfile(file->elf_, &size);
  file->mapped_size_ = size;
  return file;
}

VmlinuxFile::~VmlinuxFile() {
  if (dwarf_) dwarf_end(dwarf_);
  if (elf_) elf_end(elf_);
}

bool VmlinuxFile::begin_dwarf() {
  if (dwarf_) return true;
  if (dwarf_failed_) return false;
  if (!text_start_read_) {
    text_start_ = symbol_value(elf_, "_stext");
    text_start_read_ = true;
  }
  dwarf_ = text_start_ ? dwarf_begin_elf(elf_, DWARF_C_READ, nullptr) : nullptr;
  dwarf_failed_ = dwarf_ == nullptr;
  return dwarf_ != nullptr;
}

SourceLinesPtr VmlinuxFile::lines(uint64_t text_offset) {
  if (!facts_.has_dwarf || !begin_dwarf()) return nullptr;
  const Dwarf_Addr pc = text_start_ + text_offset;
  Dwarf_Die unit;
  if (dwarf_addrdie(dwarf_, pc, &unit) == nullptr) return nullptr;
  return units_.lines(&unit, pc);
}

void VmlinuxFile::end_batch() {
  // MADV_DONTNEED on a read-only private file mapping only drops our page table entries: the
  // file's contents stay in the page cache and come back on the next touch.
  if (mapped_ && mapped_size_) madvise(mapped_, mapped_size_, MADV_DONTNEED);
  if (dwarf_ && units_.units() > kMaxUnits) {
    dwarf_end(dwarf_);
    dwarf_ = nullptr;
    units_.clear();
  }
}

Result<std::unique_ptr<ModuleFile>> ModuleFile::open(const std::string& path) {
  Result<RegularFile> opened = open_regular_file(path, kMaxDebugFileBytes);
  if (!opened.ok()) return opened.error();
  UniqueFd& fd = opened.value().fd;
  if (auto refused = refuse_to_inflate(fd.get(), opened.value().size)) return *refused;
  std::unique_ptr<ModuleFile> file(new ModuleFile());
  file->dwfl_ = dwfl_begin(&kOfflineCallbacks);
  if (file->dwfl_ == nullptr) return Error{dwfl_errmsg(-1)};
  // libdwfl takes the descriptor over once it has made a module of it.
  file->module_ = dwfl_report_offline(file->dwfl_, "module", path.c_str(), fd.get());
  if (file->module_ == nullptr) return Error{dwfl_errmsg(-1)};
  fd.release();
  dwfl_report_end(file->dwfl_, nullptr, nullptr);
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int id_size = dwfl_module_build_id(file->module_, &bits, &vaddr);
  if (id_size > 0) file->facts_.build_id = hex(bits, static_cast<size_t>(id_size));
  // From the section headers: loading the DWARF would relocate all of it, which only a lookup
  // needs.
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(file->module_, &bias);
  if (elf != nullptr) {
    if (auto refused = too_much_to_inflate(inflated_section_bytes(elf),
                                           "its compressed sections inflate to")) {
      return *refused;
    }
  }
  file->facts_.has_dwarf = elf != nullptr && has_debug_info(elf);
  return file;
}

ModuleFile::~ModuleFile() {
  if (dwfl_) dwfl_end(dwfl_);
}

void ModuleFile::index_symbols() {
  symbols_indexed_ = true;
  std::unordered_map<std::string, int> seen;
  const int count = dwfl_module_getsymtab(module_);
  for (int i = 0; i < count; ++i) {
    GElf_Sym sym;
    GElf_Addr addr = 0;
    GElf_Word section = 0;
    const char* name = dwfl_module_getsym_info(module_, i, &sym, &addr, &section, nullptr, nullptr);
    if (name == nullptr || GELF_ST_TYPE(sym.st_info) != STT_FUNC || section == SHN_UNDEF) {
      continue;
    }
    if (++seen[name] == 1) {
      symbols_[name] = addr;
    } else {
      symbols_.erase(name);  // two static functions of one name: kallsyms cannot say which
    }
  }
}

SourceLinesPtr ModuleFile::lines(const std::string& symbol, uint64_t offset) {
  if (!facts_.has_dwarf) return nullptr;
  if (!symbols_indexed_) index_symbols();
  auto found = symbols_.find(symbol);
  if (found == symbols_.end()) return nullptr;
  const Dwarf_Addr addr = found->second + offset;
  Dwarf_Addr bias = 0;
  Dwarf_Die* unit = dwfl_module_addrdie(module_, addr, &bias);
  if (unit == nullptr) return nullptr;
  return units_.lines(unit, addr - bias);
}

}  // namespace hucprof
