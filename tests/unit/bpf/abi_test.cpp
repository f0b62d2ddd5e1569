// The BPF objects and the daemon agree on every map's layout. Opening a skeleton only parses
// the ELF (no kernel involved), so this runs without root.
#include <gtest/gtest.h>

#include "bpf/abi_checks.h"
#include "hucprof_abi.h"
#include "probe.skel.h"
#include "sampler.skel.h"

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

}  // namespace
