// The kernel's verifier accepts our programs on the running kernel. Loading does not attach, so
// this runs even where kprobes/fentry cannot attach (the kprobe program *type* exists whenever
// BPF tracing does). fentry programs need a loadable trampoline target and are covered by the
// VM tier.
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <bpf/bpf.h>

#include <bpf/libbpf.h>

#include "hucprof_abi.h"
#include "kernel_edge/kernel_facts.h"
#include "kernel_edge/libbpf_ptr.h"
#include "kernel_edge/map_sizing.h"
#include "kernel_edge/rodata_ranges.h"
#include "probe.skel.h"
#include "probe_compat.skel.h"
#include "sampler.skel.h"
#include "sampler_compat.skel.h"

namespace {

class VerifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to load BPF programs";
    if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) GTEST_SKIP() << "kernel has no BTF";
  }
};

TEST_F(VerifierTest, ProbeKprobeProgramsLoad) {
  probe_bpf* skel = probe_bpf__open();
  ASSERT_NE(skel, nullptr);
  bpf_program* prog;
  int kprobes = 0;
  bpf_object__for_each_program(prog, skel->obj) {
    bool is_kprobe = bpf_program__type(prog) == BPF_PROG_TYPE_KPROBE;
    bpf_program__set_autoload(prog, is_kprobe);
    kprobes += is_kprobe;
  }
  EXPECT_EQ(kprobes, 9);  // check (helper reads, direct loads), return, 6 sub-checks
  // A full helper array: the search's bound is the array's capacity, not 1.
  skel->rodata->nr_helper_ranges = HUC_MAX_HELPER_RANGES;
  for (uint64_t i = 0; i < HUC_MAX_HELPER_RANGES; ++i) {
    skel->rodata->helper_ranges[i] = {0xffffffff81000000ull + i * 0x1000,
                                      0xffffffff81000800ull + i * 0x1000};
  }
  // As the daemon sets them with --latency: the check leaves its site in cpu_state for the exit.
  skel->rodata->latency_enabled = true;
  skel->rodata->check_leaves_state = true;
  EXPECT_EQ(probe_bpf__load(skel), 0) << "run with LIBBPF_LOG for the verifier log";
  // How much the verifier walked for each: the cost of a load, which an emulated guest pays
  // many times over (a number to watch, not a bound).
  bpf_object__for_each_program(prog, skel->obj) {
    if (bpf_program__fd(prog) < 0) continue;
    bpf_prog_info info = {};
    __u32 size = sizeof(info);
    if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &size) == 0) {
      std::printf("%s: %u instructions verified\n", bpf_program__name(prog), info.verified_insns);
    }
  }
  probe_bpf__destroy(skel);
}

// --probe.subchecks classify: the check's program classifies the sub-checks itself (struct page,
// the task's stack, the kernel's layout), configured as the attach plan does from this kernel's
// BTF (its slab marker and struct page), and huc_read_layout fills that layout once, from the
// KASLR bases (typeless ksyms). Every vmalloc area the kernel lists in /proc/vmallocinfo must lie
// inside the vmalloc range it read.
TEST_F(VerifierTest, ProbeClassifyingSubchecksLoadsAndReadsTheKernelLayout) {
#if defined(__x86_64__)
  const hucprof::BtfPtr kernel = hucprof::load_kernel_btf();
  const hucprof::SlabMarker marker = hucprof::read_slab_marker(kernel.get());
  const hucprof::ClassifierReadiness readiness =
      hucprof::classifier_readiness(hucprof::read_page_layout(kernel.get()), marker);
  ASSERT_TRUE(marker.known()) << marker.detail;
  ASSERT_TRUE(readiness.ok) << readiness.detail;
  probe_bpf* skel = probe_bpf__open();
  ASSERT_NE(skel, nullptr);
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel->obj) {
    bpf_program__set_autoload(prog, prog == skel->progs.huc_kprobe_check_object_size ||
                                        prog == skel->progs.huc_kprobe_check_direct ||
                                        prog == skel->progs.huc_read_layout);
  }
  skel->rodata->classify_subchecks = true;
  skel->rodata->slab_page_type = static_cast<__s32>(marker.page_type);
  skel->rodata->slab_flag_bit = static_cast<__s32>(marker.flag_bit);
  skel->rodata->compound_info_mask = readiness.compound_info_mask;
  ASSERT_EQ(probe_bpf__load(skel), 0) << "run with LIBBPF_LOG for the verifier log";
  LIBBPF_OPTS(bpf_test_run_opts, run);
  ASSERT_EQ(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.huc_read_layout), &run), 0)
      << strerror(errno);
  const huc_kernel_layout layout = skel->bss->huc_layout;
  EXPECT_EQ(layout.thread_size % 4096, 0u);
  EXPECT_GE(layout.thread_size, 16384u);
  EXPECT_LT(layout.page_offset, layout.vmalloc_start);
  EXPECT_LT(layout.vmalloc_start, layout.vmalloc_end);
  EXPECT_LE(layout.vmalloc_end, layout.vmemmap);
  // vmallocinfo prints addresses with %pK: hashed at kptr_restrict=0, real for CAP_SYSLOG at 1.
  std::string kptr_restrict;
  std::getline(std::ifstream("/proc/sys/kernel/kptr_restrict"), kptr_restrict);
  if (kptr_restrict == "0") std::ofstream("/proc/sys/kernel/kptr_restrict") << "1\n";
  std::ifstream vmallocinfo("/proc/vmallocinfo");
  std::vector<std::string> lines;
  for (std::string line; std::getline(vmallocinfo, line);) lines.push_back(line);
  if (kptr_restrict == "0") std::ofstream("/proc/sys/kernel/kptr_restrict") << "0\n";
  int areas = 0;
  for (const std::string& line : lines) {
    // 0xffffc90000000000-0xffffc90000005000   20480 irq_init_percpu_irqstack+0x...
    uint64_t start = 0, end = 0;
    if (std::sscanf(line.c_str(), "0x%" SCNx64 "-0x%" SCNx64, &start, &end) != 2) continue;
    // The module area (from __START_KERNEL_map up) is vmalloc'ed too but outside
    // [VMALLOC_START, VMALLOC_END), where is_vmalloc_addr() looks.
    if (start >= 0xffffffff80000000ull) continue;
    ++areas;
    EXPECT_GE(start, layout.vmalloc_start) << line;
    EXPECT_LE(end, layout.vmalloc_end) << line;
  }
  EXPECT_GT(areas, 0) << "/proc/vmallocinfo listed no areas";
  probe_bpf__destroy(skel);
#else
  GTEST_SKIP() << "sub-check classification is x86_64 only";
#endif
}

TEST_F(VerifierTest, SamplerLoads) {
  sampler_bpf* skel = sampler_bpf__open();
  ASSERT_NE(skel, nullptr);
  skel->rodata->nr_check_ranges = HUC_MAX_RANGES;
  for (uint64_t i = 0; i < HUC_MAX_RANGES; ++i) {
    skel->rodata->check_ranges[i] = {0xffffffff81000000ull + i * 0x1000,
                                     0xffffffff81000800ull + i * 0x1000};
  }
  EXPECT_EQ(sampler_bpf__load(skel), 0);
  sampler_bpf__destroy(skel);
}

// The compat builds (no bpf_loop, the task read by helper calls: what Debian 11's 5.10 loads)
// with full range arrays. This kernel has every feature, so it checks what the verifier makes of
// the programs, not the features; the VM tier loads them on 5.10 itself.
TEST_F(VerifierTest, CompatBuildsLoad) {
  sampler_bpf* sampler =
      hucprof::open_skeleton_over<sampler_bpf, sampler_bpf__create_skeleton, sampler_bpf__destroy>(
          sampler_compat_bpf__elf_bytes);
  ASSERT_NE(sampler, nullptr);
  sampler->rodata->nr_check_ranges = HUC_MAX_RANGES;
  sampler->rodata->nr_interrupt_ranges = HUC_MAX_RANGES;
  for (uint64_t i = 0; i < HUC_MAX_RANGES; ++i) {
    sampler->rodata->check_ranges[i] = {0xffffffff81000000ull + i * 0x1000,
                                        0xffffffff81000800ull + i * 0x1000};
    sampler->rodata->interrupt_ranges[i] = {0xffffffff82000000ull + i * 0x1000,
                                            0xffffffff82000800ull + i * 0x1000};
  }
  sampler->rodata->task_stack_size = 16384;
  EXPECT_EQ(sampler_bpf__load(sampler), 0) << "run with LIBBPF_LOG for the verifier log";
  bpf_prog_info info = {};
  __u32 size = sizeof(info);
  if (bpf_obj_get_info_by_fd(bpf_program__fd(sampler->progs.huc_sample), &info, &size) == 0) {
    std::printf("sampler_compat: %u instructions verified\n", info.verified_insns);
  }
  sampler_bpf__destroy(sampler);

  probe_bpf* probe =
      hucprof::open_skeleton_over<probe_bpf, probe_bpf__create_skeleton, probe_bpf__destroy>(
          probe_compat_bpf__elf_bytes);
  ASSERT_NE(probe, nullptr);
  bpf_program* prog;
  bpf_object__for_each_program(prog, probe->obj) {
    bpf_program__set_autoload(prog, bpf_program__type(prog) == BPF_PROG_TYPE_KPROBE);
  }
  // As on 5.10: sub-checks probed, so the check leaves its task's pid for them.
  probe->rodata->check_leaves_state = true;
  probe->rodata->latency_enabled = true;
  probe->rodata->task_stack_size = 16384;
  EXPECT_EQ(probe_bpf__load(probe), 0) << "run with LIBBPF_LOG for the verifier log";
  probe_bpf__destroy(probe);
}

// `record -p/-C/-G/-- COMMAND`: every build with all of huc_followed()'s tests on and its process
// list full (rodata that is 0 lets the verifier drop the tests unseen), the probe's as probe mode
// runs them, leaving state for sub-checks and the return. Probe mode cannot attach on the
// development host: this is what is verified of its following there.
TEST_F(VerifierTest, FollowingLoadsInEveryBuild) {
  hucprof::FollowFilter follow{.cgroup_id = 12345, .tgids = {}, .cpus = {0, 1, 63, 64, 1023}};
  for (int pid = 1; pid <= HUC_MAX_FOLLOW_TGIDS; ++pid) follow.tgids.push_back(pid * 100);
  using ElfBytes = const void* (*)(size_t*);
  for (ElfBytes elf : {&sampler_bpf__elf_bytes, &sampler_compat_bpf__elf_bytes}) {
    sampler_bpf* sampler = hucprof::open_skeleton_over<sampler_bpf, sampler_bpf__create_skeleton,
                                                       sampler_bpf__destroy>(elf);
    ASSERT_NE(sampler, nullptr);
    hucprof::set_rodata_follow(*sampler->rodata, follow);
    sampler->rodata->task_stack_size = 16384;
    EXPECT_EQ(sampler_bpf__load(sampler), 0) << "run with LIBBPF_LOG for the verifier log";
    sampler_bpf__destroy(sampler);
  }
  for (ElfBytes elf : {&probe_bpf__elf_bytes, &probe_compat_bpf__elf_bytes}) {
    probe_bpf* probe =
        hucprof::open_skeleton_over<probe_bpf, probe_bpf__create_skeleton, probe_bpf__destroy>(elf);
    ASSERT_NE(probe, nullptr);
    bpf_program* prog;
    bpf_object__for_each_program(prog, probe->obj) {
      bpf_program__set_autoload(prog, bpf_program__type(prog) == BPF_PROG_TYPE_KPROBE);
    }
    hucprof::set_rodata_follow(*probe->rodata, follow);
    probe->rodata->check_leaves_state = true;
    probe->rodata->latency_enabled = true;
    probe->rodata->task_stack_size = 16384;
    EXPECT_EQ(probe_bpf__load(probe), 0) << "run with LIBBPF_LOG for the verifier log";
    probe_bpf__destroy(probe);
  }
}

// As the attach plan configures them on a kernel with bpf_mem_alloc: stack maps allocated on
// use, and without --latency no latency map (the programs that would use it are not loaded).
TEST_F(VerifierTest, LoadsWithStacksOnDemandAndNoLatencyMap) {
  sampler_bpf* sampler = sampler_bpf__open();
  ASSERT_NE(sampler, nullptr);
  sampler->rodata->nr_check_ranges = 1;
  sampler->rodata->check_ranges[0] = {0xffffffff81000000ull, 0xffffffff81001000ull};
  const hucprof::MapSizing sampler_sizing[] = {
      {sampler->maps.samples, 1024, hucprof::MapSizing::Preallocated},
      {sampler->maps.sample_stacks, 512, hucprof::MapSizing::OnDemand}};
  ASSERT_EQ(hucprof::apply_map_sizing(sampler_sizing), "");
  EXPECT_EQ(sampler_bpf__load(sampler), 0);
  EXPECT_EQ(bpf_map__max_entries(sampler->maps.sample_stacks), 512u);
  sampler_bpf__destroy(sampler);

  probe_bpf* skel = probe_bpf__open();
  ASSERT_NE(skel, nullptr);
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel->obj) {
    bpf_program__set_autoload(prog, bpf_program__type(prog) == BPF_PROG_TYPE_KPROBE);
  }
  bpf_program__set_autoload(skel->progs.huc_kretprobe_check_object_size, false);
  const hucprof::MapSizing probe_sizing[] = {
      {skel->maps.latency, 0, hucprof::MapSizing::Preallocated},
      {skel->maps.full_stacks, 512, hucprof::MapSizing::OnDemand}};
  ASSERT_EQ(hucprof::apply_map_sizing(probe_sizing), "");
  EXPECT_EQ(probe_bpf__load(skel), 0);
  EXPECT_LT(bpf_map__fd(skel->maps.latency), 0);  // never created
  probe_bpf__destroy(skel);
}

}  // namespace
