#include "core/symbols/stack_interner.h"

#include <gtest/gtest.h>

#include <string>

namespace hucprof {
namespace {

TEST(StackInterner, WorkloadAndTaskAtOnceInternOneLabelSet) {
  StackInterner interner;
  const LabelsPtr base = interner.labels("udp_recvmsg", "recvfrom", "object", "");
  const size_t before = interner.label_sets();
  const LabelsPtr both =
      interner.with_workload_and_task(base, "nginx.service", "unit", "nginx", 4242);
  EXPECT_EQ(interner.label_sets(), before + 1) << "no throw-away label set on the way";
  EXPECT_EQ(both->workload, "nginx.service");
  EXPECT_EQ(both->workload_kind, "unit");
  EXPECT_EQ(both->comm, "nginx");
  EXPECT_EQ(both->pid, 4242);
  EXPECT_EQ(both->callsite, "udp_recvmsg") << "the other labels stay";
  EXPECT_EQ(
      interner.with_task(interner.with_workload(base, "nginx.service", "unit"), "nginx", 4242),
      both)
      << "the same set however it is reached: one pointer";
  EXPECT_EQ(interner.with_workload_and_task(both, "nginx.service", "unit", "nginx", 4242), both);
}

TEST(StackInterner, WithCopyKeepsWorkloadAndTaskInOneLookup) {
  StackInterner interner;
  const LabelsPtr labeled = interner.with_workload_and_task(
      interner.labels("udp_recvmsg", "recvfrom", "object", ""), "/job", "cgroup", "iperf3", 7);
  const size_t before = interner.label_sets();
  const LabelsPtr copied = interner.with_copy(labeled, "_copy_to_iter");
  EXPECT_EQ(interner.label_sets(), before + 1) << "not one per label it changed";
  EXPECT_EQ(copied->copy, "_copy_to_iter");
  EXPECT_EQ(copied->workload, "/job");
  EXPECT_EQ(copied->comm, "iperf3");
  EXPECT_EQ(copied->pid, 7);
  EXPECT_EQ(interner.with_copy(labeled, "_copy_to_iter"), copied);
  EXPECT_EQ(interner.with_copy(copied, "_copy_to_iter"), copied) << "nothing to change";
}

TEST(StackInterner, LabelsWithoutWorkloadOrTaskAreThoseWithEmptyOnes) {
  // The key of a plain labels() lookup and that of a label set whose workload and comm are ""
  // are the same: one set, not two.
  StackInterner interner;
  const LabelsPtr base = interner.labels("udp_recvmsg", "recvfrom", "object", "");
  EXPECT_EQ(interner.with_workload_and_task(base, "", "", "", 0), base);
  const LabelsPtr task = interner.with_task(base, "nginx", 0);
  EXPECT_EQ(interner.with_task(task, "", 0), base);
}

}  // namespace
}  // namespace hucprof
