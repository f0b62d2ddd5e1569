// The task labels in the profile: comm as a string label, the recording's pid as a numeric one
// (as pprof's own perf converter writes it), and both read back. Google's pprof reads them in
// the host tier (tests/host/test_task_labels.py).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/symbols/stack_interner.h"
#include "export/pprof/pprof_reader.h"
#include "export/views/pprof_writer.h"

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

// What the reader makes of `two_tasks` once `edit` changed the pid label of its sample with one
// (the file is untrusted input: a bad label must be refused by name, never crash the reader).
std::string read_with_pid(
    const std::function<void(pprof::Profile&, pprof::Sample&, pprof::Label&)>& edit) {
  StackInterner interner;
  pprof::Profile p = to_pprof(two_tasks(interner));
  for (auto& s : *p.mutable_sample()) {
    for (auto& l : *s.mutable_label()) {
      if (p.string_table(static_cast<int>(l.key())) == "pid") {
        edit(p, s, l);
        auto read = read_pprof(p.SerializeAsString());
        return read.ok() ? "(read fine)" : read.error().text;
      }
    }
  }
  ADD_FAILURE() << "no sample with a pid label";
  return "";
}

int64_t string_index(pprof::Profile& p, const std::string& text) {
  p.add_string_table(text);
  return p.string_table_size() - 1;
}

TEST(PprofTaskLabels, BadPidLabelsAreRefusedByName) {
  using testing::HasSubstr;
  EXPECT_EQ(read_with_pid([](pprof::Profile&, pprof::Sample&, pprof::Label&) {}), "(read fine)");
  EXPECT_THAT(
      read_with_pid([](pprof::Profile&, pprof::Sample&, pprof::Label& l) { l.set_num(-4242); }),
      HasSubstr("a sample has pid -4242, not a process id"));
  EXPECT_THAT(read_with_pid([](pprof::Profile&, pprof::Sample&, pprof::Label& l) { l.set_num(0); }),
              HasSubstr("a sample has pid 0, not a process id"));
  EXPECT_THAT(read_with_pid([](pprof::Profile& p, pprof::Sample&, pprof::Label& l) {
                l.set_num(0);
                l.set_str(string_index(p, "4242"));
              }),
              HasSubstr("a sample's pid label has a string value, not a number"));
  EXPECT_THAT(read_with_pid([](pprof::Profile& p, pprof::Sample&, pprof::Label& l) {
                l.set_str(string_index(p, "4242"));  // and its number, 4242, kept
              }),
              HasSubstr("a sample's pid label has a string value, not a number"));
  EXPECT_THAT(read_with_pid([](pprof::Profile&, pprof::Sample& s, pprof::Label& l) {
                *s.add_label() = l;  // the same pid twice
              }),
              HasSubstr("a sample has two pid labels"));
}

TEST(PprofTaskLabels, APidOnlyNamesTheKeyPid) {
  // A numeric label of another key, even of value 0 or below, is not ours and is skipped.
  std::string error = read_with_pid([](pprof::Profile& p, pprof::Sample&, pprof::Label& l) {
    l.set_key(string_index(p, "pids"));
    l.set_num(-1);
  });
  EXPECT_EQ(error, "(read fine)");
}

}  // namespace
}  // namespace hucprof
