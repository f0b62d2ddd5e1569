// Each build of each BPF object calls only the helpers its declared needs name
// (daemon/core/kernel/bpf_features.cpp), per program type: those needs are what the daemon probes
// to pick a build and what doctor names when one is missing, so a helper call added to a program
// without its need would load nowhere the probes did not foresee. The reference is the objects' own
// instructions (every call of a helper, in every section of executable code), read from the ELF
// the daemon embeds.
#include <elf.h>
#include <linux/bpf.h>

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/kernel/bpf_features.h"
#include "hucprof_abi.h"
#include "kernel_edge/bpf_features.h"
#include "probe.skel.h"
#include "probe_compat.skel.h"
#include "probe_helper_reads.skel.h"
#include "sampler.skel.h"
#include "sampler_compat.skel.h"

namespace hucprof {
namespace {

// The program type of a section, by libbpf's section names; nullopt for .text (subprograms,
// called from every program of the object) and anything that is not code.
std::optional<BpfProgram> program_of_section(std::string_view name) {
  auto starts = [&](std::string_view p) { return name.substr(0, p.size()) == p; };
  if (starts("perf_event")) return BpfProgram::PerfEvent;
  if (starts("kprobe") || starts("kretprobe")) return BpfProgram::Kprobe;
  if (starts("fentry") || starts("fexit")) return BpfProgram::Fentry;
  if (starts("syscall")) return BpfProgram::Syscall;
  return std::nullopt;
}

// Helper names called per program type; .text's calls (subprograms) are added to every type whose
// sections call a subprogram.
std::map<BpfProgram, std::set<std::string>> helper_calls(const void* elf, size_t size) {
  std::map<BpfProgram, std::set<std::string>> out;
  std::set<std::string> text;
  std::set<BpfProgram> calling_text;
  const auto* bytes = static_cast<const uint8_t*>(elf);
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes, sizeof(eh));
  EXPECT_EQ(std::memcmp(eh.e_ident, ELFMAG, SELFMAG), 0);
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  EXPECT_LE(eh.e_shoff + eh.e_shnum * sizeof(Elf64_Shdr), size);
  std::memcpy(sections.data(), bytes + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
  const char* names = reinterpret_cast<const char*>(bytes + sections[eh.e_shstrndx].sh_offset);
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_type != SHT_PROGBITS || !(s.sh_flags & SHF_EXECINSTR)) continue;
    const std::string_view name = names + s.sh_name;
    std::set<std::string> calls;
    bool subprogram_calls = false;
    for (size_t off = 0; off + sizeof(bpf_insn) <= s.sh_size; off += sizeof(bpf_insn)) {
      bpf_insn insn;
      std::memcpy(&insn, bytes + s.sh_offset + off, sizeof(insn));
      if (insn.code == (BPF_JMP | BPF_CALL) && insn.src_reg == 0) {
        const char* helper = bpf_helper_name(insn.imm);
        calls.insert(helper ? helper : "#" + std::to_string(insn.imm));
      }
      subprogram_calls |= insn.code == (BPF_JMP | BPF_CALL) && insn.src_reg == BPF_PSEUDO_CALL;
    }
    if (auto program = program_of_section(name)) {
      out[*program].insert(calls.begin(), calls.end());
      if (subprogram_calls) calling_text.insert(*program);
    } else {
      EXPECT_EQ(name, ".text") << "a code section whose program type this test does not know";
      text.insert(calls.begin(), calls.end());
    }
  }
  for (BpfProgram program : calling_text) out[program].insert(text.begin(), text.end());
  return out;
}

std::set<std::string> helper_names(const std::vector<BpfFeature>& needs, BpfProgram program) {
  std::set<std::string> names;
  for (const BpfFeature& f : needs) {
    if (f.kind == BpfFeatureKind::Helper && f.program == program) names.emplace(f.name);
  }
  return names;
}

void expect_declared(const std::map<BpfProgram, std::set<std::string>>& calls,
                     const std::map<BpfProgram, std::vector<BpfFeature>>& needs,
                     const char* build) {
  for (const auto& [program, helpers] : calls) {
    auto declared = needs.find(program);
    ASSERT_NE(declared, needs.end()) << build << " has " << bpf_program_name(program)
                                     << " programs, which its needs do not cover";
    const std::set<std::string> names = helper_names(declared->second, program);
    for (const std::string& helper : helpers) {
      EXPECT_TRUE(names.contains(helper))
          << build << ": its " << bpf_program_name(program) << " programs call " << helper
          << ", which its declared needs (daemon/core/kernel/bpf_features.cpp) do not name";
    }
  }
}

TEST(BpfFeatures, SamplerBuildsCallOnlyTheHelpersTheyDeclare) {
  size_t size = 0;
  const void* loop = sampler_bpf__elf_bytes(&size);
  const auto loop_calls = helper_calls(loop, size);
  expect_declared(loop_calls, {{BpfProgram::PerfEvent, sampler_needs(SamplerBuild::Loop)}},
                  "sampler");
  const void* compat = sampler_compat_bpf__elf_bytes(&size);
  const auto compat_calls = helper_calls(compat, size);
  expect_declared(compat_calls, {{BpfProgram::PerfEvent, sampler_needs(SamplerBuild::Compat)}},
                  "sampler_compat");
  // The point of the compat build: none of the helpers 5.10 lacks.
  for (const char* helper : {"bpf_loop", "bpf_get_current_task_btf", "bpf_task_pt_regs"}) {
    EXPECT_TRUE(loop_calls.at(BpfProgram::PerfEvent).contains(helper)) << helper;
    EXPECT_FALSE(compat_calls.at(BpfProgram::PerfEvent).contains(helper)) << helper;
  }
}

TEST(BpfFeatures, ProbeBuildsCallOnlyTheHelpersTheyDeclare) {
  struct Build {
    ProbeBuild build;
    const void* (*bytes)(size_t*);
  };
  for (const Build& b : {Build{ProbeBuild::DirectReads, probe_bpf__elf_bytes},
                         Build{ProbeBuild::HelperReads, probe_helper_reads_bpf__elf_bytes},
                         Build{ProbeBuild::Compat, probe_compat_bpf__elf_bytes}}) {
    size_t size = 0;
    const void* elf = b.bytes(&size);
    auto calls = helper_calls(elf, size);
    // The syscall program (sub-check classification's layout read) is loaded only where the
    // plan classifies: its needs are classify_needs'.
    std::map<BpfProgram, std::vector<BpfFeature>> needs = {
        {BpfProgram::Kprobe, probe_needs(b.build, BpfProgram::Kprobe)},
        {BpfProgram::Fentry, probe_needs(b.build, BpfProgram::Fentry)},
        {BpfProgram::Syscall, classify_needs(BpfProgram::Kprobe)}};
    expect_declared(calls, needs, probe_build_name(b.build));
    if (b.build == ProbeBuild::Compat) {
      for (const char* helper : {"bpf_get_current_task_btf", "bpf_task_pt_regs"}) {
        EXPECT_FALSE(calls.at(BpfProgram::Kprobe).contains(helper)) << helper;
      }
    }
  }
}

TEST(BpfFeatures, HelperNamesFollowTheKernelsNumbering) {
  EXPECT_EQ(bpf_helper_id("bpf_map_lookup_elem"), BPF_FUNC_map_lookup_elem);
  EXPECT_EQ(bpf_helper_id("bpf_loop"), BPF_FUNC_loop);
  EXPECT_EQ(bpf_helper_id("bpf_task_pt_regs"), BPF_FUNC_task_pt_regs);
  EXPECT_STREQ(bpf_helper_name(BPF_FUNC_get_current_task_btf), "bpf_get_current_task_btf");
  EXPECT_EQ(bpf_helper_id("bpf_no_such_helper"), -1);
  EXPECT_EQ(bpf_helper_name(-1), nullptr);
  EXPECT_EQ(bpf_helper_name(1 << 20), nullptr);
}

// Every feature doctor lists has one key and says in words from which release it exists.
TEST(BpfFeatures, CatalogKeysAreUniqueAndEveryFeatureHasARelease) {
  std::set<std::string> keys;
  for (const BpfFeature& f : bpf_feature_catalog()) {
    EXPECT_TRUE(keys.insert(f.key()).second) << f.key();
    EXPECT_FALSE(f.since.empty()) << f.key();
    EXPECT_NE(f.words().find("(Linux " + std::string(f.since) + ")"), std::string::npos);
  }
}

}  // namespace
}  // namespace hucprof
