// libdw lookups against binutils' addr2line, on a program the build compiles with -g -O2
// (inline_chain.c: udp_recvmsg inlining copy_linear_skb -> copy_to_iter -> check_copy_size ->
// check_object_size): every address of udp_recvmsg, as vmlinux (ET_EXEC, by offset from _stext)
// and as a module (the object file, ET_REL, by symbol and offset); then the whole search and
// build-id check of KernelDebuginfo on the same files.
#include "debuginfo/debug_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "binutils.h"
#include "build_id_notes.h"
#include "debuginfo/kernel_debuginfo.h"

namespace hucprof {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

bool cross_build() { return std::string(HUC_ADDR2LINE).empty(); }

// addr2line -i -f -a: per address, the inline chain innermost first.
std::vector<SourceLines> addr2line(const std::string& elf, const std::vector<uint64_t>& addrs) {
  std::string command = std::string(HUC_ADDR2LINE) + " -i -f -a -e " + elf;
  for (uint64_t a : addrs) {
    char hex[32];
    std::snprintf(hex, sizeof(hex), " 0x%llx", static_cast<unsigned long long>(a));
    command += hex;
  }
  std::vector<SourceLines> out;
  std::istringstream in(command_output(command));
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("0x")) {
      out.emplace_back();
      continue;
    }
    std::string where;
    std::getline(in, where);
    if (auto d = where.find(" (discriminator"); d != std::string::npos) where.resize(d);
    const size_t colon = where.rfind(':');
    SourceLine s{line, where.substr(0, colon), 0};
    const std::string number = where.substr(colon + 1);
    s.line = number == "?" ? 0 : static_cast<uint32_t>(std::stoul(number));
    if (s.file == "??") s.file.clear();
    out.back().push_back(s);
  }
  return out;
}

// Functions and lines as addr2line's; its file is the build machine's path (the compile
// directory joined in), hucprof's the path as the debuginfo names it below that directory.
std::string differences(const SourceLines& ours, const SourceLines& ref) {
  auto text = [](const SourceLines& lines) {
    std::string out;
    for (const auto& l : lines)
      out += l.function + " " + l.file + ":" + std::to_string(l.line) + "; ";
    return out;
  };
  bool same = ours.size() == ref.size();
  for (size_t i = 0; same && i < ours.size(); ++i) {
    // addr2line joins the unit's directory and name as written ("build/../tests/x.c" when the
    // compiler was given a relative path, as ccache's base_dir makes it); the file is the same.
    // hucprof keeps the name below the build directory, as written ("../tests/x.c" then).
    const std::string file = std::filesystem::path(ref[i].file).lexically_normal().string();
    std::string tail = std::filesystem::path(ours[i].file).lexically_normal().string();
    while (tail.starts_with("../")) tail.erase(0, 3);
    same = ours[i].function == ref[i].function && ours[i].line == ref[i].line && !tail.empty() &&
           (file == tail || file.ends_with("/" + tail));
  }
  return same ? "" : "hucprof: " + text(ours) + " addr2line: " + text(ref);
}

std::vector<std::string> functions(const SourceLines& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(l.function);
  return out;
}

struct Fixture : ::testing::Test {
  void SetUp() override {
    if (cross_build()) GTEST_SKIP() << "cross build: the host's addr2line is not asked from qemu";
    syms = nm_symbols(HUC_NM, HUC_INLINE_ELF);
    ASSERT_TRUE(syms.contains("udp_recvmsg") && syms.contains("_stext") && syms.contains("main"));
    begin = syms["udp_recvmsg"];
    end = syms["main"] > begin ? syms["main"] : begin + 0x40;
    for (const auto& [name, addr] : syms) {
      if (addr > begin && addr < end) end = addr;
    }
    for (uint64_t a = begin; a < end; ++a) addrs.push_back(a);
    reference = addr2line(HUC_INLINE_ELF, addrs);
    ASSERT_EQ(reference.size(), addrs.size());
  }
  std::map<std::string, uint64_t> syms;
  uint64_t begin = 0, end = 0;
  std::vector<uint64_t> addrs;
  std::vector<SourceLines> reference;
};

using VmlinuxFileTest = Fixture;
using ModuleFileTest = Fixture;

TEST_F(VmlinuxFileTest, EveryAddressOfTheCallerGivesAddr2linesInlineChain) {
  auto opened = VmlinuxFile::open(HUC_INLINE_ELF);
  ASSERT_TRUE(opened.ok());
  auto& file = opened.value();
  EXPECT_TRUE(file->facts().has_dwarf);
  EXPECT_EQ(file->facts().build_id.size(), 40u);  // the linker's --build-id (sha1)
  size_t full_chains = 0;
  for (size_t i = 0; i < addrs.size(); ++i) {
    SourceLinesPtr lines = file->lines(addrs[i] - syms["_stext"]);
    ASSERT_TRUE(lines) << std::hex << addrs[i];
    EXPECT_EQ(differences(*lines, reference[i]), "") << "at 0x" << std::hex << addrs[i];
    if (lines->size() == 5) {
      EXPECT_THAT(functions(*lines), ElementsAre("check_object_size", "check_copy_size",
                                                 "copy_to_iter", "copy_linear_skb", "udp_recvmsg"));
      ++full_chains;
    }
    file->end_batch();  // pages given back between lookups: the next one still answers
  }
  EXPECT_GT(full_chains, 0u) << "no address of the call to __check_object_size was seen";
  EXPECT_EQ(file->lines(syms["_stext"] + 0x100000 - syms["_stext"]), nullptr);
}

TEST_F(VmlinuxFileTest, CountsTheUnitsItParsesAcrossBatches) {
  auto opened = VmlinuxFile::open(HUC_INLINE_ELF);
  ASSERT_TRUE(opened.ok());
  auto& file = opened.value();
  EXPECT_EQ(file->parsed_units(), 0u);
  // Every address of udp_recvmsg is in inline_chain.c's one unit: parsed once.
  for (uint64_t a : addrs) ASSERT_TRUE(file->lines(a - syms["_stext"]));
  EXPECT_EQ(file->parsed_units(), 1u);
  EXPECT_EQ(file->resident_units(), 1u);
  file->end_batch();  // below the bound: the parse stays, and the count with it
  EXPECT_EQ(file->parsed_units(), 1u);
  EXPECT_EQ(file->resident_units(), 1u);
}

TEST_F(ModuleFileTest, TheObjectFileAnswersBySymbolAsAModuleWould) {
  auto opened = ModuleFile::open(HUC_INLINE_OBJECT);
  ASSERT_TRUE(opened.ok());
  auto& file = opened.value();
  EXPECT_EQ(file->facts().build_id, "d4514c0c8789c5c69a83c5762ad58b0f43a5d94e");
  EXPECT_TRUE(file->facts().has_dwarf);
  for (size_t i = 0; i < addrs.size(); ++i) {
    SourceLinesPtr lines = file->lines("udp_recvmsg", addrs[i] - begin);
    ASSERT_TRUE(lines);
    EXPECT_EQ(differences(*lines, reference[i]), "")
        << "at udp_recvmsg+0x" << std::hex << addrs[i] - begin;
  }
  EXPECT_EQ(file->lines("no_such_function", 0), nullptr);
}

struct KernelDebuginfoTest : Fixture {
  void SetUp() override {
    Fixture::SetUp();
    if (IsSkipped()) return;
    dir = fs::temp_directory_path() / ("huc-debuginfo-" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "sys/module/inline_mod/notes");
    fs::create_directories(dir / "debug/lib/modules/6.1.0-test/kernel/net");
    fs::copy_file(HUC_INLINE_OBJECT, dir / "debug/lib/modules/6.1.0-test/kernel/net/inline-mod.ko");
    auto opened = VmlinuxFile::open(HUC_INLINE_ELF);
    elf_build_id = opened.value()->facts().build_id;
    write(dir / "sys/module/inline_mod/notes/.note.gnu.build-id",
          notes_with("d4514c0c8789c5c69a83c5762ad58b0f43a5d94e"));
    fs::copy_file(HUC_INLINE_ELF, dir / "debug/lib/modules/6.1.0-test/vmlinux");
  }
  void TearDown() override {
    if (!dir.empty()) fs::remove_all(dir);
  }
  static void write(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary) << bytes;
  }
  DebuginfoSettings settings(const std::string& running_build_id) {
    write(dir / "notes", notes_with(running_build_id));
    DebuginfoSettings s;
    s.path = (dir / "debug").string();
    s.release = "6.1.0-test";
    s.kernel_notes = (dir / "notes").string();
    s.sys_module = (dir / "sys/module").string();
    s.os_release = (dir / "no-os-release").string();
    return s;
  }
  fs::path dir;
  std::string elf_build_id;
};

TEST_F(KernelDebuginfoTest, AcceptsTheFileWhoseBuildIdIsTheRunningKernelsAndResolves) {
  auto debuginfo = KernelDebuginfo::find(settings(elf_build_id), true);
  ASSERT_TRUE(debuginfo->ready()) << debuginfo->report().looked.size();
  EXPECT_EQ(debuginfo->report().vmlinux, (dir / "debug/lib/modules/6.1.0-test/vmlinux").string());
  SourceAddress at;
  at.text_offset = addrs[8] - syms["_stext"];
  EXPECT_EQ(differences(*debuginfo->lines(at), reference[8]), "");

  // A module: found in the directory by its name ('-' for '_'), accepted for its build-id.
  SourceAddress in_module{"inline_mod", "udp_recvmsg", 8, 0};
  ASSERT_TRUE(debuginfo->lines(in_module));
  EXPECT_EQ(differences(*debuginfo->lines(in_module), reference[8]), "");
  const auto modules = debuginfo->check_modules({"inline_mod", "absent_mod"});
  ASSERT_EQ(modules.size(), 2u);
  EXPECT_EQ(modules[0].file,
            (dir / "debug/lib/modules/6.1.0-test/kernel/net/inline-mod.ko").string());
  EXPECT_THAT(modules[1].problem, ::testing::HasSubstr("no GNU build-id"));
}

TEST_F(KernelDebuginfoTest, RefusesAnotherBuildsFileAndSaysWhy) {
  auto debuginfo =
      KernelDebuginfo::find(settings("00112233445566778899aabbccddeeff00112233"), true);
  EXPECT_FALSE(debuginfo->ready());
  EXPECT_TRUE(debuginfo->report().vmlinux.empty());
  bool refused = false;
  for (const CandidateCheck& c : debuginfo->report().looked) {
    if (c.outcome == CandidateCheck::Mismatch) {
      refused = true;
      EXPECT_EQ(c.build_id, elf_build_id);
      EXPECT_THAT(describe(c, debuginfo->report().build_id),
                  ::testing::HasSubstr("is not the running kernel's 001122334455"));
    }
  }
  EXPECT_TRUE(refused);
  EXPECT_EQ(debuginfo->lines(SourceAddress{"", "", 0, addrs[8] - syms["_stext"]}), nullptr);
}

TEST_F(KernelDebuginfoTest, AFileGivenByPathIsTheOnlyCandidate) {
  DebuginfoSettings s = settings(elf_build_id);
  s.path = HUC_INLINE_ELF;
  auto debuginfo = KernelDebuginfo::find(s, true);
  EXPECT_TRUE(debuginfo->ready());
  ASSERT_EQ(debuginfo->report().looked.size(), 1u);
  EXPECT_EQ(debuginfo->report().looked[0].outcome, CandidateCheck::Accepted);

  s.path = "none";
  EXPECT_TRUE(KernelDebuginfo::find(s, true)->report().off);
  s.path = (dir / "missing").string();
  auto missing = KernelDebuginfo::find(s, true);
  EXPECT_FALSE(missing->ready());
  ASSERT_EQ(missing->report().looked.size(), 1u);
  EXPECT_EQ(missing->report().looked[0].outcome, CandidateCheck::Absent);
}

TEST_F(KernelDebuginfoTest, AStrippedFileIsNotDebuginfo) {
  const fs::path stripped = dir / "stripped";
  ASSERT_EQ(std::system((std::string(HUC_OBJCOPY) + " --strip-debug " + HUC_INLINE_ELF + " " +
                         stripped.string())
                            .c_str()),
            0);
  DebuginfoSettings s = settings(elf_build_id);
  s.path = stripped.string();
  auto debuginfo = KernelDebuginfo::find(s, true);
  EXPECT_FALSE(debuginfo->ready());
  EXPECT_EQ(debuginfo->report().looked.at(0).outcome, CandidateCheck::NoDwarf);
}

}  // namespace
}  // namespace hucprof
