// What `record -o` and `report --flamegraph` do with what is at their path, decided from the
// file's kind alone (no device node is needed to test it).
#include "core/output_target.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hucprof {
namespace {

using ::testing::HasSubstr;
using Kind = OutputFacts::Kind;
using Action = OutputDecision::Action;

OutputFacts plain(Kind kind, uint32_t major = 0, uint32_t minor = 0) {
  return {kind, false, kind, major, minor};
}

OutputFacts link_to(Kind kind, uint32_t major = 0, uint32_t minor = 0) {
  return {Kind::Missing, true, kind, major, minor};
}

TEST(OutputTarget, FilesAreWrittenAtomicallyAndOnlyFiles) {
  EXPECT_EQ(decide_output(plain(Kind::Missing)).action, Action::Create);
  EXPECT_EQ(decide_output(plain(Kind::Regular)).action, Action::Replace);
  EXPECT_THAT(decide_output(plain(Kind::Directory)).why, HasSubstr("is a directory"));
  EXPECT_THAT(decide_output(plain(Kind::Socket)).why, HasSubstr("is a socket"));
}

TEST(OutputTarget, PipesFifosAndDevNullAreWrittenIntoNeverReplaced) {
  EXPECT_EQ(decide_output(plain(Kind::Fifo)).action, Action::WriteInto);
  EXPECT_EQ(decide_output(plain(Kind::CharDevice, 1, 3)).action, Action::WriteInto);
  // -o /dev/stdout: a symbolic link to a pipe, or to the file the shell redirected it to.
  EXPECT_EQ(decide_output(link_to(Kind::Fifo)).action, Action::WriteInto);
  EXPECT_EQ(decide_output(link_to(Kind::Regular)).action, Action::WriteInto);
}

TEST(OutputTarget, OtherDevicesAndTerminalsAreRefused) {
  const OutputDecision disk = decide_output(plain(Kind::BlockDevice, 8, 0));
  EXPECT_EQ(disk.action, Action::Refuse);
  EXPECT_THAT(disk.why, HasSubstr("is a block device (8:0)"));
  for (const auto& [major, minor] : {std::pair{1u, 1u}, {1u, 5u}, {10u, 130u}, {240u, 0u}}) {
    const OutputDecision d = decide_output(plain(Kind::CharDevice, major, minor));
    EXPECT_EQ(d.action, Action::Refuse) << major << ":" << minor;
    EXPECT_THAT(d.why, HasSubstr("is a character device (" + std::to_string(major) + ":" +
                                 std::to_string(minor) + ")"));
  }
  for (const auto& [major, minor] : {std::pair{4u, 1u}, {5u, 0u}, {5u, 1u}, {136u, 3u}}) {
    EXPECT_THAT(decide_output(plain(Kind::CharDevice, major, minor)).why,
                HasSubstr("is a terminal"))
        << major << ":" << minor;
  }
  EXPECT_THAT(decide_output(link_to(Kind::BlockDevice, 8, 1)).why,
              HasSubstr("leads to a block device"));
  EXPECT_THAT(decide_output(link_to(Kind::Directory)).why, HasSubstr("leads to a directory"));
}

TEST(OutputTarget, ADanglingSymlinkIsRefusedNotCreatedThrough) {
  const OutputDecision d = decide_output(link_to(Kind::Missing));
  EXPECT_EQ(d.action, Action::Refuse);
  EXPECT_THAT(d.why, HasSubstr("symbolic link to nothing"));
}

}  // namespace
}  // namespace hucprof
