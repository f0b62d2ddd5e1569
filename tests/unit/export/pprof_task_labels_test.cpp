// The task labels in the profile: comm as a string label, the recording's pid as a numeric one
// (as pprof's own perf converter writes it), and both read back. Google's pprof reads them in
// the host tier (tests/host/test_task_labels.py).
#include <gtest/gtest.h>

#include <string>

#include "core/stack_interner.h"
#include "export/pprof_reader.h"
#include "export/pprof_writer.h"

namespace hucprof {
namespace {

StackProfile two_tasks(StackInterner& interner) {
  const StackPtr stack = interner.stack({interner.frame({"__check_object_size", "", 0x25, 0}),
                                         interner.frame({"udp_recvmsg", "", 0x1a4, 0})});
  const LabelsPtr base = interner.labels("udp_recvmsg", "recvfrom", "object", "");
  StackProfile p;
  p.sampling = true;
  p.sample_period_ns = 10101010;
  p.sampled_by_context = {{"kernel", 450}, {"user", 500}};
  ProfileSample iperf{stack, interner.with_task(base, "iperf3", 4242), {}};
  iperf.values[kSamples] = 30;
  ProfileSample nameless{stack, base, {}};  // a profile without task labels (probe mode)
  nameless.values[kSamples] = 5;
  p.samples = {iperf, nameless};
  return p;
}

TEST(PprofTaskLabels, CommIsAStringAndPidANumber) {
  StackInterner interner;
  const pprof::Profile out = to_pprof(two_tasks(interner));
  int checked = 0;
  for (const auto& s : out.sample()) {
    std::string comm;
    int64_t pid = 0;
    for (const auto& l : s.label()) {
      const std::string& key = out.string_table(l.key());
      if (key == "comm") comm = out.string_table(l.str());
      if (key == "pid") {
        EXPECT_EQ(l.str(), 0) << "numeric";
        pid = l.num();
      }
    }
    if (s.value(0) == 30) {
      EXPECT_EQ(comm, "iperf3");
      EXPECT_EQ(pid, 4242);
      ++checked;
    } else if (s.value(0) == 5) {
      EXPECT_EQ(comm, "") << "no label where there is none";
      EXPECT_EQ(pid, 0);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2);
}

TEST(PprofTaskLabels, ReadBack) {
  StackInterner interner;
  auto read = read_pprof(encode_pprof_gzip(two_tasks(interner)));
  ASSERT_TRUE(read.ok()) << read.error().text;
  ASSERT_EQ(read.value().samples.size(), 2u);
  for (const ProfileSample& s : read.value().samples) {
    if (s.values[kSamples] == 30) {
      EXPECT_EQ(s.labels->comm, "iperf3");
      EXPECT_EQ(s.labels->pid, 4242);
    } else {
      EXPECT_EQ(s.labels->comm, "");
      EXPECT_EQ(s.labels->pid, 0);
    }
  }
}

}  // namespace
}  // namespace hucprof
