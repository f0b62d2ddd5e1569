// The sampler's decision (bpf/kernel_ranges.h, the same C code the BPF program runs) on kernel
// stacks perf recorded during a UDP flood whose datagrams arrive as IPIs, so softirqs land inside
// usercopy checks (tests/data/interrupt_stacks/record.py). The expected verdicts come from perf's
// symbol names and /proc/kallsyms through tests/lib/perf_stacks.py; the ranges the code uses come
// from the plan's functions over the recorded kallsyms lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/kernel/interrupt_entries.h"
#include "core/kernel/probe_targets.h"
#include "core/symbols/address_ranges.h"
#include "kernel_ranges.h"

namespace hucprof {
namespace {

struct RecordedStack {
  std::string verdict;
  std::vector<__u64> ips;  // the kernel's type: what bpf_get_stack() writes
  std::string names;       // for the failure message
};

struct Recording {
  KallsymsIndex kallsyms;
  std::vector<RecordedStack> stacks;
};

Recording load(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line, symbols;
  Recording out;
  bool in_stacks = false;
  while (std::getline(in, line)) {
    if (line.starts_with("# stacks")) in_stacks = true;
    if (line.starts_with("#")) continue;
    if (!in_stacks) {
      symbols += line + "\n";
      continue;
    }
    std::istringstream words(line);
    RecordedStack s;
    words >> s.verdict;
    for (std::string frame; words >> frame;) {
      const size_t colon = frame.find(':');
      s.ips.push_back(std::stoull(frame.substr(0, colon), nullptr, 16));
      s.names += frame.substr(colon + 1) + " <- ";
    }
    out.stacks.push_back(std::move(s));
  }
  std::istringstream text(symbols);
  out.kallsyms = KallsymsIndex::parse(text);
  return out;
}

const char* verdict_name(huc_scan_verdict v) {
  switch (v) {
    case HUC_SCAN_IN_CHECK:
      return "check";
    case HUC_SCAN_INTERRUPT_IN_CHECK:
      return "interrupt_in_check";
    case HUC_SCAN_OUTSIDE:
      break;
  }
  return "outside";
}

TEST(SampleScan, RecordedStacksGetPerfsVerdict) {
  size_t files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(HUC_TEST_DATA_DIR) + "/interrupt_stacks")) {
    if (entry.path().extension() != ".txt") continue;
    ++files;
    const Recording r = load(entry.path());
    const AddressRanges checks = build_address_ranges(r.kallsyms, dispatcher_symbols());
    const InterruptRanges interrupts = build_interrupt_ranges(r.kallsyms);
    ASSERT_FALSE(checks.ranges.empty());
    ASSERT_FALSE(interrupts.ranges.ranges.empty());
    std::map<std::string, size_t> seen;
    for (const RecordedStack& s : r.stacks) {
      const huc_scan_verdict v =
          huc_scan_stack(s.ips.data(), static_cast<__u32>(s.ips.size()), checks.ranges.data(),
                         static_cast<__u32>(checks.ranges.size()), interrupts.ranges.ranges.data(),
                         static_cast<__u32>(interrupts.ranges.ranges.size()));
      EXPECT_EQ(verdict_name(v), s.verdict) << entry.path().filename() << ": " << s.names;
      // The compat build's walk (no bpf_loop): the same verdict.
      auto step = [&](__u64 ip, int state) {
        return huc_scan_frame_packed(
            ip, state, checks.ranges.data(), static_cast<__u32>(checks.ranges.size()),
            interrupts.ranges.ranges.data(), static_cast<__u32>(interrupts.ranges.ranges.size()));
      };
      const huc_scan_verdict packed =
          HUC_SCAN_STACK_PACKED(s.ips.data(), static_cast<__u32>(s.ips.size()), step);
      EXPECT_EQ(verdict_name(packed), s.verdict) << "compat walk: " << s.names;
      ++seen[s.verdict];
    }
    // The recording must hold every case, or it shows nothing.
    EXPECT_GE(seen["interrupt_in_check"], 5u) << entry.path();
    EXPECT_GE(seen["check"], 20u) << entry.path();
    EXPECT_GE(seen["outside"], 20u) << "stacks with an interrupt and no check";
  }
  EXPECT_GE(files, 1u);
}

TEST(SampleScan, OnlyTheScanDepthCounts) {
  const huc_range checks[] = {{0x1000, 0x1100}};
  const huc_range interrupts[] = {{0x2000, 0x2100}};
  std::vector<__u64> ips(HUC_SAMPLE_SCAN_DEPTH + 5, 0x5000);
  auto step = [&](__u64 ip, int state) {
    return huc_scan_frame_packed(ip, state, checks, 1, interrupts, 1);
  };
  // Both walks, bpf_loop's and the compat build's: one verdict.
  auto scan = [&] {
    const huc_scan_verdict v =
        huc_scan_stack(ips.data(), static_cast<__u32>(ips.size()), checks, 1, interrupts, 1);
    EXPECT_EQ(v, HUC_SCAN_STACK_PACKED(ips.data(), static_cast<__u32>(ips.size()), step));
    return v;
  };
  EXPECT_EQ(scan(), HUC_SCAN_OUTSIDE);
  ips[3] = 0x1010;
  EXPECT_EQ(scan(), HUC_SCAN_IN_CHECK);
  ips[1] = 0x2050;
  EXPECT_EQ(scan(), HUC_SCAN_INTERRUPT_IN_CHECK);
  ips[1] = 0x5000;
  ips[3] = 0x5000;
  ips[HUC_SAMPLE_SCAN_DEPTH] = 0x1010;  // one frame too far up
  EXPECT_EQ(scan(), HUC_SCAN_OUTSIDE);
  ips[HUC_SAMPLE_SCAN_DEPTH - 1] = 0x1010;
  EXPECT_EQ(scan(), HUC_SCAN_IN_CHECK);
  EXPECT_EQ(huc_scan_stack(ips.data(), HUC_SAMPLE_SCAN_DEPTH - 1, checks, 1, interrupts, 1),
            HUC_SCAN_OUTSIDE)
      << "frames past the captured depth are not looked at";
}

}  // namespace
}  // namespace hucprof
