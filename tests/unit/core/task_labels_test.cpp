#include "core/symbols/task_labels.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <string_view>

#include "core/base/quoted_value.h"

namespace hucprof {
namespace {

std::string_view comm_of(TaskLabels& tasks, const char* text) {
  char bytes[16] = {};
  std::memcpy(bytes, text, std::min(std::strlen(text), sizeof(bytes)));
  return tasks.comm(bytes);
}

TEST(CommText, TakesTheKernelsBytesUpToTheirNul) {
  const char bytes[16] = {'n', 'g', 'i', 'n', 'x', 0, 'x', 'x'};
  EXPECT_EQ(comm_text(bytes, sizeof(bytes)), "nginx");
  // 15 characters and the NUL is what TASK_COMM_LEN holds; without a NUL, the size bounds it.
  const char full[16] = {'k', 'w', 'o', 'r', 'k', 'e', 'r', '/',
                         'u', '1', '6', ':', '3', 'a', 'b', 'c'};
  EXPECT_EQ(comm_text(full, sizeof(full)), "kworker/u16:3abc");
  EXPECT_EQ(comm_text(full, 4), "kwor");
}

TEST(CommText, EscapesWhatIsNotPrintableUtf8AsEveryNameIs) {
  // prctl(PR_SET_NAME) takes any bytes; the kernel cuts a name at 15 bytes, maybe inside a
  // multi-byte character.
  EXPECT_EQ(comm_text("a\x1b[1m\x7f", 7), "a\\x1b[1m\\x7f");
  EXPECT_EQ(comm_text("\xff\xfe", 2), "\\xff\\xfe");
  EXPECT_EQ(comm_text("caf\xc3\xa9", 5), "caf\xc3\xa9");
  EXPECT_EQ(comm_text("caf\xc3", 4), "caf\\xc3");
  EXPECT_EQ(comm_text("\0abc", 4), kNoComm);
  // What the hand-made filter let through: a C1 control (CSI, U+009B, which some terminals act
  // on) and a noncharacter (U+FFFF, which XML forbids).
  EXPECT_EQ(comm_text("x\xc2\x9b"
                      "2J",
                      5),
            "x\\xc2\\x9b2J");
  EXPECT_EQ(comm_text("\xef\xbf\xbf", 3), "\\xef\\xbf\\xbf");
}

TEST(CommText, IsNotEscapedTwiceByThePprofStringTable) {
  // The pprof writer runs every string through printable_name again.
  for (const std::string_view raw : {"a\x1b[1m", "\xff\xfe", "x\xc2\x9b", "nginx", ""}) {
    const std::string once = comm_text(raw.data(), raw.size());
    EXPECT_EQ(printable_name(once), once) << once;
  }
}

TEST(TaskLabels, NamesTheFirstCommsAndFoldsTheRest) {
  TaskLabels tasks;
  for (size_t i = 0; i < TaskLabels::kNamedComms; ++i) {
    const std::string name = "job-" + std::to_string(i);
    EXPECT_EQ(comm_of(tasks, name.c_str()), name);
  }
  EXPECT_EQ(tasks.named_comms(), TaskLabels::kNamedComms);
  EXPECT_EQ(comm_of(tasks, "newcomer"), kFoldedComm);
  EXPECT_EQ(comm_of(tasks, "another"), kFoldedComm);
  EXPECT_EQ(comm_of(tasks, "job-0"), "job-0") << "a named comm stays named";
  EXPECT_EQ(tasks.named_comms(), TaskLabels::kNamedComms) << "bounded";
}

TEST(TaskLabels, FindsACommByItsBytesAsItNamedItFirst) {
  TaskLabels tasks;
  const std::string_view first = comm_of(tasks, "iperf3");
  EXPECT_EQ(first, "iperf3");
  EXPECT_EQ(comm_of(tasks, "iperf3").data(), first.data()) << "the same name, not a copy";
  // Whatever the bytes after the NUL are (the kernel pads, but nothing says it must).
  char padded[16] = {'i', 'p', 'e', 'r', 'f', '3', 0, 'x', 'y'};
  EXPECT_EQ(tasks.comm(padded).data(), first.data());
  char escaped[16] = {'a', '\x1b', 'b'};
  EXPECT_EQ(tasks.comm(escaped), "a\\x1bb");
  EXPECT_EQ(tasks.comm(escaped), "a\\x1bb") << "found by its bytes, as written the first time";
  EXPECT_EQ(tasks.named_comms(), 2u);
}

TEST(TaskLabels, FoldedCommsStayFoldedWhenFoundByTheirBytes) {
  TaskLabels tasks;
  for (size_t i = 0; i < TaskLabels::kNamedComms; ++i) {
    comm_of(tasks, ("job-" + std::to_string(i)).c_str());
  }
  // More folded comms than the cache holds: it starts anew, the labels stay right.
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < 5 * TaskLabels::kNamedComms; ++i) {
      const std::string name = "late-" + std::to_string(i);
      ASSERT_EQ(comm_of(tasks, name.c_str()), kFoldedComm) << name;
    }
  }
  EXPECT_EQ(comm_of(tasks, "job-3"), "job-3");
  EXPECT_EQ(tasks.named_comms(), TaskLabels::kNamedComms);
}

TEST(TaskLabels, ACommNoLabelSetHoldsFreesItsName) {
  TaskLabels tasks;
  for (size_t i = 0; i < TaskLabels::kNamedComms; ++i) {
    comm_of(tasks, ("job-" + std::to_string(i)).c_str());
  }
  EXPECT_EQ(comm_of(tasks, "iou-wrk-77"), kFoldedComm) << "full";
  tasks.forget_comms_except({"job-1"});
  EXPECT_EQ(tasks.named_comms(), 1u);
  EXPECT_EQ(comm_of(tasks, "iou-wrk-77"), "iou-wrk-77") << "named now: not folded forever";
  EXPECT_EQ(comm_of(tasks, "job-1"), "job-1");
  EXPECT_EQ(comm_of(tasks, "job-0"), "job-0") << "named anew";
  EXPECT_EQ(tasks.named_comms(), 3u);
}

TEST(TaskLabels, PidsAreBoundedToo) {
  TaskLabels tasks;
  EXPECT_EQ(tasks.pid(0), 0) << "no pid: the daemon's keys";
  for (uint32_t tgid = 1; tgid <= TaskLabels::kNamedPids; ++tgid) {
    EXPECT_EQ(tasks.pid(tgid), static_cast<int64_t>(tgid));
  }
  EXPECT_EQ(tasks.pid(TaskLabels::kNamedPids + 1), 0);
  EXPECT_EQ(tasks.pid(7), 7);
  EXPECT_EQ(tasks.named_pids(), TaskLabels::kNamedPids);
}

}  // namespace
}  // namespace hucprof
