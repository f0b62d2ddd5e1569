// The BPF objects and the daemon agree on every map's layout. Opening a skeleton only parses
// the ELF (no kernel involved), so this runs without root.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "hucprof_abi.h"
#include "kernel_edge/abi_checks.h"
#include "probe.skel.h"
#include "probe_compat.skel.h"
#include "probe_helper_reads.skel.h"
#include "sampler.skel.h"
#include "sampler_compat.skel.h"

namespace {

TEST(Abi, ProbeObjectMapsMatchHeader) {
  probe_bpf* skel = probe_bpf__open();
  ASSERT_NE(skel, nullptr);
  EXPECT_EQ(hucprof::check_probe_abi(skel->obj), "");
  probe_bpf__destroy(skel);
}

TEST(Abi, SamplerObjectMapsMatchHeader) {
  sampler_bpf* skel = sampler_bpf__open();
  ASSERT_NE(skel, nullptr);
  EXPECT_EQ(hucprof::check_sampler_abi(skel->obj), "");
  sampler_bpf__destroy(skel);
}

TEST(Abi, RodataRangesHoldMaxRanges) {
  probe_bpf* skel = probe_bpf__open();
  ASSERT_NE(skel, nullptr);
  EXPECT_EQ(sizeof(skel->rodata->helper_ranges), HUC_MAX_HELPER_RANGES * sizeof(huc_range));
  EXPECT_EQ(sizeof(skel->rodata->dispatcher_ranges), HUC_MAX_RANGES * sizeof(huc_range));
  probe_bpf__destroy(skel);
  sampler_bpf* sampler = sampler_bpf__open();
  ASSERT_NE(sampler, nullptr);
  EXPECT_EQ(sizeof(sampler->rodata->check_ranges), HUC_MAX_RANGES * sizeof(huc_range));
  sampler_bpf__destroy(sampler);
}

TEST(Abi, MismatchIsReportedByName) {
  sampler_bpf* skel = sampler_bpf__open();
  ASSERT_NE(skel, nullptr);
  // The probe expectations against the sampler object: its maps are not there.
  EXPECT_NE(hucprof::check_probe_abi(skel->obj).find("map sites missing"), std::string::npos);
  sampler_bpf__destroy(skel);
}

// What probe's skeleton relies on in an object it opens: each map's name and layout, each
// program's name and section, each global's name, offset and size in its section.
std::vector<std::string> skeleton_shape(const void* elf, size_t size,
                                        const char* skeleton = "probe_bpf") {
  std::vector<std::string> shape;
  // The skeleton's object name, which prefixes the global sections' maps.
  LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = skeleton);
  bpf_object* obj = bpf_object__open_mem(elf, size, &opts);
  if (!obj) return {"does not open"};
  bpf_map* map;
  bpf_object__for_each_map(map, obj) {
    shape.push_back(
        "map " + std::string(bpf_map__name(map)) + " " + std::to_string(bpf_map__type(map)) + " " +
        std::to_string(bpf_map__key_size(map)) + " " + std::to_string(bpf_map__value_size(map)) +
        " " + std::to_string(bpf_map__max_entries(map)));
  }
  bpf_program* prog;
  bpf_object__for_each_program(prog, obj) {
    shape.push_back("program " + std::string(bpf_program__name(prog)) + " " +
                    bpf_program__section_name(prog));
  }
  const btf* types = bpf_object__btf(obj);
  for (__u32 id = 1; types && id < btf__type_cnt(types); ++id) {
    const btf_type* t = btf__type_by_id(types, id);
    // .ksyms is the externs, which the skeleton does not map: the kfunc is the difference.
    if (!btf_is_datasec(t) || btf__name_by_offset(types, t->name_off) == std::string(".ksyms")) {
      continue;
    }
    const btf_var_secinfo* var = btf_var_secinfos(t);
    for (__u16 i = 0; i < btf_vlen(t); ++i, ++var) {
      shape.push_back(std::string(btf__name_by_offset(types, t->name_off)) + " " +
                      btf__name_by_offset(types, btf__type_by_id(types, var->type)->name_off) +
                      " at " + std::to_string(var->offset) + " size " + std::to_string(var->size));
    }
  }
  bpf_object__close(obj);
  return shape;
}

bool has_function(const void* elf, size_t size, const char* name) {
  bpf_object* obj = bpf_object__open_mem(elf, size, nullptr);
  if (!obj) return false;
  const bool found = btf__find_by_name_kind(bpf_object__btf(obj), name, BTF_KIND_FUNC) > 0;
  bpf_object__close(obj);
  return found;
}

// The daemon opens probe's skeleton over the helper-reads object on kernels without the
// bpf_rdonly_cast kfunc (probe_session.cpp): every handle the skeleton fills must be there, in
// the same place.
TEST(Abi, HelperReadsObjectHasTheProbeSkeletonsShape) {
  size_t direct_size = 0, helper_size = 0;
  const void* direct = probe_bpf__elf_bytes(&direct_size);
  const void* helper = probe_helper_reads_bpf__elf_bytes(&helper_size);
  const std::vector<std::string> shape = skeleton_shape(direct, direct_size);
  EXPECT_GT(shape.size(), 20u);
  EXPECT_EQ(skeleton_shape(helper, helper_size), shape);
}

// The same for the compat builds, opened under probe's and sampler's skeletons where the kernel
// lacks the task's BTF helpers or bpf_loop (the attach plan's choice, from the feature probes).
TEST(Abi, CompatObjectsHaveTheirSkeletonsShape) {
  size_t direct_size = 0, compat_size = 0;
  const void* direct = probe_bpf__elf_bytes(&direct_size);
  const void* compat = probe_compat_bpf__elf_bytes(&compat_size);
  EXPECT_EQ(skeleton_shape(compat, compat_size), skeleton_shape(direct, direct_size));
  size_t loop_size = 0, sampler_compat_size = 0;
  const void* loop = sampler_bpf__elf_bytes(&loop_size);
  const void* sampler_compat = sampler_compat_bpf__elf_bytes(&sampler_compat_size);
  const std::vector<std::string> shape = skeleton_shape(loop, loop_size, "sampler_bpf");
  EXPECT_GT(shape.size(), 8u);
  EXPECT_EQ(skeleton_shape(sampler_compat, sampler_compat_size, "sampler_bpf"), shape);
}

// The reason it exists: libbpf resolves every kfunc extern of an object, and without
// CAP_SYS_ADMIN cannot look for a missing one in the modules' BTF, so its mere presence fails
// the load on 6.1 under the unit.
TEST(Abi, OnlyTheDirectObjectAsksForTheKfunc) {
  size_t direct_size = 0, helper_size = 0;
  const void* direct = probe_bpf__elf_bytes(&direct_size);
  const void* helper = probe_helper_reads_bpf__elf_bytes(&helper_size);
#if defined(__x86_64__)
  EXPECT_TRUE(has_function(direct, direct_size, "bpf_rdonly_cast"));
#endif
  EXPECT_FALSE(has_function(helper, helper_size, "bpf_rdonly_cast"));
  size_t compat_size = 0;
  const void* compat = probe_compat_bpf__elf_bytes(&compat_size);
  EXPECT_FALSE(has_function(compat, compat_size, "bpf_rdonly_cast"));
}

}  // namespace
