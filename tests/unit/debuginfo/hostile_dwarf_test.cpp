// A debuginfo file from outside is trusted only as far as its build-id: what its DWARF says is
// bounded where hucprof takes it in. The fixture (tests/lib/hostile_dwarf.py, gcc -g -O2) has a
// 4 MiB function name, a 100 KiB file name, a name of control bytes and invalid UTF-8, a
// 300-level inline chain and 20 000 DIEs ahead of an inlined call; binutils' addr2line says what
// the file holds, and hucprof's answers are held against it and against the bounds. Then files
// that would inflate to gigabytes (compressed sections, a zstd module) and files that are not
// regular files.
#include <fcntl.h>
#include <gelf.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "binutils.h"
#include "build_id_notes.h"
#include "config_file_fixture.h"
#include "debuginfo/debug_file.h"
#include "debuginfo/dwarf_lines.h"
#include "debuginfo/kernel_debuginfo.h"

namespace hucprof {
namespace {

namespace fs = std::filesystem;

// addr2line -i -f: the functions of the inline chain at one address, innermost first.
std::vector<std::string> addr2line_functions(const std::string& elf, uint64_t addr) {
  char hex[32];
  std::snprintf(hex, sizeof(hex), "0x%llx", static_cast<unsigned long long>(addr));
  std::istringstream in(
      command_output(std::string(HUC_ADDR2LINE) + " -i -f -e " + elf + " " + hex));
  std::vector<std::string> out;
  for (std::string function, where; std::getline(in, function) && std::getline(in, where);) {
    out.push_back(function);
  }
  return out;
}

bool valid_utf8_without_controls(const std::string& s) {
  // By hand from RFC 3629's table, apart from hucprof's own decoder.
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    if (n == 1 && (b < 0x20 || b == 0x7f)) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    if (n == 2 && b < 0xC2) return false;
    if (n == 2 && b == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) return false;  // C1
    i += n;
  }
  return true;
}

struct HostileDwarf : ::testing::Test {
  void SetUp() override {
    if (std::string(HUC_ADDR2LINE).empty()) {
      GTEST_SKIP() << "cross build: the host's addr2line is not asked from qemu";
    }
    syms = nm_symbols(HUC_NM, HUC_HOSTILE_ELF);
    ASSERT_TRUE(syms.contains("_stext") && syms.contains("hostile_outer") &&
                syms.contains("wide_outer"));
    auto opened = VmlinuxFile::open(HUC_HOSTILE_ELF);
    ASSERT_TRUE(opened.ok()) << opened.error().text;
    file = std::move(opened).value();
  }
  // An address inside the innermost inlined call of `function` (its .skip, after the entry).
  uint64_t deep_in(const std::string& function) { return syms[function] + 8; }
  SourceLinesPtr lines_at(uint64_t addr) { return file->lines(addr - syms["_stext"]); }

  std::map<std::string, uint64_t> syms;
  std::unique_ptr<VmlinuxFile> file;
};

TEST_F(HostileDwarf, AChainHundredsDeepStopsAtTheBoundOutermostFirst) {
  const uint64_t at = deep_in("hostile_outer");
  const std::vector<std::string> reference = addr2line_functions(HUC_HOSTILE_ELF, at);
  ASSERT_EQ(reference.size(), 303u) << "addr2line: the function, LONG, MARKER, d0..d299";
  SourceLinesPtr lines = lines_at(at);
  ASSERT_TRUE(lines);
  ASSERT_EQ(lines->size(), DwarfBounds::kMaxInlineDepth + 1);
  // The outermost 33 of addr2line's chain, the two hostile names aside.
  const std::vector<std::string> outermost(reference.end() - 33, reference.end());
  EXPECT_EQ(lines->back().function, "hostile_outer");
  EXPECT_EQ(lines->front().function, "d29");
  for (size_t i = 0; i + 3 < lines->size(); ++i) {
    EXPECT_EQ((*lines)[i].function, outermost[i]) << i;
  }
}

TEST_F(HostileDwarf, NamesAreCutAtTheBoundAndMadePrintable) {
  SourceLinesPtr lines = lines_at(deep_in("hostile_outer"));
  ASSERT_TRUE(lines);
  ASSERT_EQ(lines->size(), 33u);
  // 4 MiB of "nxxx...": 509 bytes of it and "…" (3 bytes).
  EXPECT_EQ((*lines)[31].function, "n" + std::string(508, 'x') + "…");
  // The marker's bytes (ESC [31m, ff, fe, an overlong NUL, a surrogate, DEL, CSI), \xNN each.
  EXPECT_EQ((*lines)[30].function,
            "\\x1b[31m\\xff\\xfe\\xc0\\x80\\xed\\xa0\\x80\\x7f\\xc2\\x9bokYYYYYYYYYYYYYYY");
  size_t total = 0;
  bool long_file_seen = false;
  for (const SourceLine& l : *lines) {
    EXPECT_LE(l.function.size(), DwarfBounds::kMaxNameBytes);
    EXPECT_LE(l.file.size(), DwarfBounds::kMaxNameBytes);
    EXPECT_TRUE(valid_utf8_without_controls(l.function)) << l.function;
    EXPECT_TRUE(valid_utf8_without_controls(l.file)) << l.file;
    long_file_seen = long_file_seen || l.file.starts_with("hostile/ddd");
    total += l.function.size() + l.file.size();
  }
  EXPECT_TRUE(long_file_seen) << "the call in LONG is in the 100 KiB file";
  EXPECT_LE(total, DwarfBounds::kMaxChainNameBytes);
}

TEST_F(HostileDwarf, AScopeOfTensOfThousandsOfDiesIsLookedAtOnlyUpToTheBound) {
  const uint64_t at = syms["wide_outer"] + 8;
  const std::vector<std::string> reference = addr2line_functions(HUC_HOSTILE_ELF, at);
  ASSERT_EQ(reference, (std::vector<std::string>{"w_last", "wide_outer"}))
      << "20 000 local statics ahead of the inlined call";
  SourceLinesPtr lines = lines_at(at);
  ASSERT_TRUE(lines);
  ASSERT_EQ(lines->size(), 1u) << "the walk stopped after " << DwarfBounds::kMaxDiesPerLookup;
  EXPECT_EQ(lines->front().function, "wide_outer");
}

TEST(FitNames, CutsOnlyTheLongestNamesToOneLength) {
  SourceLines lines{{"short", "a.c", 1}, {std::string(3000, 'f'), std::string(2000, 'g'), 2}};
  fit_names(lines, 4096);
  EXPECT_EQ(lines[0].function, "short");
  EXPECT_EQ(lines[0].file, "a.c");
  // 4096 - 5 - 3 - 2000 = 2088 bytes left for the longest: cut to that.
  EXPECT_EQ(lines[1].function, std::string(2085, 'f') + "…");
  EXPECT_EQ(lines[1].file, std::string(2000, 'g')) << "under the common length: whole";
  SourceLines small{{"f", "x.c", 1}};
  fit_names(small, 4096);
  EXPECT_EQ(small[0].function, "f");
}

// The section header of `name`'s: where its compression header is, to patch the size it says.
uint64_t section_offset(const std::string& path, const char* name) {
  elf_version(EV_CURRENT);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  size_t names = 0;
  uint64_t offset = 0;
  if (elf && elf_getshdrstrndx(elf, &names) == 0) {
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr) continue;
      const char* n = elf_strptr(elf, names, shdr.sh_name);
      if (n && std::string(n) == name) offset = shdr.sh_offset;
    }
  }
  if (elf) elf_end(elf);
  ::close(fd);
  return offset;
}

// A per-test directory (dir_) to put files in.
struct HostileFiles : ConfigFileTest {
  std::string path(const std::string& name) { return (dir_ / name).string(); }
};

TEST_F(HostileFiles, CompressedSectionsThatWouldInflatePastTheBoundAreRefused) {
  if (std::string(HUC_OBJCOPY).empty()) GTEST_SKIP() << "cross build: no host objcopy";
  const std::string compressed = path("zdebug");
  ASSERT_EQ(std::system((std::string(HUC_OBJCOPY) + " --compress-debug-sections=zlib " +
                         HUC_INLINE_ELF + " " + compressed)
                            .c_str()),
            0);
  auto fine = VmlinuxFile::open(compressed);
  ASSERT_TRUE(fine.ok()) << fine.error().text;
  EXPECT_TRUE(fine.value()->facts().has_dwarf);
  // Elf64_Chdr: ch_type, ch_reserved, then ch_size, the size inflated.
  const uint64_t chdr = section_offset(compressed, ".debug_info");
  ASSERT_NE(chdr, 0u);
  const uint64_t claimed = uint64_t{3} << 30;
  const int fd = ::open(compressed.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_EQ(::pwrite(fd, &claimed, sizeof(claimed), static_cast<off_t>(chdr + 8)), 8);
  ::close(fd);
  for (auto error :
       {VmlinuxFile::open(compressed).error().text, ModuleFile::open(compressed).error().text}) {
    EXPECT_THAT(error, ::testing::StartsWith("its compressed sections inflate to 32"));
    EXPECT_THAT(error, ::testing::HasSubstr("more than the 1073741824 hucprof inflates"));
  }
}

TEST_F(HostileFiles, AZstdModuleWhoseBlocksCouldInflatePastTheBoundIsRefused) {
  // RFC 8878 by hand: a frame (single segment, 8-byte content size claiming 16 bytes), then 600
  // RLE blocks of 2 MiB - 1 each: 1.2 GiB from 2.4 kB.
  std::string bomb("\x28\xb5\x2f\xfd", 4);
  bomb += static_cast<char>(0xE0);  // content size flag 3 (8 bytes), single segment
  bomb += std::string("\x10\0\0\0\0\0\0\0", 8);
  const uint32_t block = ((1u << 21) - 1) << 3 | 1u << 1;  // size, type RLE
  for (int i = 0; i < 600; ++i) {
    const uint32_t header = block | (i == 599 ? 1u : 0u);
    bomb += std::string(reinterpret_cast<const char*>(&header), 3);
    bomb += 'z';
  }
  std::ofstream(path("bomb.ko.zst"), std::ios::binary) << bomb;
  EXPECT_EQ(ModuleFile::open(path("bomb.ko.zst")).error().text,
            "its zstd blocks may inflate to 1258290600 bytes, more than the 1073741824 hucprof "
            "inflates (decompress it once: objcopy --decompress-debug-sections, or zstd -d)");
  std::ofstream(path("m.ko.xz"), std::ios::binary) << std::string(
      "\xfd"
      "7zXZ\0\0\0\0",
      10);
  EXPECT_EQ(ModuleFile::open(path("m.ko.xz")).error().text,
            "compressed with xz: hucprof reads a module's debuginfo uncompressed or "
            "zstd-compressed");
}

TEST_F(HostileFiles, NoCandidateThatIsNotARegularFileIsOpened) {
  // FIFOs at every place the search looks for vmlinux and for a module: opening one for reading
  // would wait for a writer for ever.
  const std::string release = "6.1.0-test";
  const std::string build_id = "00112233445566778899aabbccddeeff00112233";
  for (const std::string& p : std::vector<std::string>{
           "boot/vmlinux-" + release, "lib/modules/" + release + "/vmlinux", "vmlinux-" + release,
           ".build-id/00/112233445566778899aabbccddeeff00112233.debug",
           "boot/vmlinux-" + release + ".debug", "vmlinux", "usr/lib/debug/boot/vmlinux-" + release,
           ".build-id/d4/514c0c8789c5c69a83c5762ad58b0f43a5d94e.debug"}) {
    fs::create_directories((dir_ / p).parent_path());
    ASSERT_EQ(::mkfifo((dir_ / p).c_str(), 0600), 0) << p;
  }
  fs::create_directories(dir_ / "sys/inline_mod/notes");
  std::ofstream(dir_ / "sys/inline_mod/notes/.note.gnu.build-id", std::ios::binary)
      << notes_with("d4514c0c8789c5c69a83c5762ad58b0f43a5d94e");
  std::ofstream(dir_ / "notes", std::ios::binary) << notes_with(build_id);
  DebuginfoSettings s;
  s.path = dir_.string();
  s.release = release;
  s.kernel_notes = path("notes");
  s.sys_module = path("sys");
  s.os_release = path("none");
  auto debuginfo = KernelDebuginfo::find(s, true);
  EXPECT_FALSE(debuginfo->ready());
  size_t fifos = 0;
  for (const CandidateCheck& c : debuginfo->report().looked) {
    if (c.outcome == CandidateCheck::Absent) continue;
    ++fifos;
    EXPECT_EQ(c.outcome, CandidateCheck::Unreadable) << c.path;
    EXPECT_EQ(describe(c, build_id), c.path + ": cannot be read: not a regular file");
  }
  EXPECT_EQ(fifos, 7u);
  const auto modules = debuginfo->check_modules({"inline_mod"});
  ASSERT_EQ(modules.size(), 1u);
  EXPECT_THAT(modules[0].problem, ::testing::EndsWith(": cannot be read: not a regular file"));
}

TEST_F(HostileFiles, ALinkLoopIsNamedAsOneNotAsAbsent) {
  fs::create_symlink(dir_ / "loop", dir_ / "loop");
  std::ofstream(dir_ / "notes", std::ios::binary)
      << notes_with("00112233445566778899aabbccddeeff00112233");
  DebuginfoSettings s;
  s.path = path("loop");
  s.release = "6.1.0-test";
  s.kernel_notes = path("notes");
  s.os_release = path("none");
  auto debuginfo = KernelDebuginfo::find(s, true);
  ASSERT_EQ(debuginfo->report().looked.size(), 1u);
  EXPECT_EQ(describe(debuginfo->report().looked[0], ""),
            path("loop") + ": cannot be read: Too many levels of symbolic links");
}

}  // namespace
}  // namespace hucprof
